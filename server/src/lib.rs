//! transcript-ls: a language server that turns AI coding-agent transcripts (`.jsonl` files
//! written by Claude Code, Codex and similar agents) into documents a person can read in
//! their editor. See `../shared/docs/DESIGN.md` for the design and `PROTOCOL.md` for the
//! custom protocol.
//!
//! Layering (DESIGN.md §1; checked by `tests/it/layering.rs`): the folders import only
//! folders below them, in this order, bottom first: `sync` (lock helpers), `source`, `model`,
//! `formats`, `analysis`, `view`, `index`, `ide`, `store`, then `lsp` and `cli` at the top
//! (and `main.rs` over both). Data flows from bytes (`source`) through the agents' readers
//! (`formats`, which fill the `model` below them) to the analysis, the view, the index, the
//! editor features and the documents the store holds for the protocol. Only `lsp` knows LSP
//! types.
//!
//! Module map (issue 8, issue 24; in the spirit of rust-analyzer's `ide` / `rust-analyzer`
//! split):
//! - `source`: bytes to text (the one loader: regular files only, bounded, lossy UTF-8 with
//!   one warning per line), line index, positions in UTF-8/UTF-16, file age.
//! - `model`: the one transcript model every reader produces; `formats`: the readers of each
//!   agent's files and the agent registry (`formats::agents`).
//! - `analysis`: turns, gates and figures; `view`: the rendered reading view, and what the
//!   agent changed (`view::edits`, `view::changes`), which the view shows.
//! - `index`: the session index (sessions, workspace symbols, file history, full-text search),
//!   its cache, and the file walking under its roots (`index::walk`, `index::session_files`).
//! - `ide`: the editor features, one module per feature in plain byte/line terms, over what
//!   they read (`ide::snapshot`: `Snapshot`, `ViewSnap`, `DocSnap`), answered for one document
//!   by the facade `ide::DocAnalysis` (`ide/facade.rs`: folds, outline, hints, tokens, lenses,
//!   hover, definition, references, diagnostics; the one place that chooses between a raw
//!   transcript, a view and a text that is no transcript).
//! - `store`: the documents: `store::host` (`Host`: open raw and view documents, plain edits,
//!   disk sources, the settings, the session index; hands out `DocSnap`s), `store::document`
//!   (one source: text and versions), `store::build` (its snapshots, built incrementally),
//!   `store::disk` (its file), `store::live` (the file follower: notify, appends, settling,
//!   index builds; results handed to a `Sink`) and `store::progress`.
//! - `lsp`: protocol only: framing, the dispatcher, the method table, handlers (one module per
//!   request family, each converting what `ide::DocAnalysis` answers), `from_proto` /
//!   `to_proto`, capabilities, settings, the custom protocol as types (`lsp::ext`), the per-turn
//!   answer caches (`lsp::turn_cache`), the client side of live files (`lsp::refresh`).
//! - `sync`: taking a `Mutex` / `RwLock` whether a panicking holder poisoned it or not.
//! - `cli`: the command line (`render`, `stats`, …) over the same loader and readers.

pub mod analysis;
pub mod cli;
pub mod formats;
pub mod ide;
pub mod index;
pub mod lsp;
pub mod model;
pub mod source;
pub mod store;
pub mod sync;
pub mod testing;
pub mod view;
