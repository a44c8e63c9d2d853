//! `transcript/stats` (PROTOCOL.md): the totals of the transcript behind a URI
//! (`ide::stats`). An open raw document is counted as the editor holds it; any other URI as
//! the file on disk. Errors (`InvalidParams`): not a `file:` or `transcript:` URI, a file that
//! cannot be read, a file that is not a transcript.

use tower_lsp_server::jsonrpc::Result;

use crate::ide::stats::{self, Stats};
use crate::lsp::dispatch::off_loop;
use crate::lsp::state::{Backend, host_error, invalid};
use crate::lsp::stats::{STATS, StatsParams};

pub(crate) async fn stats(b: &Backend, params: StatsParams) -> Result<Stats> {
    let uri = params.uri;
    let host = &b.shared.host;
    let source = match host.raw_source(uri.as_str()) {
        Some(s) => s,
        None => {
            let path = b.file_path_of(&uri, STATS)?;
            host.disk_source(&path)
                .await
                .map_err(|e| host_error(e, &uri))?
        }
    };
    let snap = source.snapshot(&host.stamp()).await;
    off_loop(&b.shared, STATS, move || {
        if !snap.is_transcript() {
            return Err(invalid(format!(
                "not a transcript (no {} records): {}",
                crate::formats::agents::names("or"),
                uri.as_str()
            )));
        }
        let file = match &snap.path {
            Some(p) => p.display().to_string(),
            None => uri.as_str().to_string(),
        };
        Ok(stats::stats(file, &snap.transcript, &snap.analysis))
    })
    .await
}
