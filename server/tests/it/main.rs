//! The integration tests of `transcript-ls`, one test binary (issue 24 item 6: 29 binaries,
//! each linking the library and its dependencies, took 3.3 GB and minutes of linking).
//!
//! Each module is one suite, run alone with its path as the filter: `cargo test --test it
//! cli::` (a test: `cargo test --test it cli::stats_of_the_demo`). Snapshots are in
//! `snapshots/`, named `it__<suite>__<name>.snap`. Shared helpers: [`common`] (hand-built
//! transcripts, corpus and repository paths) and [`lsp_common`] (an in-process LSP client).
// The `cli` suite's `json!` literals nest deeper than the default limit of 128.
#![recursion_limit = "256"]

mod common;
mod lsp_common;

mod agents;
mod analysis_corpus;
mod analysis_fixtures;
mod analysis_rules;
mod analysis_scale;
mod antigravity_reader;
mod append;
mod claude_reader;
mod cli;
mod codex_reader;
mod detection;
mod gemini_reader;
mod kiro_vibe;
mod layering;
mod lsp_corpus;
mod lsp_features;
mod lsp_history;
mod lsp_live;
mod lsp_ordering;
mod lsp_perf;
mod lsp_progress;
mod lsp_protocol;
mod lsp_raw_answers;
mod lsp_reading;
mod lsp_robustness;
mod lsp_search;
mod lsp_sessions;
mod lsp_stdio;
mod lsp_stdio_robustness;
mod pi_copilot;
mod properties;
mod protocol_contracts;
mod search;
mod session_index;
mod view;
mod vocabulary;
mod waiting;

/// Every suite file of this folder is compiled: a `NAME.rs` left without its `mod NAME;` line
/// above would be skipped without a word.
#[test]
fn every_suite_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let main = std::fs::read_to_string(dir.join("main.rs")).unwrap();
    let mut missing = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(suite) = name.strip_suffix(".rs")
            && suite != "main"
            && !main.lines().any(|l| l == format!("mod {suite};"))
        {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "not in tests/it/main.rs: {missing:?}");
}
