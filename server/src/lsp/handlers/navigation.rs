//! `textDocument/definition` and `textDocument/references`: `ide::navigation` targets of the
//! record or block under the position, as locations (`to_proto::location`).

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::lsp::state::{Backend, Ctx};
use crate::lsp::to_proto;

pub(crate) fn references(
    b: &Backend,
    ctx: &Ctx,
    params: ReferenceParams,
) -> Result<Option<Vec<Location>>> {
    let tdp = params.text_document_position;
    let Some((entry, block)) = b.item_at(ctx, tdp.position)? else {
        return Ok(None);
    };
    let snap = ctx.snap();
    let targets =
        ide::navigation::references(&snap.transcript, &snap.analysis, &snap.lookup, entry, block);
    let enc = b.shared.enc();
    let locs: Vec<Location> = targets
        .iter()
        .filter_map(|t| to_proto::location(ctx.uri(), &ctx.doc, t, enc))
        .collect();
    Ok((!locs.is_empty()).then_some(locs))
}

pub(crate) fn definition(
    b: &Backend,
    ctx: &Ctx,
    params: GotoDefinitionParams,
) -> Result<Option<GotoDefinitionResponse>> {
    let tdp = params.text_document_position_params;
    let Some((entry, block)) = b.item_at(ctx, tdp.position)? else {
        return Ok(None);
    };
    let snap = ctx.snap();
    let files = &snap.session_files().subagents;
    let targets = ide::navigation::definition(
        &snap.transcript,
        &snap.analysis,
        &snap.lookup,
        files,
        entry,
        block,
    );
    let enc = b.shared.enc();
    let mut locs: Vec<Location> = targets
        .iter()
        .filter_map(|t| to_proto::location(ctx.uri(), &ctx.doc, t, enc))
        .collect();
    if locs.is_empty() {
        // On the view, reveal the full record in the raw file (the view shortens).
        locs.extend(to_proto::raw_record_location(&ctx.doc, entry, block, enc));
    }
    Ok(match locs.len() {
        0 => None,
        1 => Some(GotoDefinitionResponse::Scalar(locs.remove(0))),
        _ => Some(GotoDefinitionResponse::Array(locs)),
    })
}
