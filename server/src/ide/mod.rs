//! One module per editor feature, returning plain structs in byte / line terms (no LSP types).
pub mod symbols;
