//! transcript-ls: a language server that turns AI coding-agent transcripts (`.jsonl` files
//! written by Claude Code, Codex and similar agents) into documents a person can read in
//! their editor. See `../shared/docs/DESIGN.md` for the design and `PROTOCOL.md` for the
//! custom protocol.
//!
//! Layering (DESIGN.md §1): `source` -> `formats` -> `model` -> `analysis` -> `view` -> `ide`
//! -> `lsp`. Only `lsp` knows LSP types.

pub mod analysis;
pub mod cli;
pub mod formats;
pub mod ide;
pub mod index;
pub mod lsp;
pub mod model;
pub mod source;
pub mod testing;
pub mod view;
