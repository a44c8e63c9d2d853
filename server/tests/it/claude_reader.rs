//! The Claude Code reader (`formats::claude_code`, FORMATS.md §1): one behaviour per test on
//! small inline JSONL written here, then conformance over `../shared/corpus` and
//! `../shared/cases`, then sub-agent discovery.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use transcript_ls::formats::{self, Reader, claude_code};
use transcript_ls::model::*;

// ---------------------------------------------------------------------------------------------
// Helpers: records with a full envelope (FORMATS.md §1.2).

const SESSION: &str = "S-1";

fn envelope(uuid: &str, parent: Option<&str>, ty: &str, rest: &str) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"parentUuid":{parent},"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"{SESSION}","version":"2.1.100","type":"{ty}","uuid":"{uuid}","timestamp":"2026-01-02T03:04:05.000Z",{rest}}}"#
    )
}

/// A user line whose `message.content` is the given JSON.
fn user(uuid: &str, content: &str) -> String {
    envelope(
        uuid,
        None,
        "user",
        &format!(r#""message":{{"role":"user","content":{content}}}"#),
    )
}

/// A user line with extra top-level fields.
fn user_with(uuid: &str, parent: Option<&str>, content: &str, extra: &str) -> String {
    envelope(
        uuid,
        parent,
        "user",
        &format!(r#""message":{{"role":"user","content":{content}}},{extra}"#),
    )
}

/// An assistant line with one block, message id `id`, optional request id, stop reason JSON.
fn assistant(
    uuid: &str,
    id: &str,
    req: Option<&str>,
    block: &str,
    stop: &str,
    usage: &str,
) -> String {
    let req = req.map_or(String::new(), |r| format!(r#","requestId":"{r}""#));
    envelope(
        uuid,
        None,
        "assistant",
        &format!(
            r#""message":{{"id":"{id}","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{block}],"stop_reason":{stop},"usage":{usage}}}{req}"#
        ),
    )
}

const USAGE: &str = r#"{"input_tokens":3,"cache_creation_input_tokens":1200,"cache_read_input_tokens":8000,"output_tokens":540}"#;

fn system(uuid: &str, subtype: &str, rest: &str) -> String {
    envelope(
        uuid,
        None,
        "system",
        &format!(r#""subtype":"{subtype}",{rest}"#),
    )
}

fn read(lines: &[String]) -> (String, Transcript) {
    let mut src = lines.join("\n");
    src.push('\n');
    let t = formats::read(&src);
    assert_eq!(t.format(), Format::ClaudeCode);
    (src, t)
}

fn roles(t: &Transcript) -> Vec<Role> {
    t.entries.iter().map(|e| e.role.clone()).collect()
}

fn only(lines: &[String]) -> (String, Entry) {
    let (src, t) = read(lines);
    assert_eq!(t.entries.len(), 1);
    (src, t.entries[0].clone())
}

fn role_of(line: String) -> Role {
    only(&[line]).1.role
}

fn text_of(src: &str, b: &Block) -> String {
    match &b.kind {
        BlockKind::Text { text } => text.decode(src).into_owned(),
        k => panic!("not a text block: {k:?}"),
    }
}

fn tool_use(e: &Entry) -> &ToolUse {
    match &e.blocks[0].kind {
        BlockKind::ToolUse(u) => u,
        k => panic!("not a tool_use block: {k:?}"),
    }
}

fn tool_result(e: &Entry) -> &ToolResult {
    match &e.blocks[0].kind {
        BlockKind::ToolResult(r) => r,
        k => panic!("not a tool_result block: {k:?}"),
    }
}

fn hints(t: &Transcript) -> Vec<String> {
    t.problems
        .iter()
        .filter(|p| p.severity == Severity::Hint)
        .map(|p| p.message.clone())
        .collect()
}

/// Issue 20 item 2: a line that repeats an earlier record byte for byte (same `uuid`) is read
/// once: the repeat is `Meta`, `repeated`, without blocks or step, `copy_of` the first. A line
/// that only shares the `uuid` (placeholder ids) is read as itself, and two chunks of one
/// response (one `message.id`, two uuids) are both read.
#[test]
fn records_written_again_are_read_once() {
    let text = r#"{"type":"text","text":"Done."}"#;
    let tool = r#"{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}"#;
    let lines = [
        user("u-1", r#""Fix it""#),                                    // 0
        assistant("u-2", "msg_1", Some("req_1"), tool, "null", USAGE), // 1
        assistant("u-3", "msg_1", Some("req_1"), text, r#""end_turn""#, USAGE), // 2 chunk
        user("u-1", r#""Fix it""#),                                    // 3 repeat of 0
        assistant("u-2", "msg_1", Some("req_1"), tool, "null", USAGE), // 4 repeat of 1
        user("u-1", r#""Fix it again""#),                              // 5 same uuid, other bytes
    ];
    let (_, t) = read(&lines);
    let facts: Vec<(bool, Option<usize>, usize, bool)> = t
        .entries
        .iter()
        .map(|e| (e.repeated, e.copy_of(), e.blocks.len(), e.step.is_some()))
        .collect();
    assert_eq!(
        facts,
        [
            (false, None, 1, false),
            (false, None, 1, true),
            (false, None, 1, true),
            (true, Some(0), 0, false),
            (true, Some(1), 0, false),
            (false, None, 1, false),
        ]
    );
    assert_eq!(t.entries[3].role, Role::Meta);
    assert_eq!(&*t.entries[4].record_type, "assistant");
    assert_eq!(t.entries[5].role, Role::Prompt(PromptKind::Typed));
}

// ---------------------------------------------------------------------------------------------
// Roles of user lines (FORMATS.md §0 turn boundary, §1.8).

#[test]
fn string_prompt_is_a_typed_prompt() {
    assert_eq!(
        role_of(user("u1", r#""Fix the parser""#)),
        Role::Prompt(PromptKind::Typed)
    );
}

#[test]
fn text_and_image_blocks_are_a_prompt_and_the_text_is_kept() {
    let (src, e) = only(&[user(
        "u1",
        r#"[{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/PLACEHOLDER"}},{"type":"text","text":"Make the page look like this mock-up"}]"#,
    )]);
    assert_eq!(e.role, Role::Prompt(PromptKind::Typed));
    assert_eq!(
        e.blocks[0].kind,
        BlockKind::Image {
            media_type: "image/jpeg".into(),
            data_len: "/9j/PLACEHOLDER".len()
        }
    );
    assert_eq!(
        text_of(&src, &e.blocks[1]),
        "Make the page look like this mock-up"
    );
}

#[test]
fn tool_result_carrier_is_not_a_prompt() {
    let line = user(
        "u1",
        r#"[{"tool_use_id":"toolu_1","type":"tool_result","content":"ok"}]"#,
    );
    assert_eq!(role_of(line), Role::ToolResults);
}

#[test]
fn meta_user_line_is_meta() {
    let line = user_with(
        "u1",
        None,
        r#""<system-reminder>x</system-reminder>""#,
        r#""isMeta":true"#,
    );
    assert_eq!(role_of(line), Role::Meta);
}

#[test]
fn caveat_lines_are_meta() {
    let caveat = r#""<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond.</local-command-caveat>""#;
    assert_eq!(
        role_of(user_with("u1", None, caveat, r#""isMeta":true"#)),
        Role::Meta
    );
    let old =
        r#""Caveat: The messages below were generated by the user while running local commands.""#;
    assert_eq!(role_of(user("u1", old)), Role::Meta);
}

#[test]
fn prompt_type_command_with_command_message_first_is_a_command_prompt() {
    let line = user(
        "u1",
        r#""<command-message>init is analyzing your codebase…</command-message>\n<command-name>/init</command-name>""#,
    );
    assert_eq!(role_of(line), Role::Prompt(PromptKind::Command));
}

#[test]
fn local_command_and_its_output_are_local_commands() {
    let cmd = user(
        "u1",
        r#""<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n            <command-args></command-args>""#,
    );
    let out = user(
        "u2",
        r#""<local-command-stdout>See ya!</local-command-stdout>""#,
    );
    let (_, t) = read(&[cmd, out]);
    assert_eq!(roles(&t), [Role::LocalCommand, Role::LocalCommand]);
}

#[test]
fn command_name_first_followed_by_meta_expansion_becomes_a_command_prompt() {
    let cmd = user(
        "c1",
        r#""<command-name>/review</command-name>\n<command-args>src</command-args>""#,
    );
    let expansion = user_with(
        "c2",
        Some("c1"),
        r#"[{"type":"text","text":"Review the code in src"}]"#,
        r#""isMeta":true"#,
    );
    let (_, t) = read(&[cmd, expansion]);
    assert_eq!(roles(&t), [Role::Prompt(PromptKind::Command), Role::Meta]);
}

#[test]
fn bash_mode_lines_are_local_commands() {
    let input = user("u1", r#""<bash-input>uv run pytest</bash-input>""#);
    let output = user(
        "u2",
        r#""<bash-stdout>3 passed</bash-stdout><bash-stderr></bash-stderr>""#,
    );
    let (_, t) = read(&[input, output]);
    assert_eq!(roles(&t), [Role::LocalCommand, Role::LocalCommand]);
}

#[test]
fn task_notification_is_a_wake_up() {
    let line = user(
        "u1",
        r#""<task-notification>\n<task-id>b0be39e</task-id>\n<status>completed</status>\n</task-notification>""#,
    );
    assert_eq!(role_of(line), Role::Wake(WakeKind::TaskNotification));
}

#[test]
fn interruptions_as_block_and_as_string() {
    let block = user(
        "u1",
        r#"[{"type":"text","text":"[Request interrupted by user for tool use]"}]"#,
    );
    let string = user("u2", r#""[Request interrupted by user]""#);
    let (_, t) = read(&[block, string]);
    assert_eq!(roles(&t), [Role::Interruption, Role::Interruption]);
}

#[test]
fn compact_boundary_and_summary() {
    let boundary = system(
        "b1",
        "compact_boundary",
        r#""content":"Conversation compacted","compactMetadata":{"trigger":"auto","preTokens":167094}"#,
    );
    let summary = user_with(
        "s1",
        Some("b1"),
        r#""This session is being continued from a previous conversation.""#,
        r#""isCompactSummary":true,"isVisibleInTranscriptOnly":true"#,
    );
    let (src, t) = read(&[boundary, summary]);
    assert_eq!(
        t.entries[0].role,
        Role::CompactBoundary(Box::new(transcript_ls::model::CompactBoundary {
            trigger: Some("auto".into()),
            pre_tokens: Some(167094)
        }))
    );
    assert_eq!(&*t.entries[0].record_type, "system/compact_boundary");
    assert_eq!(t.entries[1].role, Role::CompactSummary);
    assert_eq!(
        text_of(&src, &t.entries[1].blocks[0]),
        "This session is being continued from a previous conversation."
    );
}

#[test]
fn system_subtypes() {
    let (_, t) = read(&[
        system(
            "a",
            "turn_duration",
            r#""durationMs":247515,"messageCount":103"#,
        ),
        system(
            "b",
            "local_command",
            r#""content":"<command-name>/model</command-name>""#,
        ),
        system("c", "stop_hook_summary", r#""hookCount":3"#),
        envelope(
            "d",
            None,
            "system",
            r#""content":"Running PostToolUse hook","level":"info""#,
        ),
        system("e", "turn_duration", r#""durationMs":"[trimmed]""#),
    ]);
    assert_eq!(
        roles(&t),
        [
            Role::TurnDuration {
                duration_ms: 247515
            },
            Role::LocalCommand,
            Role::Meta,
            Role::Meta,
            Role::Meta
        ]
    );
    let types: Vec<&str> = t.entries.iter().map(|e| &*e.record_type).collect();
    assert_eq!(
        types,
        [
            "system/turn_duration",
            "system/local_command",
            "system/stop_hook_summary",
            "system",
            "system/turn_duration"
        ]
    );
}

#[test]
fn envelope_less_types_are_meta_and_set_the_title() {
    let (_, t) = read(&[
        r#"{"type":"summary","summary":"Old summary","leafUuid":"x"}"#.to_string(),
        r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{"messageId":"m","trackedFileBackups":{}},"isSnapshotUpdate":false}"#.to_string(),
        r#"{"type":"permission-mode","permissionMode":"acceptEdits","sessionId":"S-1"}"#.to_string(),
        r#"{"type":"ai-title","sessionId":"S-1","aiTitle":"AI title"}"#.to_string(),
        r#"{"type":"last-prompt","lastPrompt":"hi","sessionId":"S-1"}"#.to_string(),
        r#"{"type":"pr-link","sessionId":"S-1","prNumber":1,"prUrl":"https://example.invalid/1"}"#.to_string(),
        r#"{"type":"summary","summary":"Later summary","leafUuid":"y"}"#.to_string(),
    ]);
    assert!(
        t.entries.iter().all(|e| e.role == Role::Meta),
        "{:?}",
        roles(&t)
    );
    assert_eq!(t.meta.title.as_deref(), Some("AI title"));
    assert!(t.problems.is_empty(), "{:?}", t.problems);
    let (_, t) = read(&[
        r#"{"type":"custom-title","sessionId":"S-1","customTitle":"Mine"}"#.to_string(),
        r#"{"type":"ai-title","sessionId":"S-1","aiTitle":"AI title"}"#.to_string(),
    ]);
    assert_eq!(t.meta.title.as_deref(), Some("Mine"));
    assert_eq!(t.meta.title_source, Some(TitleSource::CustomTitle));
}

/// Issue 7: a `summary` titles the file only when its `leafUuid` is one of the file's records
/// (summaries at the top of a resumed file name the earlier file's leaves); the first such
/// summary wins, whether the leaf comes before or after it.
#[test]
fn a_summary_titles_the_file_only_when_its_leaf_is_in_the_file() {
    let other = r#"{"type":"summary","summary":"About another file","leafUuid":"elsewhere"}"#;
    let mine = r#"{"type":"summary","summary":"Fixing the login bug","leafUuid":"u2"}"#;
    let second = r#"{"type":"summary","summary":"Second summary","leafUuid":"u1"}"#;
    let (_, t) = read(&[
        other.to_string(),
        mine.to_string(),
        second.to_string(),
        user("u1", r#""hello""#),
        user("u2", r#""again""#),
    ]);
    // u1 is seen first, so "Second summary" (whose leaf is u1) matches first.
    assert_eq!(t.meta.title.as_deref(), Some("Second summary"));
    assert_eq!(t.meta.title_source, Some(TitleSource::Summary));
    let (_, t) = read(&[other.to_string(), user("u1", r#""hello""#)]);
    assert_eq!(t.meta.title, None);
    assert_eq!(t.meta.title_source, None);
    // A summary written after its leaf.
    let (_, t) = read(&[user("u2", r#""hello""#), mine.to_string()]);
    assert_eq!(t.meta.title.as_deref(), Some("Fixing the login bug"));
    // An ai-title still beats it.
    let (_, t) = read(&[
        mine.to_string(),
        user("u2", r#""hello""#),
        r#"{"type":"ai-title","sessionId":"S-1","aiTitle":"AI title"}"#.to_string(),
    ]);
    assert_eq!(t.meta.title.as_deref(), Some("AI title"));
}

#[test]
fn record_types_name_subtypes() {
    let (_, t) = read(&[
        envelope("p", None, "progress", r#""data":{"type":"hook_progress","hookEvent":"SessionStart"}"#),
        envelope("a", None, "attachment", r#""attachment":{"type":"hook_success","stdout":"…"}"#),
        r#"{"type":"queue-operation","operation":"dequeue","timestamp":"2026-01-02T03:04:05.000Z","sessionId":"S-1"}"#.to_string(),
    ]);
    let types: Vec<&str> = t.entries.iter().map(|e| &*e.record_type).collect();
    assert_eq!(
        types,
        [
            "progress/hook_progress",
            "attachment/hook_success",
            "queue-operation/dequeue"
        ]
    );
    assert_eq!(roles(&t), [Role::Meta, Role::Meta, Role::Meta]);
}

// ---------------------------------------------------------------------------------------------
// Steps, usage, assistant blocks (FORMATS.md §1.4, §1.6; case 10).

#[test]
fn step_key_is_message_id_and_request_id() {
    let e = only(&[assistant(
        "a1",
        "msg_1",
        Some("req_1"),
        r#"{"type":"text","text":"hi"}"#,
        "null",
        USAGE,
    )])
    .1;
    assert_eq!(&*e.step.unwrap().key, "msg_1|req_1");
}

#[test]
fn step_key_falls_back_to_message_id_then_uuid() {
    let e = only(&[assistant(
        "a1",
        "msg_1",
        None,
        r#"{"type":"text","text":"hi"}"#,
        "null",
        USAGE,
    )])
    .1;
    assert_eq!(&*e.step.unwrap().key, "msg_1");
    let line = envelope(
        "uuid-9",
        None,
        "assistant",
        r#""message":{"role":"assistant","content":[{"type":"text","text":"Done."}]}"#,
    );
    let e = only(&[line]).1;
    let step = e.step.unwrap();
    assert_eq!(&*step.key, "uuid-9");
    assert_eq!(step.usage, None);
}

#[test]
fn split_rows_keep_one_key_and_different_ids_never_fuse() {
    let (_, t) = read(&[
        assistant(
            "a1",
            "msg_A",
            Some("req_A"),
            r#"{"type":"thinking","thinking":"hm","signature":"sig"}"#,
            "null",
            USAGE,
        ),
        assistant(
            "a2",
            "msg_A",
            Some("req_A"),
            r#"{"type":"text","text":"Looking."}"#,
            "null",
            USAGE,
        ),
        assistant(
            "a3",
            "msg_B",
            Some("req_A"),
            r#"{"type":"text","text":"Other."}"#,
            "null",
            USAGE,
        ),
    ]);
    let keys: Vec<&str> = t
        .entries
        .iter()
        .map(|e| &*e.step.as_ref().unwrap().key)
        .collect();
    assert_eq!(keys, ["msg_A|req_A", "msg_A|req_A", "msg_B|req_A"]);
}

#[test]
fn usage_stop_reason_and_placeholder_flag() {
    let (_, t) = read(&[
        assistant(
            "a1",
            "m1",
            None,
            r#"{"type":"text","text":"x"}"#,
            r#""end_turn""#,
            USAGE,
        ),
        assistant(
            "a2",
            "m2",
            None,
            r#"{"type":"text","text":"x"}"#,
            "null",
            r#"{"input_tokens":5,"output_tokens":1}"#,
        ),
        assistant(
            "a3",
            "m3",
            None,
            r#"{"type":"text","text":"x"}"#,
            r#""tool_use""#,
            USAGE,
        ),
        assistant(
            "a4",
            "m4",
            None,
            r#"{"type":"text","text":"x"}"#,
            r#""max_tokens""#,
            USAGE,
        ),
        assistant(
            "a5",
            "m5",
            None,
            r#"{"type":"text","text":"x"}"#,
            r#""refusal""#,
            r#"{"output_tokens":"[trimmed]"}"#,
        ),
    ]);
    let s: Vec<&StepInfo> = t
        .entries
        .iter()
        .map(|e| e.step.as_deref().unwrap())
        .collect();
    assert_eq!(
        s[0].usage,
        Some(Usage {
            input: 3,
            output: 540,
            cache_creation: 1200,
            cache_read: 8000,
            reasoning: 0
        })
    );
    assert_eq!(s[0].stop, Some(StopReason::EndTurn));
    assert!(!s[0].output_is_placeholder);
    assert_eq!(
        s[1].usage,
        Some(Usage {
            input: 5,
            output: 1,
            ..Usage::default()
        })
    );
    assert_eq!(s[1].stop, None);
    assert!(s[1].output_is_placeholder);
    assert_eq!(s[2].stop, Some(StopReason::ToolUse));
    assert_eq!(s[3].stop, Some(StopReason::MaxTokens));
    assert_eq!(s[4].stop, Some(StopReason::Other("refusal".into())));
    assert_eq!(s[4].usage, Some(Usage::default()));
    assert_eq!(s[0].model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(t.meta.model.as_deref(), Some("claude-sonnet-4-5"));
}

#[test]
fn thinking_blocks_plain_empty_and_redacted() {
    let (src, t) = read(&[
        assistant(
            "a1",
            "m",
            None,
            r#"{"type":"thinking","thinking":"Let me \"see\"","signature":"EpAx"}"#,
            "null",
            USAGE,
        ),
        assistant(
            "a2",
            "m",
            None,
            r#"{"type":"thinking","thinking":"","signature":"EpAx"}"#,
            "null",
            USAGE,
        ),
        assistant(
            "a3",
            "m",
            None,
            r#"{"type":"redacted_thinking","data":"abc"}"#,
            "null",
            USAGE,
        ),
    ]);
    let th = |i: usize| match &t.entries[i].blocks[0].kind {
        BlockKind::Thinking { text, encrypted } => (text.decode(&src).into_owned(), *encrypted),
        k => panic!("{k:?}"),
    };
    assert_eq!(th(0), ("Let me \"see\"".to_string(), false));
    assert_eq!(th(1), (String::new(), false));
    assert_eq!(th(2), (String::new(), true));
}

#[test]
fn synthetic_api_error_line_is_a_model_step_with_the_error() {
    let line = envelope(
        "a1",
        None,
        "assistant",
        r#""message":{"id":"x","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"API Error: 529 Overloaded"}],"stop_reason":"stop_sequence"},"isApiErrorMessage":true,"error":"server_error""#,
    );
    let (_, t) = read(&[line]);
    let e = &t.entries[0];
    assert_eq!(e.role, Role::Model);
    assert_eq!(
        e.step.as_ref().unwrap().api_error.as_deref(),
        Some("API Error: 529 Overloaded")
    );
    assert_eq!(t.meta.model, None, "<synthetic> is not the session's model");
}

// ---------------------------------------------------------------------------------------------
// Unknown things (case 04), invalid input, lone surrogates.

#[test]
fn unknown_type_is_other_and_noted_once() {
    let (_, t) = read(&[
        r#"{"type":"some-future-entry","sessionId":"S-1","payload":{"a":[1]}}"#.to_string(),
        r#"{"type":"some-future-entry","sessionId":"S-1"}"#.to_string(),
        r#"{"type":"mode","mode":"normal","sessionId":"S-1"}"#.to_string(),
    ]);
    assert_eq!(roles(&t), [Role::Other, Role::Other, Role::Meta]);
    assert_eq!(&*t.entries[0].record_type, "some-future-entry");
    // Noted once with its line count (issue 20 item 11: one Information diagnostic), no hint.
    assert!(hints(&t).is_empty());
    assert_eq!(
        t.unknown,
        [transcript_ls::model::UnknownRecord {
            what: "record type",
            name: "some-future-entry".into(),
            lines: 2,
            line: 0,
            span: t.entries[0].span.clone(),
            other_format: None,
        }]
    );
}

#[test]
fn unknown_block_does_not_break_its_sibling_text() {
    let line = envelope(
        "a1",
        None,
        "assistant",
        r#""message":{"id":"m","role":"assistant","content":[{"type":"mystery_block_v9","data":{"opaque":true}},{"type":"text","text":"It retries three times."}],"stop_reason":"end_turn"}"#,
    );
    let (src, t) = read(&[line]);
    let e = &t.entries[0];
    assert_eq!(e.role, Role::Model);
    assert_eq!(
        e.blocks[0].kind,
        BlockKind::Other {
            block_type: "mystery_block_v9".into()
        }
    );
    assert_eq!(
        &src[e.blocks[0].span.clone()],
        r#"{"type":"mystery_block_v9","data":{"opaque":true}}"#
    );
    assert_eq!(text_of(&src, &e.blocks[1]), "It retries three times.");
    assert_eq!(
        hints(&t),
        ["unknown content block type 'mystery_block_v9' (kept as other)"]
    );
}

#[test]
fn invalid_json_and_non_objects_are_unparsed_with_a_warning() {
    let good = user("u1", r#""hello""#);
    // Another uuid: the same line twice would be one record written again (issue 20 item 2).
    let good2 = user("u2", r#""hello""#);
    let src = format!("{good}\n{{\"type\":\"user\",\"x\":\"a\u{7}b\"}}\n[1,2]\n{good2}\n");
    let t = formats::read(&src);
    assert_eq!(
        roles(&t),
        [
            Role::Prompt(PromptKind::Typed),
            Role::Unparsed,
            Role::Unparsed,
            Role::Prompt(PromptKind::Typed)
        ]
    );
    let warnings: Vec<(usize, &str)> = t
        .problems
        .iter()
        .map(|p| (p.line, p.message.as_str()))
        .collect();
    assert_eq!(warnings.len(), 2);
    assert_eq!(warnings[0].0, 1);
    assert!(
        warnings[0].1.starts_with("invalid JSON: control character"),
        "{}",
        warnings[0].1
    );
    assert_eq!(
        warnings[1],
        (
            2,
            "not a JSON object: a Claude Code record is one object per line"
        )
    );
}

/// Valid JSON nested deeper than serde_json's 128-level limit for decoded values is read, not
/// called invalid JSON (issue 25, Low list): records are skimmed with `IgnoredAny`, which
/// walks any depth without recursion. A Claude Code record keeps its known fields; a line
/// of a file in no known format is kept as valid JSON.
#[test]
fn a_record_nested_deeper_than_128_levels_is_read() {
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let line = format!(r#"{{"type":"user","x":{deep}}}"#);
    let src = format!(
        "{}\n{line}\n{}\n",
        user("u1", r#""a""#),
        user("u2", r#""b""#)
    );
    let t = formats::read(&src);
    assert_eq!(
        roles(&t),
        [
            Role::Prompt(PromptKind::Typed),
            Role::Other,
            Role::Prompt(PromptKind::Typed)
        ]
    );
    let problems: Vec<(usize, &str)> = t
        .problems
        .iter()
        .map(|p| (p.line, p.message.as_str()))
        .collect();
    assert_eq!(
        problems,
        [(1, "user record without a message object (kept as other)")]
    );
    let t = formats::read(&format!("{{\"x\":{deep}}}\n"));
    assert_eq!(roles(&t), [Role::Other]);
    assert!(t.problems.is_empty(), "{:?}", t.problems);
}

#[test]
fn lone_surrogate_in_text_is_read_and_decodes_to_replacement() {
    let (src, e) = only(&[user("u1", r#""bad \udcb2 byte""#)]);
    assert_eq!(e.role, Role::Prompt(PromptKind::Typed));
    assert_eq!(text_of(&src, &e.blocks[0]), "bad \u{FFFD} byte");
}

#[test]
fn lone_surrogate_in_a_decoded_field_is_retried_on_a_patched_copy() {
    // `cwd` and the tool name are decoded by serde, which rejects lone surrogates.
    let line = envelope(
        "a1",
        None,
        "assistant",
        r#""message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"B\ud800sh","input":{"command":"ls \udcb2"}}],"stop_reason":null}"#,
    )
    .replace(r#""cwd":"/w""#, r#""cwd":"/w\udcb2""#);
    let (src, t) = read(&[line]);
    assert!(t.problems.is_empty(), "{:?}", t.problems);
    let e = &t.entries[0];
    assert_eq!(e.role, Role::Model);
    assert_eq!(t.meta.cwd.as_deref(), Some("/w\u{FFFD}"));
    let u = tool_use(e);
    assert_eq!(&*u.name, "B\u{FFFD}sh");
    assert_eq!(
        u.summary, "ls \u{FFFD}",
        "first short string field of an unknown tool"
    );
    // Spans index the original source, which still holds the lone surrogate.
    assert_eq!(&src[u.input.clone()], r#"{"command":"ls \udcb2"}"#);
}

#[test]
fn parent_uuid_cycle_reads_normally() {
    let a = user_with("x", Some("y"), r#""one""#, r#""isMeta":false"#);
    let b = user_with("y", Some("x"), r#""two""#, r#""isMeta":false"#);
    let (_, t) = read(&[a, b]);
    assert_eq!(t.entries.len(), 2);
    assert_eq!(
        t.entries[0].parent_uuid().map(|u| u.to_string()).as_deref(),
        Some("y")
    );
    assert_eq!(
        t.entries[1].parent_uuid().map(|u| u.to_string()).as_deref(),
        Some("x")
    );
}

// ---------------------------------------------------------------------------------------------
// Images (cases 05, 06).

#[test]
fn image_payload_is_measured_never_decoded() {
    let data = "A".repeat(300_000);
    let line = user(
        "u1",
        &format!(
            r#"[{{"type":"text","text":"Why is this misaligned? [Image #1]"}},{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{data}"}}}}]"#
        ),
    );
    let (src, e) = only(&[line]);
    assert_eq!(e.role, Role::Prompt(PromptKind::Typed));
    assert_eq!(
        e.blocks[1].kind,
        BlockKind::Image {
            media_type: "image/png".into(),
            data_len: 300_000
        }
    );
    assert!(src[e.blocks[1].span.clone()].starts_with(r#"{"type":"image""#));
    let e = only(&[user("u1", r#"[{"type":"image","source":{"type":"url","url":"https://x.invalid/a.png"}},{"type":"image"}]"#)]).1;
    assert_eq!(
        e.blocks[0].kind,
        BlockKind::Image {
            media_type: "image/unknown".into(),
            data_len: 0
        }
    );
    assert_eq!(
        e.blocks[1].kind,
        BlockKind::Image {
            media_type: "image/unknown".into(),
            data_len: 0
        }
    );
}

// ---------------------------------------------------------------------------------------------
// Tool calls and results (FORMATS.md §1.4, §1.5).

fn call(name: &str, input: &str) -> ToolUse {
    let block = format!(r#"{{"type":"tool_use","id":"toolu_1","name":"{name}","input":{input}}}"#);
    let e = only(&[assistant("a1", "m", None, &block, r#""tool_use""#, USAGE)]).1;
    tool_use(&e).clone()
}

#[test]
fn tool_summaries_use_the_key_argument() {
    let s = |name: &str, input: &str| call(name, input).summary;
    assert_eq!(
        s(
            "Bash",
            r#"{"description":"Run tests","command":"cargo test\n--all"}"#
        ),
        "cargo test…"
    );
    assert_eq!(
        s("Read", r#"{"file_path":"/src/main.rs","limit":10}"#),
        "/src/main.rs"
    );
    assert_eq!(
        s("Write", r#"{"file_path":"/a.txt","content":"xyz"}"#),
        "/a.txt"
    );
    assert_eq!(
        s(
            "Edit",
            r#"{"old_string":"a","file_path":"/b.rs","new_string":"b"}"#
        ),
        "/b.rs"
    );
    assert_eq!(
        s("MultiEdit", r#"{"file_path":"/c.rs","edits":[]}"#),
        "/c.rs"
    );
    assert_eq!(
        s(
            "NotebookEdit",
            r#"{"notebook_path":"/n.ipynb","new_source":"x"}"#
        ),
        "/n.ipynb"
    );
    assert_eq!(
        s("Grep", r#"{"pattern":"fn handle_","path":"src"}"#),
        "fn handle_"
    );
    assert_eq!(s("Glob", r#"{"pattern":"**/*.rs"}"#), "**/*.rs");
    assert_eq!(
        s(
            "WebFetch",
            r#"{"url":"https://example.invalid","prompt":"summarise"}"#
        ),
        "https://example.invalid"
    );
    assert_eq!(
        s("WebSearch", r#"{"query":"rust serde raw value"}"#),
        "rust serde raw value"
    );
    assert_eq!(
        s(
            "TodoWrite",
            r#"{"todos":[{"content":"a"},{"content":"b"},{"content":"c"}]}"#
        ),
        "3 todos"
    );
    assert_eq!(s("mcp__srv__tool", r#"{"n":3,"long":"x","b":"y"}"#), "x");
    assert_eq!(s("Bash", r#"{"command":""}"#), "");
    let long = "x".repeat(500);
    let summary = s("Bash", &format!(r#"{{"command":"{long}"}}"#));
    assert_eq!(summary.chars().count(), 160);
    assert!(summary.ends_with('…'));
}

#[test]
fn task_and_agent_calls_describe_their_sub_agent() {
    let u = call(
        "Agent",
        r#"{"subagent_type":"Explore","description":"Audit auth","prompt":"Audit src/auth"}"#,
    );
    assert_eq!(u.summary, "Audit auth");
    assert_eq!(
        u.subagent,
        Some(SubagentSpawn {
            description: Some("Audit auth".into()),
            agent_type: Some("Explore".into())
        })
    );
    assert_eq!(&*u.id, "toolu_1");
    assert_eq!(&*u.name, "Agent");
    assert_eq!(
        call("Task", r#"{"description":"Survey DB"}"#)
            .subagent
            .unwrap()
            .agent_type,
        None
    );
    assert_eq!(call("Bash", r#"{"command":"ls"}"#).subagent, None);
}

#[test]
fn tool_result_string_content() {
    let line = user(
        "u1",
        r#"[{"tool_use_id":"toolu_7","type":"tool_result","content":"\n\u001b[0mCompiling 3 files\nGenerated app","is_error":false}]"#,
    );
    let (src, e) = only(&[line]);
    let r = tool_result(&e);
    assert_eq!(&*r.tool_use_id, "toolu_7");
    assert!(!r.is_error);
    assert_eq!(r.summary, "Compiling 3 files…");
    assert_eq!(
        &src[r.content.clone()],
        r#"\n\u001b[0mCompiling 3 files\nGenerated app"#
    );
    assert_eq!(r.content_len, r.content.len());
    assert_eq!(r.subagent, None);
}

#[test]
fn tool_result_errors_from_flag_and_from_tool_use_result() {
    let flagged = user(
        "u1",
        r#"[{"tool_use_id":"t1","type":"tool_result","content":"The user doesn't want to proceed with this tool use.","is_error":true}]"#,
    );
    let rejected = user_with(
        "u2",
        None,
        r#"[{"tool_use_id":"t2","type":"tool_result","content":"no"}]"#,
        r#""toolUseResult":"User rejected tool use""#,
    );
    let error = user_with(
        "u3",
        None,
        r#"[{"tool_use_id":"t3","type":"tool_result","content":"x"}]"#,
        r#""toolUseResult":"Error: exit code 1""#,
    );
    let fine = user_with(
        "u4",
        None,
        r#"[{"tool_use_id":"t4","type":"tool_result","content":"x"}]"#,
        r#""toolUseResult":{"stdout":"x","stderr":"","interrupted":false}"#,
    );
    let (_, t) = read(&[flagged, rejected, error, fine]);
    let errs: Vec<bool> = t.entries.iter().map(|e| tool_result(e).is_error).collect();
    assert_eq!(errs, [true, true, true, false]);
}

#[test]
fn tool_result_list_content_with_image_and_tool_reference() {
    let line = user(
        "u1",
        r#"[{"tool_use_id":"t1","type":"tool_result","content":[{"type":"text","text":"Screenshot taken"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}]"#,
    );
    let (src, e) = only(&[line]);
    let r = tool_result(&e);
    assert_eq!(r.summary, "Screenshot taken");
    assert_eq!(r.images, vec![("image/png".into(), "iVBORw0KGgo=".len())]);
    assert!(src[r.content.clone()].starts_with(r#"[{"type":"text""#));
    let refs = user(
        "u2",
        r#"[{"tool_use_id":"t2","type":"tool_result","content":[{"type":"tool_reference","tool_name":"TaskCreate"},{"type":"tool_reference","tool_name":"TaskUpdate"}]}]"#,
    );
    let e = only(&[refs]).1;
    assert_eq!(
        tool_result(&e).summary,
        "loaded tools: TaskCreate, TaskUpdate"
    );
    let img_only = user(
        "u3",
        r#"[{"tool_use_id":"t3","type":"tool_result","content":[{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/"}}]}]"#,
    );
    assert_eq!(tool_result(&only(&[img_only]).1).summary, "[image/jpeg]");
}

#[test]
fn persisted_output_result_summary() {
    let line = user(
        "u1",
        r#"[{"tool_use_id":"t1","type":"tool_result","content":"<persisted-output>\nOutput too large (141KB). Full output saved to: /home/USER/.claude/projects/p/s/tool-results/toolu_019C.txt\n\nPreview (first 2KB):\nfoo"}]"#,
    );
    let e = only(&[line]).1;
    assert_eq!(
        tool_result(&e).summary,
        "output saved to …/tool-results/toolu_019C.txt (141KB)"
    );
}

#[test]
fn sub_agent_totals_come_from_tool_use_result() {
    let line = user_with(
        "u1",
        None,
        r#"[{"tool_use_id":"toolu_20A","type":"tool_result","content":[{"type":"text","text":"Auth: token expiry not checked."}]}]"#,
        r#""toolUseResult":{"status":"completed","agentId":"a111","totalDurationMs":85000,"totalTokens":24000,"totalToolUseCount":2,"usage":{"output_tokens":5}}"#,
    );
    let e = only(&[line]).1;
    assert_eq!(
        tool_result(&e).subagent,
        Some(SubagentResult {
            agent_id: Some("a111".into()),
            duration_ms: Some(85000),
            total_tokens: Some(24000),
            tool_uses: Some(2),
        })
    );
}

// ---------------------------------------------------------------------------------------------
// Spans (model: byte spans into the source, `Str` = literal contents).

#[test]
fn block_spans_are_the_block_json_and_str_decodes() {
    let text_block = r#"{"type":"text","text":"Tab\there \"quoted\" é 😀"}"#;
    let tool_block =
        r#"{"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"/x.rs"}}"#;
    let (src, t) = read(&[
        user("u0", r#""A prompt\nwith two lines""#),
        assistant("a1", "m", None, text_block, "null", USAGE),
        assistant("a2", "m", None, tool_block, "null", USAGE),
    ]);
    let p = &t.entries[0];
    assert_eq!(
        &src[p.blocks[0].span.clone()],
        r#""A prompt\nwith two lines""#
    );
    assert_eq!(text_of(&src, &p.blocks[0]), "A prompt\nwith two lines");
    let a = &t.entries[1];
    assert_eq!(&src[a.blocks[0].span.clone()], text_block);
    match &a.blocks[0].kind {
        BlockKind::Text { text } => {
            assert_eq!(&src[text.raw.clone()], r#"Tab\there \"quoted\" é 😀"#);
            assert_eq!(text.decode(&src), "Tab\there \"quoted\" é 😀");
        }
        k => panic!("{k:?}"),
    }
    let b = &t.entries[2];
    assert_eq!(&src[b.blocks[0].span.clone()], tool_block);
    assert_eq!(&src[tool_use(b).input.clone()], r#"{"file_path":"/x.rs"}"#);
    for e in &t.entries {
        assert_eq!(&src[e.span.clone()], src.lines().nth(e.line).unwrap());
    }
}

// ---------------------------------------------------------------------------------------------
// Steering (cases 07, 08): shown exactly once per delivery.

fn queue_op(op: &str, content: &str) -> String {
    format!(
        r#"{{"type":"queue-operation","operation":"{op}","timestamp":"2026-01-02T03:04:06.000Z","sessionId":"{SESSION}","content":{content}}}"#
    )
}

fn queued_command(uuid: &str, prompt: &str) -> String {
    envelope(
        uuid,
        None,
        "attachment",
        &format!(r#""attachment":{{"type":"queued_command","prompt":{prompt}}}"#),
    )
}

fn steering_texts(src: &str, t: &Transcript) -> Vec<(usize, String)> {
    t.entries
        .iter()
        .filter(|e| e.role == Role::Steering)
        .map(|e| {
            let text: Vec<String> = e
                .blocks
                .iter()
                .map(|b| match &b.kind {
                    BlockKind::Text { text } => text.decode(src).into_owned(),
                    BlockKind::Image { media_type, .. } => format!("[{media_type}]"),
                    k => format!("{k:?}"),
                })
                .collect();
            (e.line, text.join(" + "))
        })
        .collect()
}

#[test]
fn queued_command_takes_over_enqueue_and_null_remove() {
    // Case 07 shape: enqueue (text), remove (null), queued_command (text).
    let (src, t) = read(&[
        user("p", r#""Write the exporter""#),
        queue_op("enqueue", r#""and make it async""#),
        user(
            "r",
            r#"[{"tool_use_id":"t1","type":"tool_result","content":"ok"}]"#,
        ),
        queue_op("remove", "null"),
        queued_command("q", r#""and make it async""#),
    ]);
    assert_eq!(
        steering_texts(&src, &t),
        [(4, "and make it async".to_string())]
    );
    assert_eq!(t.entries[1].role, Role::Meta);
    assert_eq!(t.entries[3].role, Role::Meta);
    assert_eq!(&*t.entries[4].record_type, "attachment/queued_command");
}

#[test]
fn paired_removes_are_meta_and_an_orphan_remove_is_steering() {
    // Case 08 shape: list prompt + paired remove, string prompt + paired remove, orphan remove.
    let (src, t) = read(&[
        user("p", r#""Polish the login form""#),
        queued_command(
            "q1",
            r#"[{"type":"text","text":"use the brand colour"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}}]"#,
        ),
        queue_op("remove", r#""use the brand colour""#),
        queued_command("q2", r#""no new dependencies""#),
        queue_op("remove", r#""no new dependencies""#),
        queue_op("remove", r#""and add a forgot-password link""#),
    ]);
    assert_eq!(
        steering_texts(&src, &t),
        [
            (1, "use the brand colour + [image/png]".to_string()),
            (3, "no new dependencies".to_string()),
            (5, "and add a forgot-password link".to_string()),
        ]
    );
}

#[test]
fn orphan_remove_is_revised_when_its_queued_command_arrives_later() {
    let (src, t) = read(&[
        queue_op("remove", r#""rename it""#),
        queued_command("q", r#""rename it""#),
    ]);
    assert_eq!(steering_texts(&src, &t), [(1, "rename it".to_string())]);
}

#[test]
fn enqueue_without_queued_command_is_the_steering_record() {
    // 2.1.3x shape: enqueue (text) then remove (null), no attachment.
    let (src, t) = read(&[
        user("p", r#""Implement the epic""#),
        queue_op("enqueue", r#""check again""#),
        queue_op("remove", "null"),
    ]);
    assert_eq!(steering_texts(&src, &t), [(1, "check again".to_string())]);
}

#[test]
fn dequeued_enqueue_is_meta_because_the_prompt_follows() {
    // 2.0.x shape: enqueue (list), dequeue, then the text as an ordinary prompt.
    let (_, t) = read(&[
        queue_op("enqueue", r#"[{"type":"text","text":"ok, use vite"}]"#),
        queue_op("dequeue", "null"),
        user("p", r#"[{"type":"text","text":"ok, use vite"}]"#),
    ]);
    assert_eq!(
        roles(&t),
        [Role::Meta, Role::Meta, Role::Prompt(PromptKind::Typed)]
    );
}

#[test]
fn enqueue_later_sent_as_a_prompt_is_meta() {
    let (_, t) = read(&[
        queue_op("enqueue", r#""run the linter too""#),
        user("p", r#""run the linter too""#),
    ]);
    assert_eq!(roles(&t), [Role::Meta, Role::Prompt(PromptKind::Typed)]);
}

#[test]
fn slash_commands_and_notifications_are_never_steering() {
    let (_, t) = read(&[
        queue_op("enqueue", r#""/mcp""#),
        queue_op("remove", "null"),
        queue_op(
            "enqueue",
            r#""<task-notification>\n<task-id>b1</task-id>\n</task-notification>""#,
        ),
        queued_command(
            "q",
            r#""<task-notification>\n<task-id>b2</task-id>\n</task-notification>""#,
        ),
    ]);
    assert_eq!(roles(&t), [Role::Meta, Role::Meta, Role::Meta, Role::Meta]);
}

#[test]
fn steering_pairs_within_a_session_only() {
    let other_session = queue_op("remove", r#""same words""#).replace(SESSION, "S-2");
    let (src, t) = read(&[queued_command("q", r#""same words""#), other_session]);
    assert_eq!(
        steering_texts(&src, &t),
        [(0, "same words".to_string()), (1, "same words".to_string())]
    );
}

#[test]
fn unknown_queued_prompt_shape_is_kept_with_a_hint() {
    let (src, t) = read(&[queued_command("q", r#"{"kind":"voice","ref":"v1"}"#)]);
    let e = &t.entries[0];
    assert_eq!(e.role, Role::Steering);
    assert_eq!(
        e.blocks[0].kind,
        BlockKind::Other {
            block_type: "(queued prompt)".into()
        }
    );
    assert_eq!(
        &src[e.blocks[0].span.clone()],
        r#"{"kind":"voice","ref":"v1"}"#
    );
    assert_eq!(
        hints(&t),
        ["queued_command prompt is neither a string nor a list of blocks (shown as raw JSON)"]
    );
}

// ---------------------------------------------------------------------------------------------
// Sidechains and session metadata (FORMATS.md §1.7).

#[test]
fn sidechain_records_carry_agent_id_and_mark_a_subagent_file() {
    let side = |uuid: &str, content: &str| {
        user(uuid, content).replace(
            r#""isSidechain":false"#,
            r#""isSidechain":true,"agentId":"a4ca""#,
        )
    };
    let (_, t) = read(&[side("s1", r#""Warmup""#), side("s2", r#""go""#)]);
    assert!(
        t.entries
            .iter()
            .all(|e| e.sidechain && e.agent_id() == Some("a4ca"))
    );
    assert_eq!(
        roles(&t),
        [
            Role::Prompt(PromptKind::Typed),
            Role::Prompt(PromptKind::Typed)
        ]
    );
    assert_eq!(
        t.meta,
        SessionMeta {
            session_id: Some(SESSION.into()),
            version: Some("2.1.100".into()),
            cwd: Some("/w".into()),
            model: None,
            title: None,
            title_source: None,
            is_subagent_file: true,
            agent_id: Some("a4ca".into()),
            ..SessionMeta::default()
        }
    );
    let (_, t) = read(&[side("s1", r#""go""#), user("m1", r#""main""#)]);
    assert!(!t.meta.is_subagent_file);
    assert_eq!(t.meta.agent_id, None);
}

#[test]
fn envelope_fields_are_read() {
    let e = only(&[user_with("u-1", Some("u-0"), r#""x""#, r#""promptId":"p""#)]).1;
    assert_eq!(e.uuid().map(|u| u.to_string()).as_deref(), Some("u-1"));
    assert_eq!(
        e.parent_uuid().map(|u| u.to_string()).as_deref(),
        Some("u-0")
    );
    assert_eq!(e.session_id(), Some(SESSION));
    assert_eq!(e.timestamp_ms(), Some(1_767_323_045_000));
    assert!(!e.sidechain);
    assert_eq!(e.line, 0);
}

// ---------------------------------------------------------------------------------------------
// Conformance over the corpus and the cases.

fn shared() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared"))
}

fn jsonl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut items: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    items.sort();
    for p in items {
        if p.is_dir() {
            jsonl_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "jsonl") {
            out.push(p);
        }
    }
}

fn role_name(r: &Role) -> &'static str {
    match r {
        Role::Prompt(PromptKind::Typed) => "prompt",
        Role::Prompt(PromptKind::Command) => "command",
        Role::Wake(_) => "wake",
        Role::Steering => "steering",
        Role::Model => "model",
        Role::ToolResults => "results",
        Role::Interruption => "interrupt",
        Role::LocalCommand => "local",
        Role::Context => "context",
        Role::CompactBoundary { .. } => "boundary",
        Role::CompactSummary => "summary",
        Role::TurnDuration { .. } => "duration",
        Role::TurnStarted { .. } => "started",
        Role::TurnCompleted { .. } => "completed",
        Role::Meta => "meta",
        Role::Other => "other",
        Role::Unparsed => "unparsed",
    }
}

/// Every non-blank line has exactly one entry (or is the pending tail), in order, with its own
/// span; block spans lie inside their line.
fn check_accounting(name: &str, src: &str, t: &Transcript) {
    let mut expected = Vec::new();
    let mut start = 0;
    for (i, l) in src.split('\n').enumerate() {
        let end = start + l.len();
        let trimmed_end = if l.ends_with('\r') { end - 1 } else { end };
        if !l.trim().is_empty() {
            expected.push((i, start..trimmed_end));
        }
        start = end + 1;
    }
    let mut got: Vec<(usize, Span)> = t.entries.iter().map(|e| (e.line, e.span.clone())).collect();
    if let Some(tail) = &t.pending_tail {
        got.push((tail.line, tail.span.clone()));
    }
    assert_eq!(
        got, expected,
        "{name}: entries do not account for every line"
    );
    for e in &t.entries {
        for b in &e.blocks {
            assert!(
                e.span.start <= b.span.start && b.span.end <= e.span.end,
                "{name}: line {} block span outside its line",
                e.line
            );
        }
    }
}

fn summarise(name: &str, src: &str, t: &Transcript) -> String {
    let mut by_role: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &t.entries {
        *by_role.entry(role_name(&e.role)).or_default() += 1;
    }
    let mut by_sev: BTreeMap<String, usize> = BTreeMap::new();
    for p in &t.problems {
        *by_sev.entry(format!("{:?}", p.severity)).or_default() += 1;
    }
    let lines = src.lines().filter(|l| !l.trim().is_empty()).count();
    let roles: Vec<String> = by_role.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let probs: Vec<String> = by_sev.iter().map(|(k, v)| format!("{k} {v}")).collect();
    format!(
        "{name}\n  lines {lines} · entries {} · tail {} · subagent-file {}\n  {}\n  problems: {}\n",
        t.entries.len(),
        t.pending_tail.is_some(),
        t.meta.is_subagent_file,
        roles.join(" · "),
        if probs.is_empty() {
            "none".to_string()
        } else {
            probs.join(" · ")
        }
    )
}

#[test]
fn every_claude_line_of_corpus_and_cases_is_accounted_for() {
    let root = shared();
    let mut files = Vec::new();
    jsonl_files(&root.join("corpus"), &mut files);
    jsonl_files(&root.join("cases"), &mut files);
    assert!(files.len() >= 30, "corpus not found at {}", root.display());
    let mut report = String::new();
    let mut claude = 0;
    for path in &files {
        // Other agents' formats (FORMATS.md §5 "other agents") and Codex cases are not ours.
        let p = path.to_string_lossy();
        if [
            "/agents/codex/",
            "/agents/copilot/",
            "/agents/gemini/",
            "/agents/gemini-cli/",
            "/agents/antigravity/",
            "/agents/kiro-cli/",
            "/agents/mistral-vibe/",
            "/agents/pi/",
            "/badlogic__pi-mono/",
        ]
        .iter()
        .any(|d| p.contains(d))
            || p.contains("/cases/13-")
            || p.contains("/cases/15-")
        {
            continue;
        }
        let src = std::fs::read_to_string(path).unwrap();
        let t = formats::read(&src);
        if src.trim().is_empty() {
            assert!(
                t.entries.is_empty() && t.problems.is_empty(),
                "{p}: empty file"
            );
            continue;
        }
        assert_eq!(
            t.format(),
            Format::ClaudeCode,
            "{p}: not detected as Claude Code"
        );
        claude += 1;
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        check_accounting(&name, &src, &t);
        // Feeding the same bytes in pieces gives the same entries.
        let mut reader = Reader::new();
        let mut cut = 0;
        while cut < src.len() {
            cut = (cut + 7919).min(src.len());
            while !src.is_char_boundary(cut) {
                cut += 1;
            }
            reader.feed(&src[..cut]);
        }
        reader.settle_tail(&src);
        assert_eq!(
            reader.transcript().entries,
            t.entries,
            "{name}: incremental feed differs"
        );
        report.push_str(&summarise(&name, &src, &t));
    }
    println!("{report}");
    assert_eq!(claude, 49, "Claude Code files found (33 corpus + 16 cases)");
    insta::assert_snapshot!("corpus_and_cases", report);
}

#[test]
fn case_04_keeps_the_turn_and_the_text_beside_the_unknown_block() {
    let src = std::fs::read_to_string(shared().join("cases/04-unknown-entry-types.jsonl")).unwrap();
    let t = formats::read(&src);
    assert_eq!(
        roles(&t),
        [
            Role::Meta,
            Role::Meta,
            Role::Prompt(PromptKind::Typed),
            Role::Meta,
            Role::Model,
            Role::Meta,
            Role::Other
        ]
    );
    let text = &t.entries[4].blocks[1];
    assert_eq!(
        text_of(&src, text),
        "It retries a failed call up to three times with exponential backoff."
    );
}

#[test]
fn cases_07_and_08_show_each_steering_text_once() {
    let src =
        std::fs::read_to_string(shared().join("cases/07-queued-prompt-typed-while-working.jsonl"))
            .unwrap();
    let t = formats::read(&src);
    assert_eq!(
        steering_texts(&src, &t),
        [(5, "also add a --json flag".to_string())]
    );
    let src =
        std::fs::read_to_string(shared().join("cases/08-steering-record-shapes.jsonl")).unwrap();
    let t = formats::read(&src);
    assert_eq!(
        steering_texts(&src, &t),
        [
            (3, "match this spacing + [image/png]".to_string()),
            (5, "keep the dark theme".to_string()),
            (7, "and rename the tab to Preferences".to_string()),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Sub-agent discovery (FORMATS.md §1.1, case 20).

fn corpus(rel: &str) -> PathBuf {
    shared().join("corpus").join(rel)
}

fn names(found: &[SubagentFile]) -> Vec<(String, bool, bool)> {
    found
        .iter()
        .map(|f| (f.agent_id.clone(), f.is_compaction, f.is_warmup))
        .collect()
}

#[test]
fn subagents_in_the_session_directory_with_meta_json() {
    let s = corpus(
        "iansherr__claude-code-log/test/test_data/real_projects/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    );
    let found = claude_code::discover_subagents(&s);
    assert_eq!(
        names(&found),
        [("a4ca7529859c158c2".to_string(), false, false)]
    );
    let f = &found[0];
    assert!(
        f.path.ends_with(
            "ef958aa1-0e93-49f0-bb71-150f63befcd1/subagents/agent-a4ca7529859c158c2.jsonl"
        )
    );
    assert_eq!(
        f.description.as_deref(),
        Some("Research Claude Code plan mode")
    );
    assert_eq!(f.agent_type.as_deref(), Some("general-purpose"));
    assert_eq!(f.tool_use_id, None);
}

#[test]
fn subagents_with_a_compaction_run() {
    let s = corpus(
        "marot__spotter/test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
    );
    let found = claude_code::discover_subagents(&s);
    assert_eq!(
        names(&found),
        [
            ("a881341".to_string(), false, false),
            ("acompact-fffbd0".to_string(), true, false)
        ]
    );
    let s = corpus(
        "iansherr__claude-code-log/test/test_data/real_projects/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl",
    );
    assert_eq!(
        names(&claude_code::discover_subagents(&s)),
        [("a2271d1".to_string(), false, false)]
    );
}

#[test]
fn flat_layout_subagents_match_by_session_id_and_warmup_is_marked() {
    let s = corpus(
        "iansherr__claude-code-log/test/test_data/real_projects/-Users-dain-workspace-coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl",
    );
    let found = claude_code::discover_subagents(&s);
    assert_eq!(
        names(&found),
        [
            ("2b93909d".to_string(), false, true),
            ("ea02459f".to_string(), false, false)
        ]
    );
    // Another session of another project has none.
    let other = corpus(
        "iansherr__claude-code-log/test/test_data/real_projects/-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",
    );
    assert_eq!(claude_code::discover_subagents(&other), []);
}

/// `(agent_id, tool_use_id, description, agent_type)` of a found sub-agent file.
type Linked = (String, Option<String>, Option<String>, Option<String>);

#[test]
fn case_20_stand_in_files_with_meta_json() {
    let s = shared().join("cases/20-subagent-sibling-files.jsonl");
    let found = claude_code::discover_subagents(&s);
    let got: Vec<Linked> = found
        .iter()
        .map(|f| {
            (
                f.agent_id.clone(),
                f.tool_use_id.clone(),
                f.description.clone(),
                f.agent_type.clone(),
            )
        })
        .collect();
    let some = |s: &str| Some(s.to_string());
    assert_eq!(
        got,
        [
            (
                "a111".to_string(),
                some("toolu_20A"),
                some("Audit auth"),
                some("Explore")
            ),
            (
                "b222".to_string(),
                some("toolu_20B"),
                some("Audit billing"),
                some("Explore")
            ),
        ]
    );
    assert!(
        found[0]
            .path
            .ends_with("cases/20-subagent-sibling-files.agent-a111.jsonl")
    );
}

#[test]
fn discovery_skips_what_it_cannot_read() {
    assert_eq!(
        claude_code::discover_subagents(Path::new("/nonexistent/dir/s.jsonl")),
        []
    );
    assert_eq!(claude_code::discover_subagents(Path::new("")), []);
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("S-9.jsonl");
    std::fs::write(&session, "").unwrap();
    std::fs::write(dir.path().join("agent-bad.jsonl"), "not json\n").unwrap();
    std::fs::write(
        dir.path().join("agent-other.jsonl"),
        "{\"sessionId\":\"S-8\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("agent-mine.jsonl"),
        "{\"sessionId\":\"S-9\"}\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("S-9/subagents/agent-dir.jsonl")).unwrap();
    std::fs::write(dir.path().join("S-9/subagents/agent-x1.jsonl"), "").unwrap();
    std::fs::write(
        dir.path().join("S-9/subagents/agent-x1.meta.json"),
        "{broken",
    )
    .unwrap();
    let found = claude_code::discover_subagents(&session);
    assert_eq!(
        names(&found),
        [
            ("x1".to_string(), false, false),
            ("mine".to_string(), false, false)
        ]
    );
    assert_eq!(found[0].description, None);
}

// ---------------------------------------------------------------------------------------------
// Robustness: damaged real lines never panic and still give exactly one entry.

fn corpus_claude_lines() -> Vec<String> {
    let mut files = Vec::new();
    jsonl_files(&shared().join("corpus"), &mut files);
    let mut lines = Vec::new();
    for path in files {
        let p = path.to_string_lossy();
        if p.contains("/agents/") && !p.contains("/agents/claude/") {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        // Every 7th line, at most 60 per file, none over 200 KB: variety without a slow test.
        lines.extend(
            src.lines()
                .step_by(7)
                .filter(|l| !l.trim().is_empty() && l.len() < 200_000)
                .take(60)
                .map(str::to_string),
        );
    }
    lines
}

fn read_one(state: &mut claude_code::State, text: &str) -> Transcript {
    let mut t = Transcript::default();
    state.line(text, 0, 0..text.len(), &mut t);
    t
}

#[test]
fn truncated_real_lines_never_panic_and_keep_one_entry() {
    let lines = corpus_claude_lines();
    assert!(lines.len() > 300, "{}", lines.len());
    let mut state = claude_code::State::default();
    for line in &lines {
        for k in 1..23 {
            let mut cut = line.len() * k / 23;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            let t = read_one(&mut state, &line[..cut]);
            assert_eq!(t.entries.len(), 1);
            assert_eq!(
                t.entries[0].role,
                Role::Unparsed,
                "{}",
                &line[..cut.min(200)]
            );
            assert_eq!(t.problems.len(), 1);
        }
    }
}

#[test]
fn a_lone_surrogate_in_any_real_record_keeps_its_role() {
    let mut fresh = claude_code::State::default();
    let mut damaged = claude_code::State::default();
    let mut patched = 0;
    for line in corpus_claude_lines() {
        let bad = line
            .replacen(r#""uuid":""#, r#""uuid":"\ud800"#, 1)
            .replacen(r#""version":""#, r#""version":"\udcb2"#, 1);
        let a = read_one(&mut fresh, &line);
        let b = read_one(&mut damaged, &bad);
        if bad != line {
            patched += 1;
            assert_eq!(b.problems, [], "{}", &bad[..bad.len().min(300)]);
            assert_eq!(
                b.entries[0]
                    .uuid()
                    .map(|u| u.text().starts_with('\u{FFFD}')),
                Some(true)
            );
        }
        assert_eq!(
            a.entries[0].role,
            b.entries[0].role,
            "{}",
            &line[..line.len().min(300)]
        );
        assert_eq!(a.entries[0].blocks.len(), b.entries[0].blocks.len());
    }
    assert!(patched > 250, "{patched}");
}
