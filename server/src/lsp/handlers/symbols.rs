//! `textDocument/documentSymbol`: turns and their parts (`ide::symbols`), nested or flat as the
//! client supports.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::ide::host::DocSnap;
use crate::lsp::state::{Backend, Ctx, read};
use crate::lsp::to_proto;

pub(crate) fn document_symbol(
    b: &Backend,
    ctx: &Ctx,
    _params: DocumentSymbolParams,
) -> Result<Option<DocumentSymbolResponse>> {
    let syms = match &ctx.doc {
        DocSnap::Raw { snap } if !snap.is_transcript() => Vec::new(),
        DocSnap::Raw { snap } => {
            ide::symbols::raw_symbols(&snap.transcript, &snap.analysis, &snap.text)
        }
        DocSnap::View { snap, view, .. } => ide::symbols::view_symbols(&view.view, &snap.analysis),
    };
    let enc = b.shared.enc();
    let doc_syms: Vec<DocumentSymbol> = syms
        .iter()
        .map(|s| to_proto::document_symbol(s, ctx.lines(), ctx.text(), enc))
        .collect();
    if read(&b.shared.caps).hierarchical_symbols {
        Ok(Some(DocumentSymbolResponse::Nested(doc_syms)))
    } else {
        let mut flat = Vec::new();
        to_proto::flatten_symbols(&doc_syms, ctx.uri(), None, &mut flat);
        Ok(Some(DocumentSymbolResponse::Flat(flat)))
    }
}
