//! `textDocument/hover`: what a record, block or view line holds (`ide::hover`).

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::ide::host::DocSnap;
use crate::lsp::state::{Backend, Ctx, read};
use crate::lsp::to_proto;

pub(crate) fn hover(b: &Backend, ctx: &Ctx, params: HoverParams) -> Result<Option<Hover>> {
    let pos = params.text_document_position_params.position;
    let item = b.item_at(ctx, pos)?;
    let snap = ctx.snap();
    let tz = read(&b.shared.settings).time_zone.clone();
    let enc = b.shared.enc();
    let markdown = match item {
        Some((entry, block)) if snap.is_transcript() => ide::hover::entry_hover(
            &snap.transcript,
            &snap.analysis,
            &snap.lookup,
            &snap.text,
            entry,
            block,
            tz.as_deref(),
        ),
        _ => match &ctx.doc {
            // A turn heading of the view: how its figures were computed.
            DocSnap::View { view, .. } => snap
                .analysis
                .turns
                .iter()
                .find(|t| view.index.turn_heading(t.n) == Some(pos.line as usize))
                .map(|t| {
                    ide::inlay_hints::turn_tooltip(t, snap.analysis.turn_count, tz.as_deref())
                        + &ide::inlay_hints::credits_tooltip(&snap.analysis, t)
                }),
            DocSnap::Raw { .. } => None,
        },
    };
    let Some(mut markdown) = markdown else {
        return Ok(None);
    };
    // A turn's opener (raw) or heading (view): what the turn changed (issue 22).
    let turn = match (&ctx.doc, item) {
        (_, Some((entry, _))) => snap
            .lookup
            .turn_of(entry)
            .and_then(|t| snap.analysis.turns.get(t))
            .filter(|t| t.opener == Some(entry)),
        (DocSnap::View { view, .. }, None) => snap
            .analysis
            .turns
            .iter()
            .find(|t| view.index.turn_heading(t.n) == Some(pos.line as usize)),
        _ => None,
    };
    if let Some(c) = turn.and_then(|t| snap.changes().turn_at(t.n)) {
        markdown.push('\n');
        markdown.push_str(&ide::hover::changes_markdown(
            c,
            snap.transcript.meta.cwd.as_deref(),
        ));
    }
    let range = to_proto::line_range(ctx.text(), ctx.lines(), pos.line as usize, enc);
    let markdown_ok = read(&b.shared.caps).hover_markdown;
    Ok(Some(to_proto::hover(markdown, range, markdown_ok)))
}
