//! The only code that knows LSP, and only protocol code (issue 8): the seam around
//! tower-lsp-server ([`TranscriptService`]) and the wire that drives it ([`transport`]), the
//! one dispatcher ([`dispatch`]), the method table
//! ([`server`]) and the handlers (one module per request family, [`handlers`]), conversions
//! ([`from_proto`], [`to_proto`]), capabilities, settings ([`config`]), the custom protocol
//! as types, every request, notification and command with its method name ([`ext`]), the
//! client-facing side of live files ([`refresh`]), the protocol state ([`state`]) and the
//! per-turn answer caches of raw documents ([`turn_cache`]: one generic cache, one key rule,
//! one `forget` on `didClose`). The documents, their snapshots and the file follower live
//! below, in `crate::store::host` and `crate::store::live` (DESIGN.md §1, §5).
//!
//! Module dependencies run one way: `server` -> `handlers` -> `state`/`dispatch`/`to_proto`/
//! `from_proto`/`ext`; `refresh` -> `handlers::diagnostics`/`state`/`ext`/`to_proto`;
//! nothing imports `server` or `refresh` but `server` and this file; `crate::ide` imports
//! nothing of `lsp`.
//!
//! Entry points: [`serve_stdio`] (the binary with no arguments or `--stdio`) and
//! [`build_service`] (in-process tests: a `tower::Service` over JSON-RPC requests).

pub mod capabilities;
pub mod config;
pub mod dispatch;
pub mod ext;
pub mod from_proto;
pub mod handlers;
pub mod log;
pub mod parent;
pub mod progress;
pub mod refresh;
pub mod server;
pub mod state;
pub mod to_proto;
pub mod transport;
pub mod turn_cache;

use std::sync::Arc;
use std::task::{Context, Poll};

use tower::Service as _;

use tower_lsp_server::jsonrpc::{self, Method};
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::{ClientSocket, ExitedError, LspService, LspServiceBuilder};

use crate::lsp::state::{Backend, Shared};

/// The seam (issue 24 item 4): `LspService<Backend>`, tower-lsp-server's protocol engine,
/// and what the server needs around it, in one place. Every client message goes through
/// [`TranscriptService::reply`], which
///
/// - answers `$/` requests `MethodNotFound` (`dispatch::dollar_not_found`);
/// - serves the requests whose answers are made as JSON bytes (`dispatch::RAW_ANSWERED`)
///   from the backend itself, answering [`dispatch::Reply::Json`]: tower-lsp-server keeps its
///   own typed handler for a standard method, whose answer goes through a `serde_json::Value`.
///   They are refused as tower-lsp-server refuses a request in the same state (`-32002` before
///   `initialize` answered, `InvalidRequest` after `shutdown`; [`Lifecycle`]);
/// - captures the raw `initialize` params (LSP 3.18 client capabilities that ls-types 0.0.6
///   does not model) and adds the 3.18 `workspace.textDocumentContent` capability to its
///   result;
/// - hands everything else to the `LspService`, each future guarded (`dispatch::guarded`:
///   panics, cancellation).
///
/// The transport ([`transport::serve`]) drives it; in-process tests use it as a
/// `tower::Service` over JSON-RPC requests ([`build_service`]), where a `Reply::Json` becomes a
/// `Response`.
pub struct TranscriptService {
    inner: LspService<Backend>,
    shared: Arc<Shared>,
    lifecycle: Lifecycle,
}

/// The server's state as tower-lsp-server's layers keep it (its `ServerState` is private):
/// initialized once an `initialize` is answered without error while uninitialized, shut down
/// by a `shutdown` while initialized, exited by `exit`. Set at the same points of the same
/// calls, in the same order, so both agree; read only to check a
/// [`dispatch::RAW_ANSWERED`] request.
#[derive(Clone, Default)]
struct Lifecycle(Arc<std::sync::atomic::AtomicU8>);

impl Lifecycle {
    const UNINITIALIZED: u8 = 0;
    const INITIALIZED: u8 = 1;
    const SHUT_DOWN: u8 = 2;
    const EXITED: u8 = 3;

    fn get(&self) -> u8 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn set(&self, state: u8) {
        self.0.store(state, std::sync::atomic::Ordering::SeqCst);
    }

    /// The error tower-lsp-server answers a request with in this state, if any
    /// (`not_initialized_response` of its layers).
    fn refusal(&self) -> Option<jsonrpc::Error> {
        match self.get() {
            Self::INITIALIZED => None,
            Self::UNINITIALIZED => Some(jsonrpc::Error {
                code: jsonrpc::ErrorCode::ServerError(-32002),
                message: "Server not initialized".into(),
                data: None,
            }),
            _ => Some(jsonrpc::Error::invalid_request()),
        }
    }
}

impl TranscriptService {
    /// The shared server state (for tests and diagnostics).
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The answer to `req` (see the type's doc): `None` for a notification. Answered inside a
    /// `tracing` span, `request{method, id}` or `notification{method}` ([`log`]); at `debug`
    /// the time it took is logged when it is answered, at `warn` a request answered with an
    /// error (a panic is logged at `error` by `dispatch::guarded`), at `debug` a cancelled one
    /// (issue 24 item 7).
    pub fn reply(&mut self, req: Request) -> BoxFuture<dispatch::Answer> {
        use tracing::Instrument;
        let span = match req.id() {
            Some(id) => tracing::debug_span!("request", method = %req.method(), id = %id),
            None => tracing::debug_span!("notification", method = %req.method()),
        };
        // Named in the warning itself when the span is off (below `debug`).
        let named = span.is_disabled().then(|| {
            format!(
                "{} {} ",
                req.method(),
                req.id().unwrap_or(&jsonrpc::Id::Null)
            )
        });
        let fut = span.in_scope(|| self.answer(req));
        let start = std::time::Instant::now();
        Box::pin(
            async move {
                let answer = fut.await;
                let ms = start.elapsed().as_secs_f64() * 1000.0;
                match &answer {
                    Ok(Some(dispatch::Reply::Response(r))) if r.is_error() => {
                        if let Some(e) = r.error() {
                            if e.code == jsonrpc::ErrorCode::RequestCancelled {
                                tracing::debug!("cancelled after {ms:.3} ms");
                            } else {
                                tracing::warn!(
                                    "{}failed after {ms:.3} ms: {} ({})",
                                    named.as_deref().unwrap_or(""),
                                    e.message,
                                    e.code
                                );
                            }
                        }
                    }
                    _ => tracing::debug!("answered in {ms:.3} ms"),
                }
                answer
            }
            .instrument(span),
        )
    }

    /// [`Self::reply`] without its span.
    fn answer(&mut self, req: Request) -> BoxFuture<dispatch::Answer> {
        let method = req.method().to_string();
        let id = req.id().cloned();
        if method.starts_with("$/")
            && let Some(id) = id.clone()
        {
            return Box::pin(std::future::ready(Ok(Some(dispatch::dollar_not_found(
                id, &method,
            )))));
        }
        let shared = self.shared.clone();
        if dispatch::RAW_ANSWERED.contains(&method.as_str()) {
            let fut = self.raw(req);
            return guarded(method, id, shared, fut);
        }
        match method.as_str() {
            "shutdown" if self.lifecycle.get() == Lifecycle::INITIALIZED => {
                self.lifecycle.set(Lifecycle::SHUT_DOWN);
            }
            "exit" => self.lifecycle.set(Lifecycle::EXITED),
            _ => {}
        }
        if method != "initialize" {
            let fut = self.inner.call(req);
            return guarded(method, id, shared, typed(fut));
        }
        *crate::sync::lock(&self.shared.raw_init) = req.params().cloned();
        let first = self.lifecycle.get() == Lifecycle::UNINITIALIZED;
        let lifecycle = self.lifecycle.clone();
        let fut = self.inner.call(req);
        guarded(
            method,
            id,
            shared,
            Box::pin(async move {
                let resp = fut.await?;
                if first && resp.as_ref().is_some_and(Response::is_ok) {
                    lifecycle.set(Lifecycle::INITIALIZED);
                }
                Ok(resp.map(|r| {
                    let (id, body) = r.into_parts();
                    let body = body.map(|mut v| {
                        capabilities::patch_initialize_result(&mut v);
                        v
                    });
                    dispatch::Reply::Response(Response::from_parts(id, body))
                }))
            }),
        )
    }

    /// A [`dispatch::RAW_ANSWERED`] request, served by the backend: refused in the states
    /// tower-lsp-server refuses it in, its params read as tower-lsp-server reads them
    /// (`InvalidParams` with serde's message), nothing for a notification.
    fn raw(&mut self, req: Request) -> BoxFuture<dispatch::Answer> {
        let (method, id, params) = req.into_parts();
        let Some(id) = id else {
            return Box::pin(std::future::ready(Ok(None)));
        };
        if let Some(e) = self.lifecycle.refusal() {
            return Box::pin(std::future::ready(Ok(Some(dispatch::Reply::Response(
                Response::from_error(id, e),
            )))));
        }
        let b = self.inner.inner().clone();
        Box::pin(async move {
            let answer = match &*method {
                "textDocument/documentSymbol" => match from_params(params) {
                    Ok(p) => b.document_symbol_json(p).await,
                    Err(e) => Err(e),
                },
                "textDocument/foldingRange" => match from_params(params) {
                    Ok(p) => b.folding_range_json(p).await,
                    Err(e) => Err(e),
                },
                "textDocument/semanticTokens/full" => match from_params(params) {
                    Ok(p) => b.semantic_tokens_full_json(p).await,
                    Err(e) => Err(e),
                },
                "textDocument/codeLens" => match from_params(params) {
                    Ok(p) => b.code_lens_json(p).await,
                    Err(e) => Err(e),
                },
                "textDocument/inlayHint" => match from_params(params) {
                    Ok(p) => b.inlay_hint_json(p).await,
                    Err(e) => Err(e),
                },
                _ => Err(jsonrpc::Error::method_not_found()),
            };
            Ok(Some(match answer {
                Ok(dispatch::RawJson { json, kept }) => dispatch::Reply::Json { id, json, kept },
                Err(e) => dispatch::Reply::Response(Response::from_error(id, e)),
            }))
        })
    }
}

/// Params read as tower-lsp-server reads a method's (`FromParams`): missing ones and ones
/// serde refuses are `InvalidParams`.
fn from_params<P: serde::de::DeserializeOwned>(
    params: Option<serde_json::Value>,
) -> jsonrpc::Result<P> {
    let p = params.ok_or_else(|| jsonrpc::Error::invalid_params("Missing params field"))?;
    serde_json::from_value(p).map_err(|e| jsonrpc::Error::invalid_params(e.to_string()))
}

/// tower-lsp-server's future, answering a [`dispatch::Reply::Response`].
fn typed(
    fut: impl std::future::Future<Output = Result<Option<Response>, ExitedError>> + Send + 'static,
) -> BoxFuture<dispatch::Answer> {
    Box::pin(async move { Ok(fut.await?.map(dispatch::Reply::Response)) })
}

use crate::lsp::dispatch::{BoxFuture, guarded};

/// [`TranscriptService`] answering [`dispatch::Reply`]s ([`TranscriptService::reply`]): the
/// service [`transport::serve`] drives.
pub struct Replies(TranscriptService);

impl TranscriptService {
    /// This service as [`transport::serve`] drives it.
    pub fn replies(self) -> Replies {
        Replies(self)
    }
}

impl tower::Service<Request> for Replies {
    type Response = Option<dispatch::Reply>;
    type Error = ExitedError;
    type Future = BoxFuture<dispatch::Answer>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        self.0.reply(req)
    }
}

impl tower::Service<Request> for TranscriptService {
    type Response = Option<Response>;
    type Error = ExitedError;
    type Future = BoxFuture<Result<Option<Response>, ExitedError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let fut = self.reply(req);
        Box::pin(async move { Ok(fut.await?.map(dispatch::Reply::into_response)) })
    }
}

/// Routes the custom protocol's requests (`ext`) to their handlers, the method name taken
/// from the message's type: a handler whose params or result are not the type's does not
/// compile.
trait Routes: Sized {
    /// Routes request `R` to `handler`.
    fn request<R>(
        self,
        handler: impl for<'a> Method<&'a Backend, (R::Params,), jsonrpc::Result<R::Result>>
        + Clone
        + Send
        + Sync
        + 'static,
    ) -> Self
    where
        R: ext::Request,
        R::Params: serde::de::DeserializeOwned + Send + 'static,
        R::Result: serde::Serialize + Send + 'static;
}

impl Routes for LspServiceBuilder<Backend> {
    fn request<R>(
        self,
        handler: impl for<'a> Method<&'a Backend, (R::Params,), jsonrpc::Result<R::Result>>
        + Clone
        + Send
        + Sync
        + 'static,
    ) -> Self
    where
        R: ext::Request,
        R::Params: serde::de::DeserializeOwned + Send + 'static,
        R::Result: serde::Serialize + Send + 'static,
    {
        self.custom_method(R::METHOD, handler)
    }
}

/// Builds the service and the client socket (server -> client messages).
pub fn build_service() -> (TranscriptService, ClientSocket) {
    let builder = LspService::build(Backend::new)
        .request::<ext::TextDocumentContent>(Backend::text_document_content)
        .request::<ext::VirtualDocument>(Backend::virtual_document)
        .request::<ext::Sessions>(Backend::sessions)
        .request::<ext::FileHistory>(Backend::file_history)
        .request::<ext::Blame>(Backend::blame)
        .request::<ext::Search>(Backend::search)
        .request::<ext::Stats>(Backend::transcript_stats);
    // Debug builds only: a request that panics on purpose (the panic-isolation tests).
    #[cfg(debug_assertions)]
    let builder = builder.request::<ext::DebugPanic>(Backend::debug_panic);
    let (inner, socket) = builder.finish();
    let shared = inner.inner().shared.clone();
    (
        TranscriptService {
            inner,
            shared,
            lifecycle: Lifecycle::default(),
        },
        socket,
    )
}

/// Serves LSP on stdin/stdout until `exit`, the end of input, or the death of the client
/// process named by `initialize.processId`. Returns the process exit code: 0 when `shutdown`
/// came before `exit`, 1 otherwise (LSP 3.17 §exit) or when the client process died, 2 when
/// the runtime cannot start. Malformed messages are answered and skipped
/// ([`transport`]), never the end of the session.
pub fn serve_stdio() -> i32 {
    log::init();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("transcript-ls")
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            return 2;
        }
    };
    let code = rt.block_on(async {
        let (service, socket) = build_service();
        let shared = service.shared().clone();
        let serve = transport::serve(
            transport::Input::stdin(),
            transport::raw_stdout(),
            service.replies(),
            socket,
            shared.in_flight.clone(),
        );
        let watched = shared.clone();
        let parent_gone = async move {
            loop {
                let pid = watched.client_pid.load(std::sync::atomic::Ordering::SeqCst);
                if pid != 0 {
                    if !parent::alive(pid) {
                        // Not visible from here (another PID namespace: a sandboxed or
                        // containerised editor): it cannot be watched.
                        tracing::warn!("the client process {pid} is not visible; not watching it");
                        std::future::pending::<()>().await;
                    }
                    parent::gone(pid).await;
                    return pid;
                }
                tokio::time::sleep(parent::POLL).await;
            }
        };
        let code = tokio::select! {
            _ = serve => {
                let clean = shared
                    .shutdown_requested
                    .load(std::sync::atomic::Ordering::SeqCst)
                    || shared.in_flight.shutdown_seen();
                if clean { 0 } else { 1 }
            }
            pid = parent_gone => {
                tracing::warn!("the client process {pid} is gone; exiting");
                1
            }
        };
        let _ = shared.shutdown.send(true);
        code
    });
    // Blocking threads may be stuck in a read of stdin: do not wait for them.
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    code
}
