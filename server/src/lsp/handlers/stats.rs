//! `transcript/stats` (PROTOCOL.md): the totals of the transcript behind a URI
//! (`ide::DocAnalysis::stats`). An open raw document is counted as the editor holds it; any other URI as
//! the file on disk. Errors (`InvalidParams`): not a `file:` or `transcript:` URI, a file that
//! cannot be read, a file that is not a transcript.

use tower_lsp_server::jsonrpc::Result;

use crate::ide::DocAnalysis;
use crate::ide::stats::Stats;
use crate::lsp::dispatch::off_loop;
use crate::lsp::ext::{self, Request as _, StatsParams};
use crate::lsp::from_proto;
use crate::lsp::state::{Backend, host_error, invalid};

pub(crate) async fn stats(b: &Backend, params: StatsParams) -> Result<Stats> {
    let uri = params.uri;
    let host = &b.shared.host;
    let source = match host.raw_source(&from_proto::doc_id(&uri)) {
        Some(s) => s,
        None => {
            let path = b.file_path_of(&uri, ext::Stats::METHOD)?;
            host.disk_source(&path)
                .await
                .map_err(|e| host_error(e, &uri))?
        }
    };
    let doc = DocAnalysis::of_source(source.snapshot(&host.stamp()).await);
    off_loop(&b.shared, ext::Stats::METHOD, move || {
        doc.stats(uri.as_str()).ok_or_else(|| {
            invalid(format!(
                "not a transcript (no {} records): {}",
                crate::formats::agents::names("or"),
                uri.as_str()
            ))
        })
    })
    .await
}
