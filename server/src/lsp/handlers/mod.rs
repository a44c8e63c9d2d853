//! The handlers, one module per request family. A document request's handler takes the
//! resolved document ([`Ctx`](crate::lsp::state::Ctx): the URI and the host's plain snapshot)
//! and the request's params, and runs on the blocking pool through
//! [`crate::lsp::dispatch::off_loop`]; handlers with an async part (commands, the view text,
//! stats) await only the host, then run their work the same way. Conversions to LSP types are
//! in `crate::lsp::to_proto`; the method table is `crate::lsp::server`.

pub mod code_lens;
pub mod commands;
pub mod diagnostics;
pub mod diff;
pub mod folding;
pub mod hints;
pub mod hover;
pub mod navigation;
pub mod sessions;
pub mod stats;
pub mod symbols;
pub mod sync;
pub mod tokens;
pub mod view;
pub mod workspace_symbols;
