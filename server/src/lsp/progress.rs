//! Work-done progress of big loads (issue 12, item 4): the host's [`LoadProgress`] events
//! become `window/workDoneProgress/create` and `$/progress` begin / report / end, one token
//! per load (`"transcript-ls/load/<n>"`), sent in order from one task. Only when the client
//! announced `window.workDoneProgress`; a load whose token the client refuses (or does not
//! answer within [`CREATE_TIMEOUT`]) is not shown.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tower_lsp_server::ls_types::request::WorkDoneProgressCreate;
use tower_lsp_server::ls_types::*;

use crate::lsp::state::{Shared, read};
use crate::store::progress::LoadProgress;

/// How long the server waits for the client to accept a progress token.
pub const CREATE_TIMEOUT: Duration = Duration::from_secs(5);

/// Hands the host a reporter that forwards load progress to the client (at `initialized`;
/// nothing when the client does not show work-done progress).
pub fn start(shared: &Arc<Shared>) {
    if !read(&shared.caps).work_done_progress {
        return;
    }
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(forward(shared.clone(), rx));
    shared.host.set_progress(Arc::new(move |p| {
        let _ = tx.send(p);
    }));
}

async fn forward(shared: Arc<Shared>, mut rx: mpsc::UnboundedReceiver<LoadProgress>) {
    let client = shared.client.clone();
    let mut ongoing = HashMap::new();
    while let Some(p) = rx.recv().await {
        match p {
            LoadProgress::Begin { id, title, total } => {
                let token = NumberOrString::String(format!("transcript-ls/load/{id}"));
                let create =
                    client.send_request::<WorkDoneProgressCreate>(WorkDoneProgressCreateParams {
                        token: token.clone(),
                    });
                if !matches!(
                    tokio::time::timeout(CREATE_TIMEOUT, create).await,
                    Ok(Ok(()))
                ) {
                    continue;
                }
                let pr = client
                    .progress(token, title)
                    .with_percentage(0)
                    .with_message(format!("{} MB", total / 1_000_000))
                    .begin()
                    .await;
                ongoing.insert(id, pr);
            }
            LoadProgress::Report {
                id,
                percent,
                message,
            } => {
                if let Some(pr) = ongoing.get(&id) {
                    pr.report_with_message(message, percent).await;
                }
            }
            LoadProgress::End { id, message } => {
                if let Some(pr) = ongoing.remove(&id) {
                    pr.finish_with_message(message).await;
                }
            }
        }
    }
}
