//! transcript-ls: a language server that turns AI coding-agent transcripts (`.jsonl` files
//! written by Claude Code, Codex and similar agents) into documents a person can read in
//! their editor. See `../shared/docs/DESIGN.md` for the design and `PROTOCOL.md` for the
//! custom protocol.
//!
//! Layering (DESIGN.md §1): `source` -> `formats` -> `model` -> `analysis` -> `view` -> `ide`
//! -> `lsp`. Only `lsp` knows LSP types.
//!
//! Module map (issue 8; in the spirit of rust-analyzer's `ide` / `rust-analyzer` split):
//! - `source`: bytes to text (the one loader: regular files only, bounded, lossy UTF-8 with
//!   one warning per line), line index, positions in UTF-8/UTF-16, file age.
//! - `formats` -> `model`: readers of each agent's `.jsonl` into one transcript model.
//! - `analysis`, `view`: turns, gates and figures; the rendered reading view.
//! - `index`: the session index (sessions, workspace symbols) and its cache.
//! - `ide`: one module per editor feature in plain byte/line terms, answered for one document
//!   by the facade `ide::DocAnalysis` (`ide/facade.rs`: folds, outline, hints, tokens, lenses,
//!   hover, definition, references, diagnostics; the one place that chooses between a raw
//!   transcript, a view and a text that is no transcript), and below the protocol the
//!   document host: `ide::host` (`Host`: open raw and view documents, plain edits, disk
//!   sources, `DocSnap` snapshots), `ide::document` (one source: text, incremental reader,
//!   `Snapshot`, `ViewSnap`) and `ide::live` (the file follower: notify, appends, settling,
//!   index builds; results handed to a `Sink`).
//! - `lsp`: protocol only: framing, the dispatcher, the method table, handlers (one module per
//!   request family, each converting what `ide::DocAnalysis` answers), `from_proto` / `to_proto`, capabilities, settings, custom-protocol
//!   types, the client side of live files (`lsp::refresh`).
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
pub mod sync;
pub mod testing;
pub mod view;
