//! Format detection from content (issue 2 item 4, issue 10): other agents' JSONL files are
//! not taken for one of ours, and each of ours (Claude Code, Codex, Pi, Copilot CLI) is
//! recognised. The shared table `fixtures/detection-cases.json` is also run by the Neovim
//! plugin's detector (`editors/nvim/tests/detect_spec.lua`), so the two cannot drift.

use transcript_ls::formats;
use transcript_ls::model::Format;

const AGENTS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/corpus/jazzyalex__agent-sessions/Resources/Fixtures/stage0/agents"
);

fn format_of(rel: &str) -> Format {
    let path = format!("{AGENTS}/{rel}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    formats::read(&text).format()
}

/// Gemini CLI 0.40's JSONL session (issue 21 item 2): read as Gemini CLI now.
#[test]
fn gemini_cli_catalog_is_detected() {
    assert_eq!(format_of("gemini/jsonl_v040.jsonl"), Format::GeminiCli);
}

#[test]
fn catalogs_of_ours_are_detected() {
    assert_eq!(format_of("claude/small.jsonl"), Format::ClaudeCode);
    assert_eq!(format_of("codex/small.jsonl"), Format::Codex);
    assert_eq!(format_of("pi/small.jsonl"), Format::Pi);
    assert_eq!(format_of("copilot/small.jsonl"), Format::CopilotCli);
}

/// The corpus's real Pi and Copilot CLI sessions (FORMATS-2026 §3–4).
#[test]
fn real_pi_and_copilot_sessions_are_detected() {
    let base = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/ingo-eichhorst__Irrlicht/replaydata/agents"
    );
    let mut seen = 0;
    for (dir, want) in [("pi", Format::Pi), ("copilot", Format::CopilotCli)] {
        for path in common_files(&format!("{base}/{dir}")) {
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(formats::read(&text).format(), want, "{}", path.display());
            seen += 1;
        }
    }
    assert_eq!(seen, 3, "one Pi and two Copilot CLI recordings");
}

fn common_files(dir: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[derive(serde::Deserialize)]
struct Table {
    cases: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    name: String,
    lines: Vec<String>,
    format: String,
}

/// The shared detection table: first lines → expected format name (`Format::as_str`).
#[test]
fn shared_detection_table() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/detection-cases.json"
    );
    let table: Table = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(table.cases.len() >= 20);
    let mut wrong = Vec::new();
    for case in &table.cases {
        let text: String = case.lines.iter().map(|l| format!("{l}\n")).collect();
        let got = formats::read(&text).format().as_str();
        if got != case.format {
            wrong.push(format!(
                "{}: expected {}, got {got}",
                case.name, case.format
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn single_lines() {
    let d = formats::detect_line;
    assert_eq!(d(r#"{"type":"user","id":"1","content":"hi"}"#), None);
    assert_eq!(
        d(r#"{"type":"message","id":"1","message":{"role":"user"}}"#),
        None
    );
    assert_eq!(
        d(r#"{"type":"message","id":"1","parentId":null,"message":{"role":"user"}}"#),
        Some(Format::Pi)
    );
    assert_eq!(
        d(r#"{"type":"assistant.turn_end","data":{"turnId":"0"},"id":"e1"}"#),
        Some(Format::CopilotCli)
    );
    assert_eq!(
        d(r#"{"type":"user","message":{"role":"user","content":"hi"}}"#),
        Some(Format::ClaudeCode)
    );
    assert_eq!(
        d(r#"{"type":"summary","summary":"x","leafUuid":"u"}"#),
        Some(Format::ClaudeCode)
    );
    assert_eq!(
        d(r#"{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{}}"#),
        Some(Format::Codex)
    );
    assert_eq!(d(r#"{"name":"x","value":1}"#), None);
}

/// Case 03: the warning sits on the raw control character itself, not on the byte before it.
#[test]
fn control_character_diagnostic_points_at_the_character() {
    let line = "{\"type\":\"user\",\"sessionId\":\"s\",\"uuid\":\"u\",\"message\":{\"content\":\"a\u{7}b\"}}";
    let at = line.find('\u{7}').unwrap();
    let t = formats::read(&format!("{line}\n"));
    assert_eq!(t.problems.len(), 1);
    assert_eq!(t.problems[0].span, at..at + 1);
    assert!(
        t.problems[0]
            .message
            .ends_with(&format!("at column {}", at + 1)),
        "{}",
        t.problems[0].message
    );
}
