//! Custom protocol (PROTOCOL.md): LSP 3.18 `workspace/textDocumentContent` served on
//! tower-lsp-server 0.23 through `custom_method`, its alias `transcript/virtualDocument`, the
//! refresh request and notification types, and `workspace/executeCommand`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::request::Request;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::lsp::server::{Backend, invalid, view_uri};

/// `workspace/textDocumentContent` (client -> server, LSP 3.18): `UriParams` -> `TextResult`.
pub const TEXT_DOCUMENT_CONTENT: &str = "workspace/textDocumentContent";
/// `transcript/virtualDocument` (client -> server): `VirtualDocumentParams` -> `TextResult`.
pub const VIRTUAL_DOCUMENT: &str = "transcript/virtualDocument";
/// `transcript/sessions` (client -> server): `SessionsParams` -> `SessionsResult` (issue 7).
pub const SESSIONS: &str = "transcript/sessions";
/// `transcript/debugPanic` (client -> server, debug builds only): panics on purpose.
pub const DEBUG_PANIC: &str = "transcript/debugPanic";

/// Every method of the custom protocol, both directions (PROTOCOL.md documents each; a test
/// keeps the two in step).
pub const CUSTOM_METHODS: [&str; 8] = [
    TEXT_DOCUMENT_CONTENT,
    VIRTUAL_DOCUMENT,
    SESSIONS,
    crate::lsp::stats::STATS,
    <TextDocumentContentRefresh as Request>::METHOD,
    <DidChangeVirtualDocument as Notification>::METHOD,
    <DidChangeFile as Notification>::METHOD,
    DEBUG_PANIC,
];

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

impl Backend {
    /// `workspace/textDocumentContent`.
    pub async fn text_document_content(&self, params: UriParams) -> Result<TextResult> {
        Ok(TextResult {
            text: self.document_text(&params.uri).await?,
        })
    }

    /// The text of a `transcript:` URI: a view, or one side of a file edit's diff.
    async fn document_text(&self, uri: &Uri) -> Result<String> {
        match crate::lsp::handlers::diff::diff_key(uri) {
            Some(key) => self.diff_text(key?).await,
            None => self.view_text(uri).await,
        }
    }

    /// `transcript/virtualDocument` (alias for clients without LSP 3.18).
    pub async fn virtual_document(&self, params: VirtualDocumentParams) -> Result<TextResult> {
        let uri = params
            .uri
            .or(params.text_document.map(|t| t.uri))
            .ok_or_else(|| invalid("transcript/virtualDocument needs `uri`"))?;
        Ok(TextResult {
            text: self.document_text(&uri).await?,
        })
    }
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

impl Backend {
    /// `transcript/sessions`: sessions from the index, best match then most recent first.
    /// Paths become `file:` URIs; a session that cannot be named by a URI is left out.
    pub async fn sessions(&self, params: Option<SessionsParams>) -> Result<SessionsResult> {
        let p = params.unwrap_or_default();
        let q = crate::index::SessionQuery {
            query: p.query,
            project: p.project,
            limit: p.limit,
        };
        let now = crate::index::system_time_ms(std::time::SystemTime::now()).unwrap_or(0);
        let list = self
            .shared
            .index
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .sessions(&q, now);
        let uri = |p: &std::path::Path| Uri::from_file_path(p).map(|u| u.as_str().to_string());
        let sessions = list
            .into_iter()
            .filter_map(|s| {
                let mut v = serde_json::to_value(&s).ok()?;
                let o = v.as_object_mut()?;
                o.remove("path");
                o.insert("uri".into(), json!(uri(&s.path)?));
                o.insert("parent".into(), json!(s.parent.as_deref().and_then(uri)));
                o.insert(
                    "children".into(),
                    json!(s.children.iter().filter_map(|c| uri(c)).collect::<Vec<_>>()),
                );
                Some(v)
            })
            .collect();
        Ok(SessionsResult {
            sessions,
            complete: self
                .shared
                .index_ready
                .load(std::sync::atomic::Ordering::SeqCst),
        })
    }
}

/// Arguments of the commands: `[{ "uri": …, "line": …, "verbose": …, "reveal": … }]`, or
/// positional `[uri, line]`.
#[derive(Debug, Default)]
struct Args {
    uri: Option<Uri>,
    line: Option<u32>,
    verbose: Option<bool>,
    reveal: bool,
    /// `transcript.openView`: the turn to show.
    turn: Option<usize>,
}

fn parse_args(args: &[Value]) -> std::result::Result<Args, String> {
    let mut out = Args::default();
    let parse_uri = |v: &Value| -> std::result::Result<Uri, String> {
        let s = v
            .as_str()
            .ok_or_else(|| format!("`uri` must be a string, got {v}"))?;
        s.parse::<Uri>()
            .map_err(|e| format!("invalid uri {s:?}: {e}"))
    };
    match args.first() {
        Some(Value::Object(o)) => {
            if let Some(u) = o.get("uri") {
                out.uri = Some(parse_uri(u)?);
            } else if let Some(u) = o.get("textDocument").and_then(|t| t.get("uri")) {
                out.uri = Some(parse_uri(u)?);
            }
            out.line = o
                .get("line")
                .and_then(Value::as_u64)
                .or_else(|| {
                    o.get("position")
                        .and_then(|p| p.get("line"))
                        .and_then(Value::as_u64)
                })
                .map(|n| n.min(u32::MAX as u64) as u32);
            out.verbose = o.get("verbose").and_then(Value::as_bool);
            out.reveal = o.get("reveal").and_then(Value::as_bool).unwrap_or(false);
            out.turn = o
                .get("turn")
                .and_then(Value::as_u64)
                .map(|n| n.min(u32::MAX as u64) as usize);
        }
        Some(v @ Value::String(_)) => {
            out.uri = Some(parse_uri(v)?);
            out.line = args
                .get(1)
                .and_then(Value::as_u64)
                .map(|n| n.min(u32::MAX as u64) as u32);
        }
        Some(v) => return Err(format!("unexpected argument {v}")),
        None => {}
    }
    Ok(out)
}

/// `workspace/executeCommand`.
pub async fn execute_command(
    backend: &Backend,
    params: ExecuteCommandParams,
) -> Result<Option<Value>> {
    let args = parse_args(&params.arguments).map_err(invalid)?;
    let need_uri = || {
        args.uri
            .clone()
            .ok_or_else(|| invalid(format!("{} needs a `uri` argument", params.command)))
    };
    match params.command.as_str() {
        "transcript.nextTurn" | "transcript.previousTurn" | "transcript.nextGate" => {
            let uri = need_uri()?;
            let ctx = backend.ctx(&uri).await?;
            let line = args.line.unwrap_or(0) as usize;
            let (lines, forward) = match params.command.as_str() {
                "transcript.nextTurn" => (backend.turn_lines(&ctx), true),
                "transcript.previousTurn" => (backend.turn_lines(&ctx), false),
                _ => (backend.gate_lines(&ctx), true),
            };
            let Some(target) = ide::navigation::step_line(&lines, line, forward) else {
                return Ok(Some(Value::Null));
            };
            let range = crate::lsp::convert::line_range(
                ctx.text(),
                ctx.lines(),
                target,
                backend.shared.enc(),
            )
            .unwrap_or_default();
            let loc = Location {
                uri: ctx.uri().clone(),
                range,
            };
            if args.reveal {
                backend.reveal(loc.uri.clone(), Some(Range::new(range.start, range.start)));
            }
            Ok(Some(serde_json::to_value(loc).unwrap_or(Value::Null)))
        }
        "transcript.listSessionFiles" => {
            let uri = need_uri()?;
            let ctx = backend.ctx(&uri).await?;
            let snap = ctx.snap().clone();
            let files = tokio::task::spawn_blocking(move || snap.session_files().clone())
                .await
                .unwrap_or_default();
            let mut out = Vec::new();
            if let Some(u) = Uri::from_file_path(&files.main) {
                out.push(json!({ "uri": u.as_str(), "kind": "main" }));
            }
            for f in &files.subagents {
                let Some(u) = Uri::from_file_path(&f.path) else {
                    continue;
                };
                out.push(json!({
                    "uri": u.as_str(),
                    "kind": if f.is_compaction { "compaction" } else { "subagent" },
                    "agentId": f.agent_id,
                    "toolUseId": f.tool_use_id,
                    "description": f.description,
                    "agentType": f.agent_type,
                    "warmup": f.is_warmup,
                }));
            }
            Ok(Some(Value::Array(out)))
        }
        crate::lsp::handlers::diff::SHOW_DIFF => {
            let uri = need_uri()?;
            let line = args.line.unwrap_or(0) as usize;
            Ok(Some(backend.show_diff(&uri, line).await?))
        }
        "transcript.openView" => {
            let uri = need_uri()?;
            let path = if uri.scheme().as_str() == crate::lsp::capabilities::VIEW_SCHEME {
                crate::lsp::server::view_key(&uri, false)?.path
            } else {
                uri.to_file_path()
                    .map(|p| p.into_owned())
                    .ok_or_else(|| invalid(format!("not a file URI: {}", uri.as_str())))?
            };
            if !path.is_file() {
                return Err(invalid(format!("no such transcript: {}", path.display())));
            }
            let view = view_uri(&path, args.verbose)
                .ok_or_else(|| invalid(format!("cannot make a view URI for {}", path.display())))?;
            // At a turn: its heading line in that view.
            let mut line = None;
            if let Some(n) = args.turn
                && let crate::lsp::server::Ctx::View { view: v, .. } = &backend.ctx(&view).await?
            {
                line = v.index.turn_heading(n);
            }
            if args.reveal {
                let range = line.map(|l| {
                    let p = Position::new(l as u32, 0);
                    Range::new(p, p)
                });
                backend.reveal(view.clone(), range);
            }
            Ok(Some(match line {
                Some(l) => json!({ "uri": view.as_str(), "line": l }),
                None => json!({ "uri": view.as_str() }),
            }))
        }
        other => Err(invalid(format!("unknown command {other:?}"))),
    }
}
