//! `transcript/stats` (PROTOCOL.md), the method's name and params: the exact totals of one
//! transcript, the figures of `transcript-ls stats --json` (`crate::ide::stats`), for status
//! bars and scripts (issue 11 defect 4, issue 7 item 2). The handler is
//! `crate::lsp::handlers::stats`.

use serde::Deserialize;
use tower_lsp_server::ls_types::Uri;

/// `transcript/stats` (client -> server): `StatsParams` -> `ide::stats::Stats`.
pub const STATS: &str = "transcript/stats";

/// Params of `transcript/stats`: `{ "uri": … }`, a raw transcript (`file:`, open or not) or a
/// view (`transcript:`; its query is ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct StatsParams {
    pub uri: Uri,
}
