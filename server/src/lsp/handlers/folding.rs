//! `textDocument/foldingRange`: turn, activity, thought and gate folds of the raw document or
//! the view (`ide::folding`), limited to the client's `rangeLimit`.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::ide::host::DocSnap;
use crate::lsp::state::{Backend, Ctx, read};
use crate::lsp::to_proto;

pub(crate) fn folding_range(
    b: &Backend,
    ctx: &Ctx,
    _params: FoldingRangeParams,
) -> Result<Option<Vec<FoldingRange>>> {
    let folds = match &ctx.doc {
        DocSnap::Raw { snap } if !snap.is_transcript() => Vec::new(),
        DocSnap::Raw { snap } => ide::folding::raw_folds(&snap.transcript, &snap.analysis),
        DocSnap::View { view, .. } => ide::folding::view_folds(&view.view),
    };
    let limit = read(&b.shared.caps)
        .folding_range_limit
        .unwrap_or(usize::MAX);
    let folds = ide::folding::limit_folds(folds, limit);
    let last = ctx.lines().line_count().saturating_sub(1);
    Ok(Some(
        folds
            .into_iter()
            .filter(|f| f.start_line < last)
            .map(|f| to_proto::folding_range(f, last))
            .collect(),
    ))
}
