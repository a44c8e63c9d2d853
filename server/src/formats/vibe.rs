//! Mistral Vibe sessions (FORMATS-MORE-AGENTS.md "mistral-vibe"; issue 21 item 5).
//!
//! `~/.vibe/logs/session/<session>/messages.jsonl` (or `$VIBE_HOME/logs/session`): one
//! OpenAI-style chat message per line, written by Python's `json.dumps`:
//! * `{"role":"user","content","injected","message_id"}`: a prompt; `injected: true` is
//!   context the agent added (a compaction summary, `!` shell output), not a prompt. A
//!   compaction summary (`You are continuing a trajectory after a context compaction…`) is a
//!   compact boundary carrying its text;
//! * `{"role":"assistant","content","reasoning_content","tool_calls":[{"id","function":{"name",
//!   "arguments"}}],"message_id"}`: one model response (reasoning is thinking); one without
//!   tool calls ends the turn;
//! * `{"role":"tool","content","name","tool_call_id"}`: a tool result, paired by id;
//! * `{"role":"system",…}`: context.
//!
//! The file records no timestamps, model or usage (the sibling `meta.json` may: read by
//! [`apply_meta`]): those figures stay unknown, never 0. A recording that joins a session and
//! its rewound fork repeats a user `message_id`: a prompt whose id was read before starts
//! another session of the file. Sub-agents run in `<session>/agents/<name>_<ts>_<id>/
//! messages.jsonl` ([`children`]), spawned by `task` calls.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::json::{self, Line, Raw, call_summary, elements, jbool, jstr, object, one_line};
use thin_vec::ThinVec;

use crate::model::{
    Block, BlockKind, PromptKind, Role, Span, StepInfo, StopReason, Str, SubagentFile, ToolResult,
    ToolUse, Transcript,
};

/// The opening words of the user message Vibe writes after compacting the context.
pub const COMPACTION_PREFIX: &str = "You are continuing a trajectory after a context compaction";

/// Line-reader state kept across the lines of one file.
#[derive(Debug, Default)]
pub struct State {
    /// `message_id`s of the user messages read in the current session.
    users: HashSet<Box<str>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Record<'a> {
    #[serde(borrow)]
    role: Option<Raw<'a>>,
    #[serde(borrow)]
    content: Option<Raw<'a>>,
    #[serde(borrow)]
    injected: Option<Raw<'a>>,
    #[serde(borrow)]
    message_id: Option<Raw<'a>>,
    #[serde(borrow)]
    reasoning_content: Option<Raw<'a>>,
    #[serde(borrow)]
    tool_calls: Option<Raw<'a>>,
    #[serde(borrow)]
    tool_call_id: Option<Raw<'a>>,
    #[serde(borrow)]
    name: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Call<'a> {
    #[serde(borrow)]
    id: Option<Raw<'a>>,
    #[serde(borrow)]
    function: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Function<'a> {
    #[serde(borrow)]
    name: Option<Raw<'a>>,
    #[serde(borrow)]
    arguments: Option<Raw<'a>>,
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
        let l = Line {
            source,
            line,
            span,
            ts: None,
        };
        let role = jstr(rec.role).unwrap_or(Cow::Borrowed(""));
        let id = jstr(rec.message_id);
        let injected = jbool(rec.injected) == Some(true);
        let mut e = match role.as_ref() {
            "user" if injected => {
                let body = jstr(rec.content).unwrap_or_default();
                let mut e = if body.trim_start().starts_with(COMPACTION_PREFIX) {
                    l.entry(
                        Role::CompactBoundary(Box::default()),
                        "user/injected/compaction",
                    )
                } else {
                    l.entry(Role::Context, "user/injected")
                };
                push_text(&l, rec.content, &mut e.blocks);
                e
            }
            "user" => {
                if let Some(id) = id.as_deref() {
                    if self.users.contains(id) {
                        // A rewound fork joined after its session (FORMATS-MORE-AGENTS.md):
                        // another session of the file.
                        t.meta.sessions.push(crate::model::SessionStart {
                            entry: t.entries.len(),
                            line,
                            id: String::new(),
                            parent: None,
                        });
                        self.users.clear();
                    }
                    self.users.insert(id.into());
                }
                let mut e = l.entry(Role::Prompt(PromptKind::Typed), "user");
                push_text(&l, rec.content, &mut e.blocks);
                e
            }
            "assistant" => {
                let mut e = l.entry(Role::Model, "assistant");
                if let Some(r) = rec.reasoning_content
                    && let Some(text) = l.str_of(r).filter(|s| !s.is_empty())
                {
                    e.blocks.push(Block {
                        span: l.raw_span(r),
                        kind: BlockKind::Thinking {
                            text,
                            encrypted: false,
                        },
                    });
                }
                push_text(&l, rec.content, &mut e.blocks);
                let mut calls = false;
                for c in elements(rec.tool_calls) {
                    calls = true;
                    e.blocks.push(tool_call(&l, c));
                }
                let key: Box<str> = match id.as_deref() {
                    Some(id) => format!("vibe-{id}").into(),
                    None => format!("vibe-line-{line}").into(),
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
            "tool" => {
                let mut e = l.entry(Role::ToolResults, "tool");
                e.blocks.push(tool_result(&l, &rec));
                e
            }
            "system" => {
                let mut e = l.entry(Role::Context, "system");
                push_text(&l, rec.content, &mut e.blocks);
                e
            }
            "" => l.entry(Role::Other, "unknown"),
            other => {
                t.note_unknown("message role", other, l.line, l.span.clone());
                l.entry(Role::Other, other)
            }
        };
        e.set_uuid(id.as_deref());
        t.entries.push(e);
    }
}

/// A `Text` block for a non-empty string value.
fn push_text(l: &Line, r: Option<Raw<'_>>, out: &mut ThinVec<Block>) {
    if let Some(r) = r
        && let Some(text) = l.str_of(r).filter(|s| !s.is_empty())
    {
        out.push(Block {
            span: l.raw_span(r),
            kind: BlockKind::Text { text },
        });
    }
}

/// One `tool_calls[]` item: its id, `function.name`, and `function.arguments` (a string holding
/// a JSON object) as the input.
fn tool_call(l: &Line, c: Raw<'_>) -> Block {
    let span = l.raw_span(c);
    let call: Call = object(c.get()).unwrap_or_default();
    let f: Function = call
        .function
        .and_then(|f| object(f.get()).ok())
        .unwrap_or_default();
    let name: Box<str> = jstr(f.name).unwrap_or_default().as_ref().into();
    // `task {task, agent}` runs a sub-agent (FORMATS-MORE-AGENTS.md, scenario 3-1).
    let subagent = (&*name == "task").then(|| {
        let args: serde_json::Value = jstr(f.arguments)
            .and_then(|a| serde_json::from_str(&a).ok())
            .unwrap_or_default();
        let field = |k: &str| args.get(k).and_then(|v| v.as_str()).map(one_line);
        crate::model::SubagentSpawn {
            description: field("task"),
            agent_type: field("agent"),
        }
    });
    Block {
        span: span.clone(),
        kind: BlockKind::ToolUse(Box::new(ToolUse {
            id: jstr(call.id).unwrap_or_default().as_ref().into(),
            input: f
                .arguments
                .map_or(span.start..span.start, |a| l.raw_span(a)),
            summary: call_summary(f.arguments, None),
            subagent,
            name,
        })),
    }
}

/// The result block of a `tool` message: its content's first line; an error when the bash
/// tool's `returncode:` line says other than 0.
fn tool_result(l: &Line, rec: &Record) -> Block {
    let empty = l.span.start..l.span.start;
    let content = rec.content.map_or(empty, |c| match l.str_of(c) {
        Some(Str { raw }) => raw,
        None => l.raw_span(c),
    });
    let body = jstr(rec.content).unwrap_or_default();
    let is_error = body
        .lines()
        .rev()
        .find_map(|x| x.strip_prefix("returncode: "))
        .is_some_and(|code| code.trim() != "0");
    let summary = summary_of(&body, jstr(rec.name).as_deref());
    Block {
        span: content.clone(),
        kind: BlockKind::ToolResult(Box::new(ToolResult {
            tool_use_id: jstr(rec.tool_call_id).unwrap_or_default().as_ref().into(),
            is_error,
            content_len: content.len(),
            content,
            summary,
            images: Vec::new(),
            subagent: None,
        })),
    }
}

/// The first telling line of a tool result: for the bash tool's `command: …\nstdout: …` the
/// first stdout line (else stderr's, else the return code), else the first line.
fn summary_of(body: &str, tool: Option<&str>) -> String {
    if tool == Some("bash") {
        let field = |name: &str| -> Option<String> {
            let at = body.find(&format!("\n{name}: "))? + name.len() + 3;
            let rest = &body[at..];
            let end = ["\nstdout: ", "\nstderr: ", "\nreturncode: "]
                .iter()
                .filter_map(|m| rest.find(m))
                .min()
                .unwrap_or(rest.len());
            let s = one_line(&rest[..end]);
            (!s.is_empty()).then_some(s)
        };
        if let Some(s) = field("stdout").or_else(|| field("stderr")) {
            return s;
        }
        if let Some(s) = field("returncode") {
            return format!("returncode {s}");
        }
    }
    body.strip_prefix("response: ")
        .map_or_else(|| one_line(body), one_line)
}

/// Detection (agent registry): a message object with no `type`, a chat `role` (`user`,
/// `assistant`, `tool`, `system`) and Vibe's `injected` flag.
pub fn detect(p: &super::agents::Probe) -> bool {
    !p.has("type")
        && p.has("injected")
        && matches!(
            p.str("role").as_deref(),
            Some("user" | "assistant" | "tool" | "system")
        )
}

impl super::agents::LineReader for State {
    fn line(&mut self, source: &str, line: usize, span: Span, t: &mut Transcript) {
        State::line(self, source, line, span, t);
    }
}

/// The sub-agent files of the session whose transcript is `main`
/// (`<session>/messages.jsonl` -> `<session>/agents/<name>_<ts>_<id>/messages.jsonl`), by
/// path; `agent_id` is the folder name, `agent_type` its `<name>` part. Missing folders give
/// none.
pub fn children(main: &Path, _ids: &[&str]) -> Vec<SubagentFile> {
    if main.file_name().is_none_or(|n| n != "messages.jsonl") {
        return Vec::new();
    }
    let Some(dir) = main.parent() else {
        return Vec::new();
    };
    let Ok(rd) = std::fs::read_dir(dir.join("agents")) else {
        return Vec::new();
    };
    let mut out: Vec<SubagentFile> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let path = e.path().join("messages.jsonl");
            path.is_file().then(|| SubagentFile {
                agent_type: name.split('_').next().map(str::to_string),
                agent_id: name,
                path,
                tool_use_id: None,
                description: None,
                is_compaction: false,
                is_warmup: false,
            })
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The session transcript of a sub-agent file `<session>/agents/<name>/messages.jsonl` ->
/// `<session>/messages.jsonl`, from the path alone.
pub fn main_of(path: &Path) -> Option<PathBuf> {
    if path.file_name()? != "messages.jsonl" {
        return None;
    }
    let agents = path.parent()?.parent()?;
    if agents.file_name()? != "agents" {
        return None;
    }
    Some(agents.parent()?.join("messages.jsonl"))
}

/// `meta.json` beside a session's `messages.jsonl`, rewritten by Vibe after every turn
/// (FORMATS-MORE-AGENTS.md; Irrlicht's `vibe/sidecar.go`): `{"environment":
/// {"working_directory"}, "config": {"active_model"}, "stats": {"session_prompt_tokens",
/// "session_completion_tokens", "context_tokens"}, …}`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Meta {
    session_id: Option<String>,
    title: Option<String>,
    environment: MetaEnvironment,
    config: MetaConfig,
    stats: Option<MetaStats>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MetaEnvironment {
    working_directory: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MetaConfig {
    active_model: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MetaStats {
    session_prompt_tokens: Option<u64>,
    session_completion_tokens: Option<u64>,
}

/// Largest `meta.json` read.
const META_MAX: u64 = 16 * 1024 * 1024;

/// What `meta.json` beside the session file at `path` adds, when it exists and is a JSON
/// object: the session id and title when given, the cwd (`environment.working_directory`), the
/// model (`config.active_model`), and the session's usage (`stats.session_prompt_tokens` as
/// input, `session_completion_tokens` as output, cumulative for the session: the session's
/// recorded usage, [`crate::model::SessionMeta::recorded_usage`]). Returns true when one was
/// read; anything unreadable leaves `t` as it is (the file is optional).
pub fn apply_meta(t: &mut Transcript, path: &Path) -> bool {
    if t.format() != crate::model::Format::MistralVibe {
        return false;
    }
    let Some(dir) = path.parent() else {
        return false;
    };
    let Ok((bytes, _)) = crate::source::load::read_bytes(&dir.join("meta.json"), 0, META_MAX)
    else {
        return false;
    };
    let Ok(m) = serde_json::from_slice::<Meta>(&bytes) else {
        return false;
    };
    if let Some(id) = m.session_id.filter(|v| !v.is_empty()) {
        t.meta.session_id = Some(id);
    }
    if let Some(cwd) = m.environment.working_directory.filter(|v| !v.is_empty()) {
        t.meta.cwd = Some(cwd);
    }
    let model = m.config.active_model.filter(|v| !v.is_empty());
    if let Some(model) = &model {
        t.meta.model = Some(model.clone());
    }
    if let Some(title) = m.title.filter(|v| !v.trim().is_empty()) {
        t.meta.title = Some(one_line(&title));
        t.meta.title_source = Some(crate::model::TitleSource::SessionName);
    }
    if let Some(st) = m.stats
        && (st.session_prompt_tokens.is_some() || st.session_completion_tokens.is_some())
    {
        t.meta.recorded_usage = vec![crate::model::ModelUsage {
            model: model.unwrap_or_default(),
            requests: None,
            usage: crate::model::Usage {
                input: st.session_prompt_tokens.unwrap_or(0),
                output: st.session_completion_tokens.unwrap_or(0),
                ..Default::default()
            },
        }];
    }
    true
}
