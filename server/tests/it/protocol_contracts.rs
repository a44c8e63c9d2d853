//! The server, its protocol document and its two editor clients name the same things (issue 8
//! item 4): custom methods, commands, settings, the semantic token legend. A name added to one
//! and not the others fails here.

use std::collections::BTreeSet;

use serde_json::Value;
use transcript_ls::ide::semantic_tokens::{MODIFIERS, TokenType};
use transcript_ls::lsp::capabilities::{self, STANDARD_MODIFIERS, STANDARD_TYPES};
use transcript_ls::lsp::config::{SETTING_KEYS, TokenLegend};
use transcript_ls::lsp::ext::{CUSTOM_METHODS, Command};

fn repo(rel: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn set<'a>(it: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    it.into_iter().map(str::to_string).collect()
}

/// The names of the commands the server executes (`lsp::ext::Command`).
fn commands() -> BTreeSet<String> {
    set(Command::ALL.iter().map(|c| c.name()))
}

/// Each command's name names it back, and no two commands share a name.
#[test]
fn commands_are_named_once() {
    for c in Command::ALL {
        assert_eq!(Command::from_name(c.name()), Some(c));
    }
    assert_eq!(commands().len(), Command::ALL.len());
    assert_eq!(set(CUSTOM_METHODS).len(), CUSTOM_METHODS.len());
}

/// The lines of the PROTOCOL.md section whose heading starts with `## {title}`.
fn section<'a>(doc: &'a str, title: &str) -> Vec<&'a str> {
    doc.lines()
        .skip_while(|l| !l.starts_with(&format!("## {title}")))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .collect()
}

/// First cells of a markdown table: `| \`name\` | …` -> `name`.
fn table_names(lines: &[&str]) -> BTreeSet<String> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect()
}

#[test]
fn protocol_md_documents_every_method_command_setting_and_token() {
    let doc = repo("server/PROTOCOL.md");
    // Methods: every custom method has its own `### \`method\`` heading, and every such
    // heading that is not standard LSP is a custom method.
    let headings: BTreeSet<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("### `"))
        .filter_map(|l| l.split('`').next())
        .filter(|m| m.contains('/'))
        .map(str::to_string)
        .collect();
    let standard = set(["$/progress", "window/showMessage", "window/showDocument"]);
    let documented: BTreeSet<String> = headings.difference(&standard).cloned().collect();
    assert_eq!(documented, set(CUSTOM_METHODS));
    assert_eq!(table_names(&section(&doc, "Commands")), commands());
    assert_eq!(table_names(&section(&doc, "Settings")), set(SETTING_KEYS));
    let tokens = section(&doc, "Semantic tokens").join("\n");
    for name in TokenType::ALL
        .iter()
        .map(|t| t.name())
        .chain(MODIFIERS)
        .chain(STANDARD_TYPES)
        .chain(STANDARD_MODIFIERS)
    {
        assert!(
            tokens.contains(&format!("`{name}`")),
            "PROTOCOL.md, Semantic tokens: `{name}`"
        );
    }
}

#[test]
fn vscode_package_json_matches_the_server() {
    let pkg: Value = serde_json::from_str(&repo("editors/vscode/package.json")).unwrap();
    let c = &pkg["contributes"];
    let settings: BTreeSet<String> = c["configuration"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .filter_map(|k| k.strip_prefix("transcript."))
        .map(str::to_string)
        .collect();
    assert_eq!(settings, set(SETTING_KEYS), "package.json settings");
    let types: Vec<(String, String)> = c["semanticTokenTypes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["superType"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    // Same types in legend order, each falling back to the standard type the server's
    // standard legend uses for it.
    let expected: Vec<(String, String)> = TokenType::ALL
        .iter()
        .map(|&t| {
            let (i, _) = capabilities::encode_type(TokenLegend::Standard, t, 0);
            (t.name().to_string(), STANDARD_TYPES[i as usize].to_string())
        })
        .collect();
    assert_eq!(types, expected, "package.json semanticTokenTypes");
    let mods: Vec<&str> = c["semanticTokenModifiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(mods, MODIFIERS, "package.json semanticTokenModifiers");
}

/// Keys of a Lua table literal `M.<name> = { key = …, … }` (one entry per line).
fn lua_table_keys(src: &str, name: &str) -> BTreeSet<String> {
    src.lines()
        .skip_while(|l| !l.starts_with(&format!("M.{name} = {{")))
        .skip(1)
        .take_while(|l| !l.starts_with('}'))
        .filter_map(|l| l.trim().split_once(" = ").map(|(k, _)| k.to_string()))
        .collect()
}

/// The settings the VS Code extension sends (`SERVER_KEYS` in extension.ts) are the server's:
/// `transcript.workspaceFolders` was declared in package.json but never sent, so turning it off
/// did nothing.
#[test]
fn vscode_extension_sends_every_server_setting() {
    let ext = repo("editors/vscode/src/extension.ts");
    let line = ext
        .lines()
        .find(|l| l.starts_with("const SERVER_KEYS = ["))
        .expect("SERVER_KEYS in extension.ts");
    let keys: BTreeSet<String> = line
        .split('\'')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    assert_eq!(keys, set(SETTING_KEYS), "extension.ts SERVER_KEYS");
}

#[test]
fn neovim_plugin_matches_the_server() {
    let init = repo("editors/nvim/lua/transcript/init.lua");
    let line = init
        .lines()
        .find(|l| l.starts_with("M.server_keys = {"))
        .expect("M.server_keys in init.lua");
    let keys: BTreeSet<String> = line
        .split('\'')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    assert_eq!(keys, set(SETTING_KEYS), "init.lua server_keys");
    // Every command a code lens may carry is one the plugin handles (a missing one runs on the
    // server and its answer is dropped: the change lens did nothing in Neovim, issue 22).
    let handled: BTreeSet<String> = init
        .lines()
        .skip_while(|l| !l.starts_with("M.server_commands = {"))
        .skip(1)
        .take_while(|l| !l.starts_with('}'))
        .filter_map(|l| {
            l.trim()
                .strip_prefix('\'')
                .and_then(|l| l.split('\'').next())
        })
        .map(str::to_string)
        .collect();
    let all = commands();
    let missing: Vec<&String> = all.difference(&handled).collect();
    assert!(
        missing.is_empty(),
        "init.lua server_commands lacks {missing:?}"
    );
    let hl = repo("editors/nvim/lua/transcript/highlights.lua");
    assert_eq!(
        lua_table_keys(&hl, "types"),
        set(TokenType::ALL.iter().map(|t| t.name())),
        "highlights.lua types"
    );
    assert_eq!(
        lua_table_keys(&hl, "modifiers"),
        set(MODIFIERS),
        "highlights.lua modifiers"
    );
}
