//! Custom protocol (PROTOCOL.md), types only: method names, params and results of LSP 3.18
//! `workspace/textDocumentContent` (served on tower-lsp-server 0.23 through `custom_method`),
//! its alias `transcript/virtualDocument`, `transcript/sessions`, the refresh request and the
//! notifications. The handlers are in `crate::lsp::handlers`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::request::Request;
use tower_lsp_server::ls_types::*;

/// `workspace/textDocumentContent` (client -> server, LSP 3.18): `UriParams` -> `TextResult`.
pub const TEXT_DOCUMENT_CONTENT: &str = "workspace/textDocumentContent";
/// `transcript/virtualDocument` (client -> server): `VirtualDocumentParams` -> `TextResult`.
pub const VIRTUAL_DOCUMENT: &str = "transcript/virtualDocument";
/// `transcript/sessions` (client -> server): `SessionsParams` -> `SessionsResult` (issue 7).
pub const SESSIONS: &str = "transcript/sessions";
/// `transcript/fileHistory` (client -> server): `FileHistoryParams` -> `{ path, entries }`
/// (issue 22 item 3).
pub const FILE_HISTORY: &str = "transcript/fileHistory";
/// `transcript/blame` (client -> server): `BlameParams` -> `{ path, ranges }` (issue 22
/// item 4).
pub const BLAME: &str = "transcript/blame";
/// `transcript/search` (client -> server): `SearchParams` -> `{ hits, complete }` (issue 26).
pub const SEARCH: &str = "transcript/search";
/// `transcript/internal/didOpenText` (transport -> server, internal): sent by the server's
/// own framing layer in place of a `textDocument/didOpen` whose text it took out of the
/// message (`lsp::transport::split_did_open`): `OpenTextParams`. Never sent by a client (one
/// with an unknown text id is logged and dropped).
pub const OPEN_PENDING: &str = "transcript/internal/didOpenText";
/// `transcript/debugPanic` (client -> server, debug builds only): panics on purpose.
pub const DEBUG_PANIC: &str = "transcript/debugPanic";

/// Every method of the custom protocol, both directions (PROTOCOL.md documents each; a test
/// keeps the two in step).
pub const CUSTOM_METHODS: [&str; 13] = [
    TEXT_DOCUMENT_CONTENT,
    VIRTUAL_DOCUMENT,
    SESSIONS,
    FILE_HISTORY,
    BLAME,
    SEARCH,
    crate::lsp::stats::STATS,
    <TextDocumentContentRefresh as Request>::METHOD,
    <DidChangeVirtualDocument as Notification>::METHOD,
    <DidChangeFile as Notification>::METHOD,
    <DidChangeSessions as Notification>::METHOD,
    DEBUG_PANIC,
    OPEN_PENDING,
];

/// Params of `transcript/internal/didOpenText` (`lsp::transport::OPEN_PENDING`): a
/// `didOpen`'s text document without its text, and the id of the text the transport keeps.
#[derive(Debug, Clone, Deserialize)]
pub struct OpenTextParams {
    #[serde(rename = "textDocument")]
    pub text_document: OpenTextItem,
    /// Id in `lsp::transport::PendingTexts`.
    pub text: u64,
}

/// `TextDocumentItem` without `text`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenTextItem {
    pub uri: Uri,
    pub language_id: String,
    pub version: i32,
}

/// Params of `workspace/textDocumentContent` and of the refresh request: `{ "uri": … }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UriParams {
    pub uri: Uri,
}

/// Result of `workspace/textDocumentContent`: `{ "text": … }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TextResult {
    pub text: String,
}

/// Params of `transcript/virtualDocument`: `{ "uri": … }` or `{ "textDocument": { "uri": … } }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VirtualDocumentParams {
    #[serde(default)]
    pub uri: Option<Uri>,
    #[serde(default)]
    pub text_document: Option<TextDocumentIdentifier>,
}

/// `workspace/textDocumentContent/refresh` (server -> client, LSP 3.18).
pub enum TextDocumentContentRefresh {}

impl Request for TextDocumentContentRefresh {
    type Params = UriParams;
    type Result = Value;
    const METHOD: &'static str = "workspace/textDocumentContent/refresh";
}

/// `transcript/didChangeVirtualDocument` (server -> client notification).
pub enum DidChangeVirtualDocument {}

impl Notification for DidChangeVirtualDocument {
    type Params = UriParams;
    const METHOD: &'static str = "transcript/didChangeVirtualDocument";
}

/// `transcript/didChangeFile` (server -> client notification): a raw transcript open in the
/// editor changed on disk; the client may reload it.
pub enum DidChangeFile {}

impl Notification for DidChangeFile {
    type Params = UriParams;
    const METHOD: &'static str = "transcript/didChangeFile";
}

/// `transcript/didChangeSessions` (server -> client notification): the session index changed
/// for these transcripts (re-read after a change on disk, or a followed file settled by the
/// file-age rule), so a client's session list and its views' titles can be brought up to date
/// at once, in step with the views (issue 23 item 9: the tree kept its live dot after the
/// view showed the turn finished; a tab kept an old title).
pub enum DidChangeSessions {}

impl Notification for DidChangeSessions {
    type Params = SessionsChangedParams;
    const METHOD: &'static str = "transcript/didChangeSessions";
}

/// Params of `transcript/didChangeSessions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionsChangedParams {
    /// The transcripts (`file:` URIs) whose session-index entry or live state changed.
    pub uris: Vec<Uri>,
}

/// Params of `transcript/sessions` (PROTOCOL.md): every field optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionsParams {
    /// Fuzzy text matched against title, first prompt and project.
    #[serde(default)]
    pub query: Option<String>,
    /// Only sessions whose recorded project (`cwd`) is this path or below it.
    #[serde(default)]
    pub project: Option<String>,
    /// At most this many sessions (default 200).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Result of `transcript/sessions`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionsResult {
    pub sessions: Vec<Value>,
    /// False while the first index build is still running (the list may be partial).
    pub complete: bool,
}

/// Params of `transcript/fileHistory` (PROTOCOL.md): the source file, by absolute `path` or
/// by a `file:` `uri` (one of the two).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileHistoryParams {
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub uri: Option<Uri>,
}

/// Params of `transcript/blame` (PROTOCOL.md): the file as for `transcript/fileHistory`, and
/// its current text (the editor's buffer; read from disk when absent).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlameParams {
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub uri: Option<Uri>,
    #[serde(default)]
    pub text: Option<String>,
}

/// Params of `transcript/search` (PROTOCOL.md, issue 26).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchParams {
    /// Words, `"quoted phrases"`; the last word is a prefix unless followed by a space.
    pub query: String,
    /// At most this many hits (default 50, at most 1000).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Only sessions under these directories (absolute paths or `file:` URIs).
    #[serde(default)]
    pub roots: Option<Vec<String>>,
}
