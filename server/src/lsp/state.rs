//! The protocol layer's state (rust-analyzer's `global_state.rs`): the client handle, its
//! capabilities and settings, the per-turn answer caches and the semantic-token results sent
//! (`crate::lsp::turn_cache`), and the [`Host`] below, which owns the documents.
//! [`Backend::ctx`] turns a request's URI into a [`Ctx`]: the URI and the features of the
//! host's snapshot of the document ([`DocAnalysis`]).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;

use crate::ide::DocAnalysis;
use crate::ide::facade::OutOfRange;
use crate::ide::snapshot::ViewKey;
use crate::lsp::capabilities::{ClientCaps, VIEW_SCHEME};
use crate::lsp::config::{Settings, TokenLegend};
use crate::lsp::from_proto;
use crate::lsp::turn_cache::TurnCaches;
use crate::source::LineIndex;
use crate::source::position::Encoding;
use crate::store::host::{DocId, DocRef, Host, HostError, HostSettings};

/// State shared by the handlers and the background tasks.
pub struct Shared {
    pub client: Client,
    pub caps: RwLock<ClientCaps>,
    /// Raw `initialize` params, captured by the service wrapper before dispatch.
    pub raw_init: Mutex<Option<Value>>,
    pub settings: RwLock<Settings>,
    /// The legend advertised at `initialize` (fixed for the session).
    pub legend: RwLock<TokenLegend>,
    /// The document host: open documents, disk sources, snapshots, the session index.
    pub host: Arc<Host>,
    /// The client's requests not answered yet, for `$/cancelRequest` on arrival (issue 25
    /// item 7; shared with the transport).
    pub in_flight: Arc<crate::lsp::transport::InFlight>,
    /// Make the answers of `dispatch::RAW_ANSWERED` requests from scratch, the way
    /// tower-lsp-server makes a typed answer (through a `serde_json::Value`), without the
    /// per-turn cache: the reference the tests compare the JSON answers with (off by default).
    pub reference_answers: AtomicBool,
    /// The per-turn answer caches of raw documents and the last full semantic tokens sent
    /// (`crate::lsp::turn_cache`; one `forget` on `didClose`).
    pub(crate) turn_caches: TurnCaches,
    token_ids: AtomicU64,
    pub shutdown: tokio::sync::watch::Sender<bool>,
    pub shutdown_requested: AtomicBool,
    /// `initialize.processId` (0 until known or when the client sent `null`).
    pub client_pid: AtomicU32,
    logged_unknown: Mutex<HashSet<String>>,
    /// Request methods armed to panic on the blocking pool (debug builds only;
    /// `transcript/debugPanic` with `arm`).
    #[cfg(debug_assertions)]
    pub(crate) armed_panics: Mutex<HashSet<String>>,
}

pub(crate) use crate::sync::{lock, read, write};

/// An `InvalidParams` error with a message.
pub fn invalid(msg: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InvalidParams,
        message: msg.into().into(),
        data: None,
    }
}

/// `answer` serialised to JSON bytes; with `reference` (`Shared::reference_answers`, the tests'
/// reference path) through a `serde_json::Value` first, as tower-lsp-server's typed path does.
/// Errors: an `InternalError` naming `what` (`"folding ranges"`, a method name).
pub fn answer_json<T: serde::Serialize>(
    answer: &T,
    reference: bool,
    what: &str,
) -> Result<Vec<u8>> {
    let json = if reference {
        serde_json::to_value(answer).and_then(|v| serde_json::to_vec(&v))
    } else {
        serde_json::to_vec(answer)
    };
    json.map_err(|e| internal(format!("{what} as JSON: {e}")))
}

/// An `InternalError` with a message.
pub fn internal(msg: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InternalError,
        message: msg.into().into(),
        data: None,
    }
}

/// The protocol error for a host error on document `uri`.
pub fn host_error(e: HostError, uri: &Uri) -> Error {
    match e {
        HostError::NotOpen(_) => invalid(format!(
            "unknown document {} (not opened with textDocument/didOpen)",
            uri.as_str()
        )),
        HostError::Unreadable { .. } => invalid(e.to_string()),
        HostError::Internal(m) => internal(m),
    }
}

impl Shared {
    pub fn new(client: Client) -> Shared {
        let (stx, _) = tokio::sync::watch::channel(false);
        Shared {
            client,
            caps: RwLock::new(ClientCaps::default()),
            raw_init: Mutex::new(None),
            settings: RwLock::new(Settings::default()),
            legend: RwLock::new(TokenLegend::Custom),
            host: Arc::new(Host::new()),
            in_flight: Arc::default(),
            reference_answers: AtomicBool::new(false),
            turn_caches: TurnCaches::default(),
            token_ids: AtomicU64::new(1),
            shutdown: stx,
            shutdown_requested: AtomicBool::new(false),
            client_pid: AtomicU32::new(0),
            logged_unknown: Mutex::new(HashSet::new()),
            #[cfg(debug_assertions)]
            armed_panics: Mutex::new(HashSet::new()),
        }
    }

    /// The negotiated encoding.
    pub fn enc(&self) -> Encoding {
        read(&self.caps).encoding
    }

    /// Hands the current settings to the host (`announce`: the follower refreshes every
    /// document and re-indexes when the roots changed).
    pub fn configure_host(&self, announce: bool) {
        let s = read(&self.settings);
        let hs = HostSettings {
            options: s.analysis_options(),
            verbose: s.verbose,
            file_state: s.file_state,
            roots: s.index_roots(),
            index_cache: s.index_cache,
        };
        drop(s);
        self.host.configure(hs, announce);
    }

    /// Logs to stderr (a `tracing` event: `ERROR` at `error`, `WARNING` at `warn`, others at
    /// `info`; `lsp::log`) and `window/logMessage` (sent from a spawned task: never blocks the
    /// caller, so it is safe in sync-mutation handlers).
    pub fn log(&self, typ: MessageType, msg: impl Into<String>) {
        let msg = msg.into();
        if typ == MessageType::ERROR {
            tracing::error!("{msg}");
        } else if typ == MessageType::WARNING {
            tracing::warn!("{msg}");
        } else {
            tracing::info!("{msg}");
        }
        let client = self.client.clone();
        if tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(async move { client.log_message(typ, msg).await });
        }
    }

    /// Logs once per document that it is not a transcript (a document whose text is not
    /// blank: [`DocAnalysis::unrecognised`]).
    pub fn note_not_transcript(&self, uri: &Uri) {
        if lock(&self.logged_unknown).insert(uri.as_str().to_string()) {
            self.log(
                MessageType::INFO,
                format!(
                    "{} is not a {} transcript; serving empty results",
                    uri.as_str(),
                    crate::formats::agents::names("or")
                ),
            );
        }
    }

    pub(crate) fn next_result_id(&self) -> String {
        self.token_ids.fetch_add(1, Ordering::SeqCst).to_string()
    }

    /// The view key of a `transcript:` URI (the `verbose` setting as default).
    pub fn view_key(&self, uri: &Uri) -> Result<ViewKey> {
        from_proto::view_key(uri, read(&self.settings).verbose).map_err(invalid)
    }
}

/// A document with the data a request needs: its URI (as the client spelled it) and the
/// features of the host's snapshot ([`DocAnalysis`], which makes the raw / view choice).
#[derive(Clone)]
pub struct Ctx {
    pub uri: Uri,
    /// The host's id of the document (`from_proto::doc_id` of `uri`).
    pub id: DocId,
    pub doc: DocAnalysis,
}

impl Ctx {
    pub fn text(&self) -> &str {
        self.doc.text()
    }

    pub fn lines(&self) -> &LineIndex {
        self.doc.lines()
    }

    pub fn uri(&self) -> &Uri {
        &self.uri
    }

    /// The `InvalidParams` error for a position past the end of the document.
    pub fn out_of_range(&self, pos: Position) -> impl FnOnce(OutOfRange) -> Error + '_ {
        move |_| {
            invalid(format!(
                "position {}:{} is out of range (the document has {} lines)",
                pos.line,
                pos.character,
                self.lines().line_count()
            ))
        }
    }
}

/// The backend behind `LspService` (cheap to clone: handlers move a clone onto the
/// blocking pool).
#[derive(Clone)]
pub struct Backend {
    pub shared: Arc<Shared>,
}

impl Backend {
    pub fn new(client: Client) -> Backend {
        Backend {
            shared: Arc::new(Shared::new(client)),
        }
    }

    /// Resolves a URI to the features of the host's snapshot of the document (an open raw
    /// document, or a view, loading the file behind it).
    pub async fn ctx(&self, uri: &Uri) -> Result<Ctx> {
        let r = from_proto::doc_ref(uri, read(&self.shared.settings).verbose).map_err(invalid)?;
        let doc: DocAnalysis = self
            .shared
            .host
            .doc_snap(&r)
            .await
            .map_err(|e| host_error(e, uri))?
            .into();
        // Views of such files are noted when their text is served (`handlers::view`).
        if matches!(r, DocRef::Raw(_)) && doc.unrecognised() {
            self.shared.note_not_transcript(uri);
        }
        Ok(Ctx {
            uri: uri.clone(),
            id: r.id().clone(),
            doc,
        })
    }

    /// Sends `window/showDocument` from a spawned task (never awaited by a handler), when the
    /// client supports it.
    pub fn reveal(&self, uri: Uri, range: Option<Range>) {
        if !read(&self.shared.caps).show_document {
            return;
        }
        let client = self.shared.client.clone();
        tokio::spawn(async move {
            let _ = client
                .show_document(ShowDocumentParams {
                    uri,
                    external: Some(false),
                    take_focus: Some(true),
                    selection: range,
                })
                .await;
        });
    }

    /// The path of the file behind a `file:` or `transcript:` URI (for requests that read a
    /// file whether or not it is open). `what` names the request in the error.
    pub fn file_path_of(&self, uri: &Uri, what: &str) -> Result<std::path::PathBuf> {
        match uri.scheme().as_str() {
            VIEW_SCHEME => Ok(from_proto::view_key(uri, false).map_err(invalid)?.path),
            "file" => crate::lsp::from_proto::file_path(uri)
                .ok_or_else(|| invalid(format!("not a file path: {}", uri.as_str()))),
            other => Err(invalid(format!(
                "{what} needs a file: or {VIEW_SCHEME}: URI, got {other}:"
            ))),
        }
    }
}
