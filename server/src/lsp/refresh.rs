//! The protocol side of live files: the [`Sink`] the host's file follower (`store::live`) hands
//! its results to. Changed views are announced (`workspace/textDocumentContent/refresh` when
//! the client supports it, and `transcript/didChangeVirtualDocument`), raw documents changed
//! on disk with `transcript/didChangeFile`, then `workspace/{semanticTokens,inlayHint,
//! codeLens}/refresh` as the client supports them. Everything is sent from spawned tasks
//! (never awaited by a request handler; LSP-NOTES §1.2 rule 3), one batch in flight at a time.
//! Index-build progress becomes `$/progress` (work-done progress) when the client supports it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;
use tower_lsp_server::ls_types::request::WorkDoneProgressCreate;
use tower_lsp_server::ls_types::*;

use crate::lsp::ext::{
    DidChangeFile, DidChangeSessions, DidChangeVirtualDocument, SessionsChangedParams,
    TextDocumentContentRefresh, UriParams,
};
use crate::lsp::state::{Shared, read};
use crate::lsp::to_proto;
use crate::store::live::{Changes, IndexProgress, Level, Sink};

/// Pause before the diagnostics of a raw document whose file changed on disk, in ms: the
/// editor's own change for the same append (a reload) usually follows within a few ms and
/// supersedes them, so a line torn mid-append is not flagged for a moment (the Neovim e2e
/// suite saw `invalid JSON` on the torn line ~150 ms before the append's own diagnostics).
/// The same pause as a `didChange`'s.
const RAW_FILE_CHANGED_DELAY_MS: u64 = 150;

/// The client end of the file follower.
pub struct ClientSink {
    shared: Arc<Shared>,
    in_flight: Arc<AtomicBool>,
    progress: mpsc::UnboundedSender<IndexProgress>,
}

impl ClientSink {
    /// A sink sending to `shared`'s client (spawns the task that reports progress in order).
    pub fn new(shared: Arc<Shared>) -> ClientSink {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(report_progress(shared.clone(), rx));
        ClientSink {
            shared,
            in_flight: Arc::new(AtomicBool::new(false)),
            progress: tx,
        }
    }
}

/// Starts the host's file follower with a [`ClientSink`] (once, at `initialized`).
pub fn start(shared: &Arc<Shared>) {
    let sink: Arc<dyn Sink> = Arc::new(ClientSink::new(shared.clone()));
    crate::store::live::start(shared.host.clone(), sink, shared.shutdown.subscribe());
}

impl Sink for ClientSink {
    fn log(&self, level: Level, message: String) {
        self.shared.log(to_proto::message_type(level), message);
    }

    fn show(&self, level: Level, message: String) {
        let client = self.shared.client.clone();
        let typ = to_proto::message_type(level);
        tokio::spawn(async move { client.show_message(typ, message).await });
    }

    fn busy(&self) -> bool {
        self.in_flight.load(Ordering::SeqCst)
    }

    fn changed(&self, changes: Changes) {
        self.in_flight.store(true, Ordering::SeqCst);
        // Raw documents whose file changed on disk: diagnostics again (the file's bytes are
        // checked for invalid UTF-8; the editor's buffer cannot tell).
        for doc in &changes.raw {
            if let (Some(uri), Some(source)) =
                (to_proto::doc_uri(doc), self.shared.host.raw_source(doc))
            {
                crate::lsp::handlers::diagnostics::schedule(
                    &self.shared,
                    uri,
                    source,
                    RAW_FILE_CHANGED_DELAY_MS,
                );
            }
        }
        let caps = read(&self.shared.caps).clone();
        let client = self.shared.client.clone();
        let flag = self.in_flight.clone();
        tokio::spawn(async move {
            for uri in changes.views.iter().filter_map(to_proto::doc_uri) {
                if caps.text_document_content {
                    let _ = client
                        .send_request::<TextDocumentContentRefresh>(UriParams { uri: uri.clone() })
                        .await;
                }
                client
                    .send_notification::<DidChangeVirtualDocument>(UriParams { uri })
                    .await;
            }
            for uri in changes.raw.iter().filter_map(to_proto::doc_uri) {
                client
                    .send_notification::<DidChangeFile>(UriParams { uri })
                    .await;
            }
            if changes.features {
                if caps.semantic_tokens_refresh {
                    let _ = client.semantic_tokens_refresh().await;
                }
                if caps.inlay_hint_refresh {
                    let _ = client.inlay_hint_refresh().await;
                }
                if caps.code_lens_refresh {
                    let _ = client.code_lens_refresh().await;
                }
            }
            flag.store(false, Ordering::SeqCst);
        });
    }

    fn progress(&self, progress: IndexProgress) {
        let _ = self.progress.send(progress);
    }

    fn sessions_changed(&self, paths: Vec<std::path::PathBuf>) {
        let uris: Vec<Uri> = paths.iter().filter_map(|p| to_proto::file_uri(p)).collect();
        if uris.is_empty() {
            return;
        }
        let client = self.shared.client.clone();
        tokio::spawn(async move {
            client
                .send_notification::<DidChangeSessions>(SessionsChangedParams { uris })
                .await;
        });
    }
}

/// Sends index-build progress in order: `window/workDoneProgress/create`, then begin, reports
/// and end (nothing when the client does not support work-done progress or refuses the token).
async fn report_progress(shared: Arc<Shared>, mut rx: mpsc::UnboundedReceiver<IndexProgress>) {
    let token = NumberOrString::String("transcript-ls/index".to_string());
    let mut current = None;
    while let Some(p) = rx.recv().await {
        match p {
            IndexProgress::Begin { .. } => {
                current = None;
                if !read(&shared.caps).work_done_progress {
                    continue;
                }
                let created = shared
                    .client
                    .send_request::<WorkDoneProgressCreate>(WorkDoneProgressCreateParams {
                        token: token.clone(),
                    })
                    .await
                    .is_ok();
                if created {
                    current = Some(
                        shared
                            .client
                            .progress(token.clone(), "Indexing transcripts")
                            .with_percentage(0)
                            .begin()
                            .await,
                    );
                }
            }
            IndexProgress::Report {
                done,
                total,
                percent,
            } => {
                if let Some(pr) = &current {
                    pr.report_with_message(format!("{done}/{total} files"), percent)
                        .await;
                }
            }
            IndexProgress::End { message } => {
                if let Some(pr) = current.take() {
                    pr.finish_with_message(message).await;
                }
            }
        }
    }
}
