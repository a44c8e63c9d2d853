//! The built binary over stdio: initialize, initialized, didOpen (raw and view), every request,
//! shutdown, exit (exit code 0); logs go to stderr, not stdout.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Lsp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    out: BufReader<std::process::ChildStdout>,
    /// Server -> client notifications and requests seen while waiting for responses.
    seen: Vec<Value>,
    next_id: i64,
}

impl Lsp {
    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut len = 0usize;
        loop {
            let mut line = String::new();
            assert!(
                self.out.read_line(&mut line).unwrap() > 0,
                "server closed stdout"
            );
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length: ") {
                len = v.parse().unwrap();
            }
        }
        let mut buf = vec![0; len];
        self.out.read_exact(&mut buf).unwrap();
        serde_json::from_slice(&buf).unwrap()
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.recv();
            if m.get("method").is_some() {
                if let Some(rid) = m.get("id") {
                    // A server -> client request: answer it.
                    let rid = rid.clone();
                    self.send(json!({"jsonrpc": "2.0", "id": rid, "result": null}));
                }
                self.seen.push(m);
                continue;
            }
            assert_eq!(m["id"], json!(id), "{m}");
            return m;
        }
    }

    /// A request that must succeed; its result.
    fn ask(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let r = self.request(self.next_id, method, params);
        assert!(r.get("error").is_none(), "{method}: {r}");
        r["result"].clone()
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }
}

#[test]
fn binary_serves_every_request_over_stdio() {
    let demo = std::fs::canonicalize(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl"
    ))
    .unwrap();
    let text = std::fs::read_to_string(&demo).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_transcript-ls"))
        .arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn transcript-ls");
    let stdin = child.stdin.take().unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let mut lsp = Lsp {
        child,
        stdin,
        out,
        seen: Vec::new(),
        next_id: 10,
    };
    let t0 = Instant::now();
    let init = lsp.request(
        1,
        "initialize",
        json!({"processId": null, "rootUri": null, "initializationOptions": {"roots": []},
               "capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]},
                                "textDocument": {"documentSymbol": {"hierarchicalDocumentSymbolSupport": true}}}}),
    );
    assert_eq!(init["result"]["capabilities"]["positionEncoding"], "utf-8");
    lsp.notify("initialized", json!({}));
    let uri = format!("file://{}", demo.display());
    lsp.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "jsonl", "version": 1, "text": text}}),
    );
    let td = json!({"textDocument": {"uri": uri}});
    let pos = |line: u32, ch: u32| json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": ch}});
    let all = json!({"start": {"line": 0, "character": 0}, "end": {"line": 200, "character": 0}});
    let ask = |lsp: &mut Lsp, method: &str, params: Value| lsp.ask(method, params);
    let folds = ask(&mut lsp, "textDocument/foldingRange", td.clone());
    assert!(folds.as_array().unwrap().len() > 10, "{folds}");
    let symbols = ask(&mut lsp, "textDocument/documentSymbol", td.clone());
    assert!(symbols.as_array().unwrap().len() >= 9);
    let tokens = ask(&mut lsp, "textDocument/semanticTokens/full", td.clone());
    assert!(tokens["data"].as_array().unwrap().len() > 100);
    let delta = ask(
        &mut lsp,
        "textDocument/semanticTokens/full/delta",
        json!({"textDocument": {"uri": uri}, "previousResultId": tokens["resultId"]}),
    );
    assert_eq!(delta["edits"], json!([]));
    let range = ask(
        &mut lsp,
        "textDocument/semanticTokens/range",
        json!({"textDocument": {"uri": uri}, "range": all}),
    );
    assert_eq!(range["data"], tokens["data"]);
    let hints = ask(
        &mut lsp,
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": uri}, "range": all}),
    );
    assert!(
        hints.as_array().unwrap()[0]["label"]
            .as_str()
            .unwrap()
            .starts_with("▸ Turn 1/9 · ")
    );
    let lenses = ask(&mut lsp, "textDocument/codeLens", td.clone());
    assert!(lenses.as_array().unwrap().len() >= 5);
    let hover = ask(&mut lsp, "textDocument/hover", pos(3, 5));
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("currency=usd")
    );
    let grep = text
        .split('\n')
        .position(|l| l.contains("\"name\":\"Grep\""))
        .unwrap() as u32;
    let def = ask(&mut lsp, "textDocument/definition", pos(grep + 1, 300));
    assert_eq!(def["range"]["start"]["line"], json!(grep));
    let mut refs = pos(grep, 300);
    refs["context"] = json!({"includeDeclaration": true});
    let refs = ask(&mut lsp, "textDocument/references", refs);
    assert_eq!(refs.as_array().unwrap().len(), 2);
    let _ = ask(&mut lsp, "workspace/symbol", json!({"query": "turn"}));
    let next = ask(
        &mut lsp,
        "workspace/executeCommand",
        json!({"command": "transcript.nextTurn", "arguments": [{"uri": uri, "line": 0}]}),
    );
    assert_eq!(next["range"]["start"]["line"], json!(3));
    let files = ask(
        &mut lsp,
        "workspace/executeCommand",
        json!({"command": "transcript.listSessionFiles", "arguments": [{"uri": uri}]}),
    );
    assert_eq!(files.as_array().unwrap().len(), 2);
    let opened = ask(
        &mut lsp,
        "workspace/executeCommand",
        json!({"command": "transcript.openView", "arguments": [{"uri": uri}]}),
    );
    let vuri = opened["uri"].as_str().unwrap().to_string();
    let content = ask(
        &mut lsp,
        "workspace/textDocumentContent",
        json!({"uri": vuri}),
    );
    let alias = ask(&mut lsp, "transcript/virtualDocument", json!({"uri": vuri}));
    assert_eq!(content, alias);
    let vtext = content["text"].as_str().unwrap().to_string();
    lsp.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": vuri, "languageId": "transcript-view", "version": 1, "text": vtext}}),
    );
    let vtd = json!({"textDocument": {"uri": vuri}});
    let vfolds = ask(&mut lsp, "textDocument/foldingRange", vtd.clone());
    assert!(vfolds.as_array().unwrap().len() >= 9, "{vfolds}");
    let vtokens = ask(&mut lsp, "textDocument/semanticTokens/full", vtd.clone());
    assert!(vtokens["data"].as_array().unwrap().len() > 20, "{vtokens}");
    // A bad request is an error; the server goes on.
    let bad = lsp.request(2, "textDocument/hover", json!({"textDocument": {"uri": "file:///nope.jsonl"}, "position": {"line": 0, "character": 0}}));
    assert_eq!(bad["error"]["code"], json!(-32602));
    let _ = ask(&mut lsp, "textDocument/documentSymbol", vtd);
    lsp.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": ""}]}));
    lsp.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    let shutdown = lsp.request(3, "shutdown", Value::Null);
    assert_eq!(shutdown["result"], Value::Null);
    lsp.notify("exit", Value::Null);
    drop(lsp.stdin);
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = lsp.child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "server did not exit");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    let mut err = String::new();
    lsp.child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(
        err.contains("transcript-ls: transcript-ls"),
        "stderr: {err}"
    );
    assert!(
        lsp.seen.iter().any(|m| m["method"] == "window/logMessage"),
        "no window/logMessage"
    );
    assert!(
        lsp.seen
            .iter()
            .any(|m| m["method"] == "textDocument/publishDiagnostics"),
        "no diagnostics"
    );
    eprintln!("stdio session took {:?}", t0.elapsed());
}

impl Lsp {
    /// The built binary over stdio, initialized with `utf-8` positions and hierarchical
    /// symbols, no session index.
    fn start() -> Lsp {
        let mut child = Command::new(env!("CARGO_BIN_EXE_transcript-ls"))
            .arg("--stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn transcript-ls");
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut lsp = Lsp {
            child,
            stdin,
            out,
            seen: Vec::new(),
            next_id: 10,
        };
        lsp.ask(
            "initialize",
            json!({"processId": null, "rootUri": null,
                   "initializationOptions": {"roots": [], "indexCache": false, "timeZone": "UTC"},
                   "capabilities": {"general": {"positionEncodings": ["utf-8"]},
                                    "textDocument": {"documentSymbol": {"hierarchicalDocumentSymbolSupport": true}}}}),
        );
        lsp.notify("initialized", json!({}));
        lsp
    }

    /// The last `publishDiagnostics` for `uri` seen, waiting for one if none came yet.
    fn published_diagnostics(&mut self, uri: &str) -> Value {
        let is = |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        };
        while !self.seen.iter().any(is) {
            let m = self.recv();
            self.seen.push(m);
        }
        self.seen.iter().rev().find(|m| is(m)).unwrap()["params"]["diagnostics"].clone()
    }

    fn stop(mut self) {
        self.notify("exit", Value::Null);
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

/// Issue 25, Low list: LSP 3.17 ends a line at `\n`, `\r\n` and a lone `\r`, as VS Code does;
/// the server split on `\n` only, so everything after a lone `\r` (a junk line, a record with
/// a `\r` as JSON whitespace, files joined from others) landed one line above the line the
/// editor shows. Here the raw document has a lone `\r` in a junk line (editor lines 2–3) and
/// one inside an assistant record (lines 5–6); folds, symbols and diagnostics must name the
/// editor's lines, and positions the editor sends must find the editor's text.
#[test]
fn a_lone_cr_ends_a_line_for_every_feature() {
    let rec = |s: &str| s.to_string();
    let text = [
        rec(r#"{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"First question"}}"#),
        rec("junk one\rjunk two"),
        rec(r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"assistant","model":"m","stop_reason":"tool_use","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}"#),
        rec(r#"{"type":"user","uuid":"r1","parentUuid":"a1","sessionId":"s","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a b"}]}}"#),
        rec("{\"type\":\"assistant\",\"uuid\":\"a2\",\"parentUuid\":\"r1\",\"sessionId\":\"s\",\r\"timestamp\":\"2026-01-01T00:00:09.000Z\",\"message\":{\"role\":\"assistant\",\"model\":\"m\",\"stop_reason\":\"end_turn\",\"content\":[{\"type\":\"text\",\"text\":\"Done.\"}]}}"),
        rec(r#"{"type":"user","uuid":"u2","parentUuid":"a2","sessionId":"s","timestamp":"2026-01-01T00:01:00.000Z","message":{"role":"user","content":"Second question"}}"#),
        rec("still junk"),
        rec(r#"{"type":"assistant","uuid":"a3","parentUuid":"u2","sessionId":"s","timestamp":"2026-01-01T00:01:05.000Z","message":{"role":"assistant","model":"m","stop_reason":"end_turn","content":[{"type":"text","text":"Answer two."}]}}"#),
    ]
    .join("\n")
        + "\n";
    // The editor's lines (1-based as shown below): `\r` ends a line as `\n` does.
    let editor: Vec<&str> = text.split(['\n', '\r']).collect();
    assert_eq!(editor.len(), 11);
    assert_eq!(
        (editor[1], editor[2], editor[3]),
        (
            "junk one",
            "junk two",
            r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"assistant","model":"m","stop_reason":"tool_use","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}"#
        )
    );
    assert!(editor[6].starts_with(r#""timestamp":"2026-01-01T00:00:09"#));
    assert_eq!(
        editor[7],
        r#"{"type":"user","uuid":"u2","parentUuid":"a2","sessionId":"s","timestamp":"2026-01-01T00:01:00.000Z","message":{"role":"user","content":"Second question"}}"#
    );
    assert_eq!(editor[8], "still junk");

    let mut lsp = Lsp::start();
    let uri = "file:///tmp/transcript-ls-lone-cr/session.jsonl";
    lsp.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "jsonl", "version": 1, "text": text}}),
    );
    let td = json!({"textDocument": {"uri": uri}});
    let folds = lsp.ask("textDocument/foldingRange", td.clone());
    let symbols = lsp.ask("textDocument/documentSymbol", td.clone());
    let diagnostics = lsp.published_diagnostics(uri);
    // Hover on editor line 8 (0-based 7), the second prompt: the editor's text there.
    let hover = lsp.ask(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 7, "character": 3}}),
    );
    lsp.stop();

    assert_eq!(
        crate::lsp_common::show_folds(&folds),
        vec![
            "L1-L7 region: Turn 1: First question · 1 tool call",
            "L2-L5 comment: 1 tool call",
            "L4-L5 region: Worked · 1 tool call",
            "L8-L10 region: Turn 2: Second question · no activity",
        ]
    );
    assert_eq!(
        crate::lsp_common::show_symbols(&symbols),
        vec![
            "L1-L7 (sel L1) [24] Turn 1: First question — 1 tool call · 9s · 12:00 am",
            "  L4-L5 (sel L4) [12] Worked · Bash ls — 1 tool call",
            "  L6-L7 (sel L6) [15] Final answer — Done.",
            "L8-L10 (sel L8) [24] Turn 2: Second question — no activity · 5s · 12:01 am",
            "  L10-L10 (sel L10) [15] Final answer — Answer two.",
        ]
    );
    assert_eq!(
        crate::lsp_common::show_diagnostics(&diagnostics),
        vec![
            "L2:0-L2:1 warning invalid-line: invalid JSON: expected value at column 1",
            "L9:0-L9:1 warning invalid-line: invalid JSON: expected value at column 1",
        ]
    );
    assert_eq!(hover["range"]["start"]["line"], json!(7), "{hover}");
}

/// The stderr of a short stdio session (initialize, didOpen of the demo, a hover as id 7, an
/// unknown `$/probe` request as id 8, a hover made to panic as id 21, shutdown, exit) with `TRANSCRIPT_LS_LOG` set to `log`
/// (unset for `None`).
fn stderr_of_session(log: Option<&str>) -> String {
    let demo = std::fs::canonicalize(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl"
    ))
    .unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_transcript-ls"));
    cmd.arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match log {
        Some(v) => cmd.env("TRANSCRIPT_LS_LOG", v),
        None => cmd.env_remove("TRANSCRIPT_LS_LOG"),
    };
    let mut child = cmd.spawn().expect("spawn transcript-ls");
    let stdin = child.stdin.take().unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let mut lsp = Lsp {
        child,
        stdin,
        out,
        seen: Vec::new(),
        next_id: 10,
    };
    lsp.ask(
        "initialize",
        json!({"processId": null, "rootUri": null,
               "initializationOptions": {"roots": [], "indexCache": false, "timeZone": "UTC"},
               "capabilities": {}}),
    );
    lsp.notify("initialized", json!({}));
    let uri = format!("file://{}", demo.display());
    let text = std::fs::read_to_string(&demo).unwrap();
    lsp.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "jsonl", "version": 1, "text": text}}),
    );
    let hover = lsp.request(
        7,
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 2}}),
    );
    assert!(hover.get("error").is_none(), "{hover}");
    let probe = lsp.request(8, "$/probe", json!({}));
    assert!(probe.get("error").is_some(), "{probe}");
    // The next hover panics on the blocking pool (debug builds).
    lsp.request(
        20,
        "transcript/debugPanic",
        json!({"arm": "textDocument/hover"}),
    );
    let panicked = lsp.request(
        21,
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 2}}),
    );
    assert!(panicked.get("error").is_some(), "{panicked}");
    lsp.request(9, "shutdown", Value::Null);
    let mut child = {
        lsp.notify("exit", Value::Null);
        drop(lsp.stdin);
        lsp.child
    };
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let _ = child.wait();
    err
}

/// Issue 24 item 7: with `TRANSCRIPT_LS_LOG=debug` each request is answered in a span naming
/// its method and id, with the time it took; by default nothing per request is logged (only
/// a failed request, at `warn`), and the server's own messages read as before.
#[test]
fn a_span_per_request_on_stderr_at_debug_only() {
    let debug = stderr_of_session(Some("debug"));
    let answered = debug
        .lines()
        .find(|l| {
            l.starts_with(
                "transcript-ls: DEBUG request{method=textDocument/hover id=7}: answered in ",
            )
        })
        .unwrap_or_else(|| panic!("no hover span line in stderr:\n{debug}"));
    let ms = answered
        .rsplit_once("answered in ")
        .and_then(|(_, t)| t.strip_suffix(" ms"))
        .and_then(|t| t.parse::<f64>().ok());
    assert!(ms.is_some_and(|ms| ms >= 0.0), "{answered}");
    assert!(
        debug.lines().any(|l| l
            .starts_with("transcript-ls: WARN request{method=$/probe id=8}: failed after ")
            && l.ends_with("(-32601)")),
        "no failed $/probe line in stderr:\n{debug}"
    );
    assert!(
        debug.contains(
            "transcript-ls: ERROR request{method=textDocument/hover id=21}: request \
             textDocument/hover panicked: deliberate panic"
        ),
        "{debug}"
    );
    assert!(
        debug.contains(
            "transcript-ls: WARN request{method=textDocument/hover id=21}: failed after "
        ),
        "{debug}"
    );
    assert!(
        debug
            .contains("transcript-ls: notification{method=initialized}: transcript-ls 0.1.0 ready"),
        "{debug}"
    );

    let quiet = stderr_of_session(None);
    // Nothing of the hover that was answered (id 7), no span, no timing.
    assert!(!quiet.contains(" 7 "), "{quiet}");
    assert!(!quiet.contains("request{"), "{quiet}");
    assert!(!quiet.contains("answered in"), "{quiet}");
    assert!(
        quiet
            .lines()
            .any(|l| l.starts_with("transcript-ls: transcript-ls 0.1.0 ready")),
        "{quiet}"
    );
    assert!(
        quiet
            .lines()
            .any(|l| l.starts_with("transcript-ls: WARN $/probe 8 failed after ")),
        "{quiet}"
    );
    assert!(
        quiet
            .contains("transcript-ls: ERROR request textDocument/hover panicked: deliberate panic"),
        "{quiet}"
    );
    assert!(
        quiet.contains("transcript-ls: WARN textDocument/hover 21 failed after "),
        "{quiet}"
    );
    // tower-lsp-server's `info` lines (each shutdown and exit) stay out by default.
    assert!(!quiet.contains("shutdown request received"), "{quiet}");
}
