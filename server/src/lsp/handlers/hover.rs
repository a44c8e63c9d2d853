//! `textDocument/hover`: what a record, block or view line holds (`ide::DocAnalysis::hover`),
//! as Markdown (or plain text for a client without it) over the hovered line.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::lsp::from_proto;
use crate::lsp::state::{Backend, Ctx, read};
use crate::lsp::to_proto;

pub(crate) fn hover(b: &Backend, ctx: &Ctx, params: HoverParams) -> Result<Option<Hover>> {
    let pos = params.text_document_position_params.position;
    let tz = read(&b.shared.settings).time_zone.clone();
    let enc = b.shared.enc();
    let Some(markdown) = ctx
        .doc
        .hover(from_proto::position(pos), enc, tz.as_deref())
        .map_err(ctx.out_of_range(pos))?
    else {
        return Ok(None);
    };
    let range = to_proto::line_range(ctx.text(), ctx.lines(), pos.line as usize, enc);
    let markdown_ok = read(&b.shared.caps).hover_markdown;
    Ok(Some(to_proto::hover(markdown, range, markdown_ok)))
}
