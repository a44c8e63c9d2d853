//! The only code that knows LSP: tower-lsp-server glue, capabilities, conversions, documents,
//! file watcher, custom methods, refresh orchestration (DESIGN.md §1, §5).
//!
//! Entry points: [`serve_stdio`] (the binary with no arguments or `--stdio`) and
//! [`build_service`] (in-process tests: a `tower::Service` over JSON-RPC requests).

pub mod capabilities;
pub mod config;
pub mod convert;
pub mod custom;
pub mod documents;
pub mod server;
pub mod watcher;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower_lsp_server::jsonrpc::{Request, Response};
use tower_lsp_server::{ClientSocket, ExitedError, LspService, Server};

use crate::lsp::server::{Backend, Shared};

/// The service: `LspService<Backend>` plus a thin layer that captures the raw `initialize`
/// params (for LSP 3.18 client capabilities that ls-types 0.0.6 does not model) and adds the
/// 3.18 `workspace.textDocumentContent` server capability to the `initialize` result.
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

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

impl tower::Service<Request> for TranscriptService {
    type Response = Option<Response>;
    type Error = ExitedError;
    type Future = BoxFuture<Result<Option<Response>, ExitedError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        if req.method() != "initialize" {
            return Box::pin(self.inner.call(req));
        }
        *self
            .shared
            .raw_init
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = req.params().cloned();
        let fut = self.inner.call(req);
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
        })
    }
}

/// Builds the service and the client socket (server -> client messages).
pub fn build_service() -> (TranscriptService, ClientSocket) {
    let (inner, socket) = LspService::build(Backend::new)
        .custom_method(
            "workspace/textDocumentContent",
            Backend::text_document_content,
        )
        .custom_method("transcript/virtualDocument", Backend::virtual_document)
        .custom_method("transcript/sessions", Backend::sessions)
        .finish();
    let shared = inner.inner().shared.clone();
    (TranscriptService { inner, shared }, socket)
}

/// Serves LSP on stdin/stdout until `exit`. Returns the process exit code: 0 when `shutdown`
/// came before `exit`, 1 otherwise (LSP 3.17 §exit), 2 when the runtime cannot start.
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
    rt.block_on(async {
        let (service, socket) = build_service();
        let shared = service.shared().clone();
        Server::new(tokio::io::stdin(), tokio::io::stdout(), socket)
            .serve(service)
            .await;
        let clean = shared
            .shutdown_requested
            .load(std::sync::atomic::Ordering::SeqCst);
        let _ = shared.shutdown.send(true);
        if clean { 0 } else { 1 }
    })
}
