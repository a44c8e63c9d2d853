//! `textDocument/publishDiagnostics` of raw documents (`ide::DocAnalysis::diagnostics`), published from a
//! spawned task after a change settles (never awaited by a notification handler).

use std::sync::Arc;

use tower_lsp_server::ls_types::*;

use crate::ide::DocAnalysis;
use crate::lsp::from_proto;
use crate::lsp::state::Shared;
use crate::lsp::to_proto;
use crate::store::document::Source;

/// Publishes diagnostics of raw document `uri` (after `delay_ms`, skipped when a newer change
/// arrived meanwhile or the document was closed).
pub fn schedule(shared: &Arc<Shared>, uri: Uri, source: Arc<Source>, delay_ms: u64) {
    let shared = shared.clone();
    let generation = source.generation();
    tokio::spawn(async move {
        if delay_ms > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
            if source.generation() != generation {
                return;
            }
        }
        let host = &shared.host;
        let doc = DocAnalysis::of_source(source.snapshot(&host.stamp()).await);
        // Closed meanwhile?
        if !host.is_open(&from_proto::doc_id(&uri)) {
            return;
        }
        if doc.unrecognised() {
            shared.note_not_transcript(&uri);
        }
        let enc = shared.enc();
        let diags = doc
            .diagnostics()
            .into_iter()
            .map(|d| to_proto::diagnostic(d, doc.text(), doc.lines(), enc))
            .collect();
        shared
            .client
            .publish_diagnostics(uri, diags, doc.version())
            .await;
    });
}
