//! The command line (`transcript-ls outline|render|stats`), run as the built binary.

use std::path::{Path, PathBuf};
use std::process::Command;

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
            "transcript-ls: --json is an option of stats\nTry 'transcript-ls --help'.\n",
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
            "transcript-ls: missing command (outline, render or stats)\nTry 'transcript-ls --help'.\n",
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
                "transcript-ls: {p}: not a transcript: 3 lines of JSON with no Claude Code or Codex records\n"
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
            "transcript-ls: {p}: not a transcript: 1 line of JSON and 1 line that is not JSON, with no Claude Code or Codex records\n"
        )
    );

    let (_t, p) = temp_file(
        "latin1.jsonl",
        b"{\"type\":\"user\"}\n{\"x\":\"caf\xe9\"}\n",
    );
    let p = p.to_str().unwrap();
    assert_eq!(
        run(&["stats", p]),
        (
            1,
            String::new(),
            format!("transcript-ls: {p}: not UTF-8 (invalid byte at offset 25, line 2)\n")
        )
    );
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
