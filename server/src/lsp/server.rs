//! The `LanguageServer` implementation: a thin table from LSP methods to the handlers
//! (`crate::lsp::handlers`, one module per request family). Document-sync notifications
//! apply their mutation to the host synchronously, before the first `.await` (LSP-NOTES
//! §1.2); every request resolves its document ([`Backend::ctx`]) and runs its work off the
//! serve loop through [`off_loop`], where a panic is answered as an `InternalError` naming the
//! request.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use serde_json::Value;
use tower_lsp_server::LanguageServer;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide::stats::Stats;
use crate::lsp::capabilities::{self, ClientCaps};
use crate::lsp::dispatch::{RawJson, off_loop};
use crate::lsp::ext::{
    self, BlameParams, FileHistoryParams, Request as _, SearchParams, SessionsParams,
    SessionsResult, StatsParams, TextResult, UriParams, VirtualDocumentParams,
};
use crate::lsp::handlers;
pub use crate::lsp::state::{Backend, Ctx, Shared};
use crate::lsp::state::{lock, read, write};
use crate::source::position::Encoding;

impl Backend {
    /// The JSON of a documentSymbol, foldingRange or inlayHint answer: a raw document's is
    /// assembled from kept per-turn pieces (`kept`), a view's is made afresh.
    fn answer_per_turn(uri: &Uri, json: Vec<u8>) -> RawJson {
        RawJson {
            json,
            kept: !crate::lsp::from_proto::is_view(uri),
        }
    }

    /// Resolves `uri` and runs `work` on the blocking pool (the common shape of document
    /// requests).
    async fn on_doc<P, R>(
        &self,
        method: &'static str,
        uri: &Uri,
        params: P,
        work: fn(&Backend, &Ctx, P) -> Result<R>,
    ) -> Result<R>
    where
        P: Send + 'static,
        R: Send + 'static,
    {
        let ctx = self.ctx(uri).await?;
        let this = self.clone();
        off_loop(&self.shared, method, move || work(&this, &ctx, params)).await
    }

    /// `workspace/textDocumentContent` (LSP 3.18).
    pub async fn text_document_content(&self, params: UriParams) -> Result<TextResult> {
        handlers::view::text_document_content(self, params).await
    }

    /// `transcript/virtualDocument` (alias for clients without LSP 3.18).
    pub async fn virtual_document(&self, params: VirtualDocumentParams) -> Result<TextResult> {
        handlers::view::virtual_document(self, params).await
    }

    /// `transcript/sessions`.
    pub async fn sessions(&self, params: Option<SessionsParams>) -> Result<SessionsResult> {
        let this = self.clone();
        off_loop(&self.shared, ext::Sessions::METHOD, move || {
            handlers::sessions::sessions(&this, params)
        })
        .await
    }

    /// `transcript/fileHistory` (issue 22 item 3).
    pub async fn file_history(&self, params: FileHistoryParams) -> Result<serde_json::Value> {
        let this = self.clone();
        off_loop(&self.shared, ext::FileHistory::METHOD, move || {
            handlers::history::file_history(&this, params)
        })
        .await
    }

    /// `transcript/blame` (issue 22 item 4).
    pub async fn blame(&self, params: BlameParams) -> Result<serde_json::Value> {
        let this = self.clone();
        off_loop(&self.shared, ext::Blame::METHOD, move || {
            handlers::history::blame(&this, params)
        })
        .await
    }

    /// `transcript/search` (issue 26).
    pub async fn search(&self, params: SearchParams) -> Result<serde_json::Value> {
        let this = self.clone();
        off_loop(&self.shared, ext::Search::METHOD, move || {
            handlers::search::search(&this, params)
        })
        .await
    }

    /// `transcript/stats`.
    pub async fn transcript_stats(&self, params: StatsParams) -> Result<Stats> {
        handlers::stats::stats(self, params).await
    }

    /// `textDocument/documentSymbol`, answered as JSON bytes (`dispatch::RAW_ANSWERED`).
    pub async fn document_symbol_json(&self, params: DocumentSymbolParams) -> Result<RawJson> {
        let uri = params.text_document.uri.clone();
        let json = self
            .on_doc(
                "textDocument/documentSymbol",
                &uri,
                params,
                handlers::symbols::document_symbol,
            )
            .await?;
        Ok(Self::answer_per_turn(&uri, json))
    }

    /// Resolves `uri` and runs `work` on the blocking pool like [`Backend::on_doc`], and
    /// serialises its answer there: the answer as JSON bytes, framed as they are by the
    /// transport (`dispatch::RAW_ANSWERED`; issue 12: not through a `serde_json::Value`).
    /// With `Shared::reference_answers`, serialised through a `Value` (the tests' reference).
    async fn on_doc_json<P, R>(
        &self,
        method: &'static str,
        uri: &Uri,
        params: P,
        work: fn(&Backend, &Ctx, P) -> Result<R>,
    ) -> Result<RawJson>
    where
        P: Send + 'static,
        R: serde::Serialize + Send + 'static,
    {
        let ctx = self.ctx(uri).await?;
        let this = self.clone();
        let json = off_loop(&self.shared, method, move || {
            let answer = work(&this, &ctx, params)?;
            let reference = this.shared.reference_answers.load(Ordering::Relaxed);
            crate::lsp::state::answer_json(&answer, reference, &format!("{method}: the answer"))
        })
        .await?;
        Ok(RawJson { json, kept: false })
    }

    /// `textDocument/foldingRange`, answered as JSON bytes (`dispatch::RAW_ANSWERED`).
    pub async fn folding_range_json(&self, params: FoldingRangeParams) -> Result<RawJson> {
        let uri = params.text_document.uri.clone();
        let json = self
            .on_doc(
                "textDocument/foldingRange",
                &uri,
                params,
                handlers::folding::folding_range,
            )
            .await?;
        Ok(Self::answer_per_turn(&uri, json))
    }

    /// `textDocument/semanticTokens/full`, answered as JSON bytes (`dispatch::RAW_ANSWERED`).
    pub async fn semantic_tokens_full_json(&self, params: SemanticTokensParams) -> Result<RawJson> {
        let uri = params.text_document.uri.clone();
        self.on_doc_json(
            "textDocument/semanticTokens/full",
            &uri,
            params,
            handlers::tokens::full,
        )
        .await
    }

    /// `textDocument/codeLens`, answered as JSON bytes (`dispatch::RAW_ANSWERED`).
    pub async fn code_lens_json(&self, params: CodeLensParams) -> Result<RawJson> {
        let uri = params.text_document.uri.clone();
        let json = self
            .on_doc(
                "textDocument/codeLens",
                &uri,
                params,
                handlers::code_lens::code_lens,
            )
            .await?;
        Ok(RawJson { json, kept: false })
    }

    /// `textDocument/inlayHint`, answered as JSON bytes (`dispatch::RAW_ANSWERED`): the
    /// hints of a raw document are assembled from kept per-turn pieces.
    pub async fn inlay_hint_json(&self, params: InlayHintParams) -> Result<RawJson> {
        let uri = params.text_document.uri.clone();
        let json = self
            .on_doc(
                "textDocument/inlayHint",
                &uri,
                params,
                handlers::hints::inlay_hint,
            )
            .await?;
        Ok(Self::answer_per_turn(&uri, json))
    }

    /// `transcript/debugPanic` (debug builds only).
    #[cfg(debug_assertions)]
    pub async fn debug_panic(&self, params: ext::DebugPanicParams) -> Result<Value> {
        crate::lsp::dispatch::debug_panic(self, params).await
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let raw = lock(&self.shared.raw_init).take();
        if let Some(pid) = params.process_id {
            self.shared.client_pid.store(pid, Ordering::SeqCst);
        }
        let caps = ClientCaps::from_params(&params.capabilities, raw.as_ref());
        let enc = caps.encoding;
        *write(&self.shared.caps) = caps;
        let mut problems = Vec::new();
        if let Some(opts) = &params.initialization_options {
            problems = write(&self.shared.settings).apply(opts);
        }
        write(&self.shared.settings).workspace_folders = workspace_folder_paths(&params);
        self.shared.configure_host(false);
        let legend = read(&self.shared.settings).semantic_tokens;
        *write(&self.shared.legend) = legend;
        for p in problems {
            self.shared
                .log(MessageType::WARNING, format!("setting ignored: {p}"));
        }
        Ok(InitializeResult {
            capabilities: capabilities::server_capabilities(enc, legend),
            server_info: Some(ServerInfo {
                name: "transcript-ls".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        crate::lsp::refresh::start(&self.shared);
        crate::lsp::progress::start(&self.shared);
        let enc = match self.shared.enc() {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16 => "utf-16",
        };
        self.shared.log(
            MessageType::INFO,
            format!(
                "transcript-ls {} ready (positions in {enc})",
                env!("CARGO_PKG_VERSION")
            ),
        );
    }

    async fn shutdown(&self) -> Result<()> {
        self.shared.shutdown_requested.store(true, Ordering::SeqCst);
        let _ = self.shared.shutdown.send(true);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        handlers::sync::did_open(self, params);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        handlers::sync::did_change(self, params);
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        if handlers::sync::did_close(self, &params) {
            self.shared
                .client
                .publish_diagnostics(params.text_document.uri, Vec::new(), None)
                .await;
        }
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        {
            let mut s = write(&self.shared.settings);
            let ev = params.event;
            let gone: Vec<PathBuf> = ev.removed.iter().filter_map(folder_path).collect();
            s.workspace_folders.retain(|f| !gone.contains(f));
            for f in ev.added.iter().filter_map(folder_path) {
                if !s.workspace_folders.contains(&f) {
                    s.workspace_folders.push(f);
                }
            }
        }
        // The host re-indexes when the index roots changed.
        self.shared.configure_host(true);
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        handlers::sync::did_change_configuration(self, params);
    }

    async fn semantic_tokens_full_delta(
        &self,
        params: SemanticTokensDeltaParams,
    ) -> Result<Option<SemanticTokensFullDeltaResult>> {
        let uri = params.text_document.uri.clone();
        self.on_doc(
            "textDocument/semanticTokens/full/delta",
            &uri,
            params,
            handlers::tokens::full_delta,
        )
        .await
    }

    async fn semantic_tokens_range(
        &self,
        params: SemanticTokensRangeParams,
    ) -> Result<Option<SemanticTokensRangeResult>> {
        let uri = params.text_document.uri.clone();
        self.on_doc(
            "textDocument/semanticTokens/range",
            &uri,
            params,
            handlers::tokens::range,
        )
        .await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let uri = params
            .text_document_position_params
            .text_document
            .uri
            .clone();
        self.on_doc("textDocument/hover", &uri, params, handlers::hover::hover)
            .await
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let uri = params
            .text_document_position_params
            .text_document
            .uri
            .clone();
        self.on_doc(
            "textDocument/definition",
            &uri,
            params,
            handlers::navigation::definition,
        )
        .await
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let uri = params.text_document_position.text_document.uri.clone();
        self.on_doc(
            "textDocument/references",
            &uri,
            params,
            handlers::navigation::references,
        )
        .await
    }

    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Result<Option<WorkspaceSymbolResponse>> {
        let this = self.clone();
        off_loop(&self.shared, "workspace/symbol", move || {
            handlers::workspace_symbols::symbol(&this, params)
        })
        .await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        handlers::commands::execute_command(self, params).await
    }
}

/// The local path of a workspace folder (`None` for a folder that is not a `file:` URI).
fn folder_path(f: &WorkspaceFolder) -> Option<PathBuf> {
    crate::lsp::from_proto::file_path(&f.uri)
}

/// The client's workspace folders as local paths: `workspaceFolders`, else the deprecated
/// `rootUri` (clients before LSP 3.6).
#[allow(deprecated)]
fn workspace_folder_paths(params: &InitializeParams) -> Vec<PathBuf> {
    match &params.workspace_folders {
        Some(folders) => folders.iter().filter_map(folder_path).collect(),
        None => params
            .root_uri
            .as_ref()
            .and_then(crate::lsp::from_proto::file_path)
            .into_iter()
            .collect(),
    }
}
