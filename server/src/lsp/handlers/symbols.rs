//! `textDocument/documentSymbol`: turns and their parts (`ide::symbols`), nested or flat as the
//! client supports.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::ide::host::DocSnap;
use std::sync::Arc;

use crate::lsp::state::{Backend, Ctx, lock, read};
use crate::lsp::to_proto;

pub(crate) fn document_symbol(
    b: &Backend,
    ctx: &Ctx,
    _params: DocumentSymbolParams,
) -> Result<Option<DocumentSymbolResponse>> {
    let enc = b.shared.enc();
    let doc_syms: Vec<DocumentSymbol> = match &ctx.doc {
        DocSnap::Raw { snap } if !snap.is_transcript() => Vec::new(),
        DocSnap::Raw { snap } => {
            // One entry per turn; the entries the snapshot kept from the previous one (same
            // `Arc`) are converted once (issue 12).
            let syms = snap.raw_symbols();
            let uri = ctx.uri().as_str();
            let mut cached = lock(&b.shared.symbols)
                .remove(uri)
                .unwrap_or_default()
                .into_iter();
            let mut fresh = Vec::with_capacity(syms.len());
            let mut out = Vec::with_capacity(syms.len());
            for s in syms {
                let proto = match cached.next() {
                    Some((old, proto)) if Arc::ptr_eq(&old, s) => proto,
                    _ => to_proto::document_symbol(s, ctx.lines(), ctx.text(), enc),
                };
                out.push(proto.clone());
                fresh.push((s.clone(), proto));
            }
            if b.shared.host.raw_source(uri).is_some() {
                lock(&b.shared.symbols).insert(uri.to_string(), fresh);
            }
            out
        }
        DocSnap::View { snap, view, .. } => ide::symbols::view_symbols(&view.view, &snap.analysis)
            .iter()
            .map(|s| to_proto::document_symbol(s, ctx.lines(), ctx.text(), enc))
            .collect(),
    };
    if read(&b.shared.caps).hierarchical_symbols {
        Ok(Some(DocumentSymbolResponse::Nested(doc_syms)))
    } else {
        let mut flat = Vec::new();
        to_proto::flatten_symbols(&doc_syms, ctx.uri(), None, &mut flat);
        Ok(Some(DocumentSymbolResponse::Flat(flat)))
    }
}
