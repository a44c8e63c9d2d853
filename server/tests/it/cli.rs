//! The command line (`transcript-ls outline|render|stats`), run as the built binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_transcript-ls"));
    c.env("TZ", "UTC");
    c
}

/// Runs the binary; returns (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = bin().args(args).output().expect("run transcript-ls");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    )
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn temp_file(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    (dir, p)
}

#[test]
fn help_lists_commands_and_options() {
    let (code, out, err) = run(&["--help"]);
    assert_eq!(code, 0);
    assert_eq!(err, "");
    for word in [
        "outline FILE",
        "render FILE",
        "stats FILE...",
        "changes FILE",
        "history PATH",
        "blame PATH",
        "search QUERY",
        "--limit N",
        "--root DIR",
        "--verbose",
        "--json",
        "--time-zone ZONE",
        "--no-final-marker",
        "--stdio",
        "--version",
    ] {
        assert!(out.contains(word), "--help lacks {word}:\n{out}");
    }
    assert_eq!(run(&["-h"]).1, out);
    assert_eq!(run(&["help"]).1, out);
}

#[test]
fn version_is_the_crate_version() {
    assert_eq!(
        run(&["--version"]),
        (
            0,
            format!("transcript-ls {}\n", env!("CARGO_PKG_VERSION")),
            String::new()
        )
    );
}

#[test]
fn usage_errors_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["bogus"],
            "transcript-ls: unknown command 'bogus'\nTry 'transcript-ls --help'.\n",
        ),
        (
            &["outline"],
            "transcript-ls: outline needs a FILE\nTry 'transcript-ls --help'.\n",
        ),
        (
            &["stats", "--frobnicate", "x"],
            "transcript-ls: unknown option '--frobnicate'\nTry 'transcript-ls --help'.\n",
        ),
        (
            &["render", "a", "b"],
            "transcript-ls: render takes one FILE\nTry 'transcript-ls --help'.\n",
        ),
        (
            &["outline", "x", "--json"],
            "transcript-ls: --json is an option of stats, changes, history, blame and search\nTry 'transcript-ls --help'.\n",
        ),
        (
            &["stats", "x", "--time-zone"],
            "transcript-ls: --time-zone needs a value (e.g. Europe/Paris)\nTry 'transcript-ls --help'.\n",
        ),
        (
            &["stats", "x", "--time-zone", "Mars/Olympus"],
            "transcript-ls: unknown time zone 'Mars/Olympus'\nTry 'transcript-ls --help'.\n",
        ),
        (
            &["--verbose"],
            "transcript-ls: missing command (outline, render, stats, changes, history, blame or search)\nTry 'transcript-ls --help'.\n",
        ),
        (
            &["history"],
            "transcript-ls: history needs a PATH\nTry 'transcript-ls --help'.\n",
        ),
        (
            &["blame", "a.py", "b.py"],
            "transcript-ls: blame takes one PATH\nTry 'transcript-ls --help'.\n",
        ),
        (
            &["outline", "x", "--root", "/tmp"],
            "transcript-ls: --root is an option of history, blame and search\nTry 'transcript-ls --help'.\n",
        ),
        (
            &["search"],
            "transcript-ls: search needs a QUERY\nTry 'transcript-ls --help'.\n",
        ),
        (
            &["search", "x", "--limit", "0"],
            "transcript-ls: --limit takes a number of hits, not '0'\nTry 'transcript-ls --help'.\n",
        ),
        (
            &["stats", "x", "--limit", "3"],
            "transcript-ls: --limit is an option of search\nTry 'transcript-ls --help'.\n",
        ),
        (
            &["history", "x", "--root"],
            "transcript-ls: --root needs a directory\nTry 'transcript-ls --help'.\n",
        ),
    ];
    for (args, err) in cases {
        assert_eq!(run(args), (2, String::new(), err.to_string()), "{args:?}");
    }
}

#[test]
fn file_errors_exit_1_and_say_what_was_found() {
    let (code, out, err) = run(&["stats", "/no/such/file.jsonl"]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (1, "", "transcript-ls: /no/such/file.jsonl: no such file\n")
    );

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    assert_eq!(
        run(&["outline", d]),
        (
            1,
            String::new(),
            format!("transcript-ls: {d}: is a directory, not a transcript file\n")
        )
    );

    let (_t, p) = temp_file("other.jsonl", b"{\"a\":1}\n{\"b\":2}\n\n{\"c\":[3]}\n");
    let p = p.to_str().unwrap();
    assert_eq!(
        run(&["render", p]),
        (
            1,
            String::new(),
            format!(
                "transcript-ls: {p}: not a transcript: 3 lines of JSON with no {} records\n",
                transcript_ls::formats::agents::names("or")
            )
        )
    );

    let (_t, p) = temp_file("notes.txt", b"hello\nworld\n");
    let p = p.to_str().unwrap();
    assert_eq!(
        run(&["outline", p]).2,
        format!("transcript-ls: {p}: not a transcript: 2 lines, none of them JSON\n")
    );

    let (_t, p) = temp_file("mixed.jsonl", b"{\"a\":1}\nnot json\n");
    let p = p.to_str().unwrap();
    assert_eq!(
        run(&["outline", p]).2,
        format!(
            "transcript-ls: {p}: not a transcript: 1 line of JSON and 1 line that is not JSON, with no {} records\n",
            transcript_ls::formats::agents::names("or")
        )
    );

    // Invalid UTF-8 (a Latin-1 é): the file is read lossily, with a warning on its line
    // (issue 8 defect 11; the CLI used to refuse the whole file).
    let (_t, p) = temp_file(
        "latin1.jsonl",
        b"{\"type\":\"user\",\"uuid\":\"u\",\"sessionId\":\"s\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"caf\xe9 \xff\"}}\n",
    );
    let p = p.to_str().unwrap();
    let (code, out, err) = run(&["outline", p]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(
        out.contains("⚠ line 1: invalid UTF-8: 2 bytes replaced by U+FFFD\n"),
        "{out}"
    );
    assert!(out.contains("caf\u{fffd} \u{fffd}"), "{out}");
}

/// Issue 8 defect 4: a FIFO or a device is refused at once (it used to block forever or
/// read /dev/zero until memory ran out).
#[cfg(unix)]
#[test]
fn fifos_and_devices_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.jsonl");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let fifo = fifo.to_str().unwrap();
    for (args, why) in [
        (
            vec!["stats", fifo],
            format!(
                "transcript-ls: {fifo}: is a FIFO (named pipe), not a regular file: not read\n"
            ),
        ),
        (
            vec!["render", "/dev/zero"],
            "transcript-ls: /dev/zero: is a character device, not a regular file: not read\n"
                .to_string(),
        ),
    ] {
        let mut child = bin()
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = std::time::Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t0.elapsed() > std::time::Duration::from_secs(10) {
                let _ = child.kill();
                panic!("{args:?} did not finish in 10 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let out = child.wait_with_output().unwrap();
        assert_eq!(status.code(), Some(1), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), why);
    }
}

#[test]
fn stats_goes_on_after_a_bad_file() {
    let empty = root().join("fixtures/rules/empty.jsonl");
    let empty = empty.to_str().unwrap();
    let (code, out, err) = run(&["stats", "--json", "/no/such", empty]);
    assert_eq!(code, 1);
    assert_eq!(err, "transcript-ls: /no/such: no such file\n");
    assert_eq!(out.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["format"], "unknown");
    assert_eq!(v["turns"], 0);
}

#[test]
fn empty_file_is_an_empty_transcript() {
    let empty = root().join("fixtures/rules/empty.jsonl");
    let empty = empty.to_str().unwrap();
    let (code, out, err) = run(&["outline", empty]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        format!("{empty} — unknown · 0 turns · 0 lines\n(no turns)\n")
    );
    let (code, out, _) = run(&["render", empty]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "# Transcript\nunknown format · 0 turns\n\n(no conversation)\n"
        )
    );
}

/// `outline` and `stats --json` of every file of `../shared/corpus` and `../shared/cases`
/// (snapshots named by file stem), run from the shared directory so paths are stable, read
/// as finished files (`--complete`: they are, and the result must not depend on file
/// times). A file that is not a transcript snapshots its error and exit code.
#[test]
fn outline_and_stats_snapshots_of_corpus_and_cases() {
    let shared = common::shared();
    let mut files = common::jsonl_files(&shared.join("corpus"));
    files.extend(common::jsonl_files(&shared.join("cases")));
    assert!(files.len() >= 40, "found {} files", files.len());
    let names = common::snapshot_names(&files);
    for (path, name) in files.iter().zip(names) {
        let rel = path
            .strip_prefix(&shared)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        let out = bin()
            .current_dir(&shared)
            .args(["outline", "--complete", &rel])
            .output()
            .unwrap();
        let code = out.status.code().unwrap_or(-1);
        let text = format!(
            "exit {code}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        insta::assert_snapshot!(format!("outline-{name}"), text);

        let out = bin()
            .current_dir(&shared)
            .args(["stats", "--json", "--complete", &rel])
            .output()
            .unwrap();
        if out.status.success() {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            insta::assert_json_snapshot!(format!("stats-{name}"), v);
        } else {
            let text = format!(
                "exit {}\n{}",
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr)
            );
            insta::assert_snapshot!(format!("stats-{name}"), text);
        }
    }
}

/// `stats --json` of a small fixture, every key (values checked by hand against the file:
/// fixtures/rules/README.md `gates.jsonl`; tok/s = (212 + 176 + 141) / (5,516 + 4,551 +
/// 2,406 ms) = 42.41).
#[test]
fn stats_json_of_the_gates_fixture() {
    let out = bin()
        .current_dir(root().join("fixtures/rules"))
        .args(["stats", "--json", "--complete", "gates.jsonl"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "one compact JSON line per file");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let expected = serde_json::json!({
        "file": "gates.jsonl",
        "format": "claude-code",
        "lines": 9,
        "records": 9,
        "invalid_lines": [],
        "pending_tail": false,
        "models": ["claude-sonnet-4-5-20250929"],
        "turns": 1,
        "steps": 3,
        "tool_calls": 2,
        "final_answers": 1,
        "replyless_turns": 0,
        "gates": 5,
        "compactions": 0,
        "subagent_calls": 0,
        "subagent_tool_calls": 0,
        "usage": {"input": 9, "output": 529, "cache_creation": 2710, "cache_read": 50139,
                  "output_placeholder_steps": 0},
        "advisor_usage": {"input": 0, "output": 0, "cache_creation": 0, "cache_read": 0},
        "cost_usd": null,
        "api_duration_ms": null,
        "unknown_records": {},
        "turn_list": [{
            "n": 1,
            "kind": "prompt",
            "prompt": "Run the remaining pipeline gates on the ffi branch.",
            "start_line": 1,
            "end_line": 9,
            "records": 9,
            "steps": 3,
            "tool_calls": 2,
            "comments": 2,
            "final_answer": true,
            "state": "complete",
            "duration_ms": 17744,
            "tok_per_s": {"value": 42.4, "kind": "estimate"},
            "finished_at": "02:00 pm",
            "gates": [
                {"phase": "Red Team", "verdict": "done", "verdict_text": "OK"},
                {"phase": "CUSTOM_SECURITY_SCAN", "verdict": "done", "verdict_text": "PASS"},
                {"phase": "Elegance", "verdict": "done", "verdict_text": "PASS"},
                {"phase": "Docs", "verdict": "done", "verdict_text": "OK"},
                {"phase": "Standards Audit", "verdict": "needs-you", "verdict_text": "NEEDS-REVIEW"}
            ]
        }]
    });
    assert_eq!(v, expected);
}

/// A torn last line (case 03): pending while the file may grow, invalid once it is finished.
#[test]
fn torn_last_line_pending_or_invalid() {
    let f = common::shared().join("cases/03-malformed-and-partial-lines.jsonl");
    let f = f.to_str().unwrap();
    let stats = |flag: &str| -> serde_json::Value {
        let (code, out, _) = run(&["stats", "--json", flag, f]);
        assert_eq!(code, 0);
        serde_json::from_str(&out).unwrap()
    };
    let growing = stats("--growing");
    assert_eq!(growing["invalid_lines"], serde_json::json!([4]));
    assert_eq!(growing["pending_tail"], true);
    let complete = stats("--complete");
    assert_eq!(complete["invalid_lines"], serde_json::json!([4, 7]));
    assert_eq!(complete["pending_tail"], false);
    assert_eq!(
        (growing["turns"].clone(), complete["turns"].clone()),
        (2.into(), 2.into())
    );
}

/// `--time-zone` moves finish times (case 16: 00:20 UTC is 08:20 in Shanghai, 19:20 the day
/// before in New York); `render` prints the view; `--verbose` adds the work.
#[test]
fn time_zone_and_render() {
    let f = common::shared().join("cases/16-utc-timestamps-local-display.jsonl");
    let f = f.to_str().unwrap();
    let finish = |tz: &str| -> String {
        let (code, out, _) = run(&["stats", "--json", "--time-zone", tz, f]);
        assert_eq!(code, 0);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["turn_list"][0]["finished_at"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(finish("Asia/Shanghai"), "08:20 am");
    assert_eq!(finish("America/New_York"), "07:20 pm");
    assert_eq!(finish("UTC"), "12:20 am");
    let (code, quiet, _) = run(&["render", f]);
    assert_eq!(code, 0);
    assert!(
        quiet.starts_with("# Start the nightly migration dry-run\n"),
        "{quiet}"
    );
    assert!(!quiet.contains("▸ Worked"));
    let (_, verbose, _) = run(&["render", "--verbose", f]);
    assert!(verbose.contains("▸ Worked · 1 tool call\n"), "{verbose}");
    let (code, outline, _) = run(&["outline", "--time-zone=Asia/Shanghai", f]);
    assert_eq!(code, 0);
    assert!(
        // 15 output tokens over 30 minutes: a wait, not a rate (issue 20 item 10; was ≈0.5).
        outline.contains(" · 30m 00s · 08:20 am · lines 1–4\n"),
        "{outline}"
    );
}

/// No arguments or `--stdio` starts the language server (here it must at least not run the
/// command line: no usage error).
#[test]
fn stdio_is_not_a_command_line_error() {
    assert!(transcript_ls::cli::wants_lsp(&[]));
    assert!(transcript_ls::cli::wants_lsp(&["--stdio".into()]));
    assert!(transcript_ls::cli::wants_lsp(&[
        "--stdio".into(),
        "--clientProcessId=42".into()
    ]));
    assert!(!transcript_ls::cli::wants_lsp(&[
        "stats".into(),
        "--stdio".into()
    ]));
    assert!(!transcript_ls::cli::wants_lsp(&["--help".into()]));
}

/// A zstd-compressed rollout (`.jsonl.zst`, Codex 0.14x) reads like its plain file, as a
/// finished file (issue 9 item 4); a corrupt one is a clear error.
#[test]
fn zstd_rollout_reads_like_the_plain_file() {
    let plain = root().join("fixtures/rules/codex-0118-same-ms-copies.jsonl");
    let zst = root().join("fixtures/rules/codex-0118-same-ms-copies.jsonl.zst");
    let stats = |p: &Path| {
        let (code, out, err) = run(&["stats", "--json", "--complete", p.to_str().unwrap()]);
        assert_eq!((code, err.as_str()), (0, ""));
        let mut v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        v["file"] = serde_json::Value::Null;
        v
    };
    let v = stats(&zst);
    assert_eq!(v, stats(&plain));
    assert_eq!(
        (v["turns"].as_u64(), v["usage"]["output"].as_u64()),
        (Some(1), Some(140))
    );
    let bytes = std::fs::read(&zst).unwrap();
    let (_dir, cut) = temp_file("cut.jsonl.zst", &bytes[..bytes.len() / 2]);
    let (code, _, err) = run(&["stats", cut.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("corrupt zstd data"), "{err}");
}

/// Issue 25 item 1: `stats` on a small zstd file that decompresses to millions of `{}` lines
/// (the issue's 96 KB file aborted with `memory allocation of 7516192768 bytes failed`) is a
/// clear error naming the budget, exit 1, and the memory it took stays bounded: the text is
/// cut off once it would take 1 GiB (9.3 M lines × 112 bytes, `zstd::LINE_COST`).
#[test]
fn stats_refuses_a_zstd_bomb_clearly() {
    use ruzstd::encoding::{CompressionLevel, compress_to_vec};
    let plain =
        std::fs::read(root().join("fixtures/rules/codex-0118-same-ms-copies.jsonl")).unwrap();
    let mut bomb = compress_to_vec(&plain[..], CompressionLevel::Fastest);
    let frame = compress_to_vec("{}\n".repeat(100_000).as_bytes(), CompressionLevel::Fastest);
    for _ in 0..100 {
        bomb.extend_from_slice(&frame);
    }
    assert!(bomb.len() < 500_000, "{}", bomb.len());
    let (_dir, p) = temp_file("rollout-x.jsonl", &bomb);
    let (code, out, err) = run(&["stats", p.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.contains(
            "decompresses to more than the 1024 MiB a compressed transcript may take in memory ("
        ) && err.trim_end().ends_with("bytes so far): not read"),
        "{err}"
    );
}

/// Issue 25 item 10: token sums saturate instead of wrapping around `u64` (two
/// `input_tokens` of 2^63 gave 0 in a release build, a panic in a debug one): the JSON figure
/// is `u64::MAX`, and the text says `overflowed`.
#[test]
fn token_sums_saturate() {
    let line = |i: u32, kind: &str, body: &str| {
        format!(
            r#"{{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/user/project","sessionId":"S","version":"2.1.104","type":"{kind}","uuid":"u{i}","timestamp":"2026-04-06T09:00:0{i}.000Z","message":{body}}}"#
        ) + "\n"
    };
    let answer = |id: &str| {
        format!(
            r#"{{"id":"{id}","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"text","text":"ok"}}],"stop_reason":"end_turn","usage":{{"input_tokens":9223372036854775808,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5}}}}"#
        )
    };
    let text = [
        line(1, "user", r#"{"role":"user","content":"one"}"#),
        line(2, "assistant", &answer("m1")),
        line(3, "user", r#"{"role":"user","content":"two"}"#),
        line(4, "assistant", &answer("m2")),
    ]
    .concat();
    let (_dir, p) = temp_file("big-usage.jsonl", text.as_bytes());
    let (code, out, err) = run(&["stats", "--json", "--complete", p.to_str().unwrap()]);
    assert_eq!((code, err.as_str()), (0, ""));
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (
            v["turns"].as_u64(),
            v["usage"]["input"].as_u64(),
            v["usage"]["output"].as_u64()
        ),
        (Some(2), Some(u64::MAX), Some(10))
    );
    let (code, out, _) = run(&["stats", "--complete", p.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("tokens overflowed in / 10 out"), "{out}");
}

/// The demo session, rendered.
fn demo() -> String {
    root()
        .join("fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl")
        .to_string_lossy()
        .into_owned()
}

/// Display columns of a line (wide characters count 2).
fn columns(l: &str) -> usize {
    transcript_ls::view::wrap::display_width(l)
}

/// `render --width N` wraps prose to N columns even when piped (issue 11, item 6); without it a
/// pipe gets the lines unwrapped; `--width 0` never wraps. Wrapping only moves words to new
/// lines: the words are the same, in the same order.
#[test]
fn render_wraps_to_the_width_asked() {
    let demo = demo();
    let (code, plain, _) = run(&["render", "--verbose", &demo]);
    assert_eq!(code, 0);
    assert!(
        plain.lines().any(|l| columns(l) > 100),
        "the demo has long lines"
    );
    let (code, zero, _) = run(&["render", "--verbose", "--width", "0", &demo]);
    assert_eq!((code, zero == plain), (0, true));
    let (code, wrapped, err) = run(&["render", "--verbose", "--width=60", &demo]);
    assert_eq!((code, err.as_str()), (0, ""));
    // Every line fits, except code, tool output and diffs under a tool call (indented by 4
    // or more under a `⚙` line) and single words longer than the width.
    let mut fenced = false;
    let too_long: Vec<&str> = wrapped
        .lines()
        .filter(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            let body = l.trim().trim_start_matches("> ");
            !fenced && columns(l) > 60 && !l.starts_with("    ") && body.contains(' ')
        })
        .collect();
    assert_eq!(too_long, Vec::<&str>::new());
    assert!(wrapped.lines().count() > plain.lines().count());
    let words = |s: &str| {
        s.split_whitespace()
            .filter(|w| *w != ">")
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(words(&wrapped), words(&plain));
    // The first turn's prompt, quoted, continues with its quote marker.
    let at = wrapped.find("> GET /accounts?currency=usd").unwrap();
    let prompt: Vec<&str> = wrapped[at..].lines().take(3).collect();
    assert_eq!(
        prompt,
        [
            "> GET /accounts?currency=usd returns a 500, but currency=USD",
            "> works. Can you find out why and fix it?",
            ""
        ]
    );
    let (code, _, err) = run(&["render", "--width", "wide", &demo]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--width takes a number of columns, not 'wide'"),
        "{err}"
    );
    let (code, _, err) = run(&["stats", "--width", "60", &demo]);
    assert_eq!(code, 2);
    assert!(err.contains("--width is an option of render"), "{err}");
}

/// On a terminal, `render` pages through `$PAGER` (`LESS` defaulting to `FRX`), coloured and
/// wrapped to the terminal's width; `--no-pager` writes to the terminal itself. The terminal
/// is a pseudo-terminal from `script` (util-linux), 70 columns wide; the pager a script that
/// writes what it reads (and `$LESS`) to a file.
#[test]
fn render_pages_through_the_pager_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let paged = dir.path().join("paged.txt");
    let pager = dir.path().join("pager.sh");
    std::fs::write(
        &pager,
        format!(
            "#!/bin/sh\necho \"LESS=$LESS\" > '{0}'\ncat >> '{0}'\n",
            paged.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&pager, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let bin = env!("CARGO_BIN_EXE_transcript-ls");
    let on_terminal = |extra: &str| {
        let cmd = format!("stty cols 70 rows 40; '{bin}' render {extra} '{}'", demo());
        let out = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .env("PAGER", &pager)
            .env_remove("LESS")
            .env_remove("NO_COLOR")
            .env("TZ", "UTC")
            .output()
            .expect("`script` (util-linux) runs a command on a pseudo-terminal");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let screen = on_terminal("");
    let text = std::fs::read_to_string(&paged).expect("the pager ran");
    assert!(text.starts_with("LESS=FRX\n"), "{}", &text[..40]);
    assert!(text.contains("\x1b["), "coloured on a terminal");
    let plain: String = {
        // Without the colours, every line fits 70 columns (the quiet view has no tool output).
        let mut s = String::new();
        let mut esc = false;
        for c in text.chars() {
            match (esc, c) {
                (false, '\x1b') => esc = true,
                (true, 'm') => esc = false,
                (true, _) => {}
                (false, c) => s.push(c),
            }
        }
        s
    };
    let long: Vec<&str> = plain
        .lines()
        .filter(|l| columns(l) > 70 && l.trim().trim_start_matches("> ").contains(' '))
        .collect();
    assert_eq!(long, Vec::<&str>::new());
    assert!(
        plain.contains("\n# GET /accounts?currency=usd"),
        "{}",
        &plain[..200]
    );
    assert!(
        !screen.contains("# GET /accounts"),
        "the pager, not the terminal, got the text"
    );
    std::fs::remove_file(&paged).unwrap();
    let screen = on_terminal("--no-pager");
    assert!(!paged.exists(), "--no-pager: the pager did not run");
    assert!(screen.contains("GET /accounts?currency=usd"), "{screen}");
}

/// Issue 9 (`/btw`, FORMATS-2026 §1): an `agent-aside_question-*` file replays its parent's
/// messages (same `message.id`, other `requestId`) before the side question; the replay is
/// counted once, in the parent: the aside file has one turn and its own usage only.
#[test]
fn inherited_codex_history_counts_in_no_total() {
    // A sub-agent rollout replaying one parent turn (issue 9): its own turn, step and tokens only.
    let p = root().join("fixtures/rules/codex-subagent-inherited.jsonl");
    let (code, out, err) = run(&["stats", "--json", "--complete", p.to_str().unwrap()]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (
            s["turns"].as_u64(),
            s["steps"].as_u64(),
            s["tool_calls"].as_u64(),
            s["usage"]["output"].as_u64()
        ),
        (Some(1), Some(1), Some(0), Some(40))
    );
}

#[test]
fn btw_aside_files_count_the_replayed_parent_once() {
    let dir = root().join("fixtures/rules/btw");
    let main = dir.join("b7c0ffee-0000-4000-8000-000000000001.jsonl");
    let aside = dir.join(
        "b7c0ffee-0000-4000-8000-000000000001/subagents/agent-aside_question-5c1de0a5b7e9f001.jsonl",
    );
    let stats = |p: &Path| -> serde_json::Value {
        let (code, out, err) = run(&["stats", "--json", "--complete", p.to_str().unwrap()]);
        assert_eq!((code, err.as_str()), (0, ""), "{out}");
        serde_json::from_str(&out).unwrap()
    };
    let m = stats(&main);
    assert_eq!(
        (m["turns"].as_u64(), m["usage"]["output"].as_u64()),
        (Some(2), Some(600))
    );
    let a = stats(&aside);
    assert_eq!(
        (a["turns"].as_u64(), a["usage"]["output"].as_u64()),
        (Some(1), Some(30))
    );
    // The side question is the person's prompt, not a task a parent agent wrote.
    assert_eq!(a["turn_list"][1]["kind"].as_str(), Some("prompt"));
    // Steps and tool calls are the aside's own too (the replayed parent's two steps are not).
    assert_eq!(
        (a["steps"].as_u64(), a["tool_calls"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(
        (
            a["usage"]["input"].as_u64(),
            a["usage"]["cache_read"].as_u64()
        ),
        (Some(10), Some(100))
    );
    let own: Vec<&str> = a["turn_list"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["n"] != 0)
        .map(|t| t["prompt"].as_str().unwrap())
        .collect();
    assert_eq!(
        own,
        ["btw, does --dry-run also skip the database migration?"]
    );
    // The replay (lines 1-4) stands before the question, in no turn.
    let pre = &a["turn_list"][0];
    assert_eq!(
        (
            pre["kind"].as_str(),
            pre["start_line"].as_u64(),
            pre["end_line"].as_u64()
        ),
        (Some("preamble"), Some(1), Some(4))
    );
    // The same records under another sub-agent name are that agent's own work: all counted.
    let (_t, plain) = temp_file(
        "agent-a0123456789abcdef.jsonl",
        &std::fs::read(&aside).unwrap(),
    );
    let p = stats(&plain);
    assert_eq!(
        (p["turns"].as_u64(), p["usage"]["output"].as_u64()),
        (Some(3), Some(630))
    );
}

/// `changes`: the change sets per turn and the session's, as text (issue 22 item 5).
#[test]
fn changes_lists_each_turns_files_and_the_session() {
    let f = root().join("fixtures/rules/changes-claude.jsonl");
    let (code, out, err) = run(&["changes", f.to_str().unwrap()]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        "Turn 1: Rename total to sum, add a test and commit. · ✎ 2 files changed · +8 −2 · 1 edit not applied · ⎇ committed 1a2b3c4\n  \
         M src/calc.rs  +2 −2  (Edit ×2)\n  \
         A tests/calc_test.rs  +6 −0  (Write)\n  \
         ✗ not applied: Edit src/lib.rs\n  \
         ⎇ 1a2b3c4 Rename total to sum (main)\n\
         Turn 2: Make the addition saturate. · ✎ 1 file changed · +1 −1\n  \
         M src/calc.rs  +1 −1  (Edit) · hunks only\n\
         Session · ✎ 2 files changed in 2 turns · +9 −3\n  \
         M src/calc.rs  +3 −3  (Edit ×3)\n  \
         A tests/calc_test.rs  +6 −0  (Write)\n"
    );
    let (code, out, _) = run(&["changes", f.to_str().unwrap(), "--turn", "2", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["turns"].as_array().unwrap().len(), 1);
    assert_eq!(v["turns"][0]["title"], "✎ 1 file changed · +1 −1");
    assert_eq!(
        v["turns"][0]["files"][0]["path"],
        "/home/user/project/src/calc.rs"
    );
    assert_eq!(
        v["turns"][0]["files"][0]["hunks"][0]["lines"],
        serde_json::json!(["-    a + b", "+    a.saturating_add(b)"])
    );
    assert!(v.get("session").is_none());
    let (code, _, err) = run(&["changes", f.to_str().unwrap(), "--turn", "9"]);
    assert_eq!(code, 1);
    assert!(err.contains("no turn 9 (the turns are 1 to 2)"), "{err}");
    let (code, _, err) = run(&["stats", f.to_str().unwrap(), "--patch"]);
    assert_eq!(code, 2);
    assert!(err.contains("--patch is an option of changes"), "{err}");
}

/// `changes --patch`: the session's net change is a patch `git apply` takes on the files as
/// they were before the session (the transcript's `originalFile`).
#[test]
fn changes_patch_applies_with_git() {
    if Command::new("git").arg("--version").output().is_err() {
        panic!("git is needed for this test");
    }
    let f = root().join("fixtures/rules/changes-claude.jsonl");
    let (code, patch, err) = run(&["changes", f.to_str().unwrap(), "--patch"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/calc.rs"),
        "fn total(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nfn main() {\n    println!(\"{}\", total(1, 2));\n}\n",
    )
    .unwrap();
    let p = dir.path().join("session.patch");
    std::fs::write(&p, &patch).unwrap();
    let apply = Command::new("git")
        .args(["apply", "--verbose"])
        .arg(&p)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        apply.status.success(),
        "{}",
        String::from_utf8_lossy(&apply.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("src/calc.rs")).unwrap(),
        "fn sum(a: i32, b: i32) -> i32 {\n    a.saturating_add(b)\n}\n\nfn main() {\n    println!(\"{}\", sum(1, 2));\n}\n"
    );
    assert!(
        std::fs::read_to_string(dir.path().join("tests/calc_test.rs"))
            .unwrap()
            .contains("fn adds()")
    );
}

/// The `fixtures/history` sessions and file installed in a temporary directory; the runs get
/// their own cache folder and `HOME`.
fn history_fixture() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = transcript_ls::testing::install_history_fixture(
        &root().join("fixtures/history"),
        dir.path(),
    )
    .unwrap();
    (dir, root)
}

fn run_in(dir: &Path, home: &Path, args: &[&str]) -> (i32, String, String) {
    let out = bin()
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("TRANSCRIPT_LS_CACHE_DIR", dir.join("cache"))
        .output()
        .expect("run transcript-ls");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `history PATH` and `blame PATH` (issue 22 item 5): one line per entry / range, the same
/// answers as the requests; a path relative to the current directory; `--json`.
#[test]
fn history_and_blame_of_a_source_file() {
    let (dir, root) = history_fixture();
    let d = dir.path();
    let r = root.to_str().unwrap();
    let claude = format!("{r}/claude/-proj/5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.jsonl");
    let codex = format!(
        "{r}/codex/2026/05/02/rollout-2026-05-02T09-00-00-019e3c00-1111-7c01-9d02-4b72d3e5c6f8.jsonl"
    );
    let t = "\"Write a CSV line parser in src/app.py\"";
    let (code, out, err) = run_in(d, d, &["history", "src/app.py", "--root", r]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        out,
        format!(
            "2026-05-02 09:00  codex  \"Add a count helper\"  turn 1 \"Add a count helper\"  M +4 −0  {codex}:4\n\
             2026-05-01 10:22  claude-code  {t}  turn 2 \"Skip empty fields\"  M +1 −1  {claude}:5\n\
             2026-05-01 10:00  claude-code  {t}  turn 1 {t}  A +11 −0  {claude}:1\n"
        )
    );
    // The cache written by the first run gives the same answer.
    assert!(d.join("cache").read_dir().unwrap().next().is_some());
    assert_eq!(run_in(d, d, &["history", "src/app.py", "--root", r]).1, out);

    let (code, out, err) = run_in(d, d, &["blame", "src/app.py", "--root", r]);
    assert_eq!((code, err.as_str()), (0, ""));
    // Line 11 (`print(…, flush=True)`) was changed by a person since: not attributed.
    assert_eq!(
        out,
        format!(
            "src/app.py:1-5  claude-code  {t}  turn 1  2026-05-01 10:00  +11 −0\n\
             src/app.py:6  claude-code  {t}  turn 2  2026-05-01 10:22  +1 −1\n\
             src/app.py:7-10  claude-code  {t}  turn 1  2026-05-01 10:00  +11 −0\n\
             src/app.py:12-15  codex  \"Add a count helper\"  turn 1  2026-05-02 09:00  +4 −0\n"
        )
    );

    let (code, out, _) = run_in(d, d, &["blame", "src/app.py", "--root", r, "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["path"], format!("{}/src/app.py", d.display()));
    let ranges: Vec<(u64, u64, u64, &str)> = v["ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["start"].as_u64().unwrap(),
                r["end"].as_u64().unwrap(),
                r["turn"].as_u64().unwrap(),
                r["agent"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ranges,
        [
            (0, 4, 1, "claude-code"),
            (5, 5, 2, "claude-code"),
            (6, 9, 1, "claude-code"),
            (11, 14, 1, "codex")
        ]
    );
    assert_eq!(v["ranges"][3]["prompt"], "Add a count helper");
    assert_eq!(v["ranges"][3]["session"], codex.as_str());
    let (code, out, _) = run_in(d, d, &["history", "src/app.py", "--root", r, "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["entries"].as_array().unwrap().len(), 3);
    assert_eq!(v["entries"][2]["action"], "created");
    assert_eq!(v["entries"][2]["time"], "2026-05-01T10:00:00.000Z");

    // A file no session changed: nothing on stdout, a note on stderr, exit 0.
    let (code, out, err) = run_in(d, d, &["history", "src/other.py", "--root", r]);
    assert_eq!((code, out.as_str()), (0, ""));
    assert_eq!(
        err,
        format!(
            "transcript-ls: no indexed session changed {}/src/other.py (2 sessions under {r})\n",
            d.display()
        )
    );
    // Blame of a file gone: exit 1 with the reason.
    std::fs::remove_file(d.join("src/app.py")).unwrap();
    let (code, out, err) = run_in(d, d, &["blame", "src/app.py", "--root", r]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.starts_with(&format!(
            "transcript-ls: cannot read {}/src/app.py: ",
            d.display()
        )),
        "{err}"
    );
}

/// Without `--root`: the agents' own folders under `$HOME` (`~/.claude/projects`,
/// `~/.codex/sessions`, …).
#[test]
fn history_uses_the_default_roots() {
    let (dir, root) = history_fixture();
    let d = dir.path();
    let home = d.join("home");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::rename(root.join("claude"), home.join(".claude/projects")).unwrap();
    std::fs::rename(root.join("codex"), home.join(".codex/sessions")).unwrap();
    let (code, out, err) = run_in(d, &home, &["history", "src/app.py"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let agents: Vec<&str> = out.lines().map(|l| l.split("  ").nth(1).unwrap()).collect();
    assert_eq!(agents, ["codex", "claude-code", "claude-code"]);
    let (code, out, _) = run_in(d, &home, &["blame", "src/app.py"]);
    assert_eq!((code, out.lines().count()), (0, 4));
}

/// The view header marks a lower bound where a response's output count is a streaming
/// placeholder (`≥88 out`, as the VS Code status bar says), and leaves out cache figures the
/// file never records (issue 20 item 10; issue 21: Gemini CLI records no cache writes).
#[test]
fn the_view_header_marks_lower_bounds_and_leaves_out_zero_cache_figures() {
    let header = |file: &str| {
        let path = root().join("../shared/corpus").join(file);
        let (code, out, err) = run(&[
            "render",
            path.to_str().unwrap(),
            "--no-pager",
            "--width",
            "0",
        ]);
        assert_eq!(code, 0, "{err}");
        out.lines().nth(1).unwrap_or_default().to_string()
    };
    let claude = header(
        "iansherr__claude-code-log/test/test_data/real_projects/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl",
    );
    assert!(
        claude.ends_with("· 7 turns · tokens 23 in / ≥88 out / 240k cache read / 9.0k cache write"),
        "{claude}"
    );
    let gemini = header(
        "ingo-eichhorst__Irrlicht/replaydata/agents/gemini-cli/scenarios/2-2_auto-executed-tool-call/recordings/2026-06-11-23-05-11_irrlichd-0.5.1+503a96e/transcript.jsonl",
    );
    assert!(
        gemini.ends_with("· 1 turn · tokens 24k in / 702 out"),
        "{gemini}"
    );
}

/// A pager that fails (`PAGER=false`) never hides the transcript: the text goes to the
/// terminal, a line on stderr says why, and `render` exits 1 (issue 25, Low list: it exited 0
/// with nothing shown).
#[test]
fn a_failing_pager_leaves_the_text_on_the_terminal_and_exits_1() {
    let bin = env!("CARGO_BIN_EXE_transcript-ls");
    let cmd = format!(
        "stty cols 70 rows 40; '{bin}' render '{}'; echo \"exit=$?\"",
        demo()
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("PAGER", "false")
        .env("TZ", "UTC")
        .output()
        .expect("`script` (util-linux) runs a command on a pseudo-terminal");
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(screen.contains("GET /accounts?currency=usd"), "{screen}");
    assert!(
        screen.contains("the pager 'false' failed (exit status: 1); the text follows without it"),
        "{screen}"
    );
    assert!(screen.contains("exit=1"), "{screen}");
}

/// Issue 25 item 8: records that would not fit in the memory the process may take are
/// refused with a message before they are read, instead of the allocator aborting the
/// process (`memory allocation of 939524096 bytes failed`, exit 134, before). Under
/// `ulimit -v 400000` (390 MiB of address space), 3 M `{}` and `[]` lines (9 MB; 345 MB as
/// records at 112 bytes a line) are refused with exit 1; the demo session still reads.
#[cfg(target_os = "linux")]
#[test]
fn records_that_would_not_fit_in_memory_are_refused_clearly() {
    // `{}` and `[]` lines by turns: a `{}` after another would be one entry with it.
    let (_dir, p) = temp_file("many.jsonl", "{}\n[]\n".repeat(1_500_000).as_bytes());
    let (code, err) = stats_limited(&p);
    assert_eq!(code, 1, "{err}");
    let prefix = format!(
        "transcript-ls: {}: has 3000000 lines, which would take about 330 MiB of memory once \
         read, more than the ",
        p.display()
    );
    assert!(err.starts_with(&prefix), "{err}");
    assert!(
        err.trim_end()
            .ends_with(" MiB that can be taken now: not read"),
        "{err}"
    );
    let demo = root().join("fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let (code, err) = stats_limited(&demo);
    assert_eq!((code, err.as_str()), (0, ""));
}

/// `transcript-ls stats FILE` under `ulimit -v 400000` (390 MiB of address space): its exit
/// code (-1 when killed) and standard error.
#[cfg(target_os = "linux")]
fn stats_limited(file: &Path) -> (i32, String) {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 400000 && exec "$0" stats "$1""#)
        .arg(env!("CARGO_BIN_EXE_transcript-ls"))
        .arg(file)
        .output()
        .expect("run transcript-ls under ulimit");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 25 item 8: 3 M `{}` lines in a row are one run of records, not 3 M entries of 88
/// bytes: under the same `ulimit -v 400000` they are read (they were refused, and before the
/// refusal the allocator aborted), every record counted.
#[cfg(target_os = "linux")]
#[test]
fn empty_objects_in_a_row_fit_where_records_would_not() {
    let (_dir, p) = temp_file("many.jsonl", "{}\n".repeat(3_000_000).as_bytes());
    let (code, err) = stats_limited(&p);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "transcript-ls: {}: not a transcript: 3000000 lines of JSON with no {} records",
            p.display(),
            transcript_ls::formats::agents::names("or")
        )
    );
}

/// Issue 25 item 8: each line that may open a turn is counted with what a turn costs: 400,000
/// one-line prompts (22 MB) passed the check at 67 MB and took some 290 MB (at 1 M, 772 MB:
/// under `ulimit -v 500000` the allocator aborted, exit 134); they are refused with exit 1
/// under `ulimit -v 400000`.
#[cfg(target_os = "linux")]
#[test]
fn one_line_prompts_are_counted_as_turns_before_reading() {
    let prompt = r#"{"type":"user","message":{"role":"user","content":"x"}}"#;
    let (_dir, p) = temp_file(
        "prompts.jsonl",
        format!("{prompt}\n").repeat(400_000).as_bytes(),
    );
    let (code, err) = stats_limited(&p);
    assert_eq!(code, 1, "{err}");
    let prefix = format!(
        "transcript-ls: {}: has 400000 lines, which would take about 553 MiB of memory once \
         read, more than the ",
        p.display()
    );
    assert!(err.starts_with(&prefix), "{err}");
}

/// Issue 25, Low list: `stats --json | head -c 10`: a reader that goes away is no error
/// (it printed `cannot write output: Broken pipe` and exited 1); the same for the text
/// forms. The reading end is closed before anything is written.
#[cfg(unix)]
#[test]
fn a_reader_that_goes_away_is_no_error() {
    let demo = root().join("fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    for args in [
        &["stats", "--json"][..],
        &["stats"],
        &["changes", "--json"],
        &["render", "--no-pager"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = bin().args(args).arg(&demo).stdout(writer).output().unwrap();
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).as_ref()
            ),
            (Some(0), ""),
            "{args:?}"
        );
    }
}

/// Issue 25, Low list: a byte order mark at the start of every line (files joined with
/// `cat`, each written with one) is not part of the records: the counts equal the plain
/// file's (every line after the first was invalid JSON).
#[test]
fn a_byte_order_mark_on_every_line_is_read_past() {
    let demo = std::fs::read_to_string(
        root().join("fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl"),
    )
    .unwrap();
    let marked: String = demo.lines().map(|l| format!("\u{feff}{l}\n")).collect();
    let (_d1, plain) = temp_file("plain.jsonl", demo.as_bytes());
    let (_d2, bom) = temp_file("bom.jsonl", marked.as_bytes());
    let counts = |p: &Path| {
        let (code, out, err) = run(&["stats", "--json", p.to_str().unwrap()]);
        assert_eq!((code, err.as_str()), (0, ""));
        let mut v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v.as_object_mut().unwrap().remove("file");
        v
    };
    let (a, b) = (counts(&plain), counts(&bom));
    assert_eq!(b["invalid_lines"], serde_json::json!([]));
    assert_eq!(a, b);
}

/// `search QUERY` (issue 26): two lines per hit, the matches in brackets when piped; several
/// arguments are one query; `--limit`, `--json`; the search index kept in the cache folder and
/// reused; no hit: a note on stderr, exit 0.
#[test]
fn search_over_the_given_roots() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let status = std::process::Command::new("cp")
        .args(["-r"])
        .arg(root().join("fixtures/search/root"))
        .arg(d)
        .status()
        .unwrap();
    assert!(status.success());
    let r = format!("{}/root", d.display());
    let claude = format!("{r}/claude/-home-me-app/c1a2b3c4-0000-4000-8000-000000000001.jsonl");
    let codex = format!(
        "{r}/codex/2026/05/03/rollout-2026-05-03T09-00-00-019e3c00-3333-7c01-9d02-4b72d3e5c6f8.jsonl"
    );
    let (code, out, err) = run_in(d, d, &["search", "flaky", "test ", "--root", &r]);
    assert_eq!((code, err.as_str()), (0, ""));
    let t = "\"Why does the flaky test in tests/api_test.py fail on CI?\"";
    assert_eq!(
        out,
        format!(
            "2026-05-01 10:05  claude-code  {t}  turn 1  prompt  {claude}:1\n    Why does the [flaky test] in tests/api_[test].py fail on CI?\n\
             2026-05-03 09:00  codex  \"Run the database migration for the accounts table\"  turn 1  answer  {codex}:9\n    Migration applied: the accounts table has a currency column now. The [flaky test] is unrelated.\n\
             2026-05-01 10:05  claude-code  {t}  turn 1  answer  {claude}:5\n    The [test] is [flaky] because the retry waits on a real clock; a fake clock fixes it.\n"
        )
    );
    assert!(d.join("cache").read_dir().unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("search-")
    }));
    // Again, from the kept index: the same.
    assert_eq!(
        run_in(d, d, &["search", "flaky", "test ", "--root", &r]).1,
        out
    );
    let (code, out, _) = run_in(
        d,
        d,
        &["search", "alembic", "--json", "--limit", "1", "--root", &r],
    );
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        serde_json::json!({
            "query": "alembic", "complete": true,
            "hits": [{
                "path": codex, "agent": "codex",
                "title": "Run the database migration for the accounts table",
                "project": "/home/me/db", "turn": 1,
                "turnTitle": "Run the database migration for the accounts table",
                "line": 6, "kind": "tool-input",
                "snippet": {"text": "shell bash -lc alembic upgrade head /home/me/db", "matches": [[15, 22]]},
                "time": "2026-05-03T09:00:07.100Z"
            }]
        })
    );
    let (code, out, err) = run_in(d, d, &["search", "zeppelin", "--root", &r]);
    assert_eq!((code, out.as_str()), (0, ""));
    assert_eq!(
        err,
        format!("transcript-ls: nothing matches 'zeppelin' (2 sessions under {r})\n")
    );
}
