//! GitHub Copilot CLI event logs (FORMATS-2026 §4; issue 10).
//!
//! `~/.copilot/session-state/<uuid>/events.jsonl`: one event per line, `{"type","data","id",
//! "timestamp","parentId"}`, `type` dotted (`session.start`, `assistant.message`, …):
//! * `session.start {sessionId, copilotVersion, context {cwd, branch}}` and `session.resume`
//!   are context; `system.message` (the system prompt) too;
//! * `user.message {content, transformedContent}` is a prompt (its typed `content`; the
//!   transformed text the model saw stays in the record, shown by hover), or steering when it
//!   arrives while an assistant turn is open;
//! * `assistant.message {content, reasoningText, toolRequests, phase, outputTokens, model,
//!   parentToolCallId}` is one model response: blocks thinking (`reasoningText`), text
//!   (`content`) and one tool call per `toolRequests` element; `phase: "final_answer"` is the
//!   agent's own statement that its text is the answer ([`StepInfo::declares_final`]);
//!   `assistant.reasoning {content}` is thinking of the same step;
//! * `assistant.turn_start` / `assistant.turn_end` bound one model round (not a user turn):
//!   records between them share a step key; at `turn_end` a response that requested no tool
//!   ended the round (`EndTurn`);
//! * `tool.execution_complete {toolCallId, success, result {content}}` is the tool result,
//!   paired by `toolCallId`; `tool.execution_start` is bookkeeping;
//! * `subagent.started {toolCallId, agentName, agentDescription}` marks that call as spawning
//!   a sub-agent, whose own records carry `parentToolCallId` (sidechain, `agentId` = that id);
//!   `subagent.completed {totalToolCalls, totalTokens, durationMs}` gives its totals;
//! * `user.message {source: "agent-…"}` is a sub-agent's task from the agent that spawned it
//!   (context, never a prompt or a queued message); `session.task_complete {summary}` ends an
//!   autopilot task and its summary is the turn's answer (a declared final answer);
//! * `abort` is an interruption; `session.truncation` / `session.compaction_complete` are
//!   compact boundaries;
//! * `session.shutdown.modelMetrics {<model>: {requests, usage {inputTokens, outputTokens,
//!   cacheReadTokens, cacheWriteTokens, reasoningTokens}}}` is the session's usage
//!   ([`crate::model::SessionMeta::recorded_usage`]); per-message `outputTokens` give the
//!   steps' output counts only, so nothing is counted twice. `inputTokens` includes cached
//!   input: the uncached part is `inputTokens − cacheReadTokens − cacheWriteTokens`;
//! * everything else (`session.model_change`, `subagent.selected`, `hook.start` / `hook.end`,
//!   `session.usage_checkpoint`, `session.info`, …) is bookkeeping (`Meta`).
//!
//! An event that repeats an earlier line byte for byte, same `id` included (a log copied twice
//! into one file), is kept as `Meta` with a hint, and read once.
//!
//! A `user.message` with an empty `content` and a non-empty `transformedContent` was typed by
//! nobody: it is the CLI's autopilot telling the agent to go on, a wake-up
//! ([`WakeKind::Continuation`]) that shows the nudge.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use super::json::{
    self, Line, Raw, call_summary, elements, jbool, jcount, jstr, members, object, one_line,
};
use thin_vec::ThinVec;

use crate::model::{
    Block, BlockKind, Entry, ModelUsage, PromptKind, Role, Severity, Span, StepInfo, StopReason,
    Str, SubagentResult, SubagentSpawn, ToolResult, ToolUse, Transcript, Usage, WakeKind,
    parse_timestamp,
};

/// Most event ids remembered to spot repeats (bounded memory on any input).
const IDS_CAP: usize = 1 << 20;

/// Line-reader state kept across the lines of one file.
#[derive(Debug, Default)]
pub struct State {
    /// Event ids read so far, with their 0-based line and a hash of the line's text.
    ids: HashMap<Box<str>, (usize, u64)>,
    /// Current step number; keys are `copilot-step-N`.
    step: u64,
    /// Output tokens of the current step so far (a step's messages add up).
    step_output: u64,
    /// Entry index of the current step's latest `assistant.message`, and whether it requested
    /// tools.
    last_message: Option<(usize, bool)>,
    /// Between `assistant.turn_start` and `assistant.turn_end`.
    turn_open: bool,
    /// A prompt was read since the session (re)started.
    prompt_seen: bool,
    /// Tool calls that spawned a sub-agent: call id → (entry, block) of the call.
    spawns: HashMap<Box<str>, (usize, usize)>,
    /// Tool results by call id: (entry, block), for sub-agent totals arriving late.
    results: HashMap<Box<str>, (usize, usize)>,
    /// `subagent.completed` totals by call id, for results not read yet.
    totals: HashMap<Box<str>, SubagentResult>,
    /// Ids of calls whose sub-agent was announced.
    spawned: HashSet<Box<str>>,
    /// The current run of repeated lines: (problem index, first line, line it repeats first,
    /// last line, line it repeats last), 0-based. Consecutive repeats share one problem.
    repeats: Option<(usize, usize, usize, usize, usize)>,
    /// The `sessionId` of the session being read (a `session.start` with another one starts
    /// another session of the file; issue 20 item 3).
    session: Option<Box<str>>,
    /// Usage of the sessions before the current one (each one's last `session.shutdown`),
    /// added up per model.
    earlier_usage: Vec<ModelUsage>,
    /// The current session's usage (its last `session.shutdown`).
    session_usage: Vec<ModelUsage>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Record<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<Raw<'a>>,
    #[serde(borrow)]
    data: Option<Raw<'a>>,
    #[serde(borrow)]
    id: Option<Raw<'a>>,
    #[serde(rename = "parentId", borrow)]
    parent_id: Option<Raw<'a>>,
    #[serde(borrow)]
    timestamp: Option<Raw<'a>>,
}

/// `data` of any event: every field a borrowed raw value, interpreted where it is used.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Data<'a> {
    #[serde(rename = "sessionId", borrow)]
    session_id: Option<Raw<'a>>,
    #[serde(rename = "copilotVersion", borrow)]
    copilot_version: Option<Raw<'a>>,
    #[serde(borrow)]
    context: Option<Raw<'a>>,
    #[serde(borrow)]
    content: Option<Raw<'a>>,
    #[serde(rename = "transformedContent", borrow)]
    transformed_content: Option<Raw<'a>>,
    /// `user.message.source`: `agent-…` when another agent, not a person, sent it.
    #[serde(borrow)]
    source: Option<Raw<'a>>,
    #[serde(rename = "reasoningText", borrow)]
    reasoning_text: Option<Raw<'a>>,
    #[serde(rename = "toolRequests", borrow)]
    tool_requests: Option<Raw<'a>>,
    #[serde(borrow)]
    phase: Option<Raw<'a>>,
    #[serde(rename = "outputTokens", borrow)]
    output_tokens: Option<Raw<'a>>,
    #[serde(borrow)]
    model: Option<Raw<'a>>,
    #[serde(rename = "parentToolCallId", borrow)]
    parent_tool_call_id: Option<Raw<'a>>,
    #[serde(rename = "toolCallId", borrow)]
    tool_call_id: Option<Raw<'a>>,
    #[serde(borrow)]
    success: Option<Raw<'a>>,
    #[serde(borrow)]
    result: Option<Raw<'a>>,
    #[serde(borrow)]
    error: Option<Raw<'a>>,
    #[serde(rename = "agentName", borrow)]
    agent_name: Option<Raw<'a>>,
    #[serde(rename = "agentDisplayName", borrow)]
    agent_display_name: Option<Raw<'a>>,
    #[serde(rename = "agentDescription", borrow)]
    agent_description: Option<Raw<'a>>,
    #[serde(rename = "totalToolCalls", borrow)]
    total_tool_calls: Option<Raw<'a>>,
    #[serde(rename = "totalTokens", borrow)]
    total_tokens: Option<Raw<'a>>,
    #[serde(rename = "durationMs", borrow)]
    duration_ms: Option<Raw<'a>>,
    #[serde(rename = "modelMetrics", borrow)]
    model_metrics: Option<Raw<'a>>,
    #[serde(rename = "preTruncationTokensInMessages", borrow)]
    pre_truncation_tokens: Option<Raw<'a>>,
    #[serde(rename = "preCompactionTokens", borrow)]
    pre_compaction_tokens: Option<Raw<'a>>,
    #[serde(borrow)]
    summary: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Context<'a> {
    #[serde(borrow)]
    cwd: Option<Raw<'a>>,
    #[serde(borrow)]
    branch: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ToolRequest<'a> {
    #[serde(rename = "toolCallId", borrow)]
    tool_call_id: Option<Raw<'a>>,
    #[serde(borrow)]
    name: Option<Raw<'a>>,
    #[serde(borrow)]
    arguments: Option<Raw<'a>>,
    #[serde(rename = "intentionSummary", borrow)]
    intention_summary: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ExecResult<'a> {
    #[serde(borrow)]
    content: Option<Raw<'a>>,
    #[serde(rename = "detailedContent", borrow)]
    detailed_content: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Metric<'a> {
    #[serde(borrow)]
    requests: Option<Raw<'a>>,
    #[serde(borrow)]
    usage: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Requests<'a> {
    #[serde(borrow)]
    count: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MetricUsage<'a> {
    #[serde(rename = "inputTokens", borrow)]
    input: Option<Raw<'a>>,
    #[serde(rename = "outputTokens", borrow)]
    output: Option<Raw<'a>>,
    #[serde(rename = "cacheReadTokens", borrow)]
    cache_read: Option<Raw<'a>>,
    #[serde(rename = "cacheWriteTokens", borrow)]
    cache_write: Option<Raw<'a>>,
    #[serde(rename = "reasoningTokens", borrow)]
    reasoning: Option<Raw<'a>>,
}

impl State {
    /// Reads one complete, non-blank line (`span` excludes the newline) and appends exactly
    /// one entry to `t`. May revise earlier entries: the round's last response gets `EndTurn`
    /// at `assistant.turn_end`, a call gets its sub-agent facts when `subagent.started` /
    /// `subagent.completed` arrive.
    pub fn line(&mut self, source: &str, line: usize, span: Span, t: &mut Transcript) {
        let text = &source[span.clone()];
        let rec: Record = match object(text) {
            Ok(r) => r,
            Err(_) => return json::not_an_object(source, line, span, t),
        };
        let ts = jstr(rec.timestamp).and_then(|s| parse_timestamp(&s));
        let l = Line {
            source,
            line,
            span,
            ts,
        };
        let ty = jstr(rec.ty).unwrap_or(Cow::Borrowed(""));
        let id = jstr(rec.id);
        if let Some(id) = id.as_deref().filter(|id| !id.is_empty()) {
            let hash = {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                text.hash(&mut h);
                h.finish()
            };
            if let Some(&(first, h)) = self.ids.get(id)
                && h == hash
            {
                self.repeat(&l, first, t);
                let mut e = l.entry(Role::Meta, &format!("{ty} (repeat)"));
                e.set_uuid(Some(id));
                t.entries.push(e);
                return;
            }
            if self.ids.len() < IDS_CAP {
                self.ids.entry(id.into()).or_insert((line, hash));
            }
        }
        self.repeats = None;
        let data = rec
            .data
            .and_then(|d| object::<Data>(d.get()).ok())
            .unwrap_or_default();
        let mut e = self.event(&l, &ty, &data, t);
        e.set_uuid(id.as_deref());
        e.set_parent_uuid(jstr(rec.parent_id).as_deref());
        if let Some(parent) = jstr(data.parent_tool_call_id).filter(|p| !p.is_empty()) {
            e.sidechain = true;
            e.set_agent_id(Some(parent.as_ref().into()));
        }
        t.entries.push(e);
    }

    fn event(&mut self, l: &Line, ty: &str, d: &Data, t: &mut Transcript) -> Entry {
        match ty {
            "session.start" | "session.resume" => {
                if let Some(v) = jstr(d.session_id) {
                    t.meta.session_id.get_or_insert_with(|| v.to_string());
                    // Another session in the same file (issue 20 item 3): its figures add
                    // to the earlier sessions', they do not replace them.
                    match self.session.as_deref() {
                        None => self.session = Some(v.as_ref().into()),
                        Some(cur) if cur != v.as_ref() && ty == "session.start" => {
                            let done = std::mem::take(&mut self.session_usage);
                            add_models(&mut self.earlier_usage, &done);
                            self.session = Some(v.as_ref().into());
                            t.meta.sessions.push(crate::model::SessionStart {
                                entry: t.entries.len(),
                                line: l.line,
                                id: v.into_owned(),
                                parent: None,
                            });
                        }
                        Some(_) => {}
                    }
                }
                if let Some(v) = jstr(d.copilot_version) {
                    t.meta.version.get_or_insert_with(|| v.into_owned());
                }
                if let Some(c) = d.context.and_then(|c| object::<Context>(c.get()).ok()) {
                    if let Some(cwd) = jstr(c.cwd) {
                        t.meta.cwd.get_or_insert_with(|| cwd.into_owned());
                    }
                    if let Some(b) = jstr(c.branch) {
                        t.meta.git_branch.get_or_insert_with(|| b.into_owned());
                    }
                }
                self.turn_open = false;
                self.new_step();
                l.entry(Role::Context, ty)
            }
            "system.message" => l.entry(Role::Context, ty),
            // A sub-agent's task, sent by the agent that spawned it (`source: "agent-…"`): the
            // sub-agent's context, not a person's prompt or queued message (issue 20 item 6).
            "user.message" if jstr(d.source).is_some_and(|s| s.starts_with("agent-")) => {
                l.entry(Role::Context, ty)
            }
            // The autopilot's end of a task: its `summary` is the turn's answer (issue 20
            // item 6: such a turn read as "no reply").
            "session.task_complete" if jstr(d.summary).is_some_and(|s| !s.trim().is_empty()) => {
                self.new_step();
                let mut e = l.entry(Role::Model, ty);
                push_text(l, d.summary, &mut e.blocks);
                e.step = Some(Box::new(StepInfo {
                    key: self.key(),
                    stop: Some(StopReason::EndTurn),
                    declares_final: true,
                    ..StepInfo::default()
                }));
                // The summary is a step of its own: what follows takes the next key.
                self.step += 1;
                e
            }
            "user.message" => {
                let typed = jstr(d.content).is_some_and(|c| !c.trim().is_empty());
                let role = if self.turn_open && self.prompt_seen {
                    Role::Steering
                } else if typed || jstr(d.transformed_content).is_none_or(|c| c.trim().is_empty()) {
                    Role::Prompt(PromptKind::Typed)
                } else {
                    // Nothing typed: the CLI's own nudge to go on (autopilot).
                    Role::Wake(WakeKind::Continuation)
                };
                self.prompt_seen = true;
                self.new_step();
                let mut e = l.entry(role, ty);
                if typed {
                    push_text(l, d.content, &mut e.blocks);
                    // What the model saw, when the CLI changed it (a date stamp, expanded
                    // attachments): kept for hover, never part of the prompt's text.
                    if let Some(tc) = d.transformed_content
                        && jstr(Some(tc))
                            .is_some_and(|x| x.trim() != jstr(d.content).unwrap_or_default().trim())
                    {
                        e.blocks.push(Block {
                            span: l.raw_span(tc),
                            kind: BlockKind::Other {
                                block_type: "transformedContent".into(),
                            },
                        });
                    }
                } else {
                    push_text(l, d.transformed_content, &mut e.blocks);
                }
                e
            }
            "assistant.turn_start" => {
                self.turn_open = true;
                self.new_step();
                l.entry(Role::Meta, ty)
            }
            "assistant.turn_end" => {
                self.turn_open = false;
                if let Some((i, false)) = self.last_message
                    && t.entries
                        .get(i)
                        .and_then(|e| e.step.as_ref())
                        .is_some_and(|s| s.stop.is_none())
                    && let Some(step) = t.revise(i).and_then(|e| e.step.as_mut())
                {
                    step.stop = Some(StopReason::EndTurn);
                }
                self.new_step();
                l.entry(Role::Meta, ty)
            }
            "assistant.message" => self.assistant(l, d, t),
            "assistant.reasoning" => {
                let mut e = l.entry(Role::Model, ty);
                let text = d.content.and_then(|c| l.str_of(c));
                e.blocks.push(Block {
                    span: d.content.map_or(l.span.clone(), |c| l.raw_span(c)),
                    kind: BlockKind::Thinking {
                        text: text.unwrap_or(Str {
                            raw: l.span.start..l.span.start,
                        }),
                        encrypted: false,
                    },
                });
                e.step = Some(Box::new(StepInfo {
                    key: self.key(),
                    model: jstr(d.model).map(|m| m.as_ref().into()),
                    ..StepInfo::default()
                }));
                e
            }
            "tool.execution_complete" => {
                let mut e = l.entry(Role::ToolResults, ty);
                let idx = t.entries.len();
                let block = self.tool_result(l, d);
                if let BlockKind::ToolResult(r) = &block.kind
                    && !r.tool_use_id.is_empty()
                {
                    self.results.insert(r.tool_use_id.clone(), (idx, 0));
                }
                e.blocks.push(block);
                if jstr(d.parent_tool_call_id).is_none_or(|p| p.is_empty()) {
                    self.new_step();
                }
                e
            }
            "subagent.started" => {
                if let Some(call) = jstr(d.tool_call_id) {
                    let spawn = SubagentSpawn {
                        description: jstr(d.agent_description)
                            .or_else(|| jstr(d.agent_display_name))
                            .map(|s| one_line(&s)),
                        agent_type: jstr(d.agent_name).map(Cow::into_owned),
                    };
                    if let Some(&(e, b)) = self.spawns.get(call.as_ref())
                        && let Some(BlockKind::ToolUse(u)) = t
                            .revise(e)
                            .and_then(|x| x.blocks.get_mut(b))
                            .map(|b| &mut b.kind)
                    {
                        u.subagent = Some(spawn);
                    }
                    self.spawned.insert(call.as_ref().into());
                    self.set_result_agent(t, &call, None);
                }
                l.entry(Role::Meta, ty)
            }
            "subagent.completed" | "subagent.failed" => {
                if let Some(call) = jstr(d.tool_call_id) {
                    let totals = SubagentResult {
                        agent_id: Some(call.to_string()),
                        duration_ms: jcount(d.duration_ms),
                        total_tokens: jcount(d.total_tokens),
                        tool_uses: jcount(d.total_tool_calls),
                    };
                    self.set_result_agent(t, &call, Some(totals));
                }
                l.entry(Role::Meta, ty)
            }
            "abort" => l.entry(Role::Interruption, ty),
            "session.truncation" | "session.compaction_complete" => {
                let mut e = l.entry(
                    Role::CompactBoundary(Box::new(crate::model::CompactBoundary {
                        trigger: Some(
                            if ty == "session.truncation" {
                                "truncation"
                            } else {
                                "auto"
                            }
                            .into(),
                        ),
                        pre_tokens: jcount(d.pre_truncation_tokens)
                            .or_else(|| jcount(d.pre_compaction_tokens))
                            .filter(|&n| n > 0),
                    })),
                    ty,
                );
                push_text(l, d.summary, &mut e.blocks);
                e
            }
            "session.shutdown" => {
                let usage = model_metrics(d.model_metrics);
                if !usage.is_empty() {
                    // The session's last shutdown is its usage; earlier sessions' add to it.
                    self.session_usage = usage;
                    let mut all = self.earlier_usage.clone();
                    add_models(&mut all, &self.session_usage);
                    t.meta.recorded_usage = all;
                }
                self.turn_open = false;
                l.entry(Role::Meta, ty)
            }
            "" => l.entry(Role::Other, "unknown"),
            _ if is_copilot_type(ty) => l.entry(Role::Meta, ty),
            _ => {
                // Noted once per type (issue 20 item 11).
                t.note_unknown("record type", ty, l.line, l.span.clone());
                l.entry(Role::Other, ty)
            }
        }
    }

    /// An `assistant.message`: one response of the current step.
    fn assistant(&mut self, l: &Line, d: &Data, t: &mut Transcript) -> Entry {
        let idx = t.entries.len();
        let mut e = l.entry(Role::Model, "assistant.message");
        if let Some(r) = d.reasoning_text
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
        push_text(l, d.content, &mut e.blocks);
        let mut tools = false;
        for el in elements(d.tool_requests) {
            let span = l.raw_span(el);
            let Ok(req) = object::<ToolRequest>(el.get()) else {
                e.blocks.push(Block {
                    span,
                    kind: BlockKind::Other {
                        block_type: "toolRequest".into(),
                    },
                });
                continue;
            };
            tools = true;
            let id: Box<str> = jstr(req.tool_call_id).unwrap_or_default().as_ref().into();
            let intent = jstr(req.intention_summary);
            let b = e.blocks.len();
            if !id.is_empty() {
                self.spawns.insert(id.clone(), (idx, b));
            }
            e.blocks.push(Block {
                span: span.clone(),
                kind: BlockKind::ToolUse(Box::new(ToolUse {
                    id,
                    name: jstr(req.name).unwrap_or_default().as_ref().into(),
                    input: req.arguments.map_or(span, |a| l.raw_span(a)),
                    summary: call_summary(req.arguments, intent.as_deref()),
                    subagent: None,
                })),
            });
        }
        let model: Option<Box<str>> = jstr(d.model).map(|m| m.as_ref().into());
        if let Some(m) = &model {
            t.meta.model.get_or_insert_with(|| m.to_string());
        }
        let declared = jstr(d.phase).as_deref() == Some("final_answer");
        // A sub-agent's responses (`parentToolCallId`) are steps of their own and leave the
        // main thread's round alone.
        let side = jstr(d.parent_tool_call_id).filter(|p| !p.is_empty());
        let usage = jcount(d.output_tokens).map(|n| {
            let output = if side.is_some() {
                n
            } else {
                self.step_output += n;
                self.step_output
            };
            Usage {
                output,
                ..Usage::default()
            }
        });
        let stop = if tools {
            Some(StopReason::ToolUse)
        } else if declared {
            Some(StopReason::EndTurn)
        } else {
            None
        };
        let key = match &side {
            Some(p) => format!("copilot-sub-{p}-{}", l.line + 1).into(),
            None => self.key(),
        };
        e.step = Some(Box::new(StepInfo {
            key,
            model,
            usage,
            stop,
            declares_final: declared,
            ..StepInfo::default()
        }));
        if side.is_none() {
            self.last_message = Some((idx, tools));
        }
        e
    }

    /// The tool-result block of a `tool.execution_complete`.
    fn tool_result(&mut self, l: &Line, d: &Data) -> Block {
        let empty = l.span.start..l.span.start;
        let id: Box<str> = jstr(d.tool_call_id).unwrap_or_default().as_ref().into();
        let success = jbool(d.success);
        let res = d.result.and_then(|r| object::<ExecResult>(r.get()).ok());
        let text_raw = res
            .as_ref()
            .and_then(|r| r.content.filter(|c| l.str_of(c).is_some()))
            .or_else(|| res.as_ref().and_then(|r| r.detailed_content))
            .filter(|c| l.str_of(c).is_some())
            .or(d.error.filter(|c| l.str_of(c).is_some()));
        let content = match text_raw.and_then(|c| l.str_of(c)) {
            Some(s) => s.raw,
            None => d
                .result
                .or(d.error)
                .map_or(empty.clone(), |r| l.raw_span(r)),
        };
        let summary = text_raw
            .and_then(|c| jstr(Some(c)))
            .map(|s| one_line(&s))
            .unwrap_or_default();
        let subagent = self.spawned.contains(&id).then(|| {
            self.totals.remove(&id).unwrap_or(SubagentResult {
                agent_id: Some(id.to_string()),
                ..SubagentResult::default()
            })
        });
        Block {
            span: d.result.map_or(empty, |r| l.raw_span(r)),
            kind: BlockKind::ToolResult(Box::new(ToolResult {
                tool_use_id: id,
                is_error: success == Some(false),
                content_len: content.len(),
                content,
                summary,
                images: Vec::new(),
                subagent,
            })),
        }
    }

    /// Records that call `call` ran a sub-agent (and its totals, when known) on its result,
    /// now or when the result arrives.
    fn set_result_agent(&mut self, t: &mut Transcript, call: &str, totals: Option<SubagentResult>) {
        let value = totals.clone().unwrap_or(SubagentResult {
            agent_id: Some(call.to_string()),
            ..SubagentResult::default()
        });
        match self.results.get(call) {
            Some(&(e, b)) => {
                if let Some(BlockKind::ToolResult(r)) = t
                    .revise(e)
                    .and_then(|x| x.blocks.get_mut(b))
                    .map(|b| &mut b.kind)
                {
                    r.subagent = Some(value);
                }
            }
            None => {
                if let Some(tot) = totals {
                    self.totals.insert(call.into(), tot);
                }
            }
        }
    }

    /// Reports line `l` as a repeat of line `orig`: one hint per run of consecutive repeats,
    /// `lines 21–40 repeat the events of lines 1–20 (same ids); read once`.
    fn repeat(&mut self, l: &Line, orig: usize, t: &mut Transcript) {
        if let Some((p, first, o_first, last, o_last)) = self.repeats
            && last + 1 == l.line
            && t.problems.get(p).is_some_and(|x| x.line == first)
        {
            let what = if o_last + 1 == orig {
                format!("the events of lines {}–{}", o_first + 1, orig + 1)
            } else {
                "earlier events".to_string()
            };
            let prob = &mut t.problems[p];
            prob.span.end = l.span.end;
            prob.message = format!(
                "lines {}–{} repeat {what} (same ids, same content); read once",
                first + 1,
                l.line + 1
            );
            let o_last = if o_last + 1 == orig {
                orig
            } else {
                usize::MAX - 1
            };
            self.repeats = Some((p, first, o_first, l.line, o_last));
            return;
        }
        self.repeats = Some((t.problems.len(), l.line, orig, l.line, orig));
        l.problem(
            t,
            Severity::Hint,
            format!(
                "repeats the event of line {} (same id, same content); read once",
                orig + 1
            ),
        );
    }

    fn key(&self) -> Box<str> {
        format!("copilot-step-{}", self.step + 1).into()
    }

    /// Starts a new step (a prompt, a tool result, a round boundary).
    fn new_step(&mut self) {
        if self.step_output > 0 || self.last_message.is_some() {
            self.step += 1;
        }
        self.step_output = 0;
        self.last_message = None;
    }
}

/// Detection (agent registry, FORMATS-2026 §4): an event `{"type","data"}` whose type is one
/// of Copilot CLI's dotted families ([`is_copilot_type`]), with no Claude envelope and no
/// `payload`.
pub fn detect(p: &super::agents::Probe) -> bool {
    !p.claude_envelope()
        && !p.val("payload")
        && p.val("data")
        && p.ty().is_some_and(is_copilot_type)
}

impl super::agents::LineReader for State {
    fn line(&mut self, source: &str, line: usize, span: crate::model::Span, t: &mut Transcript) {
        State::line(self, source, line, span, t);
    }
}

/// True for the dotted event types of Copilot CLI (`session.*`, `assistant.*`, …) and its
/// undotted `abort`.
pub fn is_copilot_type(ty: &str) -> bool {
    const PREFIXES: [&str; 9] = [
        "session.",
        "user.",
        "assistant.",
        "tool.",
        "subagent.",
        "hook.",
        "system.",
        "skill.",
        "permission.",
    ];
    ty == "abort"
        || PREFIXES
            .iter()
            .any(|p| ty.starts_with(p) && ty.len() > p.len())
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

/// Adds `more` into `into` per model name (requests summed when either gives them), keeping
/// the order models were first written.
fn add_models(into: &mut Vec<ModelUsage>, more: &[ModelUsage]) {
    for m in more {
        match into.iter_mut().find(|x| x.model == m.model) {
            Some(x) => {
                x.usage = x.usage.add(m.usage);
                x.requests = match (x.requests, m.requests) {
                    (None, None) => None,
                    (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
                };
            }
            None => into.push(m.clone()),
        }
    }
}

/// `modelMetrics` as per-model usage, in the order written. `requests` is a count or
/// `{count, cost}`; the uncached input is `inputTokens − cacheReadTokens − cacheWriteTokens`.
/// A model without a `usage` object is left out (nothing is known of its tokens), so a
/// shutdown with no usage at all leaves the steps' counts as the session's usage.
fn model_metrics(r: Option<Raw<'_>>) -> Vec<ModelUsage> {
    let mut out = Vec::new();
    for (name, v) in members(r) {
        let Ok(m) = object::<Metric>(v.get()) else {
            continue;
        };
        let requests = jcount(m.requests).or_else(|| {
            m.requests
                .and_then(|r| object::<Requests>(r.get()).ok())
                .and_then(|r| jcount(r.count))
        });
        let Some(usage) = m
            .usage
            .and_then(|u| object::<MetricUsage>(u.get()).ok())
            .map(|u| {
                let cache_read = jcount(u.cache_read).unwrap_or(0);
                let cache_creation = jcount(u.cache_write).unwrap_or(0);
                Usage {
                    input: jcount(u.input)
                        .unwrap_or(0)
                        .saturating_sub(cache_read + cache_creation),
                    output: jcount(u.output).unwrap_or(0),
                    cache_creation,
                    cache_read,
                    reasoning: jcount(u.reasoning).unwrap_or(0),
                }
            })
        else {
            continue; // no token counts for this model: the steps' counts stay the usage
        };
        out.push(ModelUsage {
            model: name.into_owned(),
            requests,
            usage,
        });
    }
    out
}
