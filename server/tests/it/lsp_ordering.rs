//! The ordering regression test (LSP-NOTES §1.2): tower-lsp-server polls up to 4 handlers
//! concurrently, so `didChange` notifications could overtake each other if a handler awaited
//! before mutating. The real transport (`Server` over an in-memory pipe) receives 60 rapid
//! incremental changes, each inserting a line at the end of the previous version; the final
//! text shows every change applied once, in order.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tower_lsp_server::Server;

async fn send(w: &mut (impl AsyncWriteExt + Unpin), msg: Value) {
    let body = msg.to_string();
    let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
    w.write_all(frame.as_bytes()).await.unwrap();
}

async fn recv(r: &mut (impl AsyncBufReadExt + Unpin)) -> Value {
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        r.read_line(&mut line).await.unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            len = v.parse().unwrap();
        }
    }
    let mut buf = vec![0; len];
    r.read_exact(&mut buf).await.unwrap();
    serde_json::from_slice(&buf).unwrap()
}

async fn recv_response(r: &mut (impl AsyncBufReadExt + Unpin), id: i64) -> Value {
    loop {
        let m = recv(r).await;
        if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
            return m;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_rapid_did_change_notifications_end_in_the_right_text() {
    for round in 0..3 {
        let (service, socket) = transcript_ls::lsp::build_service();
        let shared = service.shared().clone();
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(server_io);
        tokio::spawn(Server::new(sr, sw, socket).serve(service));
        let (cr, mut cw) = tokio::io::split(client_io);
        let mut cr = BufReader::new(cr);

        send(
            &mut cw,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"capabilities": {}, "processId": null, "rootUri": null}}),
        )
        .await;
        // Notifications sent before the initialize response are dropped by
        // tower-lsp-server: wait for it.
        recv_response(&mut cr, 1).await;
        send(
            &mut cw,
            json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        )
        .await;
        let uri = format!("file:///tmp/transcript-ls-ordering/{round}.jsonl");
        send(
            &mut cw,
            json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                   "params": {"textDocument": {"uri": uri, "languageId": "jsonl", "version": 1, "text": ""}}}),
        )
        .await;
        let mut expected = String::new();
        for v in 2..62 {
            let line = v - 2;
            let text = format!("{{\"n\":{v}}}\n");
            expected.push_str(&text);
            send(
                &mut cw,
                json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
                       "params": {"textDocument": {"uri": uri, "version": v},
                                  "contentChanges": [{"range": {"start": {"line": line, "character": 0},
                                                                "end": {"line": line, "character": 0}},
                                                      "text": text}]}}),
            )
            .await;
        }
        send(
            &mut cw,
            json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/foldingRange",
                   "params": {"textDocument": {"uri": uri}}}),
        )
        .await;
        let resp = recv_response(&mut cr, 2).await;
        assert!(resp["result"].is_array(), "{resp}");
        let got = {
            let source = shared
                .host
                .raw_source(&transcript_ls::store::host::DocId::new(uri.as_str()))
                .expect("open");
            (source.text().to_string(), source.version())
        };
        assert_eq!(got.1, Some(61), "round {round}");
        assert_eq!(got.0, expected, "round {round}");
        send(
            &mut cw,
            json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
        )
        .await;
        recv_response(&mut cr, 3).await;
        send(&mut cw, json!({"jsonrpc": "2.0", "method": "exit"})).await;
    }
}
