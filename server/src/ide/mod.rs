//! One module per editor feature, returning plain structs in byte / line terms (no LSP types;
//! `crate::lsp` converts them to positions in the negotiated encoding), and the document
//! [`host`]: texts, plain edits, analysis and view snapshots.
pub mod code_lens;
pub mod diagnostics;
pub mod edits;
pub mod folding;
pub mod host;
pub mod hover;
pub mod inlay_hints;
pub mod lookup;
pub mod navigation;
pub mod semantic_tokens;
pub mod session_files;
pub mod stats;
pub mod symbols;
pub mod view_index;
pub mod workspace_symbols;
