//! The one dispatcher every client message passes through (issue 8, in the spirit of
//! rust-analyzer's `handlers/dispatch.rs`):
//!
//! - [`TranscriptService::call`](crate::lsp::TranscriptService) hands each message's future to
//!   [`guarded`], which polls it inside `catch_unwind`: a panic in a handler becomes an
//!   `InternalError` response naming the method (a notification's panic is logged), and the
//!   server goes on serving. The documents (`store::host::Host`) are only mutated
//!   synchronously under short locks, so a panic leaves them as the last completed mutation
//!   left them.
//! - Requests whose method starts with `$/` are answered with `MethodNotFound` before they
//!   reach tower-lsp-server (which answers none of them; LSP 3.17 "$ Notifications and
//!   Requests"). `$/` notifications pass through (`$/cancelRequest`, `$/setTrace`).
//! - [`off_loop`] runs a request's CPU work on tokio's blocking pool instead of the serve
//!   loop, so a big transcript never stalls other messages; a panic there is answered the
//!   same way. Every request family goes through it (`crate::lsp::handlers`): folding
//!   ranges, document symbols, the three semantic-token requests, inlay hints, hover,
//!   references, definition, code lens, workspace symbols, `workspace/executeCommand`, the
//!   view text (`workspace/textDocumentContent`, `transcript/virtualDocument`),
//!   `transcript/sessions` and `transcript/stats`. Their async part (resolving the
//!   document, waiting for a snapshot build) only awaits the host.

/// Requests whose answers are made as JSON bytes and written by the transport
/// (`lsp::transport::RawResults`; issue 12): the client's method and the internal method
/// tower-lsp-server routes it to, [`TranscriptService`](crate::lsp::TranscriptService)
/// renaming each request on its way in (tower-lsp-server keeps its own handler for a standard
/// method, and that one must return a typed answer). The internal names are not part of the
/// protocol: a client sending one is answered `MethodNotFound`.
pub const RAW_ANSWERED: [(&str, &str); 5] = [
    ("textDocument/documentSymbol", RAW_DOCUMENT_SYMBOL),
    ("textDocument/foldingRange", RAW_FOLDING_RANGE),
    ("textDocument/semanticTokens/full", RAW_SEMANTIC_TOKENS_FULL),
    ("textDocument/codeLens", RAW_CODE_LENS),
    ("textDocument/inlayHint", RAW_INLAY_HINT),
];
/// Internal name of `textDocument/documentSymbol` ([`RAW_ANSWERED`]).
pub const RAW_DOCUMENT_SYMBOL: &str = "transcript/internal/raw/textDocument/documentSymbol";
/// Internal name of `textDocument/foldingRange` ([`RAW_ANSWERED`]).
pub const RAW_FOLDING_RANGE: &str = "transcript/internal/raw/textDocument/foldingRange";
/// Internal name of `textDocument/semanticTokens/full` ([`RAW_ANSWERED`]).
pub const RAW_SEMANTIC_TOKENS_FULL: &str =
    "transcript/internal/raw/textDocument/semanticTokens/full";
/// Internal name of `textDocument/codeLens` ([`RAW_ANSWERED`]).
pub const RAW_CODE_LENS: &str = "transcript/internal/raw/textDocument/codeLens";

/// Internal name of `textDocument/inlayHint` ([`RAW_ANSWERED`]).
pub const RAW_INLAY_HINT: &str = "transcript/internal/raw/textDocument/inlayHint";

/// The internal method serving the client's `method` as JSON bytes, if any.
pub fn raw_answered(method: &str) -> Option<&'static str> {
    RAW_ANSWERED
        .iter()
        .find(|(m, _)| *m == method)
        .map(|(_, internal)| *internal)
}

/// Whether `method` is one of the internal names of [`RAW_ANSWERED`].
pub fn is_internal_raw(method: &str) -> bool {
    RAW_ANSWERED.iter().any(|(_, internal)| *internal == method)
}

/// `MethodNotFound` for `method`, as tower-lsp-server answers a method it does not know
/// (the method name as `data`).
pub fn method_not_found(id: Id, method: &str) -> Response {
    let mut error = Error::method_not_found();
    error.data = Some(serde_json::Value::String(method.to_string()));
    Response::from_error(id, error)
}

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower_lsp_server::ExitedError;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Id, Response, Result};
use tower_lsp_server::ls_types::MessageType;

use crate::lsp::state::Shared;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a message's future resolves to in `tower::Service` terms.
pub type Answer = std::result::Result<Option<Response>, ExitedError>;

/// The text of a panic payload (`&str` or `String`; anything else is "unknown payload").
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown payload".to_string()
    }
}

/// The `InternalError` answered for a request whose handler panicked: `request
/// textDocument/hover failed: internal error (index out of bounds …); the server keeps
/// running`.
pub fn panic_error(method: &str, message: &str) -> Error {
    Error {
        code: ErrorCode::InternalError,
        message: format!(
            "request {method} failed: internal error ({message}); the server keeps running"
        )
        .into(),
        data: None,
    }
}

/// `MethodNotFound` for a `$/` request.
pub fn dollar_not_found(id: Id, method: &str) -> Response {
    Response::from_error(
        id,
        Error {
            code: ErrorCode::MethodNotFound,
            message: format!(
                "method not found: {method} (optional `$/` requests are not supported)"
            )
            .into(),
            data: None,
        },
    )
}

/// Polls `fut` inside `catch_unwind`. A panic resolves to an `InternalError` response for the
/// request `id` (nothing for a notification) and is logged with the method name. A request
/// the client cancels ends there and then (`RequestCancelled`; the transport answered it on
/// the cancel's arrival and drops this answer: `transport::InFlight`, issue 25 item 7), its
/// place among the requests running at once freed for the next.
pub fn guarded(
    method: String,
    id: Option<Id>,
    shared: Arc<Shared>,
    fut: BoxFuture<Answer>,
) -> BoxFuture<Answer> {
    let fut = match &id {
        Some(rid) => {
            let cancelled = shared.in_flight.signal(rid);
            let rid = rid.clone();
            Box::pin(async move {
                tokio::select! {
                    biased;
                    r = fut => r,
                    () = cancelled => Ok(Some(Response::from_error(rid, Error::request_cancelled()))),
                }
            }) as BoxFuture<Answer>
        }
        None => fut,
    };
    Box::pin(Guarded {
        fut: Some(fut),
        method,
        id,
        shared,
    })
}

struct Guarded {
    fut: Option<BoxFuture<Answer>>,
    method: String,
    id: Option<Id>,
    shared: Arc<Shared>,
}

impl Future for Guarded {
    type Output = Answer;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Answer> {
        let this = &mut *self;
        let Some(fut) = this.fut.as_mut() else {
            return Poll::Ready(Ok(None));
        };
        match std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
            Ok(p) => {
                if p.is_ready() {
                    this.fut = None;
                }
                p
            }
            Err(payload) => {
                // Dropping the future may panic too: contain that as well.
                let fut = this.fut.take();
                let _ = std::panic::catch_unwind(AssertUnwindSafe(move || drop(fut)));
                let msg = panic_message(&*payload);
                let kind = if this.id.is_some() {
                    "request"
                } else {
                    "notification"
                };
                this.shared.log(
                    MessageType::ERROR,
                    format!("{kind} {} panicked: {msg}", this.method),
                );
                Poll::Ready(Ok(this.id.take().map(|id| {
                    Response::from_error(id, panic_error(&this.method, &msg))
                })))
            }
        }
    }
}

/// Runs `work` on tokio's blocking pool (off the serve loop). A panic in it is logged and
/// answered as an `InternalError` naming `method`. In debug builds, a method armed with
/// `transcript/debugPanic` (`arm`) panics here once, instead of running `work`.
pub async fn off_loop<T, F>(shared: &Arc<Shared>, method: &'static str, work: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    #[cfg(debug_assertions)]
    let armed = crate::lsp::state::lock(&shared.armed_panics).remove(method);
    #[cfg(not(debug_assertions))]
    let armed = false;
    let host = shared.host.clone();
    let job = move || {
        if armed {
            panic!("deliberate panic in {method} (armed by transcript/debugPanic)");
        }
        let r = work();
        // Spans of a mapped file read by the request stay out of memory (issue 12).
        host.release_mapped_pages();
        r
    };
    match tokio::task::spawn_blocking(job).await {
        Ok(r) => r,
        Err(e) => {
            let msg = match e.try_into_panic() {
                Ok(payload) => panic_message(&*payload),
                Err(e) => e.to_string(),
            };
            shared.log(
                MessageType::ERROR,
                format!("request {method} panicked: {msg}"),
            );
            Err(panic_error(method, &msg))
        }
    }
}

/// `transcript/debugPanic`, registered in debug builds only (tests; never in a release
/// binary): with `uri` and `where`, resolves `uri` like any feature request, then panics on
/// purpose, inline or on the blocking pool; with `arm`, makes the next request of that method
/// panic on the blocking pool. Proves that a panicking handler is answered with an
/// `InternalError` and leaves the server and the document answering (issue 8).
#[cfg(debug_assertions)]
pub async fn debug_panic(
    b: &crate::lsp::state::Backend,
    params: crate::lsp::ext::DebugPanicParams,
) -> Result<serde_json::Value> {
    use crate::lsp::ext::Request as _;
    const METHOD: &str = crate::lsp::ext::DebugPanic::METHOD;
    if let Some(method) = params.arm {
        crate::lsp::state::lock(&b.shared.armed_panics).insert(method);
        return Ok(serde_json::Value::Null);
    }
    let uri = params
        .uri
        .ok_or_else(|| crate::lsp::state::invalid(format!("{METHOD} needs `uri` or `arm`")))?;
    let ctx = b.ctx(&uri).await?;
    let lines = ctx.lines().line_count();
    if params.at.as_deref() == Some("blocking") {
        return off_loop(&b.shared, METHOD, move || {
            panic!("deliberate panic on the blocking pool ({lines} lines)")
        })
        .await;
    }
    panic!("deliberate panic in the handler ({lines} lines)");
}
