//! Document synchronisation (`textDocument/didOpen`, `didChange`, `didClose`) and
//! `workspace/didChangeConfiguration`: each converts its params to the host's plain terms and
//! applies the mutation synchronously, before any `.await` (LSP-NOTES §1.2 rule 1).

use tower_lsp_server::ls_types::*;

use crate::lsp::from_proto;
use crate::lsp::handlers::diagnostics;
use crate::lsp::state::{Backend, lock, write};
use crate::store::document::ChangeError;
use crate::store::host::ViewChangeError;

pub(crate) fn did_open(b: &Backend, params: DidOpenTextDocumentParams) {
    let td = params.text_document;
    let uri = td.uri;
    let shared = &b.shared;
    if from_proto::is_view(&uri) {
        let key = match shared.view_key(&uri) {
            Ok(k) => k,
            Err(e) => {
                shared.log(MessageType::WARNING, e.message.to_string());
                return;
            }
        };
        shared
            .host
            .open_view(&from_proto::doc_id(&uri), key.clone(), &td.text, td.version);
        // Load (and follow) the file behind the view.
        let shared = shared.clone();
        tokio::spawn(async move {
            if let Err(e) = shared.host.disk_source(&key.path).await {
                shared.log(MessageType::WARNING, e.to_string());
            }
        });
        return;
    }
    let path = crate::lsp::from_proto::file_path(&uri);
    // Records that would not fit in memory are refused before they are read (issue 25 item
    // 8: 10 M `{}` lines took 1.1 GB, past that the allocator aborted the server): the editor
    // keeps its text, the document gets no transcript features, and the user is told.
    if let Err(e) = crate::source::room::check_fits_now(td.text.as_bytes()) {
        let name = path
            .as_ref()
            .map_or_else(|| uri.as_str().to_string(), |p| p.display().to_string());
        let msg = format!("transcript-ls: {name} {e} (no transcript features for it)");
        shared.log(MessageType::ERROR, msg.clone());
        let client = shared.client.clone();
        tokio::spawn(async move { client.show_message(MessageType::ERROR, msg).await });
        return;
    }
    let doc = from_proto::doc_id(&uri);
    let source = shared.host.open_raw(&doc, path, td.text, td.version);
    lock(&shared.turn_caches.sent_tokens).remove(&doc);
    diagnostics::schedule(shared, uri, source, 0);
}

pub(crate) fn did_change(b: &Backend, params: DidChangeTextDocumentParams) {
    let uri = params.text_document.uri;
    let version = params.text_document.version;
    let shared = &b.shared;
    let enc = shared.enc();
    let edits = params
        .content_changes
        .into_iter()
        .map(from_proto::edit)
        .collect();
    if from_proto::is_view(&uri) {
        match shared
            .host
            .change_view(&from_proto::doc_id(&uri), version, edits, enc)
        {
            Ok(()) => {}
            Err(ViewChangeError::NotOpen) => shared.log(
                MessageType::WARNING,
                format!("didChange for a view that is not open: {}", uri.as_str()),
            ),
            Err(ViewChangeError::Stale { have, got }) => shared.log(
                MessageType::LOG,
                format!(
                    "stale didChange dropped for {} (have v{have}, got v{got})",
                    uri.as_str()
                ),
            ),
        }
        return;
    }
    match shared
        .host
        .change_raw(&from_proto::doc_id(&uri), version, edits, enc)
    {
        Ok(Some(source)) => diagnostics::schedule(shared, uri, source, 150),
        Ok(None) => shared.log(
            MessageType::WARNING,
            format!(
                "didChange for a document that is not open: {}",
                uri.as_str()
            ),
        ),
        Err(e @ (ChangeError::Stale { .. } | ChangeError::NotEditor)) => shared.log(
            MessageType::LOG,
            format!("didChange dropped for {}: {e:?}", uri.as_str()),
        ),
    }
}

/// Closes the document; returns true when it was a raw document (its diagnostics are then
/// cleared by the caller).
pub(crate) fn did_close(b: &Backend, params: &DidCloseTextDocumentParams) -> bool {
    let uri = &params.text_document.uri;
    let doc = from_proto::doc_id(uri);
    let removed = b.shared.host.close(&doc);
    b.shared.turn_caches.forget(&doc);
    removed.is_some()
}

pub(crate) fn did_change_configuration(b: &Backend, params: DidChangeConfigurationParams) {
    let shared = &b.shared;
    let (problems, legend_changed) = {
        let mut s = write(&shared.settings);
        let before_legend = s.semantic_tokens;
        let p = s.apply(&params.settings);
        (p, s.semantic_tokens != before_legend)
    };
    shared.configure_host(true);
    for p in problems {
        shared.log(MessageType::WARNING, format!("setting ignored: {p}"));
    }
    if legend_changed {
        shared.log(
            MessageType::INFO,
            "`semanticTokens` legend changes take effect when the server restarts",
        );
    }
    for (doc, source) in shared.host.raw_docs() {
        if let Some(uri) = crate::lsp::to_proto::doc_uri(&doc) {
            diagnostics::schedule(shared, uri, source, 0);
        }
    }
}
