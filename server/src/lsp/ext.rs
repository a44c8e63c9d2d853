//! The custom protocol (PROTOCOL.md) as types, in one place (issue 24 item 5; rust-analyzer's
//! `lsp/ext.rs`): every request and notification beyond LSP 3.17, both directions, is a type
//! with its method name, params and result ([`Request`], [`Notification`]), and every command
//! of `workspace/executeCommand` a variant of [`Command`] with its name. The method table
//! (`crate::lsp::build_service`) routes each request to its handler by the type, so a name is
//! written once; `tests/it/protocol_contracts.rs` checks PROTOCOL.md against
//! [`CUSTOM_METHODS`] and [`Command::ALL`].
//!
//! The server -> client messages also implement `ls_types`' traits, which tower-lsp-server's
//! `Client` sends; their method names are these.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tower_lsp_server::ls_types::{TextDocumentIdentifier, Uri};

/// A request of the custom protocol: its method, params and result.
pub trait Request {
    type Params;
    type Result;
    const METHOD: &'static str;
}

/// A notification of the custom protocol: its method and params.
pub trait Notification {
    type Params;
    const METHOD: &'static str;
}

/// Every method of the custom protocol, both directions: the requests, then the
/// notifications, as declared below (PROTOCOL.md documents each; a test keeps the two in step).
pub const CUSTOM_METHODS: [&str; REQUESTS.len() + NOTIFICATIONS.len()] = {
    let mut all = [""; REQUESTS.len() + NOTIFICATIONS.len()];
    let mut i = 0;
    while i < all.len() {
        all[i] = if i < REQUESTS.len() {
            REQUESTS[i]
        } else {
            NOTIFICATIONS[i - REQUESTS.len()]
        };
        i += 1;
    }
    all
};

/// Declares request types: `$(#[doc])* Name: "method", Params => Result;` becomes an
/// uninhabited `enum Name {}` implementing [`Request`]. Behind `to_client`, the type also
/// implements `ls_types`' request trait, which tower-lsp-server's `Client` sends.
macro_rules! requests {
    ($($(#[$doc:meta])* $name:ident: $method:literal, $params:ty => $result:ty $(, $to_client:ident)?;)*) => {
        /// The methods of the requests, in the order declared.
        const REQUESTS: &[&str] = &[$($method),*];
        $(
            $(#[$doc])*
            pub enum $name {}

            impl Request for $name {
                type Params = $params;
                type Result = $result;
                const METHOD: &'static str = $method;
            }

            $(requests!(@$to_client $name);)?
        )*
    };
    (@to_client $name:ident) => {
        impl tower_lsp_server::ls_types::request::Request for $name {
            type Params = <$name as Request>::Params;
            type Result = <$name as Request>::Result;
            const METHOD: &'static str = <$name as Request>::METHOD;
        }
    };
}

/// Declares notification types: `$(#[doc])* Name: "method", Params;` becomes an uninhabited
/// `enum Name {}` implementing [`Notification`]. Behind `to_client`, the type also implements
/// `ls_types`' notification trait, which tower-lsp-server's `Client` sends.
macro_rules! notifications {
    ($($(#[$doc:meta])* $name:ident: $method:literal, $params:ty $(, $to_client:ident)?;)*) => {
        /// The methods of the notifications, in the order declared.
        const NOTIFICATIONS: &[&str] = &[$($method),*];
        $(
            $(#[$doc])*
            pub enum $name {}

            impl Notification for $name {
                type Params = $params;
                const METHOD: &'static str = $method;
            }

            $(notifications!(@$to_client $name);)?
        )*
    };
    (@to_client $name:ident) => {
        impl tower_lsp_server::ls_types::notification::Notification for $name {
            type Params = <$name as Notification>::Params;
            const METHOD: &'static str = <$name as Notification>::METHOD;
        }
    };
}

requests! {
    // ----- client -> server -----

    /// `workspace/textDocumentContent` (LSP 3.18; served on tower-lsp-server 0.23 as a custom
    /// method): the text of a `transcript:` URI (a view, or a side of a diff or change set).
    TextDocumentContent: "workspace/textDocumentContent", UriParams => TextResult;

    /// `transcript/virtualDocument`: [`TextDocumentContent`] for clients without LSP 3.18.
    VirtualDocument: "transcript/virtualDocument", VirtualDocumentParams => TextResult;

    /// `transcript/sessions`: the session index's sessions (issue 7).
    Sessions: "transcript/sessions", Option<SessionsParams> => SessionsResult;

    /// `transcript/fileHistory`: the sessions that changed a source file, `{ path, entries }`
    /// (issue 22 item 3).
    FileHistory: "transcript/fileHistory", FileHistoryParams => Value;

    /// `transcript/blame`: which session's turn wrote each range of a source file, `{ path,
    /// ranges }` (issue 22 item 4).
    Blame: "transcript/blame", BlameParams => Value;

    /// `transcript/search`: full-text search across sessions, `{ hits, complete }` (issue 26).
    Search: "transcript/search", SearchParams => Value;

    /// `transcript/stats`: the exact totals of one transcript, the figures of `transcript-ls
    /// stats --json` (`crate::ide::stats`; issue 11 defect 4, issue 7 item 2).
    Stats: "transcript/stats", StatsParams => crate::ide::stats::Stats;

    /// `transcript/debugPanic` (debug builds only): panics on purpose (the panic-isolation
    /// tests).
    DebugPanic: "transcript/debugPanic", DebugPanicParams => Value;

    // ----- server -> client -----

    /// `workspace/textDocumentContent/refresh` (server -> client request, LSP 3.18).
    TextDocumentContentRefresh: "workspace/textDocumentContent/refresh", UriParams => Value, to_client;
}

notifications! {
    // ----- server -> client -----

    /// `transcript/didChangeVirtualDocument` (server -> client notification): a view's text
    /// changed.
    DidChangeVirtualDocument: "transcript/didChangeVirtualDocument", UriParams, to_client;

    /// `transcript/didChangeFile` (server -> client notification): a raw transcript open in the
    /// editor changed on disk; the client may reload it.
    DidChangeFile: "transcript/didChangeFile", UriParams, to_client;

    /// `transcript/didChangeSessions` (server -> client notification): the session index changed
    /// for these transcripts (re-read after a change on disk, or a followed file settled by the
    /// file-age rule), so a client's session list and its views' titles can be brought up to date
    /// at once, in step with the views (issue 23 item 9: the tree kept its live dot after the
    /// view showed the turn finished; a tab kept an old title).
    DidChangeSessions: "transcript/didChangeSessions", SessionsChangedParams, to_client;
}

// ----- commands -----

/// The commands of `workspace/executeCommand` (PROTOCOL.md §Commands). Their arguments are
/// one object (`{ uri, line, … }`) or positional `[uri, line]`, parsed by
/// `crate::lsp::handlers::commands`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `transcript.nextTurn { uri, line, reveal? }`: the next turn's line.
    NextTurn,
    /// `transcript.previousTurn { uri, line, reveal? }`: the previous turn's line.
    PreviousTurn,
    /// `transcript.nextGate { uri, line, reveal? }`: the next gate's line.
    NextGate,
    /// `transcript.listSessionFiles { uri }`: the session's files.
    ListSessionFiles,
    /// `transcript.openView { uri, verbose?, turn?, reveal? }`: a view's URI.
    OpenView,
    /// `transcript.showDiff { uri, line }`: the sides of the file edit on a line
    /// (`handlers::diff`, PROTOCOL.md "Native diffs").
    ShowDiff,
    /// `transcript.showChanges { uri, turn? | session? | line? }`: a change set's files
    /// (`handlers::changes`, PROTOCOL.md "Change sets").
    ShowChanges,
}

impl Command {
    /// Every command, in the order the server announces them.
    pub const ALL: [Command; 7] = [
        Command::NextTurn,
        Command::PreviousTurn,
        Command::NextGate,
        Command::ListSessionFiles,
        Command::OpenView,
        Command::ShowDiff,
        Command::ShowChanges,
    ];

    /// The command's name.
    pub const fn name(self) -> &'static str {
        match self {
            Command::NextTurn => "transcript.nextTurn",
            Command::PreviousTurn => "transcript.previousTurn",
            Command::NextGate => "transcript.nextGate",
            Command::ListSessionFiles => "transcript.listSessionFiles",
            Command::OpenView => "transcript.openView",
            Command::ShowDiff => "transcript.showDiff",
            Command::ShowChanges => "transcript.showChanges",
        }
    }

    /// The command named `name`, if it is one of ours.
    pub fn from_name(name: &str) -> Option<Command> {
        Command::ALL.into_iter().find(|c| c.name() == name)
    }
}

// ----- params and results -----

/// Params of `workspace/textDocumentContent` and of the refresh request and notifications:
/// `{ "uri": … }`.
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

/// Params of `transcript/didChangeSessions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionsChangedParams {
    /// The transcripts (`file:` URIs) whose session-index entry or live state changed.
    pub uris: Vec<Uri>,
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

/// Params of `transcript/stats`: `{ "uri": … }`, a raw transcript (`file:`, open or not) or a
/// view (`transcript:`; its query is ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct StatsParams {
    pub uri: Uri,
}

/// Params of `transcript/debugPanic` (debug builds only).
#[derive(Debug, Deserialize)]
pub struct DebugPanicParams {
    /// The document to resolve (and build) before panicking (with `where`).
    #[serde(default)]
    pub uri: Option<Uri>,
    /// `"inline"` panics in the handler's future; `"blocking"` on the blocking pool.
    #[serde(rename = "where", default)]
    pub at: Option<String>,
    /// A request method (`textDocument/codeLens`, `workspace/executeCommand`, …): its next
    /// request panics on the blocking pool instead of answering; this request answers `null`.
    #[serde(default)]
    pub arm: Option<String>,
}
