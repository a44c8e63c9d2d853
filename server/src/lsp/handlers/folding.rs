//! `textDocument/foldingRange`: turn, activity, thought and gate folds of the raw document or
//! the view (`ide::folding`), limited to the client's `rangeLimit`.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::ide::folding::FoldKind;
use crate::lsp::server::{Backend, Ctx, read};

impl Backend {
    pub(crate) fn folding_range_now(
        &self,
        ctx: &Ctx,
        _params: FoldingRangeParams,
    ) -> Result<Option<Vec<FoldingRange>>> {
        let folds = match ctx {
            Ctx::Raw { snap, .. } if !snap.is_transcript() => Vec::new(),
            Ctx::Raw { snap, .. } => ide::folding::raw_folds(&snap.transcript, &snap.analysis),
            Ctx::View { view, .. } => ide::folding::view_folds(&view.view),
        };
        let limit = read(&self.shared.caps)
            .folding_range_limit
            .unwrap_or(usize::MAX);
        let folds = ide::folding::limit_folds(folds, limit);
        let last = ctx.lines().line_count().saturating_sub(1);
        Ok(Some(
            folds
                .into_iter()
                .filter(|f| f.start_line < last)
                .map(|f| FoldingRange {
                    start_line: f.start_line as u32,
                    start_character: None,
                    end_line: f.end_line.min(last) as u32,
                    end_character: None,
                    kind: Some(fold_kind(f.kind)),
                    collapsed_text: Some(f.label),
                })
                .collect(),
        ))
    }
}

fn fold_kind(k: FoldKind) -> FoldingRangeKind {
    match k {
        FoldKind::Activity | FoldKind::Thought => FoldingRangeKind::Comment,
        // Inherited history reads like imports: clients that collapse imports by default
        // (VS Code `editor.foldingImportsByDefault`) start with it collapsed.
        FoldKind::Inherited => FoldingRangeKind::Imports,
        _ => FoldingRangeKind::Region,
    }
}
