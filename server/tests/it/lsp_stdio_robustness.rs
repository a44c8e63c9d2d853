//! The built binary over stdio under attack (issue 8): malformed JSON-RPC messages are
//! answered and skipped (defect 3), the server exits when its client process dies (defect 7),
//! and a FIFO never keeps it alive (defect 4).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

fn spawn() -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_transcript-ls"))
        .arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server");
    let stdin = child.stdin.take().unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    (child, stdin, out)
}

fn send_raw(stdin: &mut ChildStdin, body: &[u8]) {
    write!(stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
    stdin.write_all(body).unwrap();
    stdin.flush().unwrap();
}

fn send(stdin: &mut ChildStdin, msg: Value) {
    send_raw(stdin, msg.to_string().as_bytes());
}

fn recv(out: &mut BufReader<ChildStdout>) -> Value {
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
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
    out.read_exact(&mut buf).unwrap();
    serde_json::from_slice(&buf).unwrap()
}

/// The next response (server -> client requests are answered, notifications skipped).
fn response(stdin: &mut ChildStdin, out: &mut BufReader<ChildStdout>) -> Value {
    loop {
        let m = recv(out);
        if m.get("method").is_some() {
            if let Some(id) = m.get("id") {
                send(stdin, json!({"jsonrpc": "2.0", "id": id, "result": null}));
            }
            continue;
        }
        return m;
    }
}

fn wait_exit(child: &mut Child, within: Duration) -> Option<i32> {
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code();
        }
        if t0.elapsed() > within {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn initialize(stdin: &mut ChildStdin, out: &mut BufReader<ChildStdout>, pid: Value) {
    send(
        stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"processId": pid, "rootUri": null, "capabilities": {},
                          "initializationOptions": {"roots": []}}}),
    );
    let r = response(stdin, out);
    assert_eq!(r["id"], 1);
    send(
        stdin,
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    );
}

/// Defect 3: each malformed message gets its error response and the session goes on.
#[test]
fn malformed_messages_are_answered_and_skipped() {
    let (mut child, mut stdin, mut out) = spawn();
    initialize(&mut stdin, &mut out, Value::Null);
    let bad: Vec<(&[u8], Value, i64)> = vec![
        (b"{not json", Value::Null, -32700),
        (
            br#"{"jsonrpc":"1.0","id":5,"method":"shutdown"}"#,
            json!(5),
            -32600,
        ),
        (
            br#"[{"jsonrpc":"2.0","id":6,"method":"shutdown"}]"#,
            Value::Null,
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":7,"method":"shutdown"} trailing"#,
            Value::Null,
            -32700,
        ),
        (b"\xff\xfe", Value::Null, -32700),
    ];
    for (body, id, code) in &bad {
        send_raw(&mut stdin, body);
        let r = response(&mut stdin, &mut out);
        assert_eq!(
            (&r["id"], r["error"]["code"].as_i64()),
            (id, Some(*code)),
            "{}: {r}",
            String::from_utf8_lossy(body)
        );
    }
    // Bytes that are not a message at all, and a header block without Content-Length.
    stdin.write_all(b"garbage between messages\r\n").unwrap();
    stdin
        .write_all(b"Content-Type: text/plain\r\n\r\n")
        .unwrap();
    stdin.flush().unwrap();
    for _ in 0..2 {
        let r = response(&mut stdin, &mut out);
        assert_eq!(
            (&r["id"], r["error"]["code"].as_i64()),
            (&Value::Null, Some(-32700)),
            "{r}"
        );
    }
    // Still serving.
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 9, "method": "workspace/symbol", "params": {"query": ""}}),
    );
    let r = response(&mut stdin, &mut out);
    assert_eq!(
        (r["id"].clone(), r["result"].clone()),
        (json!(9), json!([])),
        "{r}"
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 10, "method": "shutdown"}),
    );
    assert_eq!(response(&mut stdin, &mut out)["id"], 10);
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(0));
}

/// Issue 25 item 9: a request whose header ends with `\n\n` is answered, and so is the
/// well-formed request after it (the decoder used to search for `\r\n\r\n` and took the
/// next message's, swallowing it).
#[test]
fn a_header_ended_by_two_line_feeds_swallows_nothing() {
    let (mut child, mut stdin, mut out) = spawn();
    initialize(&mut stdin, &mut out, Value::Null);
    let first =
        json!({"jsonrpc": "2.0", "id": 2, "method": "workspace/symbol", "params": {"query": ""}})
            .to_string();
    write!(stdin, "Content-Length: {}\n\n{first}", first.len()).unwrap();
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 3, "method": "workspace/symbol", "params": {"query": "x"}}),
    );
    let mut ids: Vec<u64> = (0..2)
        .map(|_| {
            let r = response(&mut stdin, &mut out);
            assert_eq!(r["result"], json!([]), "{r}");
            r["id"].as_u64().unwrap()
        })
        .collect();
    ids.sort();
    assert_eq!(ids, vec![2, 3]);
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 10, "method": "shutdown"}),
    );
    assert_eq!(response(&mut stdin, &mut out)["id"], 10);
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(0));
}

/// Defect 7: when the process named by `processId` dies, the server exits (exit code 1)
/// although its stdin stays open.
#[cfg(unix)]
#[test]
fn exits_when_the_client_process_dies() {
    let mut client = Command::new("sleep").arg("600").spawn().unwrap();
    let (mut child, mut stdin, mut out) = spawn();
    initialize(&mut stdin, &mut out, json!(client.id()));
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        child.try_wait().unwrap().is_none(),
        "alive while its client is"
    );
    client.kill().unwrap();
    client.wait().unwrap();
    assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(1));
    drop(stdin);
}

/// A `processId` that is not visible from the server (another PID namespace) is not watched:
/// the server keeps serving.
#[cfg(unix)]
#[test]
fn an_invisible_client_process_is_not_watched() {
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let (mut child, mut stdin, mut out) = spawn();
    initialize(&mut stdin, &mut out, json!(pid));
    std::thread::sleep(Duration::from_millis(1200));
    assert!(child.try_wait().unwrap().is_none(), "still serving");
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
    );
    assert_eq!(response(&mut stdin, &mut out)["id"], 3);
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(0));
}

/// Defect 4: a view of a FIFO is refused, and `shutdown` + `exit` still end the process; so
/// does closing stdin (exit code 1: no shutdown).
#[cfg(unix)]
#[test]
fn a_fifo_never_keeps_the_server_alive() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.jsonl");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let uri = format!("transcript://{}", fifo.display());
    for close_stdin in [false, true] {
        let (mut child, mut stdin, mut out) = spawn();
        initialize(&mut stdin, &mut out, Value::Null);
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": 2, "method": "workspace/textDocumentContent",
                   "params": {"uri": uri}}),
        );
        let r = response(&mut stdin, &mut out);
        assert!(
            r["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("is a FIFO (named pipe), not a regular file")),
            "{r}"
        );
        if close_stdin {
            drop(stdin);
            assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(1));
        } else {
            send(
                &mut stdin,
                json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
            );
            assert_eq!(response(&mut stdin, &mut out)["id"], 3);
            send(&mut stdin, json!({"jsonrpc": "2.0", "method": "exit"}));
            assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(0));
        }
    }
}

/// A header that declares a big message (1 GiB, the most accepted) followed by a few bytes
/// must not make the server reserve the declared size: under an address-space limit of
/// 800 MB (`ulimit -v`, or a machine without overcommit) it aborted with "memory allocation
/// of 1073741854 bytes failed" as soon as the header arrived (a regression of issue 12's
/// transport). Now it keeps waiting for the body, and ends normally when stdin closes.
#[cfg(unix)]
#[test]
fn a_lying_content_length_does_not_abort_the_server() {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 800000 && exec \"$0\" --stdio")
        .arg(env!("CARGO_BIN_EXE_transcript-ls"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server");
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    initialize(&mut stdin, &mut out, Value::Null);
    write!(
        stdin,
        "Content-Length: {}\r\n\r\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"shutdown\"}}",
        1u64 << 30
    )
    .unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    assert_eq!(
        child.try_wait().unwrap().map(|s| s.to_string()),
        None,
        "the server died on a header declaring 1 GiB"
    );
    drop(stdin);
    assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(1));
}

/// Issue 12: a `didOpen`'s text is taken out of the message by the transport and reaches the
/// document whole, whatever the order of the message's members (Neovim's JSON encoder orders
/// keys as it likes), and a text holding a lone surrogate escape opens (it becomes U+FFFD;
/// the message used to be refused whole, and the document was unknown).
#[test]
fn did_open_texts_reach_the_document_whole() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let (mut child, mut stdin, mut out) = spawn();
    initialize(&mut stdin, &mut out, Value::Null);
    let quoted = serde_json::to_string(&text).unwrap();
    // The usual order; params first and text before the uri; a lone surrogate in a prompt.
    let with_prompt = format!(
        "{text}{}\n",
        r#"{"type":"user","message":{"role":"user","content":"lone SURROGATE"}}"#
    );
    let surrogate = serde_json::to_string(&with_prompt)
        .unwrap()
        .replace("SURROGATE", r"\ud800");
    let bodies = [
        format!(
            r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"file:///t/a.jsonl","languageId":"jsonl","version":1,"text":{quoted}}}}}}}"#
        ),
        format!(
            r#"{{"params":{{"textDocument":{{"text":{quoted},"version":1,"uri":"file:///t/b.jsonl","languageId":"jsonl"}}}},"method":"textDocument/didOpen","jsonrpc":"2.0"}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"file:///t/c.jsonl","languageId":"jsonl","version":1,"text":{surrogate}}}}}}}"#
        ),
    ];
    for b in &bodies {
        send_raw(&mut stdin, b.as_bytes());
    }
    let mut ask = |id: i64, method: &str, doc: &str| {
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": id, "method": method,
                   "params": {"textDocument": {"uri": format!("file:///t/{doc}.jsonl")},
                              "uri": format!("file:///t/{doc}.jsonl")}}),
        );
        let r = response(&mut stdin, &mut out);
        assert_eq!(r["id"], id, "{r}");
        assert!(r.get("error").is_none(), "{method} {doc}: {r}");
        r["result"].clone()
    };
    let symbols_a = ask(2, "textDocument/documentSymbol", "a");
    let stats_a = ask(3, "transcript/stats", "a");
    assert!(
        symbols_a.as_array().is_some_and(|s| s.len() > 2),
        "{symbols_a}"
    );
    assert_eq!(stats_a["lines"], text.lines().count());
    let symbols_b = ask(4, "textDocument/documentSymbol", "b").to_string();
    assert!(symbols_b == symbols_a.to_string().replace("/t/a.jsonl", "/t/b.jsonl"));
    let mut stats_b = ask(5, "transcript/stats", "b");
    stats_b["file"] = stats_a["file"].clone();
    assert_eq!(stats_b, stats_a);
    let stats_c = ask(6, "transcript/stats", "c");
    assert_eq!(stats_c["lines"], text.lines().count() + 1);
    assert_eq!(stats_c["records"], stats_a["records"].as_u64().unwrap() + 1);
    let prompt = ask(7, "textDocument/documentSymbol", "c");
    assert!(prompt.to_string().contains("lone \u{FFFD}"), "{prompt}");
    // A lone surrogate in any other message (here a didChange) used to stop the server:
    // tower-lsp-server ends its input at a message it cannot decode.
    send_raw(
        &mut stdin,
        format!(
            r#"{{"jsonrpc":"2.0","method":"textDocument/didChange","params":{{"textDocument":{{"uri":"file:///t/a.jsonl","version":2}},"contentChanges":[{{"text":{surrogate}}}]}}}}"#
        )
        .as_bytes(),
    );
    let mut ask = |id: i64, method: &str, doc: &str| {
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": id, "method": method,
                   "params": {"textDocument": {"uri": format!("file:///t/{doc}.jsonl")}}}),
        );
        response(&mut stdin, &mut out)
    };
    let changed = ask(8, "textDocument/documentSymbol", "a");
    assert!(
        changed["result"].to_string().contains("lone \u{FFFD}"),
        "{changed}"
    );
    drop(stdin);
    wait_exit(&mut child, Duration::from_secs(10));
}

/// Issue 12: a `didOpen`'s text is checked while it is decoded, in one pass; a text that
/// serde_json refuses (invalid UTF-8, a raw control character, a malformed escape), however
/// far into a big text, is answered with `ParseError` as any malformed message, opens nothing,
/// and the server goes on (the same document then opens).
#[test]
fn a_did_open_whose_text_is_refused_late_opens_nothing() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let unit = std::fs::read_to_string(&path).unwrap();
    // About 2 MB: the message arrives in many reads.
    let text = unit.repeat((2_000_000 / unit.len()).max(1));
    let quoted = serde_json::to_string(&text).unwrap();
    let literal = &quoted.as_bytes()[1..quoted.len() - 1];
    let (mut child, mut stdin, mut out) = spawn();
    initialize(&mut stdin, &mut out, Value::Null);
    let uri = "file:///t/late.jsonl";
    let body = |tail: &[u8]| {
        let mut b = format!(
            r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"{uri}","languageId":"jsonl","version":1,"text":""#
        )
        .into_bytes();
        b.extend_from_slice(literal);
        b.extend_from_slice(tail);
        b.extend_from_slice(br#""}}}"#);
        b
    };
    // Each refused didOpen is followed by a documentSymbol request: the error comes first,
    // then an empty answer (a didOpen wrongly taken would give symbols and no error).
    let mut id = 1;
    let mut symbols = |stdin: &mut ChildStdin| {
        id += 1;
        send(
            stdin,
            json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/documentSymbol",
                   "params": {"textDocument": {"uri": uri}}}),
        );
        id
    };
    for tail in [&b"\xff\xfe"[..], b"\x01", br"\q", br"\u12", b"\xed\xa0\x80"] {
        send_raw(&mut stdin, &body(tail));
        let asked = symbols(&mut stdin);
        let shown = String::from_utf8_lossy(tail);
        // The start of a message (an outline of 2 MB is long).
        let short = |r: &Value| r.to_string().chars().take(300).collect::<String>();
        let r = response(&mut stdin, &mut out);
        assert_eq!(
            (&r["id"], r["error"]["code"].as_i64()),
            (&Value::Null, Some(-32700)),
            "{shown}: {}",
            short(&r)
        );
        let r = response(&mut stdin, &mut out);
        assert_eq!(r["id"], asked, "{shown}: {}", short(&r));
        assert_eq!(
            r["result"].as_array().map_or(0, Vec::len),
            0,
            "{shown}: {}",
            short(&r)
        );
    }
    send_raw(&mut stdin, &body(br"\n"));
    let asked = symbols(&mut stdin);
    let r = response(&mut stdin, &mut out);
    assert_eq!(r["id"], asked, "{r}");
    assert!(r["result"].as_array().is_some_and(|s| s.len() > 2), "{r}");
    drop(stdin);
    wait_exit(&mut child, Duration::from_secs(10));
}

/// The next response's body, raw (notifications skipped, server requests answered).
fn response_bytes(stdin: &mut ChildStdin, out: &mut BufReader<ChildStdout>) -> Vec<u8> {
    loop {
        let mut len = 0usize;
        loop {
            let mut line = String::new();
            assert!(
                out.read_line(&mut line).unwrap() > 0,
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
        out.read_exact(&mut buf).unwrap();
        let m: Value = serde_json::from_slice(&buf).unwrap_or(Value::Null);
        if m.get("method").is_some() {
            if let Some(id) = m.get("id") {
                send(stdin, json!({"jsonrpc": "2.0", "id": id, "result": null}));
            }
            continue;
        }
        return buf;
    }
}

/// Issue 25 item 3: a mapped transcript (≥ 1 MiB) rewritten in place with bytes that are not
/// UTF-8 (`\xff\xfe\x80\xc3(` over a prompt) never puts them on the wire: every answer right
/// after the write is UTF-8, and once the watcher has read the file again the view equals a
/// fresh server's (the bytes shown as U+FFFD).
#[test]
fn a_mapped_file_rewritten_in_place_sends_only_utf8() {
    let demo = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl"),
    )
    .unwrap();
    let big = demo.repeat(1_200_000 / demo.len() + 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    std::fs::write(&path, &big).unwrap();
    let quiet = format!("transcript://{}?verbose=0", path.display());
    let verbose = format!("transcript://{}?verbose=1", path.display());
    let content_of =
        |stdin: &mut ChildStdin, out: &mut BufReader<ChildStdout>, id: u64, uri: &str| {
            send(
                stdin,
                json!({"jsonrpc": "2.0", "id": id, "method": "workspace/textDocumentContent",
                       "params": {"uri": uri}}),
            );
            response_bytes(stdin, out)
        };
    let content = |stdin: &mut ChildStdin, out: &mut BufReader<ChildStdout>, id: u64| {
        content_of(stdin, out, id, &quiet)
    };
    let (mut child, mut stdin, mut out) = spawn();
    initialize(&mut stdin, &mut out, Value::Null);
    let before = content(&mut stdin, &mut out, 2);
    assert!(std::str::from_utf8(&before).is_ok());
    let at = demo
        .windows(13)
        .position(|w| w == b"returns a 500")
        .unwrap()
        + 10;
    {
        use std::io::{Seek, SeekFrom};
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.seek(SeekFrom::Start(at as u64)).unwrap();
        f.write_all(b"\xff\xfe\x80\xc3(").unwrap();
    }
    // A view first rendered now, from the mapping the write went through.
    let first = content_of(&mut stdin, &mut out, 50, &verbose);
    assert!(
        std::str::from_utf8(&first).is_ok(),
        "the verbose view holds bytes that are not UTF-8"
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut id = 3;
    let live = loop {
        let body = content(&mut stdin, &mut out, id);
        id += 1;
        assert!(
            std::str::from_utf8(&body).is_ok(),
            "answer {id} holds bytes that are not UTF-8"
        );
        let v: Value = serde_json::from_slice(&body).unwrap();
        let text = v["result"]["text"].as_str().unwrap().to_string();
        if text.contains("returns a \u{fffd}") || Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let (mut fresh, mut fin, mut fout) = spawn();
    initialize(&mut fin, &mut fout, Value::Null);
    let v: Value = serde_json::from_slice(&content(&mut fin, &mut fout, 2)).unwrap();
    assert_eq!(live, v["result"]["text"].as_str().unwrap());
    for (c, i, o) in [
        (&mut child, &mut stdin, &mut out),
        (&mut fresh, &mut fin, &mut fout),
    ] {
        send(i, json!({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}));
        response_bytes(i, o);
        send(i, json!({"jsonrpc": "2.0", "method": "exit"}));
        assert_eq!(wait_exit(c, Duration::from_secs(10)), Some(0));
    }
}

/// Issue 25 item 7: `exit` takes effect on arrival, even with slow requests queued (it
/// waited 14 s behind 120 queued requests): 120 `transcript/stats` of a 36 MB transcript
/// not read yet, then `exit` (no `shutdown`: exit code 1) ends the process within 2 s.
#[test]
fn exit_takes_effect_with_slow_requests_queued() {
    let dir = tempfile::tempdir().unwrap();
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let text = std::fs::read_to_string(demo).unwrap();
    let big = dir.path().join("big.jsonl");
    std::fs::write(&big, text.repeat(300)).unwrap();
    let uri = format!("file://{}", big.display());
    let (mut child, mut stdin, mut out) = spawn();
    initialize(&mut stdin, &mut out, Value::Null);
    for id in 2..122 {
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": id, "method": "transcript/stats",
                   "params": {"uri": uri}}),
        );
    }
    let t0 = Instant::now();
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "exit"}));
    let code = wait_exit(&mut child, Duration::from_secs(60));
    let took = t0.elapsed();
    eprintln!("exit took {took:?}");
    assert_eq!(code, Some(1));
    assert!(took < Duration::from_secs(2), "exit took {took:?}");
}

/// Issue 25 item 7: `$/cancelRequest` takes effect on arrival. With eight slow
/// `transcript/stats` requests on a 36 MB file (four running, four queued behind them in
/// tower-lsp-server), cancelling all eight answers each `-32800 RequestCancelled` within a
/// second or two (before: the four running were answered with their results once done, the
/// cancels read only after them), a cheap request sent after them is answered, and no
/// request gets a second answer.
#[test]
fn cancels_take_effect_on_arrival_with_slow_requests_running() {
    let dir = tempfile::tempdir().unwrap();
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let text = std::fs::read_to_string(&demo).unwrap();
    let big = dir.path().join("big.jsonl");
    std::fs::write(&big, text.repeat(300)).unwrap();
    let small = dir.path().join("small.jsonl");
    std::fs::write(&small, &text).unwrap();
    let (mut child, mut stdin, mut out) = spawn();
    initialize(&mut stdin, &mut out, Value::Null);
    let slow: Vec<u64> = (2..10).collect();
    for id in &slow {
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": id, "method": "transcript/stats",
                   "params": {"uri": format!("file://{}", big.display())}}),
        );
    }
    std::thread::sleep(Duration::from_millis(100));
    let t0 = Instant::now();
    for id in &slow {
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}}),
        );
    }
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 100, "method": "transcript/stats",
               "params": {"uri": format!("file://{}", small.display())}}),
    );
    // Everything answered by then; the shutdown's answer closes the collection.
    let mut answers: Vec<(Value, Duration)> = Vec::new();
    let mut shutdown_sent = false;
    loop {
        let m = response(&mut stdin, &mut out);
        let id = m["id"].clone();
        answers.push((m, t0.elapsed()));
        if id == json!(200) {
            break;
        }
        let all_in = slow
            .iter()
            .chain([&100])
            .all(|s| answers.iter().any(|(a, _)| a["id"] == json!(s)));
        if all_in && !shutdown_sent {
            // Time for late answers of the cancelled requests to show (they must not).
            std::thread::sleep(Duration::from_secs(2));
            send(
                &mut stdin,
                json!({"jsonrpc": "2.0", "id": 200, "method": "shutdown"}),
            );
            shutdown_sent = true;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "answers: {answers:?}"
        );
    }
    for id in &slow {
        let mine: Vec<_> = answers
            .iter()
            .filter(|(a, _)| a["id"] == json!(id))
            .collect();
        assert_eq!(
            mine.len(),
            1,
            "request {id} answered {} times: {mine:?}",
            mine.len()
        );
        let (a, at) = mine[0];
        assert_eq!(a["error"]["code"], json!(-32800), "request {id}: {a}");
        assert!(
            *at < Duration::from_secs(2),
            "request {id} cancelled after {at:?}"
        );
    }
    let cheap = answers.iter().find(|(a, _)| a["id"] == json!(100)).unwrap();
    assert!(cheap.0["result"].is_object(), "{}", cheap.0);
    eprintln!("cheap request answered after {:?}", cheap.1);
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(0));
}

/// Issue 24 item 4: a request whose id is still in flight is refused `InvalidRequest`
/// (-32600), as tower-lsp-server's `Pending` refuses it, also for the requests the protocol
/// seam answers itself (`textDocument/documentSymbol` is one: before, the duplicate was served
/// and the id answered twice with a result). A 36 MB transcript is opened and its outline asked
/// twice under one id at once: one refusal, one outline.
#[test]
fn a_duplicate_request_id_in_flight_is_refused() {
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let text = std::fs::read_to_string(demo).unwrap().repeat(300);
    let uri = "file:///tmp/duplicate-id-big.jsonl";
    let (mut child, mut stdin, mut out) = spawn();
    initialize(&mut stdin, &mut out, Value::Null);
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument":
            {"uri": uri, "languageId": "transcript", "version": 1, "text": text}}}),
    );
    for _ in 0..2 {
        send(
            &mut stdin,
            json!({"jsonrpc": "2.0", "id": 5, "method": "textDocument/documentSymbol",
                   "params": {"textDocument": {"uri": uri}}}),
        );
    }
    // Both answers to id 5, then a moment for a third (there must be none), closed by the
    // shutdown's answer.
    let mut fives = Vec::new();
    let mut shutdown_sent = false;
    loop {
        let m = response(&mut stdin, &mut out);
        if m["id"] == json!(6) {
            break;
        }
        if m["id"] == json!(5) {
            fives.push(m);
        }
        if fives.len() == 2 && !shutdown_sent {
            std::thread::sleep(Duration::from_millis(500));
            send(
                &mut stdin,
                json!({"jsonrpc": "2.0", "id": 6, "method": "shutdown"}),
            );
            shutdown_sent = true;
        }
    }
    assert_eq!(fives.len(), 2, "{fives:?}");
    let refused: Vec<_> = fives
        .iter()
        .filter(|m| m["error"]["code"] == json!(-32600))
        .collect();
    assert_eq!(refused.len(), 1, "one refusal: {fives:?}");
    let outlines: Vec<_> = fives.iter().filter(|m| m["result"].is_array()).collect();
    assert_eq!(outlines.len(), 1, "one outline");
    assert!(!outlines[0]["result"].as_array().unwrap().is_empty());
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(0));
}

/// A server started under `ulimit -v` (KiB), like [`spawn`]; its stderr kept.
#[cfg(target_os = "linux")]
fn spawn_limited(kib: u64) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(r#"ulimit -v {kib} && exec "$0" --stdio"#))
        .arg(env!("CARGO_BIN_EXE_transcript-ls"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server under ulimit");
    let stdin = child.stdin.take().unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    (child, stdin, out)
}

/// Issue 25 item 8: a file whose records would not fit in the memory the server may take
/// (9 M `{}` and `[]` lines: 27 MB, 1,035 MB as records at 112 bytes a line; 8 M before `Entry` shrank,
/// which would now fit in 2/3 of 1.5 GB) is refused with a message, before it is read,
/// instead of the allocator aborting the server: its view answers an error naming the file
/// and its lines, a `didOpen` of its text is told with `window/showMessage`, and the server
/// goes on answering (the demo's view). Under `ulimit -v 1500000`.
#[cfg(target_os = "linux")]
#[test]
fn records_that_would_not_fit_in_memory_are_refused_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let many = dir.path().join("many.jsonl");
    // `{}` and `[]` lines by turns: a `{}` after another would be one entry with it.
    let text = "{}\n[]\n".repeat(4_500_000);
    std::fs::write(&many, &text).unwrap();
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let (mut child, mut stdin, mut out) = spawn_limited(1_500_000);
    initialize(&mut stdin, &mut out, Value::Null);
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "workspace/textDocumentContent",
               "params": {"uri": format!("transcript://{}?verbose=0", many.display())}}),
    );
    let r = response(&mut stdin, &mut out);
    let msg = r["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        msg.contains("has 9000000 lines, which would take about 988 MiB of memory once read")
            && msg.contains("that can be taken now: not read"),
        "{r}"
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
               "params": {"textDocument": {"uri": format!("file://{}", many.display()),
                          "languageId": "jsonl", "version": 1, "text": text}}}),
    );
    let shown = loop {
        let m = recv(&mut out);
        if m["method"] == "window/showMessage" {
            break m;
        }
    };
    assert_eq!(shown["params"]["type"], 1, "{shown}");
    let shown = shown["params"]["message"].as_str().unwrap();
    assert!(
        shown.starts_with(&format!(
            "transcript-ls: {} has 9000000 lines, which would take about 988 MiB",
            many.display()
        )) && shown.ends_with("not read (no transcript features for it)"),
        "{shown}"
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 3, "method": "workspace/textDocumentContent",
               "params": {"uri": format!("transcript://{}?verbose=0", demo.display())}}),
    );
    let r = response(&mut stdin, &mut out);
    assert!(
        r["result"]["text"].as_str().unwrap().contains("## Turn 1"),
        "{r}"
    );
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}),
    );
    response(&mut stdin, &mut out);
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(0));
}

/// Issue 25, Low list: a `shutdown` and `exit` sent together (the client not waiting for
/// the shutdown's answer) exit with code 0, the shutdown answered (it exited 1: `exit`
/// took effect before the server had handled `shutdown`). The answer is `null` (issue 24
/// item 4: it was `null`, `RequestCancelled` or missing, as the exit raced the shutdown).
#[test]
fn a_pipelined_shutdown_and_exit_exit_0() {
    for _ in 0..3 {
        let (mut child, mut stdin, mut out) = spawn();
        initialize(&mut stdin, &mut out, Value::Null);
        let mut both = Vec::new();
        for m in [
            json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
            json!({"jsonrpc": "2.0", "method": "exit"}),
        ] {
            let b = m.to_string();
            both.extend_from_slice(format!("Content-Length: {}\r\n\r\n{b}", b.len()).as_bytes());
        }
        stdin.write_all(&both).unwrap();
        stdin.flush().unwrap();
        assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(0));
        let mut rest = Vec::new();
        out.read_to_end(&mut rest).unwrap();
        let rest = String::from_utf8_lossy(&rest);
        assert!(
            rest.contains(r#"{"jsonrpc":"2.0","result":null,"id":2}"#),
            "the shutdown's answer: {rest}"
        );
    }
}

/// Issue 25, Low list: request ids tower-lsp-server cannot read as an integer (`1e3`, past
/// `u64`) are refused as InvalidRequest with the id as the client wrote it (they came back
/// as `1000.0` and `1.8446744073709552e19`); a lowercase `content-length` after junk is
/// found again, and a byte order mark before a header is no error.
#[test]
fn odd_ids_are_echoed_as_written_and_odd_headers_are_read() {
    let (mut child, mut stdin, mut out) = spawn();
    initialize(&mut stdin, &mut out, Value::Null);
    let raw = |out: &mut BufReader<ChildStdout>| {
        let mut len = 0usize;
        loop {
            let mut line = String::new();
            out.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length: ") {
                len = v.parse().unwrap();
            }
        }
        let mut buf = vec![0; len];
        out.read_exact(&mut buf).unwrap();
        String::from_utf8(buf).unwrap()
    };
    // A refusal is written by the transport itself, so it may overtake the server's own
    // notifications (its `ready` log message): those are skipped.
    let raw = |out: &mut BufReader<ChildStdout>| loop {
        let m = raw(out);
        if !m.contains(r#""method":"#) {
            return m;
        }
    };
    for id in ["1e3", "18446744073709551616"] {
        send_raw(
            &mut stdin,
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"transcript/sessions"}}"#).as_bytes(),
        );
        assert_eq!(
            raw(&mut out),
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"message":"invalid request: an id must be an integer or a string, not {id}"}}}}"#
            )
        );
    }
    // A string id with a lone surrogate escape came back as "\ufffd", an id the client never
    // sent: it is refused under the id as written.
    send_raw(
        &mut stdin,
        br#"{"jsonrpc":"2.0","id":"q\ud800","method":"transcript/sessions"}"#,
    );
    assert_eq!(
        raw(&mut out),
        r#"{"jsonrpc":"2.0","id":"q\ud800","error":{"code":-32600,"message":"invalid request: an id must be a string of Unicode characters, not \"q\\ud800\" (a lone surrogate)"}}"#
    );
    let body = br#"{"jsonrpc":"2.0","id":7,"method":"transcript/debugNothing"}"#;
    stdin.write_all(b"junk!\r\n").unwrap();
    write!(stdin, "content-length: {}\r\n\r\n", body.len()).unwrap();
    stdin.write_all(body).unwrap();
    stdin.write_all(b"\xef\xbb\xbf").unwrap();
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 8, "method": "shutdown"}),
    );
    stdin.flush().unwrap();
    let mut seen = Vec::new();
    while !seen.iter().any(|m: &Value| m["id"] == 8) {
        seen.push(response(&mut stdin, &mut out));
    }
    let codes: Vec<(Value, Value)> = seen
        .iter()
        .map(|m| (m["id"].clone(), m["error"]["code"].clone()))
        .collect();
    assert_eq!(
        codes,
        vec![
            (Value::Null, json!(-32700)), // the junk
            (json!(7), json!(-32601)),    // read: MethodNotFound
            (json!(8), Value::Null),      // shutdown answered
        ],
        "{seen:?}"
    );
    send(&mut stdin, json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(wait_exit(&mut child, Duration::from_secs(10)), Some(0));
}
