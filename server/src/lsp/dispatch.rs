//! The one dispatcher every client message passes through (issue 8, in the spirit of
//! rust-analyzer's `handlers/dispatch.rs`):
//!
//! - [`TranscriptService::reply`](crate::lsp::TranscriptService) hands each message's future to
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

/// Requests whose answers are made as JSON bytes (issue 12: the ~1.1 MB outline of a 100 MB
/// transcript cost twenty times an append through tower-lsp-server's `serde_json::Value`):
/// [`TranscriptService`](crate::lsp::TranscriptService) serves them from the backend itself,
/// with the state checks tower-lsp-server applies to its own methods, and answers
/// [`Reply::Json`], which the transport frames as it is (issue 24 item 4: one seam, no
/// internal method names, no placeholders).
pub const RAW_ANSWERED: [&str; 5] = [
    "textDocument/documentSymbol",
    "textDocument/foldingRange",
    "textDocument/semanticTokens/full",
    "textDocument/codeLens",
    "textDocument/inlayHint",
];

/// An answer made as JSON bytes: one JSON value, UTF-8, as `serde_json` writes it.
#[derive(Debug)]
pub struct RawJson {
    /// The answer.
    pub json: Vec<u8>,
    /// Assembled from kept pieces (per-turn JSON): making it freed little, so the writer hands
    /// the heap's free pages back before writing it only when a snapshot was built since it
    /// last did (issue 12: the trim cost 10-15 ms per answer on a 1 GB document).
    pub kept: bool,
}

pub use crate::lsp::transport::Reply;

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

/// What a message's future resolves to (`ExitedError`: the server exited, as in
/// tower-lsp-server's service).
pub type Answer = std::result::Result<Option<Reply>, ExitedError>;

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
pub fn dollar_not_found(id: Id, method: &str) -> Reply {
    Reply::Response(Response::from_error(
        id,
        Error {
            code: ErrorCode::MethodNotFound,
            message: format!(
                "method not found: {method} (optional `$/` requests are not supported)"
            )
            .into(),
            data: None,
        },
    ))
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
                    () = cancelled => Ok(Some(Reply::Response(Response::from_error(rid, Error::request_cancelled())))),
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
                    Reply::Response(Response::from_error(id, panic_error(&this.method, &msg)))
                })))
            }
        }
    }
}

/// Runs `work` on tokio's blocking pool (off the serve loop), inside the caller's `tracing`
/// span (the request's: issue 24 item 7). A panic in it is logged and answered as an
/// `InternalError` naming `method`. In debug builds, a method armed with
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
    // The request's span (`TranscriptService::reply`) goes with the work to the worker thread.
    let span = tracing::Span::current();
    let job = move || {
        let _span = span.enter();
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
