//! `textDocument/inlayHint`: the per-turn figures at line ends (`ide::inlay_hints`).

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::ide::host::DocSnap;
use crate::lsp::state::{Backend, Ctx, invalid, read};
use crate::lsp::to_proto;

pub(crate) fn inlay_hint(
    b: &Backend,
    ctx: &Ctx,
    params: InlayHintParams,
) -> Result<Option<Vec<InlayHint>>> {
    let r = params.range;
    if r.start > r.end || r.start.line as usize >= ctx.lines().line_count() {
        return Err(invalid(format!(
            "range starting at line {} is out of range (the document has {} lines)",
            r.start.line,
            ctx.lines().line_count()
        )));
    }
    let tz = read(&b.shared.settings).time_zone.clone();
    // Only the hints of the range are made (a screen of a 1 GB transcript, issue 12).
    let lines = r.start.line as usize..=r.end.line as usize;
    let hints = match &ctx.doc {
        DocSnap::Raw { snap } if !snap.is_transcript() => Vec::new(),
        DocSnap::Raw { snap } => {
            ide::inlay_hints::raw_hints_in(&snap.transcript, &snap.analysis, tz.as_deref(), lines)
        }
        DocSnap::View { snap, view, .. } => {
            ide::inlay_hints::view_hints_in(&view.view, &snap.analysis, tz.as_deref(), lines)
        }
    };
    let enc = b.shared.enc();
    Ok(Some(
        hints
            .into_iter()
            .filter_map(|h| to_proto::inlay_hint(h, ctx.text(), ctx.lines(), enc))
            .collect(),
    ))
}
