//! `workspace/textDocumentContent` (LSP 3.18) and its alias `transcript/virtualDocument`: the
//! text of a `transcript:` view, rendered by the host and remembered as served (so that later
//! requests on the view answer on the rendering the client shows). A view URI with
//! `markdown=1` in its query gets the view's Markdown form (issue 23 item 6: images as `data:`
//! URIs, activity lines one per line), for a Markdown preview; it is the same view otherwise.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::Uri;

use crate::ide::DocAnalysis;
use crate::lsp::capabilities::VIEW_SCHEME;
use crate::lsp::dispatch::off_loop;
use crate::lsp::ext::{self, Request as _, TextResult, UriParams, VirtualDocumentParams};
use crate::lsp::from_proto;
use crate::lsp::state::{Backend, host_error, invalid};

/// The view text of `uri` (answered by both methods; `method` names the request).
async fn view_text(b: &Backend, uri: &Uri, method: &'static str) -> Result<TextResult> {
    if !from_proto::is_view(uri) {
        return Err(invalid(format!(
            "not a {VIEW_SCHEME}: URI: {} (use transcript.openView to get one)",
            uri.as_str()
        )));
    }
    let key = b.shared.view_key(uri)?;
    let (snap, view) = b
        .shared
        .host
        .serve_view(&key)
        .await
        .map_err(|e| host_error(e, uri))?;
    let doc = DocAnalysis::of_view(key, snap, view);
    if doc.unrecognised() {
        b.shared.note_not_transcript(uri);
    }
    let markdown = from_proto::is_markdown_form(uri);
    off_loop(&b.shared, method, move || {
        let text = match markdown.then(|| doc.markdown_text()).flatten() {
            Some(md) => md,
            None => doc.text().to_string(),
        };
        Ok(TextResult { text })
    })
    .await
}

/// The text of a `transcript:` URI: one side of a file edit's diff, or a view.
async fn document_text(b: &Backend, uri: &Uri, method: &'static str) -> Result<TextResult> {
    if let Some(key) = crate::lsp::handlers::changes::change_key(uri) {
        return Ok(TextResult {
            text: crate::lsp::handlers::changes::change_text(b, key?).await?,
        });
    }
    match crate::lsp::handlers::diff::diff_key(uri) {
        Some(key) => Ok(TextResult {
            text: crate::lsp::handlers::diff::diff_text(b, key?).await?,
        }),
        None => view_text(b, uri, method).await,
    }
}

pub(crate) async fn text_document_content(b: &Backend, params: UriParams) -> Result<TextResult> {
    document_text(b, &params.uri, ext::TextDocumentContent::METHOD).await
}

pub(crate) async fn virtual_document(
    b: &Backend,
    params: VirtualDocumentParams,
) -> Result<TextResult> {
    let uri = params
        .uri
        .or(params.text_document.map(|t| t.uri))
        .ok_or_else(|| invalid("transcript/virtualDocument needs `uri`"))?;
    document_text(b, &uri, ext::VirtualDocument::METHOD).await
}
