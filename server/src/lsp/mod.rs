//! The only code that knows LSP, and only protocol code (issue 8): tower-lsp-server glue, the
//! framing in front of it ([`transport`]), the one dispatcher ([`dispatch`]), the method table
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

use tower_lsp_server::jsonrpc::{self, Method};
use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::{ClientSocket, ExitedError, LspService, LspServiceBuilder, Server};

use crate::lsp::state::{Backend, Shared};

/// The service: `LspService<Backend>` plus a thin layer that captures the raw `initialize`
/// params (for LSP 3.18 client capabilities that ls-types 0.0.6 does not model), adds the
/// 3.18 `workspace.textDocumentContent` server capability to the `initialize` result, and
/// routes the requests answered as JSON bytes to their internal methods
/// (`dispatch::RAW_ANSWERED`; issue 12).
pub struct TranscriptService {
    inner: LspService<Backend>,
    shared: Arc<Shared>,
}

impl TranscriptService {
    /// The shared server state (for tests and diagnostics).
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

use crate::lsp::dispatch::{BoxFuture, guarded};

impl tower::Service<Request> for TranscriptService {
    type Response = Option<Response>;
    type Error = ExitedError;
    type Future = BoxFuture<Result<Option<Response>, ExitedError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let method = req.method().to_string();
        let id = req.id().cloned();
        if method.starts_with("$/")
            && let Some(id) = id.clone()
        {
            return Box::pin(std::future::ready(Ok(Some(dispatch::dollar_not_found(
                id, &method,
            )))));
        }
        if dispatch::is_internal_raw(&method) {
            return Box::pin(std::future::ready(Ok(
                id.map(|id| dispatch::method_not_found(id, &method))
            )));
        }
        let shared = self.shared.clone();
        if let Some(internal) = dispatch::raw_answered(&method) {
            // Served by a handler that answers JSON bytes (`dispatch::RAW_ANSWERED`); errors
            // and panics still name the client's method.
            let (_, rid, params) = req.into_parts();
            let mut b = Request::build(internal);
            if let Some(rid) = rid {
                b = b.id(rid);
            }
            if let Some(p) = params {
                b = b.params(p);
            }
            let fut = self.inner.call(b.finish());
            return guarded(method, id, shared, Box::pin(fut));
        }
        if method != "initialize" {
            let fut = self.inner.call(req);
            return guarded(method, id, shared, Box::pin(fut));
        }
        *crate::sync::lock(&self.shared.raw_init) = req.params().cloned();
        let fut = self.inner.call(req);
        guarded(
            method,
            id,
            shared,
            Box::pin(async move {
                let resp = fut.await?;
                Ok(resp.map(|r| {
                    let (id, body) = r.into_parts();
                    let body = body.map(|mut v| {
                        capabilities::patch_initialize_result(&mut v);
                        v
                    });
                    Response::from_parts(id, body)
                }))
            }),
        )
    }
}

/// Routes the custom protocol's messages (`ext`) to their handlers, the method name taken
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

    /// Routes notification `N` to `handler`.
    fn notification<N>(
        self,
        handler: impl for<'a> Method<&'a Backend, (N::Params,), ()> + Clone + Send + Sync + 'static,
    ) -> Self
    where
        N: ext::Notification,
        N::Params: serde::de::DeserializeOwned + Send + 'static;
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

    fn notification<N>(
        self,
        handler: impl for<'a> Method<&'a Backend, (N::Params,), ()> + Clone + Send + Sync + 'static,
    ) -> Self
    where
        N: ext::Notification,
        N::Params: serde::de::DeserializeOwned + Send + 'static,
    {
        self.custom_method(N::METHOD, handler)
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
        .request::<ext::Stats>(Backend::transcript_stats)
        .notification::<ext::DidOpenText>(Backend::did_open_text)
        // Not the protocol: the internal names of the requests answered as JSON bytes
        // (`dispatch::RAW_ANSWERED`).
        .custom_method(dispatch::RAW_DOCUMENT_SYMBOL, Backend::document_symbol_raw)
        .custom_method(dispatch::RAW_FOLDING_RANGE, Backend::folding_range_raw)
        .custom_method(
            dispatch::RAW_SEMANTIC_TOKENS_FULL,
            Backend::semantic_tokens_full_raw,
        )
        .custom_method(dispatch::RAW_CODE_LENS, Backend::code_lens_raw)
        .custom_method(dispatch::RAW_INLAY_HINT, Backend::inlay_hint_raw);
    // Debug builds only: a request that panics on purpose (the panic-isolation tests).
    #[cfg(debug_assertions)]
    let builder = builder.request::<ext::DebugPanic>(Backend::debug_panic);
    let (inner, socket) = builder.finish();
    let shared = inner.inner().shared.clone();
    (TranscriptService { inner, shared }, socket)
}

/// Serves LSP on stdin/stdout until `exit`, the end of input, or the death of the client
/// process named by `initialize.processId`. Returns the process exit code: 0 when `shutdown`
/// came before `exit`, 1 otherwise (LSP 3.17 §exit) or when the client process died, 2 when
/// the runtime cannot start. Malformed messages are answered and skipped
/// ([`transport`]), never the end of the session.
pub fn serve_stdio() -> i32 {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("transcript-ls")
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("transcript-ls: cannot start the async runtime: {e}");
            return 2;
        }
    };
    let code = rt.block_on(async {
        let (service, socket) = build_service();
        let shared = service.shared().clone();
        let pending = Some(shared.pending_texts.clone());
        let raw = Some(shared.raw_results.clone());
        let in_flight = Some(shared.in_flight.clone());
        let serve = transport::serve(
            transport::Input::stdin(),
            transport::raw_stdout(),
            pending,
            raw,
            in_flight,
            |i, o| Server::new(i, o, socket).serve(service),
        );
        let watched = shared.clone();
        let parent_gone = async move {
            loop {
                let pid = watched.client_pid.load(std::sync::atomic::Ordering::SeqCst);
                if pid != 0 {
                    if !parent::alive(pid) {
                        // Not visible from here (another PID namespace: a sandboxed or
                        // containerised editor): it cannot be watched.
                        eprintln!(
                            "transcript-ls: the client process {pid} is not visible; not watching it"
                        );
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
                eprintln!("transcript-ls: the client process {pid} is gone; exiting");
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
