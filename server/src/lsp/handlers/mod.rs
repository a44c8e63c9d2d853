//! The request handlers, one module per request family. Each takes the resolved document
//! context ([`Ctx`](crate::lsp::server::Ctx)) and the request's params and runs on the
//! blocking pool through [`crate::lsp::dispatch::off_loop`]; the protocol glue (resolving the
//! document, the async trait methods) stays in `server.rs`.

pub mod diff;
pub mod folding;
pub mod hints;
pub mod hover;
pub mod navigation;
pub mod symbols;
pub mod tokens;
