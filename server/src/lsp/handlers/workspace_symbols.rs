//! `workspace/symbol`: turns of the indexed sessions matching the query
//! (`ide::workspace_symbols`), at most 500.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::lsp::state::{Backend, read};
use crate::lsp::to_proto;

/// At most this many symbols per answer.
pub const MAX_SYMBOLS: usize = 500;

pub(crate) fn symbol(
    b: &Backend,
    params: WorkspaceSymbolParams,
) -> Result<Option<WorkspaceSymbolResponse>> {
    let idx = read(&b.shared.host.index);
    let hits = ide::workspace_symbols::query(&idx, &params.query, MAX_SYMBOLS);
    let out = hits
        .into_iter()
        .filter_map(to_proto::workspace_symbol)
        .collect();
    Ok(Some(WorkspaceSymbolResponse::Flat(out)))
}
