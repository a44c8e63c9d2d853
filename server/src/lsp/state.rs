//! The protocol layer's state (rust-analyzer's `global_state.rs`): the client handle, its
//! capabilities and settings, the semantic-token results sent, and the [`Host`] below, which
//! owns the documents. [`Backend::ctx`] turns a request's URI into a [`Ctx`]: the URI and the
//! host's plain snapshot of the document.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;

use crate::ide::DocAnalysis;
use crate::ide::facade::OutOfRange;
use crate::ide::host::{Host, HostError, HostSettings, ViewKey};
use crate::lsp::capabilities::{ClientCaps, VIEW_SCHEME};
use crate::lsp::config::{Settings, TokenLegend};
use crate::lsp::from_proto;
use crate::source::LineIndex;
use crate::source::position::Encoding;

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
    /// `didOpen` texts the transport took out of their messages (`lsp::transport`).
    pub pending_texts: Arc<crate::lsp::transport::PendingTexts>,
    /// Answers made as JSON bytes, waiting for the transport to write them
    /// (`lsp::transport::RawResults`).
    pub raw_results: Arc<crate::lsp::transport::RawResults>,
    /// The client's requests not answered yet, for `$/cancelRequest` on arrival (issue 25
    /// item 7; shared with the transport).
    pub in_flight: Arc<crate::lsp::transport::InFlight>,
    /// Make the answers of `dispatch::RAW_ANSWERED` requests from scratch, the way
    /// tower-lsp-server makes a typed answer (through a `serde_json::Value`), without the
    /// per-turn cache: the reference the tests compare the JSON answers with (off by default).
    pub reference_answers: AtomicBool,
    /// Last full semantic tokens per document URI: `(resultId, tokens)`.
    pub(crate) tokens: Mutex<HashMap<String, (String, Vec<SemanticToken>)>>,
    /// Last document symbols per raw document URI, one per turn with the outline entry it was
    /// made from (issue 12: an append converts only the turns it changed; an entry kept by the
    /// snapshot is the same `Arc`, its lines unchanged).
    pub(crate) symbols: Mutex<HashMap<String, TurnSymbols>>,
    /// Last folding ranges per raw document URI, one piece per turn with the outline entry
    /// of the turn (issue 12; `crate::lsp::handlers::folding`).
    pub(crate) folds: Mutex<HashMap<String, TurnFolds>>,
    /// Inlay hints per raw document URI, one piece of JSON per turn
    /// (issue 12; `crate::lsp::handlers::hints`).
    pub(crate) hints: Mutex<HashMap<String, TurnHints>>,
    /// Per raw document URI, held while its inlay hints are assembled from per-turn pieces,
    /// so that requests arriving together (Neovim asks twice for the whole buffer as it opens
    /// a file) make the missing pieces once, the others copying them: on a 1 GB transcript
    /// each making held ~80 MB. Other documents' hints do not wait. Removed on `didClose`.
    pub(crate) hints_making: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// Full semantic tokens per raw document URI, one piece per turn
    /// (issue 12; `crate::lsp::handlers::tokens`).
    pub(crate) turn_tokens: Mutex<HashMap<String, TurnTokens>>,
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

/// The document symbols of one raw document as JSON, per turn beside the outline entry they
/// were converted from (issue 12).
pub(crate) struct TurnSymbols {
    /// The position encoding of their ranges.
    pub encoding: Encoding,
    /// `DocumentSymbol`s (else flat `SymbolInformation`s).
    pub hierarchical: bool,
    /// Per turn: the outline entry and the JSON of its `DocumentSymbol`, or of the
    /// `SymbolInformation`s of it and its descendants separated by commas (UTF-8 bytes).
    pub turns: Vec<(Arc<crate::ide::symbols::Symbol>, Box<[u8]>)>,
}

/// The folding ranges of one raw document as JSON, per turn beside the turn's outline entry
/// (issue 12): a turn kept by an append has the same entry (`Arc`) and the same folds.
pub(crate) struct TurnFolds {
    /// Per turn: its outline entry and the JSON of the folding ranges starting in its lines.
    pub turns: Vec<(Arc<crate::ide::symbols::Symbol>, TurnPiece)>,
    /// The last whole answer: the snapshot it was made of, the client's `rangeLimit`, JSON.
    pub answer: Option<(
        std::sync::Weak<crate::ide::document::Snapshot>,
        usize,
        Vec<u8>,
    )>,
}

/// The JSON of some normalised folds as `FoldingRange`s, elements of the answer's array
/// separated by commas, with what the handler (`crate::lsp::handlers::folding`) checks
/// before reusing it.
#[derive(Debug)]
pub(crate) struct TurnPiece {
    pub json: Box<[u8]>,
    /// Ranges in it.
    pub count: usize,
    /// First and last start line, and the last end line, of its folds (before the end line
    /// is limited to the document's last line): a piece is reused only while that last end
    /// line is within the document, and only when it was when the piece was made (`exact`):
    /// the limit (and the filter of folds starting on the last line) then changed nothing.
    pub min_start: Option<usize>,
    pub max_start: Option<usize>,
    pub max_end: usize,
    pub exact: bool,
}

/// The inlay hints of one raw document as JSON, per turn beside the turn's outline entry
/// (issue 12: Neovim asks for the hints of the whole buffer on every change; on a 1 GB
/// transcript that answer is 27 MB, and made through tower-lsp-server's `serde_json::Value`
/// three of them at once raised the server's peak to 1.6× the file's size).
pub(crate) struct TurnHints {
    /// The position encoding of their positions.
    pub encoding: Encoding,
    /// The `timeZone` setting their tooltips were made with.
    pub time_zone: Option<String>,
    /// `Analysis::turn_count` when they were made: every turn's label says `n/total`.
    pub total: usize,
    /// Per turn (by index): the piece made for it, if any.
    pub turns: Vec<Option<HintPiece>>,
}

/// The hints on the lines of one turn as JSON.
pub(crate) struct HintPiece {
    /// The turn's outline entry when the piece was made (an append keeps the entries of the
    /// turns it left alone: the same `Arc`).
    pub symbol: Arc<crate::ide::symbols::Symbol>,
    /// The turn's lines, `start..end` (0-based, `end` exclusive: the next turn's first line,
    /// or the document's line count for the last turn).
    pub lines: (usize, usize),
    /// Its `InlayHint`s, elements of the answer's array separated by commas (UTF-8).
    pub json: Box<[u8]>,
}

/// The semantic tokens of one raw document, per turn beside the turn's outline entry (issue
/// 12: an append encodes the tokens of the turns it changed, not those of the whole file;
/// 145 ms per request on a 1 GB transcript in Neovim).
pub(crate) struct TurnTokens {
    /// The position encoding and legend they were encoded in.
    pub encoding: Encoding,
    pub legend: crate::lsp::config::TokenLegend,
    /// Per turn (by index): its piece.
    pub turns: Vec<TokenPiece>,
}

/// The tokens on the lines of one turn, encoded relative to each other as LSP sends them.
pub(crate) struct TokenPiece {
    /// The turn's outline entry when the piece was made (an append keeps the entries of the
    /// turns it left alone: the same `Arc`).
    pub symbol: Arc<crate::ide::symbols::Symbol>,
    /// The turn's lines, `start..end` (0-based, `end` exclusive: the next turn's first line,
    /// or `usize::MAX` for the last turn).
    pub lines: (usize, usize),
    /// The tokens, the first relative to the document's start (its `delta_line` and
    /// `delta_start` are its line and column): the answer re-bases it on the previous
    /// piece's last token (`crate::lsp::handlers::tokens`).
    pub data: Box<[SemanticToken]>,
    /// Line and column of the last token (`None`: no token).
    pub last: Option<(u32, u32)>,
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
            pending_texts: Arc::default(),
            raw_results: Arc::default(),
            in_flight: Arc::default(),
            reference_answers: AtomicBool::new(false),
            tokens: Mutex::new(HashMap::new()),
            symbols: Mutex::new(HashMap::new()),
            folds: Mutex::new(HashMap::new()),
            hints: Mutex::new(HashMap::new()),
            hints_making: Mutex::new(HashMap::new()),
            turn_tokens: Mutex::new(HashMap::new()),
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

    /// Logs to stderr and `window/logMessage` (sent from a spawned task: never blocks the
    /// caller, so it is safe in sync-mutation handlers).
    pub fn log(&self, typ: MessageType, msg: impl Into<String>) {
        let msg = msg.into();
        eprintln!("transcript-ls: {msg}");
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
        if !from_proto::is_view(uri) && doc.unrecognised() {
            self.shared.note_not_transcript(uri);
        }
        Ok(Ctx {
            uri: uri.clone(),
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
            "file" => crate::lsp::from_proto::file_path(&uri)
                .ok_or_else(|| invalid(format!("not a file path: {}", uri.as_str()))),
            other => Err(invalid(format!(
                "{what} needs a file: or {VIEW_SCHEME}: URI, got {other}:"
            ))),
        }
    }
}
