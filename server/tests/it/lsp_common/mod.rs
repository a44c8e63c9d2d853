//! An in-process LSP client for the tests: drives `transcript_ls::lsp::build_service()` through
//! `tower::ServiceExt`, records every message the server sends to the client (notifications
//! and requests, in order) and answers the server's requests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tower::{Service, ServiceExt};
use tower_lsp_server::jsonrpc::{Request, Response};
use transcript_ls::lsp::{TranscriptService, build_service};

/// `../shared` relative to the workspace root (CI uses the same path).
pub fn shared_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared"))
}

/// `fixtures/` of the workspace.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures"))
}

/// Appends every `.jsonl` file under `dir` to `out`, depth first, each directory's entries in
/// sorted order (so the order of files, and of snapshot rows made from them, is fixed). A
/// directory that cannot be read adds nothing.
pub fn jsonl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            jsonl_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

/// `file://` URI of a path.
pub fn file_uri(p: &Path) -> String {
    let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut s = String::from("file://");
    for b in p.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// `transcript://` URI of a path.
pub fn view_uri(p: &Path, verbose: Option<bool>) -> String {
    let mut s = file_uri(p).replacen("file://", "transcript://", 1);
    match verbose {
        Some(true) => s.push_str("?verbose=1"),
        Some(false) => s.push_str("?verbose=0"),
        None => {}
    }
    s
}

/// One message the server sent to the client.
#[derive(Debug, Clone)]
pub struct Sent {
    pub method: String,
    pub params: Value,
    pub is_request: bool,
}

pub struct TestClient {
    pub service: TranscriptService,
    next_id: i64,
    pub sent: Arc<Mutex<Vec<Sent>>>,
}

/// Client capabilities of a VS Code-like client (UTF-16, refresh support, hierarchical
/// symbols, 3.18 textDocumentContent) or, with `utf8`, a Neovim-like one.
pub fn client_caps(utf8: bool) -> Value {
    json!({
        "general": { "positionEncodings": if utf8 { json!(["utf-8", "utf-16"]) } else { json!(["utf-16"]) } },
        "workspace": {
            "semanticTokens": { "refreshSupport": true },
            "inlayHint": { "refreshSupport": true },
            "codeLens": { "refreshSupport": true },
            "textDocumentContent": { "dynamicRegistration": true },
            "symbol": {},
            "executeCommand": {}
        },
        "window": { "workDoneProgress": true, "showDocument": { "support": true } },
        "textDocument": {
            "documentSymbol": { "hierarchicalDocumentSymbolSupport": true },
            "foldingRange": { "lineFoldingOnly": true, "rangeLimit": 5000,
                              "foldingRange": { "collapsedText": true } },
            "hover": { "contentFormat": ["markdown", "plaintext"] },
            "inlayHint": {},
            "semanticTokens": { "requests": { "full": { "delta": true }, "range": true },
                                "tokenTypes": [], "tokenModifiers": [], "formats": ["relative"] }
        }
    })
}

impl TestClient {
    /// Starts a server, sends `initialize` (and waits for its response: notifications sent
    /// before it are dropped by tower-lsp-server, LSP-NOTES §1.2) and `initialized`.
    /// Fixtures are read as still being written (`fileState: "growing"`) unless the options
    /// say otherwise: their age depends on when the repository was checked out. Tests never
    /// write the user's session index cache (`indexCache: false`).
    pub async fn start(caps: Value, init_options: Value) -> (TestClient, Value) {
        TestClient::start_in(caps, init_options, Value::Null).await
    }

    /// [`TestClient::start`] with `workspaceFolders` in `initialize` (`null`: none).
    pub async fn start_in(
        caps: Value,
        mut init_options: Value,
        workspace_folders: Value,
    ) -> (TestClient, Value) {
        if init_options.is_null() {
            init_options = json!({});
        }
        if let Value::Object(m) = &mut init_options {
            m.entry("fileState").or_insert(json!("growing"));
            m.entry("indexCache").or_insert(json!(false));
        }
        let (service, socket) = build_service();
        let sent = Arc::new(Mutex::new(Vec::new()));
        let rec = sent.clone();
        let (mut requests, mut responses) = socket.split();
        tokio::spawn(async move {
            while let Some(req) = requests.next().await {
                let (method, id, params) = req.into_parts();
                rec.lock().unwrap().push(Sent {
                    method: method.to_string(),
                    params: params.unwrap_or(Value::Null),
                    is_request: id.is_some(),
                });
                if let Some(id) = id {
                    let result = if method == "window/showDocument" {
                        json!({ "success": true })
                    } else {
                        Value::Null
                    };
                    if responses.send(Response::from_ok(id, result)).await.is_err() {
                        break;
                    }
                }
            }
        });
        let mut c = TestClient {
            service,
            next_id: 1,
            sent,
        };
        let init = c
            .request(
                "initialize",
                json!({ "capabilities": caps, "initializationOptions": init_options,
                        "processId": null, "rootUri": null,
                        "workspaceFolders": workspace_folders }),
            )
            .await
            .expect("initialize");
        c.notify("initialized", json!({})).await;
        (c, init)
    }

    /// Sends a request; `Err((code, message))` for an LSP error.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, (i64, String)> {
        let id = self.next_id;
        self.next_id += 1;
        let req = Request::build(method.to_string())
            .id(id)
            .params(params)
            .finish();
        let resp = self
            .service
            .ready()
            .await
            .expect("service ready")
            .call(req)
            .await
            .expect("service call")
            .expect("a response");
        let (_, body) = resp.into_parts();
        body.map_err(|e| (e.code.code(), e.message.to_string()))
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        let req = Request::build(method.to_string()).params(params).finish();
        let resp = self
            .service
            .ready()
            .await
            .expect("service ready")
            .call(req)
            .await
            .expect("service call");
        assert!(resp.is_none(), "a notification got a response: {resp:?}");
    }

    /// Opens a document with the given text.
    pub async fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "jsonl", "version": 1, "text": text } }),
        )
        .await;
    }

    /// Opens a file from disk as a raw document; returns its URI.
    pub async fn open_file(&mut self, path: &Path) -> String {
        let uri = file_uri(path);
        let text = std::fs::read_to_string(path).expect("read fixture");
        self.open(&uri, &text).await;
        uri
    }

    /// Fetches a view's text and opens it (as VS Code does after
    /// `workspace/textDocumentContent`).
    pub async fn open_view(&mut self, uri: &str) -> String {
        let text = self
            .request("workspace/textDocumentContent", json!({ "uri": uri }))
            .await
            .expect("textDocumentContent")["text"]
            .as_str()
            .expect("text")
            .to_string();
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "transcript-view", "version": 1, "text": text } }),
        )
        .await;
        text
    }

    /// What a client does on `workspace/textDocumentContent/refresh`: fetch the view's text
    /// again and send it as a (full) `didChange` with `version`.
    pub async fn resync_view(&mut self, uri: &str, version: i64) -> String {
        let text = self
            .request("workspace/textDocumentContent", json!({ "uri": uri }))
            .await
            .expect("textDocumentContent")["text"]
            .as_str()
            .expect("text")
            .to_string();
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version },
                    "contentChanges": [{ "text": text }] }),
        )
        .await;
        text
    }

    /// Messages the server sent so far.
    pub fn sent(&self) -> Vec<Sent> {
        self.sent.lock().unwrap().clone()
    }

    /// Waits until a message matching `pred` was sent (up to `timeout`); returns it.
    pub async fn wait_for(&self, timeout: Duration, pred: impl Fn(&Sent) -> bool) -> Option<Sent> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(s) = self.sent.lock().unwrap().iter().find(|s| pred(s)) {
                return Some(s.clone());
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Clears the record of sent messages.
    pub fn clear_sent(&self) {
        self.sent.lock().unwrap().clear();
    }

    /// Waits for the diagnostics of `uri` whose `version` is `version`.
    pub async fn diagnostics(&self, uri: &str, version: i64) -> Value {
        let s = self
            .wait_for(Duration::from_secs(20), |s| {
                s.method == "textDocument/publishDiagnostics"
                    && s.params["uri"] == uri
                    && s.params["version"] == version
            })
            .await
            .expect("diagnostics published");
        s.params["diagnostics"].clone()
    }

    pub async fn shutdown(mut self) {
        let _ = self.request("shutdown", Value::Null).await;
        let _ = self
            .service
            .ready()
            .await
            .expect("ready")
            .call(Request::build("exit").finish())
            .await;
    }
}

/// Decodes relative semantic tokens into `(line, start, length, type, modifiers)`.
pub fn decode_tokens(data: &Value) -> Vec<(u32, u32, u32, u32, u32)> {
    let nums: Vec<u32> = data
        .as_array()
        .expect("data")
        .iter()
        .map(|v| v.as_u64().expect("u32") as u32)
        .collect();
    let mut out = Vec::new();
    let (mut line, mut start) = (0, 0);
    for t in nums.chunks(5) {
        if t[0] > 0 {
            line += t[0];
            start = t[1];
        } else {
            start += t[1];
        }
        out.push((line, start, t[2], t[3], t[4]));
    }
    out
}

/// The text a token covers, for a document text in the given encoding.
pub fn token_text(text: &str, line: u32, start: u32, len: u32, utf8: bool) -> String {
    let l = text.split('\n').nth(line as usize).unwrap_or("");
    if utf8 {
        l.get(start as usize..(start + len) as usize)
            .unwrap_or("<bad utf-8 range>")
            .to_string()
    } else {
        let units: Vec<u16> = l.encode_utf16().collect();
        let end = ((start + len) as usize).min(units.len());
        String::from_utf16_lossy(&units[(start as usize).min(end)..end])
    }
}

const TYPES: [&str; 10] = [
    "prompt",
    "finalAnswer",
    "narration",
    "thinking",
    "toolName",
    "toolError",
    "gate",
    "meta",
    "diffAdded",
    "diffRemoved",
];
const MODS: [&str; 3] = ["incomplete", "inFlight", "sidechain"];

fn excerpt(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        out.push('…');
    }
    out
}

/// Folding ranges as `L3-L9 region: label` (1-based lines).
pub fn show_folds(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|f| {
                    format!(
                        "L{}-L{} {}: {}",
                        f["startLine"].as_u64().unwrap() + 1,
                        f["endLine"].as_u64().unwrap() + 1,
                        f["kind"].as_str().unwrap_or("-"),
                        f["collapsedText"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Document symbols as an indented tree `L3-L9 (sel L3) [kind] name — detail`.
pub fn show_symbols(v: &Value) -> Vec<String> {
    fn walk(v: &Value, depth: usize, out: &mut Vec<String>) {
        for s in v.as_array().into_iter().flatten() {
            out.push(format!(
                "{}L{}-L{} (sel L{}) [{}] {}{}",
                "  ".repeat(depth),
                s["range"]["start"]["line"].as_u64().unwrap() + 1,
                s["range"]["end"]["line"].as_u64().unwrap() + 1,
                s["selectionRange"]["start"]["line"].as_u64().unwrap() + 1,
                s["kind"],
                s["name"].as_str().unwrap_or(""),
                s["detail"]
                    .as_str()
                    .map(|d| format!(" — {d}"))
                    .unwrap_or_default()
            ));
            walk(&s["children"], depth + 1, out);
        }
    }
    let mut out = Vec::new();
    walk(v, 0, &mut out);
    out
}

/// Semantic tokens as `L5:12+40 finalAnswer[inFlight] «text…»` (1-based lines, columns and
/// lengths in the client's encoding, the covered text cut to 40 characters).
pub fn show_tokens(data: &Value, text: &str, utf8: bool) -> Vec<String> {
    decode_tokens(data)
        .into_iter()
        .map(|(l, s, n, t, m)| {
            let mods: Vec<&str> = (0..3)
                .filter(|b| m & (1 << b) != 0)
                .map(|b| MODS[b])
                .collect();
            format!(
                "L{}:{}+{} {}{} «{}»",
                l + 1,
                s,
                n,
                TYPES.get(t as usize).unwrap_or(&"?"),
                if mods.is_empty() {
                    String::new()
                } else {
                    format!("[{}]", mods.join(","))
                },
                excerpt(&token_text(text, l, s, n, utf8), 40)
            )
        })
        .collect()
}

/// Inlay hints as `L5:812 label`.
pub fn show_hints(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|h| {
                    format!(
                        "L{}:{} {}",
                        h["position"]["line"].as_u64().unwrap() + 1,
                        h["position"]["character"],
                        h["label"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Code lenses as `L5 title -> command(args)` (URIs shortened to their file name).
pub fn show_lenses(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|l| {
                    let args = l["command"]["arguments"].clone();
                    format!(
                        "L{} {} -> {}({})",
                        l["range"]["start"]["line"].as_u64().unwrap() + 1,
                        l["command"]["title"].as_str().unwrap_or(""),
                        l["command"]["command"].as_str().unwrap_or(""),
                        short_uris(&args)
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Replaces every URI in a JSON value by its last path segment (and query), for snapshots
/// independent of where the repository lives.
pub fn short_uris(v: &Value) -> Value {
    match v {
        Value::String(s) if s.starts_with("file://") || s.starts_with("transcript://") => {
            let scheme = s.split(':').next().unwrap_or("");
            let tail = s.rsplit('/').next().unwrap_or("");
            Value::String(format!("{scheme}:…/{tail}"))
        }
        Value::Array(a) => Value::Array(a.iter().map(short_uris).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), short_uris(v))).collect())
        }
        other => other.clone(),
    }
}

/// Diagnostics as `L4:191-L4:192 warning invalid-line: message`.
pub fn show_diagnostics(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|d| {
                    let sev = match d["severity"].as_u64() {
                        Some(1) => "error",
                        Some(2) => "warning",
                        Some(3) => "information",
                        _ => "hint",
                    };
                    format!(
                        "L{}:{}-L{}:{} {} {}: {}",
                        d["range"]["start"]["line"].as_u64().unwrap() + 1,
                        d["range"]["start"]["character"],
                        d["range"]["end"]["line"].as_u64().unwrap() + 1,
                        d["range"]["end"]["character"],
                        sev,
                        d["code"].as_str().unwrap_or(""),
                        d["message"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A location as `file.jsonl L5:0-L5:812`.
pub fn show_location(v: &Value) -> String {
    if v.is_null() {
        return "null".to_string();
    }
    let uri = short_uris(&v["uri"]);
    format!(
        "{} L{}:{}-L{}:{}",
        uri.as_str().unwrap_or(""),
        v["range"]["start"]["line"].as_u64().unwrap_or(0) + 1,
        v["range"]["start"]["character"],
        v["range"]["end"]["line"].as_u64().unwrap_or(0) + 1,
        v["range"]["end"]["character"]
    )
}

impl TestClient {
    /// Every document feature for `uri` (whose text in the client is `text`), rendered for a
    /// snapshot.
    pub async fn features(&mut self, uri: &str, text: &str, utf8: bool) -> Value {
        let td = json!({ "textDocument": { "uri": uri } });
        let lines = text.split('\n').count() as u32;
        let all = json!({ "start": { "line": 0, "character": 0 }, "end": { "line": lines, "character": 0 } });
        let folds = self
            .request("textDocument/foldingRange", td.clone())
            .await
            .unwrap();
        let symbols = self
            .request("textDocument/documentSymbol", td.clone())
            .await
            .unwrap();
        let tokens = self
            .request("textDocument/semanticTokens/full", td.clone())
            .await
            .unwrap();
        let hints = self
            .request(
                "textDocument/inlayHint",
                json!({ "textDocument": { "uri": uri }, "range": all }),
            )
            .await
            .unwrap();
        let lenses = self
            .request("textDocument/codeLens", td.clone())
            .await
            .unwrap();
        json!({
            "folding": show_folds(&folds),
            "symbols": show_symbols(&symbols),
            "tokens": show_tokens(&tokens["data"], text, utf8),
            "hints": show_hints(&hints),
            "lenses": show_lenses(&lenses),
        })
    }

    /// Hover Markdown at a position (or `null`).
    pub async fn hover(&mut self, uri: &str, line: u32, character: u32) -> Value {
        let r = self
            .request(
                "textDocument/hover",
                json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } }),
            )
            .await
            .unwrap();
        if r.is_null() {
            return r;
        }
        r["contents"]["value"].clone()
    }

    /// Definition / references at a position, as shown locations.
    pub async fn locations(
        &mut self,
        method: &str,
        uri: &str,
        line: u32,
        character: u32,
    ) -> Vec<String> {
        let mut params = json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } });
        if method == "textDocument/references" {
            params["context"] = json!({ "includeDeclaration": true });
        }
        let r = self.request(method, params).await.unwrap();
        match r {
            Value::Null => Vec::new(),
            Value::Array(a) => a.iter().map(show_location).collect(),
            one => vec![show_location(&one)],
        }
    }

    /// Runs a command.
    pub async fn command(&mut self, command: &str, args: Value) -> Value {
        self.request(
            "workspace/executeCommand",
            json!({ "command": command, "arguments": [args] }),
        )
        .await
        .unwrap()
    }
}
