//! The handlers, one module per request family. A document request's handler takes the
//! resolved document ([`Ctx`](crate::lsp::state::Ctx): the URI and the features of the host's
//! snapshot, [`crate::ide::DocAnalysis`]) and the request's params, asks the facade and
//! converts its plain answer to LSP types (a handler never looks at whether the document is a
//! raw file or a view: the facade chooses), and runs on the blocking pool through
//! [`crate::lsp::dispatch::off_loop`]; handlers with an async part (commands, the view text,
//! stats) await only the host, then run their work the same way. Conversions to LSP types are
//! in `crate::lsp::to_proto`; the method table is `crate::lsp::server`.

pub mod changes;
pub mod code_lens;
pub mod commands;
pub mod diagnostics;
pub mod diff;
pub mod folding;
pub mod hints;
pub mod history;
pub mod hover;
pub mod navigation;
pub mod search;
pub mod sessions;
pub mod stats;
pub mod symbols;
pub mod sync;
pub mod tokens;
pub mod view;
pub mod workspace_symbols;

/// The JSON array of `pieces` (each one or more JSON values separated by commas; empty ones
/// are skipped): `[a,b,…]`, in one allocation (the answers assembled from per-turn JSON,
/// issue 12).
pub(crate) fn json_array<'a>(pieces: impl Iterator<Item = &'a [u8]> + Clone) -> Vec<u8> {
    let len: usize = pieces.clone().map(|i| i.len() + 1).sum::<usize>() + 2;
    let mut out = Vec::with_capacity(len);
    out.push(b'[');
    for piece in pieces.filter(|p| !p.is_empty()) {
        if out.len() > 1 {
            out.push(b',');
        }
        out.extend_from_slice(piece);
    }
    out.push(b']');
    out
}
