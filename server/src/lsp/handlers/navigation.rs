//! `textDocument/definition` and `textDocument/references`: the places
//! (`ide::DocAnalysis::definition` / `references`) of the record or block under the position,
//! as locations (`to_proto::location`).

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::lsp::from_proto;
use crate::lsp::state::{Backend, Ctx};
use crate::lsp::to_proto;

pub(crate) fn references(
    b: &Backend,
    ctx: &Ctx,
    params: ReferenceParams,
) -> Result<Option<Vec<Location>>> {
    let pos = params.text_document_position.position;
    let enc = b.shared.enc();
    let Some(places) = ctx
        .doc
        .references(from_proto::position(pos), enc)
        .map_err(ctx.out_of_range(pos))?
    else {
        return Ok(None);
    };
    let locs: Vec<Location> = places
        .iter()
        .filter_map(|p| to_proto::location(ctx.uri(), &ctx.doc, p, enc))
        .collect();
    Ok((!locs.is_empty()).then_some(locs))
}

pub(crate) fn definition(
    b: &Backend,
    ctx: &Ctx,
    params: GotoDefinitionParams,
) -> Result<Option<GotoDefinitionResponse>> {
    let pos = params.text_document_position_params.position;
    let enc = b.shared.enc();
    let Some(def) = ctx
        .doc
        .definition(from_proto::position(pos), enc)
        .map_err(ctx.out_of_range(pos))?
    else {
        return Ok(None);
    };
    let mut locs: Vec<Location> = def
        .targets
        .iter()
        .filter_map(|p| to_proto::location(ctx.uri(), &ctx.doc, p, enc))
        .collect();
    if locs.is_empty() {
        // On the view, reveal the full record in the raw file (the view shortens).
        locs.extend(
            def.fallback
                .as_ref()
                .and_then(|p| to_proto::location(ctx.uri(), &ctx.doc, p, enc)),
        );
    }
    Ok(match locs.len() {
        0 => None,
        1 => Some(GotoDefinitionResponse::Scalar(locs.remove(0))),
        _ => Some(GotoDefinitionResponse::Array(locs)),
    })
}
