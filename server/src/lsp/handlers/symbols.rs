//! `textDocument/documentSymbol`: turns and their parts (`ide::symbols`), nested or flat as the
//! client supports, answered as JSON bytes that the transport writes as they are
//! (`dispatch::Reply::Json`; issue 12).

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use std::sync::atomic::Ordering;

use crate::lsp::handlers::json_array;
use crate::lsp::state::{Backend, Ctx, internal, read};
use crate::lsp::to_proto;

/// The answer to `textDocument/documentSymbol`, as the JSON of a `DocumentSymbol[]` (a
/// client with hierarchical symbols) or a `SymbolInformation[]`: the same JSON as the typed
/// `DocumentSymbolResponse` that tower-lsp-server would write.
///
/// On a raw transcript, the answer is assembled from one piece of JSON per turn (its
/// `DocumentSymbol`, or its flat `SymbolInformation`s), kept per document under the position
/// encoding and the form (`lsp::turn_cache`): a turn the snapshot kept (same outline entry,
/// same lines) is not converted nor serialised again, so an append costs the
/// turns it changed plus copying the bytes (issue 12: serialising the ~5,000 symbols of a
/// 100 MB transcript through `serde_json::Value` took twenty times the append itself). With
/// `Shared::reference_answers`, made from scratch through a `Value` (the tests' reference).
pub(crate) fn document_symbol(
    b: &Backend,
    ctx: &Ctx,
    _params: DocumentSymbolParams,
) -> Result<Vec<u8>> {
    let enc = b.shared.enc();
    let hierarchical = read(&b.shared.caps).hierarchical_symbols;
    let reference = b.shared.reference_answers.load(Ordering::Relaxed);
    if !reference && let Some(turns) = ctx.doc.turns() {
        let doc = &ctx.id;
        let open = || b.shared.host.raw_source(doc).is_some();
        let key = (enc, hierarchical);
        return b
            .shared
            .turn_caches
            .symbols
            .with(doc, key, &turns, open, |pieces| {
                for i in 0..turns.len() {
                    if pieces.get(i).is_none() {
                        pieces.set(i, turn_json(turns.symbol(i), ctx, enc, hierarchical)?);
                    }
                }
                Ok(json_array(
                    pieces.iter().map(|p| p.map_or(&[][..], |j| &j[..])),
                ))
            });
    }
    let doc_syms: Vec<DocumentSymbol> = ctx
        .doc
        .outline()
        .iter()
        .map(|s| to_proto::document_symbol(s, ctx.lines(), ctx.text(), enc))
        .collect();
    let answer = if hierarchical {
        DocumentSymbolResponse::Nested(doc_syms)
    } else {
        let mut flat = Vec::new();
        to_proto::flatten_symbols(&doc_syms, ctx.uri(), None, &mut flat);
        DocumentSymbolResponse::Flat(flat)
    };
    crate::lsp::state::answer_json(&answer, reference, "document symbols")
}

/// The JSON of one turn's outline entry `s`, as elements of the answer's array: its
/// `DocumentSymbol` (`hierarchical`), else its `SymbolInformation` and its descendants', in
/// order, separated by commas.
fn turn_json(
    s: &ide::symbols::Symbol,
    ctx: &Ctx,
    enc: crate::source::position::Encoding,
    hierarchical: bool,
) -> Result<Box<[u8]>> {
    let proto = to_proto::document_symbol(s, ctx.lines(), ctx.text(), enc);
    let as_json = |e: serde_json::Error| internal(format!("document symbol as JSON: {e}"));
    if hierarchical {
        return Ok(serde_json::to_vec(&proto)
            .map_err(as_json)?
            .into_boxed_slice());
    }
    let mut flat = Vec::new();
    to_proto::flatten_symbols(std::slice::from_ref(&proto), ctx.uri(), None, &mut flat);
    let mut out = Vec::new();
    for (n, item) in flat.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, item).map_err(as_json)?;
    }
    Ok(out.into_boxed_slice())
}
