//! `transcript/stats` (PROTOCOL.md): the exact totals of one transcript, the figures of
//! `transcript-ls stats --json` (`crate::ide::stats`), for status bars and scripts (issue 11
//! defect 4, issue 7 item 2).

use serde::Deserialize;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::Uri;

use crate::ide::stats::{self, Stats};
use crate::lsp::capabilities::VIEW_SCHEME;
use crate::lsp::server::{Backend, invalid, view_key};

/// Params of `transcript/stats`: `{ "uri": … }`, a raw transcript (`file:`, open or not) or a
/// view (`transcript:`; its query is ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct StatsParams {
    pub uri: Uri,
}

impl Backend {
    /// `transcript/stats`: the totals of the transcript behind `uri`. An open raw document is
    /// counted as the editor holds it; any other URI as the file on disk. Errors
    /// (`InvalidParams`): not a `file:` or `transcript:` URI, a file that cannot be read, a
    /// file that is not a transcript.
    pub async fn transcript_stats(&self, params: StatsParams) -> Result<Stats> {
        let uri = &params.uri;
        let open = {
            let st = self.shared.store.lock().unwrap_or_else(|e| e.into_inner());
            st.raw.get(uri.as_str()).map(|(_, s)| s.clone())
        };
        let source = match open {
            Some(s) => s,
            None => {
                let path = match uri.scheme().as_str() {
                    VIEW_SCHEME => view_key(uri, false)?.path,
                    "file" => uri
                        .to_file_path()
                        .map(|p| p.into_owned())
                        .ok_or_else(|| invalid(format!("not a file path: {}", uri.as_str())))?,
                    other => {
                        return Err(invalid(format!(
                            "transcript/stats needs a file: or {VIEW_SCHEME}: URI, got {other}:"
                        )));
                    }
                };
                self.shared.disk_source(&path).await?
            }
        };
        let snap = source.snapshot(&self.shared.stamp()).await;
        if !snap.is_transcript() {
            return Err(invalid(format!(
                "not a transcript (no Claude Code, Codex, Pi or Copilot CLI records): {}",
                uri.as_str()
            )));
        }
        let file = match &snap.path {
            Some(p) => p.display().to_string(),
            None => uri.as_str().to_string(),
        };
        Ok(stats::stats(file, &snap.transcript, &snap.analysis))
    }
}
