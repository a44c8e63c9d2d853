//! Every request of DESIGN.md §5 through the in-process service, on the project's fixtures,
//! raw and view, in both position encodings, with readable snapshots (1-based lines; token
//! texts extracted in the client's encoding).

use crate::lsp_common;

use lsp_common::*;
use serde_json::{Value, json};

const DEMO: &str = "demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl";

fn fixture(rel: &str) -> std::path::PathBuf {
    fixtures_dir().join(rel)
}

/// 0-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> u32 {
    text.split('\n')
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not found")) as u32
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_raw_all_features() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let path = fixture(DEMO);
    let text = std::fs::read_to_string(&path).unwrap();
    let uri = c.open_file(&path).await;
    let f = c.features(&uri, &text, false).await;
    insta::assert_json_snapshot!("demo_raw_features", f);
    let diags = c.diagnostics(&uri, 1).await;
    insta::assert_json_snapshot!("demo_raw_diagnostics", show_diagnostics(&diags));

    // Hover: the first prompt line (with the turn's figures), a tool call, its result.
    let prompt = line_of(&text, "currency=usd returns a 500");
    let call = line_of(&text, "\"name\":\"Grep\"");
    let result = call + 1;
    let hovers = json!({
        "prompt": c.hover(&uri, prompt, 10).await,
        "call": c.hover(&uri, call, 400).await,
        "result": c.hover(&uri, result, 300).await,
    });
    insta::assert_json_snapshot!("demo_raw_hovers", hovers);

    // Navigation: result <-> call; references on the call; sub-agent call -> its file.
    let nav = json!({
        "definition_of_result": c.locations("textDocument/definition", &uri, result, 300).await,
        "definition_of_call": c.locations("textDocument/definition", &uri, call, 400).await,
        "references_of_call": c.locations("textDocument/references", &uri, call, 400).await,
        "definition_of_agent_call": c.locations("textDocument/definition", &uri, line_of(&text, "\"name\":\"Agent\""), 400).await,
    });
    insta::assert_json_snapshot!("demo_raw_navigation", nav);

    // Commands.
    let cmds = json!({
        "nextTurn_from_0": show_location(&c.command("transcript.nextTurn", json!({"uri": uri, "line": 0})).await),
        "nextTurn_from_prompt": show_location(&c.command("transcript.nextTurn", json!({"uri": uri, "line": prompt})).await),
        "previousTurn_from_end": show_location(&c.command("transcript.previousTurn", json!({"uri": uri, "line": 10_000})).await),
        "previousTurn_from_first": show_location(&c.command("transcript.previousTurn", json!({"uri": uri, "line": prompt})).await),
        "nextGate_from_0": show_location(&c.command("transcript.nextGate", json!({"uri": uri, "line": 0})).await),
        "listSessionFiles": short_uris(&c.command("transcript.listSessionFiles", json!({"uri": uri})).await),
    });
    insta::assert_json_snapshot!("demo_raw_commands", cmds);
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_view_all_features() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let path = fixture(DEMO);
    let uri = view_uri(&path, Some(true));
    let text = c.open_view(&uri).await;
    let f = c.features(&uri, &text, false).await;
    insta::assert_json_snapshot!("demo_view_features", f);
    let heading = line_of(&text, "## Turn 1");
    let tool_line = line_of(&text, "⚙ Grep");
    let hovers = json!({
        "heading": c.hover(&uri, heading, 0).await,
        "tool": c.hover(&uri, tool_line, 4).await,
    });
    insta::assert_json_snapshot!("demo_view_hovers", hovers);
    let nav = json!({
        "definition_of_tool": c.locations("textDocument/definition", &uri, tool_line, 4).await,
        "definition_of_prompt": c.locations("textDocument/definition", &uri, heading + 2, 2).await,
        "definition_of_agent_call": c.locations("textDocument/definition", &uri, line_of(&text, "⚙ Agent"), 4).await,
        "references_of_tool": c.locations("textDocument/references", &uri, tool_line, 4).await,
    });
    insta::assert_json_snapshot!("demo_view_navigation", nav);
    let cmds = json!({
        "nextTurn_from_0": show_location(&c.command("transcript.nextTurn", json!({"uri": uri, "line": 0})).await),
        "previousTurn_from_end": show_location(&c.command("transcript.previousTurn", json!({"uri": uri, "line": 100_000})).await),
        "nextGate_from_0": show_location(&c.command("transcript.nextGate", json!({"uri": uri, "line": 0})).await),
    });
    insta::assert_json_snapshot!("demo_view_commands", cmds);
    c.shutdown().await;
}

/// Lines with emoji, escapes (`\"`, `\n`, `\u00e9`, surrogate pairs) and raw non-ASCII: the
/// tokens cover the same characters in UTF-8 and UTF-16, and those characters are the JSON
/// string contents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_sit_on_the_same_characters_in_both_encodings() {
    for rel in [
        "rules/emoji-escapes.jsonl",
        "rules/lone-surrogate.jsonl",
        DEMO,
    ] {
        let path = fixture(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut shown = Vec::new();
        for utf8 in [false, true] {
            let (mut c, _) = TestClient::start(client_caps(utf8), json!({"roots": []})).await;
            let uri = c.open_file(&path).await;
            let t = c
                .request(
                    "textDocument/semanticTokens/full",
                    json!({"textDocument": {"uri": uri}}),
                )
                .await
                .unwrap();
            let texts: Vec<(u32, String)> = decode_tokens(&t["data"])
                .into_iter()
                .map(|(l, s, n, ty, _)| (ty, format!("{l}:{}", token_text(&text, l, s, n, utf8))))
                .collect();
            assert!(!texts.is_empty(), "{rel}: no tokens");
            shown.push(texts);
            c.shutdown().await;
        }
        assert_eq!(shown[0], shown[1], "{rel}: UTF-8 and UTF-16 tokens differ");
    }
    let path = fixture("rules/emoji-escapes.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let uri = c.open_file(&path).await;
    let t = c
        .request(
            "textDocument/semanticTokens/full",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .unwrap();
    // Full token text here (not cut), to check the escapes.
    let full: Vec<String> = decode_tokens(&t["data"])
        .into_iter()
        .map(|(l, s, n, ty, _)| {
            format!("L{} {} «{}»", l + 1, ty, token_text(&text, l, s, n, false))
        })
        .collect();
    insta::assert_json_snapshot!("emoji_escapes_tokens_utf16", full);
    let hints = c
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 100, "character": 0}}}),
        )
        .await
        .unwrap();
    // Every raw hint sits at the start of its line: turn hints (issue 7), answer and usage
    // hints (issue 23 item 8), padded on their right, before the JSON.
    for h in hints.as_array().unwrap() {
        let l = h["position"]["line"].as_u64().unwrap() as usize;
        assert!(text.split('\n').nth(l).is_some());
        assert_eq!(h["position"]["character"].as_u64().unwrap() as usize, 0);
        assert_eq!(h["paddingRight"], json!(true));
    }
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semantic_tokens_delta_and_range() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let path = fixture(DEMO);
    let text = std::fs::read_to_string(&path).unwrap();
    let uri = c.open_file(&path).await;
    let td = json!({"textDocument": {"uri": uri}});
    let full = c
        .request("textDocument/semanticTokens/full", td.clone())
        .await
        .unwrap();
    let id = full["resultId"].as_str().unwrap().to_string();
    // Unchanged document: an empty delta.
    let d = c
        .request(
            "textDocument/semanticTokens/full/delta",
            json!({"textDocument": {"uri": uri}, "previousResultId": id}),
        )
        .await
        .unwrap();
    assert_eq!(d["edits"], json!([]));
    // Append a record: the delta is one edit at the end.
    let n_lines = text.split('\n').count() as u32 - 1;
    let extra = "{\"parentUuid\":null,\"isSidechain\":false,\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"One more thing: \\\"quoted\\\" 😀\"},\"uuid\":\"extra-1\",\"timestamp\":\"2026-05-12T12:30:00.000Z\",\"userType\":\"external\",\"cwd\":\"/home/user/project\",\"sessionId\":\"3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63\",\"version\":\"2.1.114\"}\n";
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"range": {"start": {"line": n_lines, "character": 0},
                                             "end": {"line": n_lines, "character": 0}}, "text": extra}]}),
    )
    .await;
    let id2 = d["resultId"].as_str().unwrap().to_string();
    let d2 = c
        .request(
            "textDocument/semanticTokens/full/delta",
            json!({"textDocument": {"uri": uri}, "previousResultId": id2}),
        )
        .await
        .unwrap();
    let edits = d2["edits"].as_array().unwrap();
    assert_eq!(edits.len(), 1, "{d2}");
    let old_len = full["data"].as_array().unwrap().len() as u64;
    assert!(edits[0]["start"].as_u64().unwrap() <= old_len);
    let new_text = format!("{text}{extra}");
    let new_tokens: Vec<String> = decode_tokens(&edits[0]["data"])
        .into_iter()
        .filter(|t| t.0 > 0)
        .map(|(l, s, n, ty, m)| format!("{ty}/{m} «{}»", token_text(&new_text, l, s, n, false)))
        .collect();
    assert!(
        new_tokens.iter().any(|t| t.contains("One more thing")) || !new_tokens.is_empty(),
        "{new_tokens:?}"
    );
    // A stale previousResultId gets the full set.
    let d3 = c
        .request(
            "textDocument/semanticTokens/full/delta",
            json!({"textDocument": {"uri": uri}, "previousResultId": "nope"}),
        )
        .await
        .unwrap();
    assert!(d3["data"].is_array());
    // Range: exactly the full tokens on those lines.
    let full_now = c
        .request("textDocument/semanticTokens/full", td.clone())
        .await
        .unwrap();
    let all = decode_tokens(&full_now["data"]);
    let r = c
        .request(
            "textDocument/semanticTokens/range",
            json!({"textDocument": {"uri": uri},
                   "range": {"start": {"line": 10, "character": 0}, "end": {"line": 40, "character": 0}}}),
        )
        .await
        .unwrap();
    let ranged = decode_tokens(&r["data"]);
    let expected: Vec<_> = all
        .into_iter()
        .filter(|t| (10..=40).contains(&t.0))
        .collect();
    assert_eq!(ranged, expected);
    assert!(!ranged.is_empty());
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn case_fixtures_usage_hints_subagents_diagnostics() {
    let (mut c, _) = TestClient::start(client_caps(true), json!({"roots": []})).await;
    let mut out = serde_json::Map::new();
    for rel in [
        "cases/03-malformed-and-partial-lines.jsonl",
        "cases/10-split-rows-repeat-usage.jsonl",
        "cases/20-subagent-sibling-files.jsonl",
        "rules/gates.jsonl",
        "rules/compaction.jsonl",
        "rules/in-flight.jsonl",
    ] {
        let path = fixture(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        let uri = c.open_file(&path).await;
        let mut f = c.features(&uri, &text, true).await;
        f["diagnostics"] = json!(show_diagnostics(&c.diagnostics(&uri, 1).await));
        out.insert(rel.to_string(), f);
    }
    insta::assert_json_snapshot!("case_fixtures_utf8", Value::Object(out));
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_symbols_from_the_index() {
    let roots = [fixtures_dir().join("demo"), fixtures_dir().join("cases")];
    let (mut c, _) = TestClient::start(
        client_caps(false),
        json!({"roots": roots.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>()}),
    )
    .await;
    // The index is built in the background, with $/progress.
    let done = c
        .wait_for(std::time::Duration::from_secs(30), |s| {
            s.method == "$/progress" && s.params["value"]["kind"] == "end"
        })
        .await
        .expect("index progress end");
    assert!(
        done.params["value"]["message"]
            .as_str()
            .unwrap()
            .starts_with("indexed ")
    );
    assert!(
        c.sent()
            .iter()
            .any(|s| s.method == "window/workDoneProgress/create")
    );
    let r = c
        .request("workspace/symbol", json!({"query": "currency column"}))
        .await
        .unwrap();
    let shown: Vec<String> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{} · {} · {}",
                s["name"].as_str().unwrap(),
                s["containerName"].as_str().unwrap_or(""),
                show_location(&s["location"])
            )
        })
        .collect();
    insta::assert_json_snapshot!("workspace_symbols_currency_column", shown);
    let all = c
        .request("workspace/symbol", json!({"query": ""}))
        .await
        .unwrap();
    assert!(all.as_array().unwrap().len() >= 9);
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_and_emoji_columns_are_exact() {
    let path = fixture("rules/emoji-escapes.jsonl");
    for (utf8, start, len) in [(false, 196, 25), (true, 196, 27)] {
        let (mut c, _) = TestClient::start(client_caps(utf8), json!({"roots": []})).await;
        let uri = c.open_file(&path).await;
        let t = c
            .request(
                "textDocument/semanticTokens/full",
                json!({"textDocument": {"uri": uri}}),
            )
            .await
            .unwrap();
        let answer: Vec<_> = decode_tokens(&t["data"])
            .into_iter()
            .filter(|t| t.3 == 1)
            .collect();
        // fixtures/rules/README.md: literal contents at bytes 196–223, UTF-16 columns 196–221.
        assert_eq!(answer, vec![(1, start, len, 1, 0)], "utf8={utf8}");
        c.shutdown().await;
    }
}

/// Case 05: a 16 MiB base64 image in a prompt line. No token, hover or view line carries the
/// base64; the prompt text is still a token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_image_line_never_shows_base64() {
    let stub = std::fs::read_to_string(fixture("cases/05-huge-line-image.jsonl")).unwrap();
    let mut lines = stub.lines();
    let mut first: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    first["message"]["content"][1]["source"]["data"] = Value::String("A".repeat(16 << 20));
    let text = format!("{}\n{}\n", first, lines.next().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    std::fs::write(&path, &text).unwrap();
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let uri = file_uri(&path);
    c.open(&uri, &text).await;
    let t = c
        .request(
            "textDocument/semanticTokens/full",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .unwrap();
    let toks = show_tokens(&t["data"], &text, false);
    assert!(toks.iter().all(|t| !t.contains("AAAA")), "{toks:?}");
    assert!(
        toks.iter()
            .any(|t| t.contains("prompt «Does this chart show the latency spike")),
        "{toks:?}"
    );
    let h = c.hover(&uri, 0, 10).await;
    let h = h.as_str().unwrap();
    assert!(!h.contains("AAAA"));
    assert!(h.contains("[image/png · 12.0 MB]"), "{h}");
    let vuri = view_uri(&path, Some(true));
    let vtext = c.open_view(&vuri).await;
    assert!(!vtext.contains("AAAA"));
    assert!(vtext.lines().all(|l| l.chars().count() <= 2000));
    c.shutdown().await;
}

/// The marot/spotter corpus session has a sub-agent and a compaction summariser run beside it:
/// the sub-agent call's lens opens its file; the compaction boundary's definition is the
/// `agent-acompact-*` run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_subagent_and_compaction_navigation() {
    let path = shared_dir().join(
        "corpus/marot__spotter/test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let uri = c.open_file(&path).await;
    let boundary = line_of(&text, "\"compact_boundary\"");
    let defs = c
        .locations("textDocument/definition", &uri, boundary, 5)
        .await;
    assert_eq!(
        defs,
        vec!["file:…/agent-acompact-fffbd0.jsonl L1:0-L1:0".to_string()]
    );
    let lenses = c
        .request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .unwrap();
    insta::assert_json_snapshot!("spotter_lenses", show_lenses(&lenses));
    let files = c
        .command("transcript.listSessionFiles", json!({"uri": uri}))
        .await;
    insta::assert_json_snapshot!("spotter_session_files", short_uris(&files));
    c.shutdown().await;
}

/// Settings through `workspace/didChangeConfiguration`: the time zone changes the finish time
/// of the hints, refreshes are requested, bad values are reported and ignored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_changes_apply() {
    let (mut c, _) =
        TestClient::start(client_caps(false), json!({"roots": [], "timeZone": "UTC"})).await;
    let path = fixture("cases/16-utc-timestamps-local-display.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let uri = c.open_file(&path).await;
    let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": 10, "character": 0}});
    // The raw turn hint shows `▸ Turn 1/1 · <prompt>`; its figures lead its tooltip.
    let hint = |v: &Value| {
        assert!(v[0]["label"].as_str().unwrap().starts_with("▸ Turn 1/1 · "));
        let tip = v[0]["tooltip"]["value"].as_str().unwrap();
        tip.lines().next().unwrap().trim_matches('`').to_string()
    };
    let utc = c
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri}, "range": range}),
        )
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    c.clear_sent();
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"transcript": {"timeZone": "America/Los_Angeles", "verbose": 3}}}),
    )
    .await;
    let la = c
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri}, "range": range}),
        )
        .await
        .unwrap();
    assert_ne!(hint(&utc), hint(&la));
    insta::assert_json_snapshot!(
        "timezone_hints",
        json!({"UTC": hint(&utc), "America/Los_Angeles": hint(&la), "first_line": excerpt_line(&text)})
    );
    assert!(
        c.wait_for(std::time::Duration::from_secs(5), |s| s.method
            == "workspace/inlayHint/refresh")
            .await
            .is_some()
    );
    let warned = c
        .wait_for(std::time::Duration::from_secs(5), |s| {
            s.method == "window/logMessage"
                && s.params["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains("`verbose` must be a boolean")
        })
        .await;
    assert!(warned.is_some());
    c.shutdown().await;
}

fn excerpt_line(text: &str) -> String {
    let l = text.lines().next().unwrap_or("");
    let ts = l
        .find("\"timestamp\":\"")
        .map(|i| &l[i + 13..i + 37])
        .unwrap_or("");
    ts.to_string()
}

/// The `standard` legend maps each custom type onto a standard one, token by token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_legend_maps_every_token() {
    let path = fixture(DEMO);
    let mut decoded = Vec::new();
    for legend in ["custom", "standard"] {
        let (mut c, _) = TestClient::start(
            client_caps(false),
            json!({"roots": [], "semanticTokens": legend}),
        )
        .await;
        let uri = c.open_file(&path).await;
        let t = c
            .request(
                "textDocument/semanticTokens/full",
                json!({"textDocument": {"uri": uri}}),
            )
            .await
            .unwrap();
        decoded.push(decode_tokens(&t["data"]));
        c.shutdown().await;
    }
    assert_eq!(decoded[0].len(), decoded[1].len());
    // custom index -> standard index (keyword, string, comment, function, regexp, macro).
    let map = [0, 1, 2, 2, 3, 4, 5, 2];
    for (a, b) in decoded[0].iter().zip(&decoded[1]) {
        assert_eq!((a.0, a.1, a.2), (b.0, b.1, b.2));
        assert_eq!(map[a.3 as usize], b.3, "{a:?} -> {b:?}");
        let thinking = if a.3 == 3 { 8 } else { 0 };
        assert_eq!(a.4 | thinking, b.4);
    }
}
