//! The editor features (issue 24 item 3: features only; the documents are `crate::store`'s):
//! one module per feature, returning plain structs in byte / line terms (no LSP types;
//! `crate::lsp::to_proto` converts them to positions in the negotiated encoding), over what
//! they read, [`snapshot`] (one analysed version of a document, a rendered view, a document as
//! a request sees it). [`facade`] ([`DocAnalysis`]) answers each feature for one document
//! snapshot, choosing between a raw transcript, a view and a text that is no transcript, so
//! the protocol layer only converts.
pub mod code_lens;
pub mod diagnostics;
pub mod facade;
pub mod folding;
pub mod hover;
pub mod inlay_hints;
pub mod lookup;
pub mod navigation;
pub mod semantic_tokens;
pub mod snapshot;
pub mod stats;
pub mod symbols;
pub mod view_index;
pub mod workspace_symbols;

pub use facade::DocAnalysis;
