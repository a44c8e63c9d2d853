//! Kiro CLI v2 sessions (FORMATS-MORE-AGENTS.md "kiro-cli"; issue 21 item 4).
//!
//! `~/.kiro/sessions/cli/<uuid>.jsonl` (or `$KIRO_HOME/sessions/cli`). Every line is an
//! envelope `{"version":"v1","kind":…,"data":{"message_id",…,"content":[{"kind","data"}]}}`:
//! * `Prompt`: the person's prompt (`content[].kind: "text"`), with `data.meta.timestamp` in
//!   epoch seconds (the only timestamps of the file);
//! * `AssistantMessage`: one model response, `text` and `toolUse {toolUseId, name, input}`
//!   items; one without a tool call ends the turn;
//! * `ToolResults`: `toolResult {toolUseId, content[{kind: json|text, data}], status}` items,
//!   paired to the calls by `toolUseId`;
//! * `Clear` (handled by Kiro, never seen in recordings): bookkeeping.
//!
//! The file records no model, no tokens, no thinking: those figures stay unknown, never 0.
//! A recording that joins a parent and its rewound fork repeats the first prompt's
//! `message_id`: a `Prompt` whose id was read before starts another session of the file.
//! The `<uuid>.json` sidecar beside the file (title, cwd, per-turn duration and credits) is
//! read by [`apply_sidecar`].

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;

use super::json::{self, Line, Raw, call_summary, elements, jcount, jstr, object, one_line};
use thin_vec::ThinVec;

use crate::model::{
    Block, BlockKind, PromptKind, Role, Span, StepInfo, StopReason, ToolResult, ToolUse, Transcript,
};

/// Line-reader state kept across the lines of one file.
#[derive(Debug, Default)]
pub struct State {
    /// `message_id`s of the prompts read in the current session.
    prompts: HashSet<Box<str>>,
    /// A prompt was read (the file's first session has begun).
    started: bool,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Record<'a> {
    #[serde(borrow)]
    kind: Option<Raw<'a>>,
    #[serde(borrow)]
    data: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Data<'a> {
    #[serde(borrow)]
    message_id: Option<Raw<'a>>,
    #[serde(borrow)]
    content: Option<Raw<'a>>,
    #[serde(borrow)]
    meta: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Meta<'a> {
    #[serde(borrow)]
    timestamp: Option<Raw<'a>>,
}

/// One `content[]` item: `{"kind","data"}`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Item<'a> {
    #[serde(borrow)]
    kind: Option<Raw<'a>>,
    #[serde(borrow)]
    data: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ToolUseData<'a> {
    #[serde(rename = "toolUseId", borrow)]
    tool_use_id: Option<Raw<'a>>,
    #[serde(borrow)]
    name: Option<Raw<'a>>,
    #[serde(borrow)]
    input: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ToolResultData<'a> {
    #[serde(rename = "toolUseId", borrow)]
    tool_use_id: Option<Raw<'a>>,
    #[serde(borrow)]
    content: Option<Raw<'a>>,
    #[serde(borrow)]
    status: Option<Raw<'a>>,
}

/// A `json` result payload of the shell tool.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ShellOutput<'a> {
    #[serde(borrow)]
    exit_status: Option<Raw<'a>>,
    #[serde(borrow)]
    stdout: Option<Raw<'a>>,
    #[serde(borrow)]
    stderr: Option<Raw<'a>>,
}

impl State {
    /// Reads one complete, non-blank line and appends exactly one entry to `t` (an `Unparsed`
    /// entry plus a problem when the line is not a JSON object).
    pub fn line(&mut self, source: &str, line: usize, span: Span, t: &mut Transcript) {
        let text = &source[span.clone()];
        let rec: Record = match object(text) {
            Ok(r) => r,
            Err(_) => return json::not_an_object(source, line, span, t),
        };
        let data: Data = rec
            .data
            .and_then(|d| object(d.get()).ok())
            .unwrap_or_default();
        let ts = data
            .meta
            .and_then(|m| object::<Meta>(m.get()).ok())
            .and_then(|m| jcount(m.timestamp))
            .and_then(|s| i64::try_from(s).ok())
            .and_then(|s| s.checked_mul(1000));
        let l = Line {
            source,
            line,
            span,
            ts,
        };
        let kind = jstr(rec.kind).unwrap_or(Cow::Borrowed(""));
        let id = jstr(data.message_id);
        let mut e = match kind.as_ref() {
            "Prompt" => {
                if let Some(id) = id.as_deref() {
                    if self.started && self.prompts.contains(id) {
                        // A rewound fork joined after its parent (FORMATS-MORE-AGENTS.md):
                        // another session of the file, not a repeat inside the first.
                        t.meta.sessions.push(crate::model::SessionStart {
                            entry: t.entries.len(),
                            line,
                            id: String::new(),
                            parent: None,
                        });
                        self.prompts.clear();
                    }
                    self.prompts.insert(id.into());
                }
                self.started = true;
                let mut e = l.entry(Role::Prompt(PromptKind::Typed), "Prompt");
                items(&l, data.content, &mut e.blocks);
                e
            }
            "AssistantMessage" => {
                let mut e = l.entry(Role::Model, "AssistantMessage");
                items(&l, data.content, &mut e.blocks);
                let calls = e
                    .blocks
                    .iter()
                    .any(|b| matches!(b.kind, BlockKind::ToolUse(_)));
                let key: Box<str> = match id.as_deref() {
                    Some(id) => format!("kiro-{id}").into(),
                    None => format!("kiro-line-{line}").into(),
                };
                e.step = Some(Box::new(StepInfo {
                    key,
                    stop: Some(if calls {
                        StopReason::ToolUse
                    } else {
                        StopReason::EndTurn
                    }),
                    ..StepInfo::default()
                }));
                e
            }
            "ToolResults" => {
                let mut e = l.entry(Role::ToolResults, "ToolResults");
                items(&l, data.content, &mut e.blocks);
                e
            }
            "Clear" => l.entry(Role::Meta, "Clear"),
            "" => l.entry(Role::Other, "unknown"),
            other => {
                t.note_unknown("record kind", other, l.line, l.span.clone());
                l.entry(Role::Other, other)
            }
        };
        e.set_uuid(id.as_deref());
        t.entries.push(e);
    }
}

/// Blocks of a `content` array: `text` (empty ones left out), `toolUse`, `toolResult`; any
/// other item is `Other`.
fn items(l: &Line, content: Option<Raw<'_>>, out: &mut ThinVec<Block>) {
    for el in elements(content) {
        let span = l.raw_span(el);
        let Ok(item) = object::<Item>(el.get()) else {
            out.push(other(span, "unknown"));
            continue;
        };
        let kind = jstr(item.kind).unwrap_or_default();
        match kind.as_ref() {
            "text" => {
                if let Some(text) = item.data.and_then(|d| l.str_of(d))
                    && !text.is_empty()
                {
                    out.push(Block {
                        span: l.raw_span(item.data.unwrap_or(el)),
                        kind: BlockKind::Text { text },
                    });
                }
            }
            "toolUse" => {
                let d: ToolUseData = item
                    .data
                    .and_then(|d| object(d.get()).ok())
                    .unwrap_or_default();
                out.push(Block {
                    span: span.clone(),
                    kind: BlockKind::ToolUse(Box::new(ToolUse {
                        id: jstr(d.tool_use_id).unwrap_or_default().as_ref().into(),
                        name: jstr(d.name).unwrap_or_default().as_ref().into(),
                        input: d.input.map_or(span.start..span.start, |a| l.raw_span(a)),
                        summary: call_summary(d.input, None),
                        subagent: None,
                    })),
                });
            }
            "toolResult" => {
                let d: ToolResultData = item
                    .data
                    .and_then(|d| object(d.get()).ok())
                    .unwrap_or_default();
                let content = d.content.map_or(span.clone(), |c| l.raw_span(c));
                out.push(Block {
                    span: span.clone(),
                    kind: BlockKind::ToolResult(Box::new(ToolResult {
                        tool_use_id: jstr(d.tool_use_id).unwrap_or_default().as_ref().into(),
                        is_error: jstr(d.status).is_some_and(|s| s != "success"),
                        content_len: content.len(),
                        content,
                        summary: result_summary(d.content),
                        images: Vec::new(),
                        subagent: None,
                    })),
                });
            }
            "" => out.push(other(span, "unknown")),
            k => out.push(other(span, k)),
        }
    }
}

fn other(span: Span, ty: &str) -> Block {
    Block {
        span,
        kind: BlockKind::Other {
            block_type: ty.into(),
        },
    }
}

/// The first line of a tool result: a `text` item's text, or a shell `json` item's stdout,
/// else its stderr, else its exit status.
fn result_summary(content: Option<Raw<'_>>) -> String {
    for el in elements(content) {
        let Ok(item) = object::<Item>(el.get()) else {
            continue;
        };
        match jstr(item.kind).as_deref() {
            Some("text") => {
                if let Some(s) = jstr(item.data).filter(|s| !s.trim().is_empty()) {
                    return one_line(&s);
                }
            }
            Some("json") => {
                let Some(d) = item.data else { continue };
                let Ok(sh) = object::<ShellOutput>(d.get()) else {
                    return one_line(d.get());
                };
                for v in [sh.stdout, sh.stderr, sh.exit_status] {
                    if let Some(s) = jstr(v).filter(|s| !s.trim().is_empty()) {
                        return one_line(&s);
                    }
                }
            }
            _ => {}
        }
    }
    String::new()
}

/// Detection (agent registry): a `{"version","kind","data"}` envelope with a Kiro kind
/// (`Prompt`, `AssistantMessage`, `ToolResults`, `Clear`) and no `type`.
pub fn detect(p: &super::agents::Probe) -> bool {
    p.ty().is_none()
        && !p.has("type")
        && p.has("version")
        && p.val("data")
        && matches!(
            p.str("kind").as_deref(),
            Some("Prompt" | "AssistantMessage" | "ToolResults" | "Clear")
        )
}

impl super::agents::LineReader for State {
    fn line(&mut self, source: &str, line: usize, span: Span, t: &mut Transcript) {
        State::line(self, source, line, span, t);
    }
}

/// The sidecar `<uuid>.json` beside a session file (FORMATS-MORE-AGENTS.md "Sidecar"):
/// `{session_id, cwd, title, session_state: {rts_model_state: {model_info}, …}, …}`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Sidecar {
    session_id: Option<String>,
    cwd: Option<String>,
    title: Option<String>,
    session_state: Option<SessionState>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SessionState {
    rts_model_state: Option<serde_json::Value>,
    conversation_metadata: Option<ConversationMetadata>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ConversationMetadata {
    user_turn_metadatas: Vec<TurnMetadata>,
}

/// One user turn's figures: `turn_duration` (`{secs, nanos}`, or seconds as a number),
/// `metering_usage: [{value, unit: "credit"}]`. Its token counts are 0 in every recording
/// (FORMATS-MORE-AGENTS.md): not read.
#[derive(Deserialize, Default)]
#[serde(default)]
struct TurnMetadata {
    turn_duration: Option<serde_json::Value>,
    metering_usage: Vec<Metering>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Metering {
    value: Option<f64>,
    unit: Option<String>,
}

/// Largest sidecar read (the corpus's are under 4 KB; a long session's can reach MBs).
const SIDECAR_MAX: u64 = 64 * 1024 * 1024;

/// The sidecar path of the session file at `path`: `<dir>/<uuid>.jsonl` -> `<dir>/<uuid>.json`.
pub fn sidecar_path(path: &Path) -> Option<std::path::PathBuf> {
    (path.extension()? == "jsonl").then(|| path.with_extension("json"))
}

/// What a Kiro sidecar adds to the transcript of the session file at `path`, when the sidecar
/// exists and is a JSON object: the session id, cwd, title (the session's title) and model
/// (`rts_model_state.model_info`: a string, or an object's `model_id` / `model_name` / `id`).
/// Returns true when one was read; anything unreadable leaves `t` as it is (no error: the
/// sidecar is optional).
pub fn apply_sidecar(t: &mut Transcript, path: &Path) -> bool {
    if t.format() != crate::model::Format::KiroCli {
        return false;
    }
    let Some(side) = sidecar_path(path) else {
        return false;
    };
    let Ok((bytes, _)) = crate::source::load::read_bytes(&side, 0, SIDECAR_MAX) else {
        return false;
    };
    let Ok(s) = serde_json::from_slice::<Sidecar>(&bytes) else {
        return false;
    };
    if let Some(id) = s.session_id.filter(|v| !v.is_empty()) {
        t.meta.session_id = Some(id);
    }
    if let Some(cwd) = s.cwd.filter(|v| !v.is_empty()) {
        t.meta.cwd = Some(cwd);
    }
    if let Some(title) = s.title.filter(|v| !v.trim().is_empty()) {
        t.meta.title = Some(one_line(&title));
        t.meta.title_source = Some(crate::model::TitleSource::SessionName);
    }
    let state = s.session_state.unwrap_or_default();
    if let Some(model) = state
        .rts_model_state
        .as_ref()
        .and_then(|m| m.get("model_info"))
        .and_then(model_name)
    {
        t.meta.model = Some(model);
    }
    // The n-th turn record belongs to the file's n-th prompt.
    let prompts = t
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e.role, Role::Prompt(_)))
        .map(|(i, _)| i);
    let turns = state
        .conversation_metadata
        .map(|c| c.user_turn_metadatas)
        .unwrap_or_default();
    t.meta.recorded_turns = prompts
        .zip(turns)
        .map(|(entry, m)| {
            let credits: Vec<f64> = m
                .metering_usage
                .iter()
                .filter(|u| u.unit.as_deref().is_none_or(|u| u.starts_with("credit")))
                .filter_map(|u| u.value)
                .collect();
            crate::model::RecordedTurn {
                entry,
                duration_ms: m.turn_duration.as_ref().and_then(duration_ms),
                credits: (!credits.is_empty()).then(|| credits.iter().sum()),
            }
        })
        .collect();
    true
}

/// A turn duration in ms: `{secs, nanos}` (Rust's `Duration` as serde writes it) or a number
/// of seconds.
fn duration_ms(v: &serde_json::Value) -> Option<u64> {
    if let Some(s) = v.as_f64() {
        return (s >= 0.0 && s.is_finite()).then(|| (s * 1000.0).round() as u64);
    }
    let secs = v.get("secs")?.as_u64()?;
    let nanos = v.get("nanos").and_then(|n| n.as_u64()).unwrap_or(0);
    secs.checked_mul(1000)?.checked_add(nanos / 1_000_000)
}

/// `model_info` as written: a string, or an object with `model_id` / `model_name` / `id`.
fn model_name(v: &serde_json::Value) -> Option<String> {
    if let Some(s) = v.as_str() {
        return Some(s.to_string());
    }
    ["model_id", "model_name", "id"]
        .iter()
        .find_map(|k| v.get(k)?.as_str().map(str::to_string))
}
