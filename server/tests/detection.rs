//! Format detection from content (issue 2 item 4): other agents' JSONL files are not taken
//! for Claude Code or Codex, and each of ours is recognised.

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

#[test]
fn other_agents_are_unknown() {
    assert_eq!(format_of("gemini/jsonl_v040.jsonl"), Format::Unknown);
    assert_eq!(format_of("pi/small.jsonl"), Format::Unknown);
    assert_eq!(format_of("copilot/small.jsonl"), Format::Unknown);
}

#[test]
fn catalogs_of_ours_are_detected() {
    assert_eq!(format_of("claude/small.jsonl"), Format::ClaudeCode);
    assert_eq!(format_of("codex/small.jsonl"), Format::Codex);
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
