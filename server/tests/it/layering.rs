//! The layering rules (DESIGN.md §1, issue 8, issue 24 item 3), checked on the source: the
//! folders of `src/` import only folders below them ([`LAYERS`]); only `src/lsp/` (and the
//! binary's `main.rs`) names LSP types or the `lsp` module; inside `lsp/` the modules import
//! each other without a cycle (the old `server` <-> `custom` <-> `watcher` one is gone).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file: comment lines and the unit-test modules (at the end of a file, from the
/// first `#[cfg(test)]` module on) left out.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text
        .match_indices("#[cfg(test)]\nmod ")
        .map(|(i, _)| i)
        .next()
    {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The folders (and top-level files) of `src/`, bottom first: each may name only itself and
/// those before it (`lib.rs` only declares them). A new folder must be placed here; an import
/// of a folder above the importing one fails [`folders_import_only_the_layers_below`].
const LAYERS: [&str; 13] = [
    "sync", "testing", "source", "model", "formats", "analysis", "view", "index", "ide", "store",
    "lsp", "cli", "main",
];

/// The top-level modules the code of a file names: `crate::NAME…`, and the first names of a
/// `use crate::{a::…, b::…}` group.
fn crate_modules(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    _ if item_start && !c.is_whitespace() => {
                        out.insert(ident(&group[j..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

/// The layer of `src/`-relative path `rel`: its first component without `.rs`.
fn layer_of(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// Every folder imports only the layers below it: an arrow up (a reader naming the index, the
/// model naming a reader, an editor feature naming the store) fails here, with the file.
#[test]
fn folders_import_only_the_layers_below() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut offenders = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src()).unwrap();
        let layer = layer_of(rel);
        if layer == "lib" {
            continue;
        }
        let Some(own) = rank(&layer) else {
            offenders.push(format!("{}: `{layer}` is not in LAYERS", rel.display()));
            continue;
        };
        for m in crate_modules(&code(&f)) {
            match rank(&m) {
                Some(r) if r <= own => {}
                Some(_) => offenders.push(format!(
                    "{} ({layer}) imports {m}, a layer above",
                    rel.display()
                )),
                None => {
                    offenders.push(format!("{} names crate::{m}, not in LAYERS", rel.display()))
                }
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// The parser of imports finds plain paths and the names of a `use crate::{…}` group.
#[test]
fn crate_modules_reads_paths_and_groups() {
    let code = "use crate::{a::X, b::{c, d}, e};\nlet x = crate::f::g(crate::h::I);";
    let want: BTreeSet<String> = ["a", "b", "e", "f", "h"].map(String::from).into();
    assert_eq!(crate_modules(code), want);
}

#[test]
fn only_lsp_knows_lsp() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let lsp = src().join("lsp");
    let mut offenders = Vec::new();
    for f in files {
        if f.starts_with(&lsp) || f.ends_with("main.rs") {
            continue;
        }
        let c = code(&f);
        for needle in ["tower_lsp_server", "ls_types", "crate::lsp"] {
            if c.contains(needle) {
                offenders.push(format!(
                    "{} names {needle}",
                    f.strip_prefix(src()).unwrap().display()
                ));
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// `lsp::a` -> the `lsp` modules its code names (`crate::lsp::b…`), by top-level module
/// (`handlers/*` count as `handlers`).
fn lsp_imports() -> BTreeMap<String, BTreeSet<String>> {
    let lsp = src().join("lsp");
    let mut files = Vec::new();
    rust_files(&lsp, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&lsp).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "mod" {
            continue; // lsp/mod.rs wires the modules together
        }
        let c = code(&f);
        let deps = graph.entry(module.clone()).or_default();
        for (i, _) in c.match_indices("crate::lsp::") {
            let name: String = c[i + "crate::lsp::".len()..]
                .chars()
                .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_')
                .collect();
            if !name.is_empty() && name != module {
                deps.insert(name);
            }
        }
    }
    graph
}

#[test]
fn lsp_modules_import_each_other_without_a_cycle() {
    let graph = lsp_imports();
    // The three modules of the old cycle: nothing below `server` imports it, the custom
    // protocol (`ext`, once `custom`) holds only types, the file follower is below `lsp`
    // (`store::live`).
    assert!(!graph.contains_key("watcher"), "{graph:#?}");
    assert_eq!(
        graph["ext"],
        BTreeSet::new(),
        "ext holds the protocol's types only"
    );
    for (m, deps) in &graph {
        assert!(!deps.contains("server"), "{m} imports server: {graph:#?}");
    }
    // No cycle at all (depth-first search).
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if done.contains(m) {
            return;
        }
        if let Some(i) = path.iter().position(|p| p == m) {
            panic!("import cycle: {:?} -> {m}", &path[i..]);
        }
        path.push(m.to_string());
        for d in graph.get(m).into_iter().flatten() {
            visit(d, graph, path, done);
        }
        path.pop();
        done.insert(m.to_string());
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done);
    }
}

/// Readers change a record they already pushed only through `Transcript::revise` /
/// `revise_from`, which note it (issue 12: an append is analysed from the start of the last
/// turn only while no earlier record changed; a change made behind its back would leave a
/// stale analysis). The one loop over the records a line just pushed (`formats/mod.rs`) says
/// so with `skip(from)`.
#[test]
fn readers_revise_entries_through_the_transcript() {
    let mut files = Vec::new();
    rust_files(&src().join("formats"), &mut files);
    let mut offenders = Vec::new();
    for f in files {
        let c = code(&f);
        for needle in [
            "entries.get_mut(",
            "entries.last_mut(",
            "entries.first_mut(",
            "entries.iter_mut()",
            "&mut t.entries",
            "&mut self.transcript.entries",
            "entries: &mut [Entry]",
        ] {
            for (n, line) in c.lines().enumerate() {
                let allowed = needle == "&mut self.transcript.entries"
                    && f.ends_with("formats/mod.rs")
                    || needle == "entries.iter_mut()" && line.contains(".skip(from)");
                if line.contains(needle) && !allowed {
                    offenders.push(format!(
                        "{}:{} {}",
                        f.strip_prefix(src()).unwrap().display(),
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}
