//! `textDocument/references` (and the shared position lookup of definition and references):
//! `ide::navigation` targets as locations.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::lsp::server::{Backend, Ctx};

impl Backend {
    pub(crate) fn references_now(
        &self,
        ctx: &Ctx,
        params: ReferenceParams,
    ) -> Result<Option<Vec<Location>>> {
        let tdp = params.text_document_position;
        let Some((entry, block)) = self.item_at(ctx, tdp.position)? else {
            return Ok(None);
        };
        let snap = ctx.snap();
        let targets = ide::navigation::references(
            &snap.transcript,
            &snap.analysis,
            &snap.lookup,
            entry,
            block,
        );
        let locs: Vec<Location> = targets
            .iter()
            .filter_map(|t| self.target_location(ctx, t))
            .collect();
        Ok((!locs.is_empty()).then_some(locs))
    }
}
