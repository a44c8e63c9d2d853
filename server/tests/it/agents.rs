//! Every copy of the agent list outside the server's agent registry
//! (`formats::agents::AGENTS`) agrees with it (issue 21 item 1): the CLI help, PROTOCOL.md's
//! agent table and `roots` default, the Neovim plugin's detector and roots, the VS Code
//! manifest's texts and README, and the shared detection table. An agent added to the registry
//! and not to one of these (or the other way round) fails here.

use std::collections::BTreeSet;

use transcript_ls::formats::agents::{AGENTS, DefaultRoot};

fn repo(rel: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn roots() -> Vec<&'static DefaultRoot> {
    AGENTS.iter().flat_map(|a| a.roots.iter()).collect()
}

/// The registry's default roots as people write them: `~/.claude/projects`, …
fn tilde_roots() -> Vec<String> {
    roots().iter().map(|r| r.tilde()).collect()
}

/// `text` with every run of whitespace made one space (help text wraps anywhere).
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `~/…` paths in backquotes or after spaces in `text`, in order of appearance.
fn tilde_paths(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '`' | ',' | '"' | '(' | ')' | '\''))
        .filter(|w| w.starts_with("~/"))
        .map(|w| w.trim_end_matches(['.', ';']).to_string())
        .collect()
}

#[test]
fn cli_help_names_every_agent_and_default_root() {
    let help = squeeze(transcript_ls::cli::USAGE);
    let first = help.split(" Usage:").next().unwrap();
    for a in AGENTS {
        assert!(
            first.contains(a.name),
            "the help's first line lacks {}",
            a.name
        );
    }
    let root_line = help
        .split("instead of the default roots ")
        .nth(1)
        .expect("the help names the default roots")
        .split(" (")
        .next()
        .unwrap();
    assert_eq!(tilde_paths(root_line), tilde_roots());
}

#[test]
fn protocol_md_agent_table_is_the_registry() {
    let doc = repo("server/PROTOCOL.md");
    let rows: Vec<Vec<String>> = doc
        .lines()
        .skip_while(|l| !l.starts_with("## Agents"))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().trim_matches('`').to_string())
                .collect()
        })
        .collect();
    // One row per root (Antigravity has two: the CLI's and the IDE's).
    let want: Vec<Vec<String>> = AGENTS
        .iter()
        .flat_map(|a| {
            a.roots.iter().map(|r| {
                vec![
                    a.id.to_string(),
                    a.name.to_string(),
                    r.tilde(),
                    format!("${}/{}", r.env, r.under_env),
                ]
            })
        })
        .collect();
    assert_eq!(rows, want);
    // The `roots` setting's default.
    let line = doc
        .lines()
        .find(|l| l.starts_with("| `roots` |"))
        .expect("a roots setting row");
    let default = line.split('|').nth(3).unwrap();
    assert_eq!(tilde_paths(default), tilde_roots());
}

/// The Neovim plugin's `M.agent_roots` table: `{ home = '…', env = '…', under_env = '…' }`.
#[test]
fn neovim_plugin_roots_are_the_registry() {
    let lua = repo("editors/nvim/lua/transcript/detect.lua");
    let body = lua
        .split("M.agent_roots = {")
        .nth(1)
        .expect("M.agent_roots in detect.lua")
        .split("\n}")
        .next()
        .unwrap();
    let field = |line: &str, key: &str| -> String {
        line.split(&format!("{key} = '"))
            .nth(1)
            .and_then(|r| r.split('\'').next())
            .unwrap_or_default()
            .to_string()
    };
    let got: Vec<(String, String, String)> = body
        .lines()
        .filter(|l| l.trim_start().starts_with('{'))
        .map(|l| (field(l, "home"), field(l, "env"), field(l, "under_env")))
        .collect();
    let want: Vec<(String, String, String)> = roots()
        .iter()
        .map(|r| (r.tilde(), r.env.to_string(), r.under_env.to_string()))
        .collect();
    assert_eq!(got, want);
    // The help file's `roots` default.
    let doc = repo("editors/nvim/doc/transcript.txt");
    let block = doc
        .split("roots = nil,")
        .nth(1)
        .expect("roots in the help file")
        .split("workspaceFolders")
        .next()
        .unwrap();
    assert_eq!(tilde_paths(block), tilde_roots());
}

/// The formats the Neovim detector can answer (`return '<id>'`) are the registry's ids.
#[test]
fn neovim_detector_answers_the_registry_ids() {
    let lua = repo("editors/nvim/lua/transcript/detect.lua");
    let got: BTreeSet<String> = lua
        .lines()
        .filter_map(|l| l.trim().strip_prefix("return '"))
        .filter_map(|l| l.split('\'').next())
        .map(str::to_string)
        .collect();
    let want: BTreeSet<String> = AGENTS.iter().map(|a| a.id.to_string()).collect();
    assert_eq!(got, want);
}

/// Every agent has cases in the shared detection table, and the table names no other format.
#[test]
fn detection_table_covers_every_agent() {
    let table: serde_json::Value =
        serde_json::from_str(&repo("fixtures/detection-cases.json")).unwrap();
    let got: BTreeSet<String> = table["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["format"].as_str().unwrap().to_string())
        .collect();
    let mut want: BTreeSet<String> = AGENTS.iter().map(|a| a.id.to_string()).collect();
    want.insert("unknown".to_string());
    assert_eq!(got, want);
    let about = table["about"].as_str().unwrap();
    for a in AGENTS {
        assert!(
            about.contains(&format!("`{}`", a.id)),
            "about lacks {}",
            a.id
        );
    }
}

/// The VS Code manifest's texts that list the default roots (the `transcript.roots`
/// description, the Transcripts view's welcome text) and the README's settings table name
/// exactly the registry's roots, in its order.
#[test]
fn vscode_texts_name_every_default_root() {
    let pkg: serde_json::Value =
        serde_json::from_str(&repo("editors/vscode/package.json")).unwrap();
    let desc = pkg["contributes"]["configuration"]["properties"]["transcript.roots"]
        ["markdownDescription"]
        .as_str()
        .or_else(|| {
            pkg["contributes"]["configuration"]
                .as_array()?
                .iter()
                .find_map(|c| c["properties"]["transcript.roots"]["markdownDescription"].as_str())
        })
        .expect("transcript.roots markdownDescription");
    assert_eq!(tilde_paths(desc), tilde_roots(), "{desc}");
    let welcome: Vec<&str> = pkg["contributes"]["viewsWelcome"]
        .as_array()
        .expect("viewsWelcome")
        .iter()
        .filter_map(|w| w["contents"].as_str())
        .filter(|c| c.contains("~/"))
        .collect();
    assert!(!welcome.is_empty());
    for w in welcome {
        assert_eq!(tilde_paths(w), tilde_roots(), "{w}");
    }
    let about = pkg["description"].as_str().unwrap();
    for a in AGENTS {
        assert!(
            about.contains(a.name),
            "the extension's description lacks {}",
            a.name
        );
    }
    let readme = repo("editors/vscode/README.md");
    let row = readme
        .lines()
        .find(|l| l.starts_with("| `transcript.roots` |"))
        .expect("README roots row");
    assert_eq!(tilde_paths(row.split('|').nth(2).unwrap()), tilde_roots());
}
