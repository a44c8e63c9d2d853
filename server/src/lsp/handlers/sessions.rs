//! `transcript/sessions` (PROTOCOL.md): sessions from the host's index, best match then most
//! recent first; paths become `file:` URIs (`to_proto::session`); a session that cannot be
//! named by a URI is left out.

use tower_lsp_server::jsonrpc::Result;

use crate::lsp::ext::{SessionsParams, SessionsResult};
use crate::lsp::state::{Backend, read};
use crate::lsp::to_proto;

pub(crate) fn sessions(b: &Backend, params: Option<SessionsParams>) -> Result<SessionsResult> {
    let p = params.unwrap_or_default();
    let q = crate::index::SessionQuery {
        query: p.query,
        project: p.project,
        limit: p.limit,
    };
    let now = crate::index::system_time_ms(std::time::SystemTime::now()).unwrap_or(0);
    let host = &b.shared.host;
    let list = read(&host.index).sessions(&q, now);
    Ok(SessionsResult {
        sessions: list.iter().filter_map(to_proto::session).collect(),
        complete: host.is_index_ready(),
    })
}
