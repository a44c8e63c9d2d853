//! `textDocument/hover`: what a record, block or view line holds (`ide::hover`).

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::lsp::convert;
use crate::lsp::server::{Backend, Ctx, read};

impl Backend {
    pub(crate) fn hover_now(&self, ctx: &Ctx, params: HoverParams) -> Result<Option<Hover>> {
        let tdp = params.text_document_position_params;
        let pos = tdp.position;
        let item = self.item_at(ctx, pos)?;
        let snap = ctx.snap();
        let tz = read(&self.shared.settings).time_zone.clone();
        let enc = self.shared.enc();
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
            _ => match ctx {
                // A turn heading of the view: how its figures were computed.
                Ctx::View { view, .. } => snap
                    .analysis
                    .turns
                    .iter()
                    .find(|t| view.index.turn_heading(t.n) == Some(pos.line as usize))
                    .map(|t| {
                        ide::inlay_hints::turn_tooltip(t, snap.analysis.turn_count, tz.as_deref())
                    }),
                Ctx::Raw { .. } => None,
            },
        };
        let Some(markdown) = markdown else {
            return Ok(None);
        };
        let range = convert::line_range(ctx.text(), ctx.lines(), pos.line as usize, enc);
        let contents = if read(&self.shared.caps).hover_markdown {
            HoverContents::Markup(MarkupContent {
                kind: MarkupKind::Markdown,
                value: markdown,
            })
        } else {
            HoverContents::Markup(MarkupContent {
                kind: MarkupKind::PlainText,
                value: markdown,
            })
        };
        Ok(Some(Hover { contents, range }))
    }
}
