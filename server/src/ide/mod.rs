//! One module per editor feature, returning plain structs in byte / line terms (no LSP types;
//! `crate::lsp::to_proto` converts them to positions in the negotiated encoding); [`facade`]
//! ([`DocAnalysis`]) answers each feature for one document snapshot, choosing between a raw
//! transcript, a view and a text that is no transcript, so the protocol layer only converts;
//! and below the protocol layer the document [`host`] (the documents the editor opened and the files
//! behind views, plain edits, snapshots; [`document`] is one source and its snapshots) and
//! [`live`] (the file follower, which keeps disk sources and the session index current and
//! hands what changed to the protocol layer through [`live::Sink`]).
pub mod code_lens;
pub mod diagnostics;
pub mod document;
pub mod facade;
pub mod folding;
pub mod host;
pub mod hover;
pub mod inlay_hints;
pub mod live;
pub mod lookup;
pub mod navigation;
pub mod progress;
pub mod semantic_tokens;
pub mod stats;
pub mod symbols;
pub mod view_index;
pub mod workspace_symbols;

pub use facade::DocAnalysis;
