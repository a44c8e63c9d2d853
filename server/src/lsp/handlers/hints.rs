//! `textDocument/inlayHint`: the per-turn figures at line ends (`ide::inlay_hints`).

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::lsp::convert;
use crate::lsp::server::{Backend, Ctx, invalid, read};

impl Backend {
    pub(crate) fn inlay_hint_now(
        &self,
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
        let tz = read(&self.shared.settings).time_zone.clone();
        let hints = match ctx {
            Ctx::Raw { snap, .. } if !snap.is_transcript() => Vec::new(),
            Ctx::Raw { snap, .. } => {
                ide::inlay_hints::raw_hints(&snap.transcript, &snap.analysis, tz.as_deref())
            }
            Ctx::View { snap, view, .. } => {
                ide::inlay_hints::view_hints(&view.view, &snap.analysis, tz.as_deref())
            }
        };
        let enc = self.shared.enc();
        let (lo, hi) = (r.start.line as usize, r.end.line as usize);
        Ok(Some(
            hints
                .into_iter()
                .filter(|h| h.line >= lo && h.line <= hi)
                .filter_map(|h| {
                    // Raw turn hints open their line (issue 7); the others end it.
                    let start = h.position == ide::inlay_hints::HintPosition::LineStart;
                    let col = if start {
                        0
                    } else {
                        convert::line_len(ctx.text(), ctx.lines(), h.line, enc)?
                    };
                    Some(InlayHint {
                        position: Position::new(h.line as u32, col),
                        label: InlayHintLabel::String(h.label),
                        kind: None,
                        text_edits: None,
                        tooltip: Some(InlayHintTooltip::MarkupContent(MarkupContent {
                            kind: MarkupKind::Markdown,
                            value: h.tooltip,
                        })),
                        padding_left: Some(!start),
                        padding_right: Some(start),
                        data: None,
                    })
                })
                .collect(),
        ))
    }
}
