//! Pi coding agent sessions (FORMATS-2026 §3; issue 10).
//!
//! `~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`. Line 1 is a header
//! `{"type":"session","version":3,"id","timestamp","cwd"}`; every later line is an entry of a
//! tree `{"type","id","parentId","timestamp",…}`:
//! * `message`: `message.role` = `user` (a prompt), `assistant` (one model response: blocks
//!   `text`, `thinking`, `toolCall {id,name,arguments}`, `image`; `usage {input, output,
//!   cacheRead, cacheWrite, totalTokens, cost {total}}`, `stopReason`, `errorMessage`),
//!   `toolResult {toolCallId, toolName, content, isError}`, `bashExecution {command, output,
//!   exitCode}` (the user's `!` command: a local command), `custom` (an extension's message
//!   injected into the context);
//! * `model_change {provider, modelId}`, `thinking_level_change`, `label`, `session_info
//!   {name}`, `custom`, pi 1.0's `context_edit` and `usage`: bookkeeping (`Meta`);
//! * `compaction {summary, firstKeptEntryId, tokensBefore}`: a compact boundary carrying its
//!   summary; `branch_summary {fromId, summary}` and `custom_message`: injected context.
//!
//! **Branches.** Pi branches in place: a new entry whose `parentId` is not the latest entry
//! starts another branch from that parent. The current leaf (the last entry) picks the active
//! branch, the path from the root to it; every other entry lies on an abandoned branch and is
//! flagged [`crate::model::Entry::abandoned`] (kept, never counted). The flags are brought up
//! to date after each batch of lines that switched branch ([`State::settle`], called by the
//! `Reader`). An unknown `parentId` continues the previous entry (with a hint); version 1
//! files (no ids) are linear.
//!
//! **Steps.** Each assistant message is one response: its own step (key = entry id), with its
//! usage and cost; `stopReason` `stop` → end turn, `toolUse` → tool use, `length` → max
//! tokens, `error` → an API error (`errorMessage`). Tool calls pair with `toolResult`
//! messages by id (`toolCallId`).

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Deserializer};

use super::json::{
    self, Line, Raw, call_summary, elements, is_array, jbool, jcount, jnum, jstr, object, one_line,
};
use thin_vec::ThinVec;

use crate::model::{
    Block, BlockKind, PromptKind, Role, Severity, Span, StepInfo, StopReason, Str, ToolResult,
    ToolUse, Transcript, Usage, parse_timestamp,
};

/// Line-reader state kept across the lines of one file.
#[derive(Debug, Default)]
pub struct State {
    /// Entry index of each tree entry id seen.
    ids: HashMap<Box<str>, usize>,
    /// Per entry index: its tree node, for tree entries.
    nodes: Vec<Option<Node>>,
    /// Entry index of the current leaf.
    leaf: Option<usize>,
    /// Model of the latest `model_change` (`provider/modelId` is not used: `modelId` alone).
    model: Option<Box<str>>,
    /// A line since the last [`State::settle`] started another branch.
    dirty: bool,
    /// `thinkingLevel` of the latest `thinking_level_change` (`off`, `minimal`, … `xhigh`):
    /// the effort the following responses run with.
    thinking_level: Option<Box<str>>,
    /// The `id` of the latest `session` header: a later header with another id starts
    /// another session of the file (issue 20 item 3).
    session: Option<Box<str>>,
    /// A `session` header was read.
    header_seen: bool,
    /// The leaf each earlier session of the file ended on: the path to it is that session's
    /// active branch (never abandoned because a later session started a tree of its own).
    ended: Vec<usize>,
}

/// A tree entry: the entry index of its parent (always an earlier entry, so walks end).
#[derive(Debug, Clone, Copy)]
struct Node {
    parent: Option<usize>,
}

/// A field whose presence matters even when its value is `null`.
#[derive(Debug, Default)]
struct Seen<'a> {
    present: bool,
    raw: Option<Raw<'a>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Seen<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Option::<Raw<'a>>::deserialize(d)?;
        Ok(Seen { present: true, raw })
    }
}

/// One line. Every field is a borrowed raw value, interpreted where it is used, so a field of
/// an unexpected JSON type never fails the record.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Record<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<Raw<'a>>,
    #[serde(borrow)]
    id: Option<Raw<'a>>,
    #[serde(rename = "parentId", borrow)]
    parent_id: Seen<'a>,
    #[serde(borrow)]
    timestamp: Option<Raw<'a>>,
    #[serde(borrow)]
    message: Option<Raw<'a>>,
    #[serde(borrow)]
    cwd: Option<Raw<'a>>,
    #[serde(rename = "modelId", borrow)]
    model_id: Option<Raw<'a>>,
    #[serde(borrow)]
    summary: Option<Raw<'a>>,
    #[serde(rename = "tokensBefore", borrow)]
    tokens_before: Option<Raw<'a>>,
    #[serde(rename = "fromHook", borrow)]
    from_hook: Option<Raw<'a>>,
    #[serde(borrow)]
    name: Option<Raw<'a>>,
    #[serde(borrow)]
    content: Option<Raw<'a>>,
    #[serde(rename = "thinkingLevel", borrow)]
    thinking_level: Option<Raw<'a>>,
}

/// `message` of a `message` entry.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Message<'a> {
    #[serde(borrow)]
    role: Option<Raw<'a>>,
    #[serde(borrow)]
    content: Option<Raw<'a>>,
    #[serde(borrow)]
    model: Option<Raw<'a>>,
    #[serde(borrow)]
    usage: Option<Raw<'a>>,
    #[serde(rename = "stopReason", borrow)]
    stop_reason: Option<Raw<'a>>,
    #[serde(rename = "errorMessage", borrow)]
    error_message: Option<Raw<'a>>,
    #[serde(rename = "toolCallId", borrow)]
    tool_call_id: Option<Raw<'a>>,
    #[serde(rename = "isError", borrow)]
    is_error: Option<Raw<'a>>,
    #[serde(borrow)]
    command: Option<Raw<'a>>,
    #[serde(borrow)]
    timestamp: Option<Raw<'a>>,
}

/// A content block.
#[derive(Deserialize, Default)]
#[serde(default)]
struct RawBlock<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<Raw<'a>>,
    #[serde(borrow)]
    text: Option<Raw<'a>>,
    #[serde(borrow)]
    thinking: Option<Raw<'a>>,
    /// Only its presence is used (an opaque, often encrypted, reasoning payload).
    #[serde(rename = "thinkingSignature", borrow)]
    thinking_signature: Option<Raw<'a>>,
    #[serde(borrow)]
    id: Option<Raw<'a>>,
    #[serde(borrow)]
    name: Option<Raw<'a>>,
    #[serde(borrow)]
    arguments: Option<Raw<'a>>,
    #[serde(borrow)]
    data: Option<Raw<'a>>,
    #[serde(rename = "mimeType", borrow)]
    mime_type: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawUsage<'a> {
    #[serde(borrow)]
    input: Option<Raw<'a>>,
    #[serde(borrow)]
    output: Option<Raw<'a>>,
    #[serde(rename = "cacheRead", borrow)]
    cache_read: Option<Raw<'a>>,
    #[serde(rename = "cacheWrite", borrow)]
    cache_write: Option<Raw<'a>>,
    #[serde(borrow)]
    cost: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawCost<'a> {
    #[serde(borrow)]
    total: Option<Raw<'a>>,
}

impl State {
    /// Reads one complete, non-blank line (`span` excludes the newline) and appends exactly
    /// one entry to `t` (an `Unparsed` entry plus a problem when the line is not a JSON object).
    /// May flip [`crate::model::Entry::abandoned`] on earlier entries when this entry switches
    /// branch.
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
        let mut entry = match ty.as_ref() {
            "session" => {
                let id = jstr(rec.id);
                if self.header_seen && id.as_deref() != self.session.as_deref() {
                    // Another session in the same file (issue 20 item 3): the earlier one's
                    // entries stay its own (active branch and all), its figures count.
                    self.ended.extend(self.leaf.take());
                    t.meta.sessions.push(crate::model::SessionStart {
                        entry: t.entries.len(),
                        line: l.line,
                        id: id.as_deref().unwrap_or("").to_string(),
                        parent: None,
                    });
                }
                self.header_seen = true;
                self.session = id.as_deref().map(Into::into);
                if let Some(id) = id {
                    t.meta.session_id.get_or_insert_with(|| id.into_owned());
                }
                if let Some(cwd) = jstr(rec.cwd) {
                    t.meta.cwd.get_or_insert_with(|| cwd.into_owned());
                }
                l.entry(Role::Context, "session")
            }
            "message" => self.message(&l, &rec, t),
            "model_change" => {
                if let Some(m) = jstr(rec.model_id) {
                    self.model = Some(m.as_ref().into());
                }
                l.entry(Role::Meta, "model_change")
            }
            "compaction" => {
                let trigger = (jbool(rec.from_hook) == Some(true)).then(|| "extension".into());
                let mut e = l.entry(
                    Role::CompactBoundary(Box::new(crate::model::CompactBoundary {
                        trigger,
                        pre_tokens: jcount(rec.tokens_before),
                    })),
                    "compaction",
                );
                push_text(&l, rec.summary, &mut e.blocks);
                e
            }
            "branch_summary" => {
                let mut e = l.entry(Role::Context, "branch_summary");
                push_text(&l, rec.summary, &mut e.blocks);
                e
            }
            "custom_message" => {
                let mut e = l.entry(Role::Context, "custom_message");
                content_blocks(&l, rec.content, &mut e.blocks);
                e
            }
            "session_info" => {
                if let Some(n) = jstr(rec.name).filter(|n| !n.trim().is_empty()) {
                    t.meta.title = Some(one_line(&n));
                }
                l.entry(Role::Meta, "session_info")
            }
            "thinking_level_change" => {
                if let Some(level) = jstr(rec.thinking_level) {
                    self.thinking_level = Some(level.as_ref().into());
                }
                l.entry(Role::Meta, "thinking_level_change")
            }
            "label" | "custom" | "context_edit" | "usage" => l.entry(Role::Meta, &ty),
            "" => l.entry(Role::Other, "unknown"),
            other => {
                // Noted once per type (issue 20 item 11).
                t.note_unknown("record type", other, l.line, l.span.clone());
                l.entry(Role::Other, other)
            }
        };
        // A bare record (`{}`, a type no reader knows with nothing else) is no node of the
        // tree: it never became the leaf that the next entry then seemed to branch off (a
        // stray `{}` showed as an abandoned branch), and a run of them is one entry
        // (issue 25 item 8).
        if ty != "session" && !entry.is_bare() {
            self.place(&l, &rec, t, &mut entry);
        }
        t.entries.push(entry);
    }

    /// Puts the entry about to be pushed into the tree, re-flagging abandoned entries when it
    /// switches branch.
    fn place(
        &mut self,
        l: &Line,
        rec: &Record,
        t: &mut Transcript,
        entry: &mut crate::model::Entry,
    ) {
        let idx = t.entries.len();
        let id = jstr(rec.id);
        entry.set_uuid(id.as_deref());
        let parent = if rec.parent_id.present {
            match jstr(rec.parent_id.raw) {
                None => None, // null: a root
                Some(p) => {
                    entry.set_parent_uuid(Some(p.as_ref()));
                    match self.ids.get(p.as_ref()) {
                        Some(&i) => Some(i),
                        None => {
                            l.problem(
                                t,
                                Severity::Hint,
                                format!(
                                    "parent entry `{}` not found; read as following the previous entry",
                                    one_line(&p)
                                ),
                            );
                            self.leaf
                        }
                    }
                }
            }
        } else {
            // Version 1 sessions have no tree: each entry follows the previous one.
            self.leaf
        };
        if self.nodes.len() <= idx {
            self.nodes.resize(idx + 1, None);
        }
        self.nodes[idx] = Some(Node { parent });
        if let Some(id) = id {
            self.ids.insert(id.as_ref().into(), idx);
        }
        if parent != self.leaf {
            self.dirty = true;
        }
        self.leaf = Some(idx);
    }

    fn parent(&self, i: usize) -> Option<usize> {
        self.nodes.get(i).copied().flatten().and_then(|n| n.parent)
    }

    /// Brings [`crate::model::Entry::abandoned`] up to date after a batch of lines when one
    /// of them started another branch: every tree entry off the path from the root to the
    /// current leaf is abandoned, every entry on it is not. O(entries), and only for a batch
    /// that switched branch (a linear append costs nothing here), so no input can make the
    /// reader quadratic.
    pub fn settle(&mut self, t: &mut Transcript) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        // Entries on the path from the leaf to the root are kept; every other node is on a
        // branch the session left. Only flags that change count as revised (issue 12).
        // Each earlier session of the file keeps the path to the leaf it ended on.
        let mut on_path = vec![false; t.entries.len()];
        for leaf in self.ended.iter().copied().map(Some).chain([self.leaf]) {
            let mut at = leaf;
            while let Some(i) = at {
                match on_path.get_mut(i) {
                    Some(p) if !*p => *p = true,
                    _ => break, // already walked from here (or out of range)
                }
                at = self.parent(i);
            }
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let Some(e) = t.entries.get(i) else {
                break;
            };
            let abandoned = if on_path[i] {
                false
            } else if node.is_some() {
                true
            } else {
                e.abandoned
            };
            if abandoned != e.abandoned
                && let Some(e) = t.revise(i)
            {
                e.abandoned = abandoned;
            }
        }
        for (i, &kept) in on_path.iter().enumerate().skip(self.nodes.len()) {
            if kept
                && t.entries[i].abandoned
                && let Some(e) = t.revise(i)
            {
                e.abandoned = false;
            }
        }
    }

    /// A `message` entry, by `message.role`.
    fn message(&mut self, l: &Line, rec: &Record, t: &mut Transcript) -> crate::model::Entry {
        let Some(m) = rec.message.and_then(|m| object::<Message>(m.get()).ok()) else {
            l.problem(
                t,
                Severity::Hint,
                "Pi `message` entry without a `message` object".to_string(),
            );
            return l.entry(Role::Other, "message");
        };
        let role = jstr(m.role).unwrap_or(Cow::Borrowed(""));
        let rt = format!("message/{role}");
        let mut e = match role.as_ref() {
            "user" => l.entry(Role::Prompt(PromptKind::Typed), &rt),
            "assistant" => {
                let mut e = l.entry(Role::Model, &rt);
                e.step = Some(Box::new(self.step(rec, &m, t)));
                e
            }
            "toolResult" => {
                let mut e = l.entry(Role::ToolResults, &rt);
                e.blocks.push(tool_result(l, &m));
                if e.timestamp_ms().is_none() {
                    e.set_timestamp_ms(jcount(m.timestamp).map(|v| v as i64));
                }
                return e;
            }
            "bashExecution" => {
                let mut e = l.entry(Role::LocalCommand, &rt);
                push_text(l, m.command, &mut e.blocks);
                return e;
            }
            "custom" => l.entry(Role::Context, &rt),
            _ => {
                let mut e = l.entry(Role::Other, &rt);
                content_blocks(l, m.content, &mut e.blocks);
                return e;
            }
        };
        if e.timestamp_ms().is_none() {
            e.set_timestamp_ms(jcount(m.timestamp).map(|v| v as i64));
        }
        content_blocks(l, m.content, &mut e.blocks);
        e
    }

    /// The step of an assistant message: key = entry id, its usage, cost and stop reason.
    fn step(&mut self, rec: &Record, m: &Message, t: &mut Transcript) -> StepInfo {
        let model: Option<Box<str>> = jstr(m.model)
            .map(|s| s.as_ref().into())
            .or_else(|| self.model.clone());
        if let Some(model) = &model {
            t.meta.model.get_or_insert_with(|| model.to_string());
        }
        let raw_usage = m.usage.and_then(|u| object::<RawUsage>(u.get()).ok());
        let usage = raw_usage.as_ref().map(|u| Usage {
            input: jcount(u.input).unwrap_or(0),
            output: jcount(u.output).unwrap_or(0),
            cache_creation: jcount(u.cache_write).unwrap_or(0),
            cache_read: jcount(u.cache_read).unwrap_or(0),
            reasoning: 0,
        });
        let cost_usd = raw_usage
            .as_ref()
            .and_then(|u| u.cost)
            .and_then(|c| object::<RawCost>(c.get()).ok())
            .and_then(|c| jnum(c.total));
        let stop_text = jstr(m.stop_reason);
        let stop = stop_text.as_deref().map(|s| match s {
            "stop" => StopReason::EndTurn,
            "toolUse" => StopReason::ToolUse,
            "length" => StopReason::MaxTokens,
            other => StopReason::Other(other.into()),
        });
        let api_error = (stop_text.as_deref() == Some("error"))
            .then(|| jstr(m.error_message).map_or_else(|| "error".into(), |s| one_line(&s).into()));
        let key: Box<str> = match jstr(rec.id) {
            Some(id) => format!("pi-{id}").into(),
            None => format!("pi-line-{}", t.entries.len()).into(),
        };
        StepInfo {
            key,
            model,
            usage,
            stop,
            output_is_placeholder: false,
            api_error,
            declares_final: false,
            cost_usd,
            effort: self.thinking_level.clone(),
            ..StepInfo::default()
        }
    }
}

/// A `Text` block for a string value (nothing for an empty string or any other value).
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

/// Blocks of a message `content`: a string is one text block; an array gives one block per
/// element (`text`, `thinking`, `toolCall`, `image`; any other type is `Other`).
fn content_blocks(l: &Line, content: Option<Raw<'_>>, out: &mut ThinVec<Block>) {
    let Some(content) = content else { return };
    if l.str_of(content).is_some() {
        return push_text(l, Some(content), out);
    }
    for el in elements(Some(content)) {
        let span = l.raw_span(el);
        let Ok(b) = object::<RawBlock>(el.get()) else {
            out.push(Block {
                span,
                kind: BlockKind::Other {
                    block_type: "unknown".into(),
                },
            });
            continue;
        };
        let ty = jstr(b.ty).unwrap_or_default();
        let kind = match ty.as_ref() {
            "text" => match b.text.and_then(|r| l.str_of(r)) {
                Some(text) => BlockKind::Text { text },
                None => BlockKind::Other {
                    block_type: "text".into(),
                },
            },
            "thinking" => BlockKind::Thinking {
                text: b.thinking.and_then(|r| l.str_of(r)).unwrap_or(Str {
                    raw: span.start..span.start,
                }),
                encrypted: false,
            },
            "toolCall" => {
                let id: Box<str> = jstr(b.id).unwrap_or_default().as_ref().into();
                let name: Box<str> = jstr(b.name).unwrap_or_default().as_ref().into();
                BlockKind::ToolUse(Box::new(ToolUse {
                    id,
                    name,
                    input: b
                        .arguments
                        .map_or(span.start..span.start, |a| l.raw_span(a)),
                    summary: call_summary(b.arguments, None),
                    subagent: None,
                }))
            }
            "image" => BlockKind::Image {
                media_type: jstr(b.mime_type)
                    .map_or_else(|| "image/unknown".into(), |m| m.as_ref().into()),
                data_len: b.data.and_then(|d| l.str_of(d)).map_or(0, |s| s.raw.len()),
            },
            other => BlockKind::Other {
                block_type: if other.is_empty() {
                    "unknown".into()
                } else {
                    other.into()
                },
            },
        };
        out.push(Block { span, kind });
    }
}

/// The one tool-result block of a `toolResult` message: content span, first text line,
/// images, `isError`.
fn tool_result(l: &Line, m: &Message) -> Block {
    let empty = l.span.start..l.span.start;
    let content = m.content.map_or(empty.clone(), |c| l.raw_span(c));
    let mut summary = String::new();
    let mut images = Vec::new();
    if let Some(c) = m.content {
        if let Some(s) = jstr(Some(c)) {
            summary = one_line(&s);
        } else if is_array(c) {
            for el in elements(Some(c)) {
                let Ok(b) = object::<RawBlock>(el.get()) else {
                    continue;
                };
                match jstr(b.ty).as_deref() {
                    Some("text") if summary.is_empty() => {
                        summary = jstr(b.text).map(|s| one_line(&s)).unwrap_or_default();
                    }
                    Some("image") => {
                        let mt: Box<str> = jstr(b.mime_type)
                            .map_or_else(|| "image/unknown".into(), |m| m.as_ref().into());
                        let len = b.data.and_then(|d| l.str_of(d)).map_or(0, |s| s.raw.len());
                        if summary.is_empty() {
                            summary = format!("[image {mt}]");
                        }
                        images.push((mt, len));
                    }
                    _ => {}
                }
            }
        }
    }
    Block {
        span: content.clone(),
        kind: BlockKind::ToolResult(Box::new(ToolResult {
            tool_use_id: jstr(m.tool_call_id).unwrap_or_default().as_ref().into(),
            is_error: jbool(m.is_error) == Some(true),
            content_len: content.len(),
            content,
            summary,
            images,
            subagent: None,
        })),
    }
}
/// Detection (agent registry, FORMATS-2026 §3): the header `{"type":"session","id","cwd",…}`
/// with `version` (or, in Pi's first format of late 2025, issue 20 item 4, `timestamp`), or a
/// tree entry with a `parentId` key (its value may be `null`), an `id` and a Pi entry type
/// (`message` with a `message` object and no `role`, `model_change`, `compaction`, …); never
/// with a Claude envelope or a `payload`.
pub fn detect(p: &super::agents::Probe) -> bool {
    if p.claude_envelope() || p.val("payload") {
        return false;
    }
    let ty = p.ty();
    if ty == Some("session")
        && p.has("id")
        && p.has("cwd")
        && (p.has("version") || p.has("timestamp"))
    {
        return true;
    }
    let entry = match ty {
        Some("message") => p.val("message") && !p.has("role"),
        Some(
            "model_change"
            | "thinking_level_change"
            | "compaction"
            | "branch_summary"
            | "custom"
            | "custom_message"
            | "label"
            | "session_info"
            | "context_edit",
        ) => true,
        _ => false,
    };
    entry && p.has("parentId") && p.has("id")
}

impl super::agents::LineReader for State {
    fn line(&mut self, source: &str, line: usize, span: Span, t: &mut Transcript) {
        State::line(self, source, line, span, t);
    }

    fn settle(&mut self, t: &mut Transcript) {
        State::settle(self, t);
    }
}
