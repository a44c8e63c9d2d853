//! Antigravity CLI conversations (issue 21 item 3; `../shared/docs/FORMATS-MORE-AGENTS.md`
//! "antigravity").
//!
//! `~/.gemini/antigravity-cli/brain/<conversation>/.system_generated/logs/transcript.jsonl` (the
//! IDE writes the same bytes under `~/.gemini/antigravity/brain/`): the "filtered view" of a
//! conversation, one *step* per line,
//! `{step_index, source, type, status, created_at[, content][, thinking][, tool_calls][,
//! truncated_fields]}`. The conversation folder is the session id; the file itself names no
//! id, title, cwd or token count.
//!
//! * `USER_EXPLICIT/USER_INPUT` is a prompt. Its `content` wraps the typed text in
//!   `<USER_REQUEST>…</USER_REQUEST>`; the sections after it are context, not prompt:
//!   `<ADDITIONAL_METADATA>` (the local time) and `<USER_SETTINGS_CHANGE>` (on the first turn
//!   and after a switch: "changed setting `Model Selection` from None to Gemini 3.1 Pro
//!   (High)", which names the model: `Gemini 3.1 Pro`, effort `High`). The prompt is one
//!   `Text` block spanning only the typed text (trimmed); each context section is an
//!   `Other` block named `context:<TAG>` spanning the section. A `USER_INPUT` from any other
//!   source is context.
//! * `MODEL/PLANNER_RESPONSE` is one model response: blocks `Thinking` (`thinking`), `Text`
//!   (`content`), one `ToolUse` per `tool_calls[{name, args}]` element. Without tool calls it
//!   ends the turn (`EndTurn`: its text, if any, is the final answer); with them, `ToolUse`.
//!   The `args` values are JSON texts in strings (`"CommandLine":"\"echo hello\""`): the
//!   call's summary is `CommandLine`, else `toolSummary`, else `toolAction`, each decoded
//!   twice.
//! * Any other `MODEL/<TYPE>` step (`RUN_COMMAND`, `INVOKE_SUBAGENT`, …) is a tool result.
//!   Calls carry no id: the reader names each call `step-<step_index>.<n>` and gives each
//!   result the oldest call still waiting for one (calls and results pair by order; the
//!   agent runs tools one after the other). A prompt drops calls left waiting. A result with
//!   no call waiting keeps an empty id and gets a hint. `The command failed` in a result is
//!   an error. An `INVOKE_SUBAGENT` result names the child conversation (`"conversationId"`):
//!   [`ToolResult::subagent`]; the call gives the child's `Role` and `TypeName`.
//! * `SYSTEM/CHECKPOINT` is a compaction: a compact boundary carrying its summary (both
//!   wordings, `{{ CHECKPOINT n }}` and `# Resuming from a compaction`). Its `# Conversation
//!   Logs` section names the conversation's own log, `brain/<id>/…`: the session id.
//! * `SYSTEM/EPHEMERAL_MESSAGE` (reminders the agent adds each turn) and
//!   `SYSTEM/CONVERSATION_HISTORY` (no content) are plumbing: `Meta`, their text kept.
//! * `SYSTEM/SYSTEM_MESSAGE` is context inside a turn (a notice after a resume); after the
//!   turn settled (its last response ended it) it wakes the agent with no prompt (a
//!   background sub-agent reporting back): a wake-up ([`WakeKind::TaskNotification`]). Its
//!   text block is the notice inside `<SYSTEM_MESSAGE>…</SYSTEM_MESSAGE>`.
//! * `SYSTEM/ERROR_MESSAGE` is a failed model response (`api_error`, its own step).
//! * No step records tokens: every step's `usage` is `None` ("not recorded", never 0).
//! * The working directory is the first `run_command` `Cwd` that is not the agent's own
//!   scratch folder (`…/.gemini/antigravity*/scratch`), else the first sub-agent
//!   `workspaceUris` element.
//! * `truncated_fields: ["content", …]`: the agent cut those fields (at about 4 KB) before
//!   writing them: [`Entry::cut_by_agent`] (the view says so after the text) and an
//!   Information problem on the line.
//!
//! **Order.** `step_index` is not always the file order (a `CHECKPOINT` written after the step
//! that follows it by index). Entries stay in file order, the order the agent wrote them, as
//! everywhere in the model; no step is moved or dropped. A `step_index` already read in the
//! current session starts another session of the file (a recording that joins several
//! conversations, issue 21 item 6).

use std::borrow::Cow;
use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::json::{
    self, Line, Raw, call_summary, elements, jcount, jstr, members, object, one_line,
};
use thin_vec::ThinVec;

use crate::model::{
    Block, BlockKind, Entry, PromptKind, Role, SessionStart, Severity, Span, StepInfo, StopReason,
    Str, SubagentResult, SubagentSpawn, ToolResult, ToolUse, Transcript, WakeKind, parse_timestamp,
};
use crate::source::json_string;

/// Most step indices remembered per session (bounded memory on any input; a real conversation
/// has a few hundred).
const SEEN_CAP: usize = 1 << 20;

/// Line-reader state kept across the lines of one file.
#[derive(Debug, Default)]
pub struct State {
    /// `step_index` values read in the current session.
    seen: HashSet<u64>,
    /// Calls waiting for their result, oldest first: their ids.
    waiting: VecDeque<Box<str>>,
    /// Model named by the latest `<USER_SETTINGS_CHANGE>`, and its effort.
    model: Option<Box<str>>,
    effort: Option<Box<str>>,
    /// True after a response that ended the turn, until the next prompt or wake-up.
    settled: bool,
    /// Number of the current session of the file (0 for the first).
    session: usize,
    /// A step of the current session was read.
    any_step: bool,
    /// The current session's id is known (from a checkpoint).
    session_id_known: bool,
}

/// One line. Every field is a borrowed raw value, interpreted where it is used, so a field of
/// an unexpected JSON type never fails the record.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Record<'a> {
    #[serde(borrow)]
    step_index: Option<Raw<'a>>,
    #[serde(borrow)]
    source: Option<Raw<'a>>,
    #[serde(rename = "type", borrow)]
    ty: Option<Raw<'a>>,
    #[serde(borrow)]
    created_at: Option<Raw<'a>>,
    #[serde(borrow)]
    content: Option<Raw<'a>>,
    #[serde(borrow)]
    thinking: Option<Raw<'a>>,
    #[serde(borrow)]
    tool_calls: Option<Raw<'a>>,
    #[serde(borrow)]
    truncated_fields: Option<Raw<'a>>,
}

/// One element of `tool_calls`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct RawCall<'a> {
    #[serde(borrow)]
    name: Option<Raw<'a>>,
    #[serde(borrow)]
    args: Option<Raw<'a>>,
}

impl State {
    /// Reads one complete, non-blank line (`span` excludes the newline) and appends exactly
    /// one entry to `t` (an `Unparsed` entry plus a problem when the line is not a JSON
    /// object). Never changes an entry already pushed.
    pub fn line(&mut self, source: &str, line: usize, span: Span, t: &mut Transcript) {
        let text = &source[span.clone()];
        let rec: Record = match object(text) {
            Ok(r) => r,
            Err(_) => return json::not_an_object(source, line, span, t),
        };
        let ts = jstr(rec.created_at).and_then(|s| parse_timestamp(&s));
        let l = Line {
            source,
            line,
            span,
            ts,
        };
        let index = jcount(rec.step_index);
        if let Some(i) = index {
            if self.seen.contains(&i) {
                self.new_session(&l, t);
            }
            if self.seen.len() < SEEN_CAP {
                self.seen.insert(i);
            }
        }
        self.any_step = true;
        let src = jstr(rec.source).unwrap_or(Cow::Borrowed(""));
        let ty = jstr(rec.ty).unwrap_or(Cow::Borrowed(""));
        let record_type = format!("{src}/{ty}");
        let mut e = match (src.as_ref(), ty.as_ref()) {
            ("USER_EXPLICIT", "USER_INPUT") => {
                self.waiting.clear();
                self.settled = false;
                let mut e = l.entry(Role::Prompt(PromptKind::Typed), &record_type);
                self.user_input(&l, rec.content, &mut e.blocks);
                e
            }
            (_, "USER_INPUT") => {
                let mut e = l.entry(Role::Context, &record_type);
                self.user_input(&l, rec.content, &mut e.blocks);
                e
            }
            ("MODEL", "PLANNER_RESPONSE") => self.response(&l, &rec, index, t),
            ("MODEL", _) => self.result(&l, &rec, &record_type, t),
            ("SYSTEM", "CHECKPOINT") => {
                let mut e = l.entry(Role::CompactBoundary(Box::default()), &record_type);
                push_text(&l, rec.content, &mut e.blocks);
                if !self.session_id_known
                    && let Some(id) = jstr(rec.content).and_then(|c| own_conversation(&c))
                {
                    self.session_id_known = true;
                    if self.session == 0 {
                        t.meta.session_id.get_or_insert(id);
                    } else if let Some(s) = t.meta.sessions.last_mut()
                        && s.id.is_empty()
                    {
                        s.id = id;
                    }
                }
                e
            }
            ("SYSTEM", "SYSTEM_MESSAGE") => {
                let role = if self.settled {
                    self.settled = false;
                    Role::Wake(WakeKind::TaskNotification)
                } else {
                    Role::Context
                };
                let mut e = l.entry(role, &record_type);
                tagged_text(&l, rec.content, "SYSTEM_MESSAGE", &mut e.blocks);
                e
            }
            ("SYSTEM", "ERROR_MESSAGE") => {
                let mut e = l.entry(Role::Model, &record_type);
                push_text(&l, rec.content, &mut e.blocks);
                let text = jstr(rec.content)
                    .map(|s| one_line(&s))
                    .filter(|s| !s.is_empty());
                e.step = Some(Box::new(StepInfo {
                    key: self.key(t),
                    model: self.model.clone(),
                    api_error: Some(text.unwrap_or_else(|| "error".into()).into()),
                    ..StepInfo::default()
                }));
                e
            }
            ("SYSTEM", "EPHEMERAL_MESSAGE" | "CONVERSATION_HISTORY") => {
                let mut e = l.entry(Role::Meta, &record_type);
                push_text(&l, rec.content, &mut e.blocks);
                e
            }
            _ => {
                // Noted once per type (issue 20 item 11); its text is kept.
                t.note_unknown("record type", &record_type, l.line, l.span.clone());
                let role = if src == "SYSTEM" {
                    Role::Meta
                } else {
                    Role::Other
                };
                let mut e = l.entry(role, &record_type);
                push_text(&l, rec.content, &mut e.blocks);
                e
            }
        };
        if let Some(i) = index {
            e.set_uuid(Some(&i.to_string()));
        }
        let cut: Vec<String> = elements(rec.truncated_fields)
            .into_iter()
            .filter_map(|f| jstr(Some(f)).map(Cow::into_owned))
            .collect();
        if !cut.is_empty() {
            e.cut_by_agent = true;
            l.problem(
                t,
                Severity::Information,
                format!(
                    "the agent cut this step's {} before writing it (`truncated_fields`): the \
                     text here is not complete",
                    cut.join(" and ")
                ),
            );
        }
        t.entries.push(e);
    }

    /// A `step_index` read again: the next conversation of a joined file starts here.
    fn new_session(&mut self, l: &Line, t: &mut Transcript) {
        if !self.any_step {
            return;
        }
        self.seen.clear();
        self.waiting.clear();
        self.settled = false;
        self.session += 1;
        self.session_id_known = false;
        t.meta.sessions.push(SessionStart {
            entry: t.entries.len(),
            line: l.line,
            id: String::new(),
            parent: None,
        });
    }

    /// A step key unique in the file: `agy-<entry index>`.
    fn key(&self, t: &Transcript) -> Box<str> {
        format!("agy-{}", t.entries.len()).into()
    }

    /// The blocks of a `USER_INPUT` `content`: the `<USER_REQUEST>` text (the whole content
    /// when there is no such tag) and one `context:<TAG>` block per section after it. Reads
    /// the model from `<USER_SETTINGS_CHANGE>`.
    fn user_input(&mut self, l: &Line, content: Option<Raw<'_>>, out: &mut ThinVec<Block>) {
        let Some(c) = content.and_then(|c| l.str_of(c)) else {
            return;
        };
        let raw = &l.source[c.raw.clone()];
        let base = c.raw.start;
        const OPEN: &str = "<USER_REQUEST>";
        const CLOSE: &str = "</USER_REQUEST>";
        let (prompt, rest) = match raw.find(OPEN) {
            Some(a) => {
                let from = a + OPEN.len();
                match raw[from..].rfind(CLOSE) {
                    Some(b) => (from..from + b, from + b + CLOSE.len()),
                    None => (from..raw.len(), raw.len()),
                }
            }
            None => (0..raw.len(), raw.len()),
        };
        let p = trim_raw(raw, prompt);
        if !p.is_empty() {
            let span = base + p.start..base + p.end;
            out.push(Block {
                span: span.clone(),
                kind: BlockKind::Text {
                    text: Str { raw: span },
                },
            });
        }
        // Context sections: `<TAG>…</TAG>` after the request.
        let mut at = rest;
        while let Some(open) = raw[at..].find('<').map(|k| at + k) {
            let Some(gt) = raw[open..].find('>').map(|k| open + k) else {
                break;
            };
            let tag = &raw[open + 1..gt];
            if tag.is_empty()
                || tag.starts_with('/')
                || !tag.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
            {
                at = open + 1;
                continue;
            }
            let close = format!("</{tag}>");
            let end = raw[gt..]
                .find(&close)
                .map_or(raw.len(), |k| gt + k + close.len());
            let span = base + open..base + end;
            if tag == "USER_SETTINGS_CHANGE"
                && let Some((model, effort)) =
                    model_selection(&json_string::decode(&raw[open..end]))
            {
                self.model = Some(model.into());
                self.effort = effort.map(Into::into);
            }
            out.push(Block {
                span,
                kind: BlockKind::Other {
                    block_type: format!("context:{tag}").into(),
                },
            });
            at = end;
        }
    }

    /// A `PLANNER_RESPONSE`: thinking, text and tool calls of one model response.
    fn response(
        &mut self,
        l: &Line,
        rec: &Record,
        index: Option<u64>,
        t: &mut Transcript,
    ) -> Entry {
        let mut e = l.entry(Role::Model, "MODEL/PLANNER_RESPONSE");
        if let Some(r) = rec.thinking
            && let Some(s) = l.str_of(r).filter(|s| !s.is_empty())
        {
            e.blocks.push(Block {
                span: l.raw_span(r),
                kind: BlockKind::Thinking {
                    text: s,
                    encrypted: false,
                },
            });
        }
        push_text(l, rec.content, &mut e.blocks);
        let calls = elements(rec.tool_calls);
        let step_name = index.map_or_else(|| format!("line-{}", l.line + 1), |i| i.to_string());
        let prefix = if self.session == 0 {
            String::new()
        } else {
            format!("s{}/", self.session + 1)
        };
        for (n, c) in calls.iter().enumerate() {
            let span = l.raw_span(c);
            let call = object::<RawCall>(c.get()).unwrap_or_default();
            let name = jstr(call.name).unwrap_or_default();
            let id: Box<str> = format!("{prefix}step-{step_name}.{n}").into();
            let args = members(call.args);
            let arg = |k: &str| {
                args.iter()
                    .find(|(n, _)| n == k)
                    .and_then(|(_, v)| inner_string(v))
            };
            let summary = ["CommandLine", "toolSummary", "toolAction"]
                .iter()
                .find_map(|k| arg(k).filter(|s| !s.trim().is_empty()))
                .map(|s| one_line(&s))
                .unwrap_or_else(|| call_summary(call.args, None));
            if name == "run_command"
                && t.meta.cwd.is_none()
                && let Some(cwd) = arg("Cwd").filter(|c| !c.is_empty() && !is_scratch(c))
            {
                t.meta.cwd = Some(cwd);
            }
            let subagent = (name == "invoke_subagent").then(|| spawn_of(arg("Subagents")));
            self.waiting.push_back(id.clone());
            e.blocks.push(Block {
                span: span.clone(),
                kind: BlockKind::ToolUse(Box::new(ToolUse {
                    id,
                    name: name.as_ref().into(),
                    input: call.args.map_or(span.start..span.start, |a| l.raw_span(a)),
                    summary,
                    subagent,
                })),
            });
        }
        let ends = calls.is_empty();
        if ends {
            self.settled = true;
        }
        if let Some(m) = &self.model {
            t.meta.model.get_or_insert_with(|| m.to_string());
        }
        e.step = Some(Box::new(StepInfo {
            key: self.key(t),
            model: self.model.clone(),
            stop: Some(if ends {
                StopReason::EndTurn
            } else {
                StopReason::ToolUse
            }),
            effort: self.effort.clone(),
            ..StepInfo::default()
        }));
        e
    }

    /// A `MODEL/<TYPE>` step other than a response: the result of the oldest waiting call.
    fn result(&mut self, l: &Line, rec: &Record, record_type: &str, t: &mut Transcript) -> Entry {
        let mut e = l.entry(Role::ToolResults, record_type);
        let id = match self.waiting.pop_front() {
            Some(id) => id,
            None => {
                l.problem(
                    t,
                    Severity::Hint,
                    "tool result with no tool call waiting for it (Antigravity pairs them by \
                     order)"
                        .to_string(),
                );
                "".into()
            }
        };
        let text = jstr(rec.content).unwrap_or_default();
        let content = rec
            .content
            .map_or(l.span.start..l.span.start, |c| l.raw_span(c));
        let summary = text
            .lines()
            .map(str::trim)
            .find(|s| {
                !s.is_empty() && !s.starts_with("Created At:") && !s.starts_with("Completed At:")
            })
            .map(one_line)
            .unwrap_or_default();
        let subagent = child_ids(&text)
            .into_iter()
            .next()
            .map(|id| SubagentResult {
                agent_id: Some(id),
                ..SubagentResult::default()
            });
        if t.meta.cwd.is_none()
            && let Some(ws) = workspace(&text)
        {
            t.meta.cwd = Some(ws);
        }
        e.blocks.push(Block {
            span: content.clone(),
            kind: BlockKind::ToolResult(Box::new(ToolResult {
                tool_use_id: id,
                is_error: text.contains("The command failed"),
                content_len: content.len(),
                content,
                summary,
                images: Vec::new(),
                subagent,
            })),
        });
        e
    }
}

/// True when one record is an Antigravity step: `step_index`, `source` and a `type` (no other
/// agent writes `step_index`), without the Claude Code envelope or a Codex `payload`.
pub fn detect(p: &super::agents::Probe) -> bool {
    !p.claude_envelope()
        && !p.val("payload")
        && p.has("step_index")
        && p.has("source")
        && p.ty().is_some()
}

impl super::agents::LineReader for State {
    fn line(&mut self, source: &str, line: usize, span: Span, t: &mut Transcript) {
        State::line(self, source, line, span, t);
    }
}

/// The conversation id of a transcript at
/// `<brain>/<conversation>/.system_generated/logs/transcript.jsonl`: the session id (the file
/// names none itself). `None` for any other path.
pub fn conversation_of(path: &Path) -> Option<String> {
    if path.file_name()? != "transcript.jsonl" {
        return None;
    }
    let logs = path.parent()?;
    let generated = logs.parent()?;
    if logs.file_name()? != "logs" || generated.file_name()? != ".system_generated" {
        return None;
    }
    let conv = generated.parent()?;
    let id = conv.file_name()?.to_str()?;
    (!id.is_empty()).then(|| id.to_string())
}

/// The workspace the conversation whose transcript is at `path` was started in, from the
/// agent's prompt history beside its `brain/` folder (`<store>/history.jsonl`, lines
/// `{"conversationId", "workspace", …}`; the last line for the conversation wins, as a
/// session can move). The transcript itself records only the agent's scratch folder as a
/// command's `Cwd`. `None` when the path is no conversation transcript, the history is
/// missing, larger than 16 MiB, or has no line for it yet (it is written lazily).
pub fn workspace_of(path: &Path) -> Option<String> {
    #[derive(Deserialize)]
    struct Line {
        #[serde(rename = "conversationId")]
        conversation_id: Option<String>,
        workspace: Option<String>,
    }
    let conv = conversation_of(path)?;
    let history = path.ancestors().nth(5)?.join("history.jsonl");
    let md = std::fs::metadata(&history).ok()?;
    if !md.is_file() || md.len() > 16 << 20 {
        return None;
    }
    let text = std::fs::read(&history).ok()?;
    let text = String::from_utf8_lossy(&text);
    // The last line for it: read from the end.
    text.lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Line>(l).ok())
        .filter(|l| l.conversation_id.as_deref() == Some(conv.as_str()))
        .find_map(|l| l.workspace.filter(|w| !w.is_empty()))
}

/// True for `<brain>/<conversation>/.system_generated/logs/transcript_full.jsonl`, the
/// unfiltered copy of a conversation beside its `transcript.jsonl`: no session of its own
/// (the session index leaves it out of its list).
pub fn is_unfiltered_view(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n == "transcript_full.jsonl")
        && conversation_of(&path.with_file_name("transcript.jsonl")).is_some()
}

/// The transcript of conversation `id` beside the conversation whose transcript is `main`
/// (`<brain>/<id>/.system_generated/logs/transcript.jsonl`).
fn sibling(main: &Path, id: &str) -> Option<PathBuf> {
    conversation_of(main)?;
    let brain = main.ancestors().nth(4)?;
    Some(
        brain
            .join(id)
            .join(".system_generated/logs/transcript.jsonl"),
    )
}

/// The sub-agent conversations of the conversation whose transcript is `main`: those of
/// `child_ids` (the conversation ids its `INVOKE_SUBAGENT` results name) whose transcript lies
/// in the same `brain/` folder, sorted by path. A child file does not name its parent, so
/// there is no way back from one ([`crate::formats::agents::SessionLayout::main_of`] gives
/// `None`).
pub fn children(main: &Path, child_ids: &[&str]) -> Vec<crate::model::SubagentFile> {
    let mut out: Vec<crate::model::SubagentFile> = child_ids
        .iter()
        .filter(|id| {
            !id.is_empty()
                && !id.contains(['/', '\\'])
                && **id != "."
                && **id != ".."
                && conversation_of(main).as_deref() != Some(**id)
        })
        .filter_map(|id| {
            let path = sibling(main, id)?;
            path.is_file().then(|| crate::model::SubagentFile {
                agent_id: id.to_string(),
                path,
                tool_use_id: None,
                description: None,
                agent_type: None,
                is_compaction: false,
                is_warmup: false,
            })
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup_by(|a, b| a.path == b.path);
    out
}

/// A `Text` block for a non-empty string value.
fn push_text(l: &Line, r: Option<Raw<'_>>, out: &mut ThinVec<Block>) {
    if let Some(r) = r
        && let Some(s) = l.str_of(r).filter(|s| !s.is_empty())
    {
        out.push(Block {
            span: l.raw_span(r),
            kind: BlockKind::Text { text: s },
        });
    }
}

/// A `Text` block for the text inside `<TAG>…</TAG>` of a string value, trimmed (the whole
/// string when the tag is missing): a `SYSTEM_MESSAGE`'s notice without its preamble.
fn tagged_text(l: &Line, r: Option<Raw<'_>>, tag: &str, out: &mut ThinVec<Block>) {
    let Some(c) = r.and_then(|r| l.str_of(r)) else {
        return;
    };
    let raw = &l.source[c.raw.clone()];
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    // The last opening tag before the last closing one: the preamble names the tag too ("The
    // following is a <SYSTEM_MESSAGE> not actually sent by the user").
    let end = raw.rfind(&close).unwrap_or(raw.len());
    let range = match raw[..end].rfind(&open) {
        Some(a) => a + open.len()..end,
        None => 0..raw.len(),
    };
    let t = trim_raw(raw, range);
    if !t.is_empty() {
        let span = c.raw.start + t.start..c.raw.start + t.end;
        out.push(Block {
            span: span.clone(),
            kind: BlockKind::Text {
                text: Str { raw: span },
            },
        });
    }
}

/// `range` of the raw (escaped) string contents `raw`, without leading and trailing
/// whitespace, whether written as itself or as an escape (`\n`, `\r`, `\t`). Never cuts an
/// escape in two.
fn trim_raw(raw: &str, range: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let (mut a, mut b) = (range.start, range.end.min(raw.len()));
    let bytes = raw.as_bytes();
    while a < b {
        match bytes[a] {
            b' ' => a += 1,
            b'\\' if a + 1 < b && matches!(bytes[a + 1], b'n' | b'r' | b't') => a += 2,
            _ => break,
        }
    }
    while a < b {
        if bytes[b - 1] == b' ' {
            b -= 1;
            continue;
        }
        if b - a >= 2 && matches!(bytes[b - 1], b'n' | b'r' | b't') && bytes[b - 2] == b'\\' {
            // The backslash starts an escape only when an even number of backslashes
            // precede it.
            let run = bytes[a..b - 2]
                .iter()
                .rev()
                .take_while(|&&c| c == b'\\')
                .count();
            if run % 2 == 0 {
                b -= 2;
                continue;
            }
        }
        break;
    }
    a..b
}

/// The model and effort a `<USER_SETTINGS_CHANGE>` section switches to: "changed setting
/// `Model Selection` from None to Gemini 3.1 Pro (High). No need…" → (`Gemini 3.1 Pro`,
/// `High`). `None` for another setting.
fn model_selection(section: &str) -> Option<(String, Option<String>)> {
    let at = section.find("Model Selection")?;
    let rest = &section[at..];
    let from = rest.find(" from ")?;
    let rest = &rest[from + " from ".len()..];
    let to = rest.find(" to ")?;
    let rest = &rest[to + " to ".len()..];
    let end = [rest.find(". "), rest.find('\n'), rest.find('<')]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(rest.len());
    let name = rest[..end].trim().trim_end_matches('.').trim();
    if name.is_empty() {
        return None;
    }
    if let Some(open) = name.rfind(" (")
        && name.ends_with(')')
    {
        let model = name[..open].trim();
        let effort = name[open + 2..name.len() - 1].trim();
        if !model.is_empty() {
            return Some((
                model.to_string(),
                (!effort.is_empty()).then(|| effort.to_string()),
            ));
        }
    }
    Some((name.to_string(), None))
}

/// A tool argument: a string holding a JSON value (`"\"echo hello\""` → `echo hello`); a
/// string that holds no JSON string is taken as it is.
fn inner_string(v: Raw<'_>) -> Option<String> {
    let outer = jstr(Some(v))?;
    Some(match serde_json::from_str::<String>(&outer) {
        Ok(s) => s,
        Err(_) => outer.into_owned(),
    })
}

/// The first sub-agent of an `invoke_subagent` call's `Subagents` (a JSON array in a string):
/// its `Role` and `TypeName`.
fn spawn_of(subagents: Option<String>) -> SubagentSpawn {
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Spec {
        #[serde(rename = "Role")]
        role: Option<String>,
        #[serde(rename = "TypeName")]
        type_name: Option<String>,
    }
    let first = subagents
        .and_then(|s| serde_json::from_str::<Vec<Spec>>(&s).ok())
        .and_then(|v| v.into_iter().next())
        .unwrap_or_default();
    SubagentSpawn {
        description: first.role.map(|r| one_line(&r)),
        agent_type: first.type_name,
    }
}

/// The `"conversationId"` values an `INVOKE_SUBAGENT` result lists (its children), in order.
fn child_ids(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(k) = text[at..].find("\"conversationId\"") {
        at += k + "\"conversationId\"".len();
        let rest = text[at..].trim_start();
        let Some(rest) = rest.strip_prefix(':') else {
            continue;
        };
        let rest = rest.trim_start();
        if let Some(rest) = rest.strip_prefix('"')
            && let Some(end) = rest.find('"')
        {
            out.push(rest[..end].to_string());
        }
    }
    out
}

/// The first `workspaceUris` element of an `INVOKE_SUBAGENT` result, as a path.
fn workspace(text: &str) -> Option<String> {
    let k = text.find("\"workspaceUris\"")?;
    let rest = &text[k..];
    let q = rest.find("\"file://")?;
    let rest = &rest[q + 1..];
    let end = rest.find('"')?;
    let path = rest[..end].strip_prefix("file://")?;
    (!path.is_empty()).then(|| path.to_string())
}

/// True for the agent's own sandbox folder (`…/.gemini/antigravity-cli/scratch`), which is
/// no project.
fn is_scratch(path: &str) -> bool {
    path.contains(".gemini/antigravity") && path.contains("/scratch")
}

/// The conversation id a checkpoint's `# Conversation Logs` section names:
/// `…/brain/<id>/.system_generated/logs/transcript.jsonl`.
fn own_conversation(text: &str) -> Option<String> {
    let logs = &text[text.find("# Conversation Logs")?..];
    let k = logs.find("/brain/")?;
    let rest = &logs[k + "/brain/".len()..];
    let end = rest.find('/')?;
    let id = &rest[..end];
    (!id.is_empty() && id.len() <= 128 && !id.contains(char::is_whitespace)).then(|| id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimming_keeps_escapes_whole() {
        let raw = r"\nReply with: ok\n";
        assert_eq!(&raw[trim_raw(raw, 0..raw.len())], "Reply with: ok");
        // `\\n` is a backslash and an `n`: kept.
        let raw = r"a\\n";
        assert_eq!(&raw[trim_raw(raw, 0..raw.len())], r"a\\n");
        let raw = r"a\\\n ";
        assert_eq!(&raw[trim_raw(raw, 0..raw.len())], r"a\\");
        let raw = r"\n\t ";
        assert_eq!(trim_raw(raw, 0..raw.len()), 5..5);
    }

    #[test]
    fn model_selection_names_model_and_effort() {
        let s = "<USER_SETTINGS_CHANGE>\nThe user changed setting `Model Selection` from None \
                 to Gemini 3.1 Pro (High). No need to comment on this change.\n\
                 </USER_SETTINGS_CHANGE>";
        assert_eq!(
            model_selection(s),
            Some(("Gemini 3.1 Pro".into(), Some("High".into())))
        );
        let s = "changed setting `Model Selection` from Claude Sonnet 4.6 (Thinking) to \
                 GPT-OSS 120B (Medium). No need";
        assert_eq!(
            model_selection(s),
            Some(("GPT-OSS 120B".into(), Some("Medium".into())))
        );
        assert_eq!(
            model_selection("`Model Selection` from None to Foo\n"),
            Some(("Foo".into(), None))
        );
        assert_eq!(model_selection("changed setting `Theme` from a to b"), None);
    }

    #[test]
    fn tool_arguments_are_decoded_twice() {
        let r = serde_json::value::RawValue::from_string(r#""\"echo hello\"""#.into()).unwrap();
        assert_eq!(inner_string(&r).as_deref(), Some("echo hello"));
        let r = serde_json::value::RawValue::from_string(r#""500""#.into()).unwrap();
        assert_eq!(inner_string(&r).as_deref(), Some("500"));
        let r = serde_json::value::RawValue::from_string(r#""plain""#.into()).unwrap();
        assert_eq!(inner_string(&r).as_deref(), Some("plain"));
    }

    #[test]
    fn checkpoints_and_results_name_conversations() {
        let cp = "{{ CHECKPOINT 0 }}\n# Subagents\n\"logAbsoluteUri\": \"file:///u/.gemini/\
                  antigravity-cli/brain/child-1/x\"\n# Conversation Logs\n\n- /Users/i/.gemini/\
                  antigravity-cli/brain/b15bc321-475b/.system_generated/logs/transcript.jsonl\n";
        assert_eq!(own_conversation(cp).as_deref(), Some("b15bc321-475b"));
        assert_eq!(own_conversation("# Resuming from a compaction"), None);
        let r = "Created the following subagents:\n{\n  \"conversationId\":  \"c-1\",\n  \
                 \"workspaceUris\":  [\n    \"file:///tmp/ws\"\n  ]\n}\n{\"conversationId\": \"c-2\"}";
        assert_eq!(child_ids(r), vec!["c-1".to_string(), "c-2".to_string()]);
        assert_eq!(workspace(r).as_deref(), Some("/tmp/ws"));
        assert!(is_scratch("/Users/i/.gemini/antigravity-cli/scratch"));
        assert!(!is_scratch("/Users/i/project"));
    }
}
