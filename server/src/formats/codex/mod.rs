//! OpenAI Codex CLI rollouts (server/FORMATS.md "Codex").
//!
//! A rollout line is an envelope `{"timestamp","type","payload"}` (newer CLIs add `ordinal`)
//! whose `type` is `session_meta`, `turn_context`, `response_item`, `event_msg`, `compacted`,
//! `world_state`, …. Legacy rollouts (CLIs around / before 0.3x) have no envelope: a bare meta
//! object `{"id","timestamp","instructions","git"}`, then bare response items and
//! `{"record_type":"state"}` lines. [`State::line`] reads both into the model, one [`Entry`]
//! per line.
//!
//! Rules applied here (server/FORMATS.md "Codex", record by record with sources; cases 13
//! and 15; issue 9):
//! * **Event copies.** User text, assistant text and reasoning are logged twice: as a
//!   `response_item` and as an `event_msg` copy (`user_message`, `agent_message`,
//!   `agent_reasoning`; 0.147+ `item_completed` UserMessage / AgentMessage / Reasoning), in
//!   either order; newer CLIs write no copies, some older ones only copies. The
//!   `response_item` is canonical. A copy pairs with its item in the current task by item id,
//!   else by normalised text (`<image>` wrappers ignored), else by structure (nearest user
//!   item; oldest model item of the same kind): `find_pair`. A paired copy is `Meta` with
//!   `copy_of` = its item (never a request start); a copy with no item stands in for it
//!   (`Prompt`, `Model` text, `Model` thinking) until the item arrives, which demotes it.
//!   `item_completed` timing becomes the item's `StepInfo::stream_ms`.
//! * **Context.** Developer messages and user messages injected by the CLI
//!   (`<environment_context>`, `<user_instructions>`, `# AGENTS.md instructions …`, raw
//!   AGENTS.md contents before the first real prompt) are `Context`, never prompts. In files
//!   that log user copies, user items before the first prompt that got a copy are demoted to
//!   `Context` once that prompt is confirmed, and later user items that get no copy by the next
//!   user item or task boundary are demoted too. In files that write `task_started`, a user
//!   item outside any task is `Context` (context re-sent at a resume).
//! * **Inherited history.** After a `session_meta` naming a parent (a fork or sub-agent
//!   rollout, on line 1 or later in a file of several rollouts) the records replaying the
//!   parent's history are `Entry::inherited` until the child's own work starts, told by its
//!   UUIDv7 turn ids, never by time alone when ids are UUIDs (`State::inherited` docs;
//!   server/FORMATS.md "Forks and sub-agents"; issue 20 item 1).
//! * **Steps and usage.** Every model record (assistant message, reasoning, function call,
//!   custom tool call, web search call, local shell call, tool search call, image generation
//!   call, and stand-in copies) between two `token_count` events with *new* totals shares one
//!   [`StepInfo::key`] `codex-call-N` (N from 1). The usage of that call is the delta of
//!   `info.total_token_usage` from the previous distinct totals (a zero delta is a re-emit,
//!   `info: null` is ignored) and is set on the call's last model record. Files with no
//!   `token_count` at all (legacy) start a new call at each model record that follows a
//!   prompt or tool result. A prompt, `task_started` or `session_meta` always starts a new
//!   call. Before the first metering `token_count`, the turn's model records are split at
//!   tool results; that `token_count` re-keys them as the one call it closes.
//! * **Turns.** `task_started` / `task_complete` / `turn_aborted` become `TurnStarted`,
//!   `TurnCompleted` (with `duration_ms`, `time_to_first_token_ms`) and `Interruption`. A
//!   prompt that arrives while a task that already has its prompt is running is `Steering`.
//!   `task_complete.last_agent_message` repeats the answer and is never read as text.
//! * **Compaction.** `compacted` and `event_msg/context_compacted` are `CompactBoundary`;
//!   a `context_compacted` that follows a `compacted` with only non-conversation records in
//!   between is `Meta` (one divider per compaction).
//!
//! The reader is this module's [`State`] (the rules above, line by line); `records` holds the
//! record shapes serde reads (`Record`, `Payload`, …) and the line being read (`Line`);
//! `items` turns items into content blocks, tool calls and results and holds the text rules
//! (summaries, apply_patch paths, output facts, context markers). The JSON helpers are
//! `formats::json`'s.
//!
//! Bulky fields (`base_instructions`, `replacement_history`, `encrypted_content`, image
//! generation `result`) are never decoded: undeclared fields are skipped by serde as
//! `IgnoredAny`, `encrypted_content` is read as `IgnoredAny` for its presence only.

mod items;
mod records;

use std::borrow::Cow;
use std::hash::Hasher;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::json::{
    SUMMARY_MAX, clip, elements, is_array, is_object, jcount, jstr, object, one_line,
};
use crate::model::{
    Block, BlockKind, Entry, Problem, PromptKind, Role, Severity, Span, StepInfo, StopReason, Str,
    ToolResult, ToolUse, Transcript, Usage, parse_timestamp,
};
use items::*;
use records::*;

/// Most pending duplicates remembered per list (bounded memory on any input).
const DEDUP_CAP: usize = 512;

/// Most model records of one turn re-keyed when a file turns out to be metered.
const MERGE_CAP: usize = 4096;

type Raw<'a> = &'a RawValue;

/// Line-reader state kept across lines of one file.
#[derive(Debug, Default)]
pub struct State {
    /// `turn_context.model` of the latest turn context (or `thread_settings_applied`).
    model: Option<Box<str>>,
    /// `turn_context.effort` / `thread_settings_applied.thread_settings.reasoning_effort`.
    effort: Option<Box<str>>,
    /// 0-based index of the current API call; keys are `codex-call-{call + 1}`.
    call: u64,
    /// The current call has at least one record with its key.
    call_has_records: bool,
    /// Entry index of the current call's last model record.
    call_last_model: Option<usize>,
    /// A `token_count` with new totals was seen: calls end only at those (and at prompts).
    metered: bool,
    /// A prompt or tool result was read since the last model record.
    input_since_model: bool,
    /// Before the first metering `token_count`: the model records of the current turn and
    /// the call index of the first of them. When a `token_count` then shows the file is
    /// metered, they are re-keyed as the one call it closes.
    unmetered: Vec<usize>,
    unmetered_base: u64,
    /// Last distinct cumulative totals.
    totals: Option<Totals>,
    /// Response items of the current turn whose `event_msg` copy has not been seen.
    items: Vec<Logged>,
    /// Stand-in `event_msg` copies of the current turn whose response item has not been seen.
    events: Vec<Logged>,
    /// A user item was paired with its `user_message` copy (the file logs copies).
    confirmed: bool,
    /// Prompt entries read from user items before the first confirmed prompt.
    preamble_candidates: Vec<usize>,
    /// A user message was read as a real prompt.
    real_prompt_seen: bool,
    /// Between `task_started` and `task_complete` / `turn_aborted`.
    task_open: bool,
    /// Prompts read for the open task.
    task_prompts: u32,
    /// A prompt was read since the last task ended.
    prompt_since_task_end: bool,
    /// A `compacted` was read and no conversation record since.
    compaction_open: bool,
    /// A `session_meta` (or legacy meta) was read.
    session_meta_seen: bool,
    /// A `task_started` was read: this file brackets its turns with tasks.
    tasks_seen: bool,
    /// Inherited history of a fork / sub-agent rollout.
    inherit: Inherit,
    /// `token_usage_record`s not yet named by a compaction: `(response_id, entry, usage)`.
    usage_records: Vec<(Box<str>, usize, Usage)>,
    /// `compacted.compaction_response_id`s not yet matched by a `token_usage_record`.
    compaction_ids: Vec<Box<str>>,
    /// The id of the session being read (its `session_meta.id`; a later one with another id
    /// outside a replay starts another session).
    session: Option<Box<str>>,
    /// Spawned sub-agent threads whose call output has not been read: `(call_id, thread id)`.
    spawned: Vec<(Box<str>, Box<str>)>,
}

/// The three message families Codex logs twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    User,
    Assistant,
    Reasoning,
}

/// One side of a possible duplicate pair (a response item, or an `event_msg` copy).
#[derive(Debug, Clone)]
struct Logged {
    family: Family,
    /// Hashes of the normalised texts (one per text part; reasoning summaries have several).
    hashes: Vec<u64>,
    /// The item id when written (`payload.id` / `item_completed.item.id`, Codex 0.14x).
    id: Option<Box<str>>,
    entry: usize,
    /// Injected context (kept across turn resets: its copy may come after the prompt).
    context: bool,
    /// Copies this item can still absorb (a reasoning item has one copy per summary part).
    slots: usize,
    /// Generation timing of a copy (`item_completed.started_at_ms`, `completed_at_ms`).
    timing: Option<(i64, i64)>,
}

impl Logged {
    fn new(family: Family, hashes: Vec<u64>, id: Option<Box<str>>, entry: usize) -> Logged {
        Logged {
            family,
            slots: hashes.len().max(1),
            hashes,
            id,
            entry,
            context: false,
            timing: None,
        }
    }
}

/// The counterpart of `probe` in `list` (FORMATS.md §2; issue 9 item 1): the same item id
/// when both sides have one; else the same normalised text; else, by structure, a
/// counterpart of the same family in the current turn (the nearest one for user messages,
/// whose copy is written right after the item; the oldest for the model's items, written in
/// order). Context items never pair by structure, and two different ids never pair except
/// for user messages (0.147 gives the copy of a user message its own id).
fn find_pair(list: &[Logged], probe: &Logged) -> Option<usize> {
    let same = |c: &&Logged| c.family == probe.family;
    if let Some(id) = &probe.id
        && let Some(pos) = list
            .iter()
            .position(|c| same(&c) && c.id.as_ref() == Some(id))
    {
        return Some(pos);
    }
    if let Some(pos) = list
        .iter()
        .position(|c| same(&c) && c.hashes.iter().any(|h| probe.hashes.contains(h)))
    {
        return Some(pos);
    }
    let fits = |c: &Logged| {
        c.family == probe.family
            && !c.context
            && !probe.context
            && (probe.family == Family::User
                || c.id.is_none()
                || probe.id.is_none()
                || c.id == probe.id)
    };
    if probe.family == Family::User {
        list.iter().rposition(fits)
    } else {
        list.iter().position(fits)
    }
}

/// Where the inherited history of a fork or sub-agent rollout stands.
#[derive(Debug, Default)]
struct Inherit {
    /// Records are being read as inherited.
    open: bool,
    /// Entry index right after the child's own `session_meta`.
    from: usize,
    /// `subagent_history_start_ordinal`: records with a lower `ordinal` are inherited.
    start_ordinal: Option<u64>,
    /// Without that marker: the instant the replay is stamped with (its first record's).
    instant: Option<i64>,
    /// A child rollout's replay is being read or may still end (a `session_meta` naming a
    /// parent was read, and its replay has not ended at a `trigger_turn`).
    child: bool,
    /// The child's own thread id when it is a UUID ([`uuid_key`]): a record whose `turn_id`
    /// sorts at or after it is the child's own work.
    own_id: Option<u128>,
    /// The child's own thread id as written: its `session_meta` written again (a resume)
    /// opens no second replay.
    child_id: Option<Box<str>>,
}

/// A canonical UUID (`8-4-4-4-12` hex digits, either case) as the number it writes, so that
/// UUIDv7s (turn and thread ids of Codex 0.1xx) compare in time order; `None` otherwise.
fn uuid_key(id: &str) -> Option<u128> {
    let b = id.as_bytes();
    if b.len() != 36 || [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
        return None;
    }
    let mut v: u128 = 0;
    for (i, &c) in b.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            continue;
        }
        v = (v << 4) | u128::from((c as char).to_digit(16)?);
    }
    Some(v)
}

/// How a user-role message reads (FORMATS.md §2: the context preamble; case 15).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UserClass {
    Context,
    LocalCommand,
    Prompt,
}

/// Markers of CLI-injected user messages, wherever they appear.
const CONTEXT_PREFIXES: [&str; 6] = [
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
    "<turn_aborted>",
    "<skill>",
];

impl State {
    /// Reads one complete, non-blank line (`span` excludes the newline) and appends what it
    /// holds to `t`: exactly one entry per line (an `Unparsed` entry plus a problem when the
    /// line is not valid JSON or not an object; an `Other` entry plus a hint when an object
    /// has an unexpected shape). May revise earlier entries: a stand-in `event_msg` copy is
    /// demoted to `Meta` when its response item arrives, preamble user items are demoted to
    /// `Context`, and a call's usage is set on its last model record when its `token_count`
    /// arrives.
    pub fn line(&mut self, source: &str, line: usize, span: Span, t: &mut Transcript) {
        let text = &source[span.clone()];
        let rec: Record = match object(text) {
            Ok(r) => r,
            Err(e) => return malformed(source, line, span, e, t),
        };
        let ts = jstr(rec.timestamp).and_then(|s| parse_timestamp(&s));
        let l = Line {
            source,
            line,
            span,
            ts,
        };
        let outer = jstr(rec.ty);
        // `payload.turn_id` (task and turn events): whose turn the record belongs to.
        let mut turn_id = None;
        let entry = match (rec.payload, outer.as_deref()) {
            (Some(payload), Some(outer)) => match object::<Payload>(payload.get()) {
                Ok(p) => {
                    turn_id = jstr(p.turn_id);
                    self.enveloped(&l, outer, &p, payload, t)
                }
                Err(e) => shape_mismatch(&l, outer, e, t),
            },
            (None, _) if rec.record_type.present => {
                let rt = jstr(rec.record_type.raw).unwrap_or(Cow::Borrowed("record_type"));
                l.entry(Role::Meta, &rt)
            }
            (None, None) if rec.instructions.present || rec.git.present => {
                self.legacy_meta(&l, rec.id, t)
            }
            (None, Some(kind)) if is_item_kind(kind) => match object::<Payload>(text) {
                Ok(p) => self.response_item(&l, &p, l.span_of(text), kind, t),
                Err(e) => shape_mismatch(&l, kind, e, t),
            },
            (_, kind) => {
                // Noted once per type (issue 20 item 11).
                t.note_unknown(
                    "record type",
                    kind.unwrap_or("(no type)"),
                    l.line,
                    l.span.clone(),
                );
                l.entry(Role::Other, kind.unwrap_or("unknown"))
            }
        };
        if !matches!(
            entry.role,
            Role::Meta | Role::Context | Role::Other | Role::CompactBoundary { .. }
        ) {
            self.compaction_open = false;
        }
        let mut entry = entry;
        self.inherited(
            &mut entry,
            rec.ordinal,
            turn_id.as_deref(),
            outer.as_deref(),
            rec.payload,
            t,
        );
        t.entries.push(entry);
    }

    /// Inherited history (FORMATS-2026 §2; issue 9 item 4, issue 20 item 1): in a child
    /// rollout, the records after its own `session_meta` (wherever it is in the file) replay
    /// the parent's history until its own work starts: at `inter_agent_communication_metadata
    /// {trigger_turn: true}` (the records before it are inherited, whatever else said), at
    /// the first record whose `ordinal` reaches `subagent_history_start_ordinal`, or, without
    /// that marker, at the first record whose `turn_id` belongs to the child: turn and thread
    /// ids are UUIDv7s (time-ordered), so a replayed turn's id sorts before the child's own
    /// thread id and the child's own turns' ids after it. The replay's stamps span
    /// milliseconds, so time never decides it, except in rollouts whose ids are not UUIDs
    /// (then: the first record not stamped with the replay's instant).
    fn inherited(
        &mut self,
        entry: &mut Entry,
        ordinal: Option<Raw<'_>>,
        turn_id: Option<&str>,
        outer: Option<&str>,
        payload: Option<Raw<'_>>,
        t: &mut Transcript,
    ) {
        let idx = t.entries.len();
        if !self.inherit.child || idx < self.inherit.from {
            return;
        }
        let trigger = outer == Some("inter_agent_communication_metadata")
            && payload
                .and_then(|p| object::<InterAgent>(p.get()).ok())
                .and_then(|m| m.trigger_turn)
                == Some(true);
        if trigger {
            if self.inherit.start_ordinal.is_none() {
                for e in t.revise_from(self.inherit.from) {
                    e.inherited = true;
                }
            }
            self.inherit.open = false;
            self.inherit.child = false;
            return;
        }
        if !self.inherit.open {
            return;
        }
        let other_instant = match (self.inherit.instant, entry.timestamp_ms()) {
            // Nothing to tell a replay by (no UUIDs, no time): none is assumed.
            (None, None) => true,
            (None, ts) => {
                self.inherit.instant = ts;
                false
            }
            (Some(a), Some(b)) => a != b,
            (Some(_), None) => false,
        };
        if turn_id.is_some_and(|id| uuid_key(id).is_none()) {
            // Turn ids that are not UUIDs cannot be ordered: back to the instant.
            self.inherit.own_id = None;
        }
        let own = match (self.inherit.start_ordinal, &self.inherit.own_id) {
            (Some(start), _) => jcount(ordinal).is_some_and(|o| o >= start),
            (None, Some(own)) => turn_id.and_then(uuid_key).is_some_and(|id| id >= *own),
            (None, None) => other_instant,
        };
        if own {
            self.inherit.open = false;
        } else {
            entry.inherited = true;
        }
    }

    /// An envelope line `{"timestamp","type":outer,"payload"}`.
    fn enveloped(
        &mut self,
        l: &Line,
        outer: &str,
        p: &Payload,
        raw: Raw<'_>,
        t: &mut Transcript,
    ) -> Entry {
        let inner = jstr(p.ty);
        let rt = match &inner {
            Some(i) => format!("{outer}/{i}"),
            None => outer.to_string(),
        };
        match outer {
            "session_meta" => self.session_meta(l, p, Some(raw), t),
            "turn_context" => {
                if let Some(m) = jstr(p.model) {
                    t.meta.model.get_or_insert_with(|| m.to_string());
                    self.model = Some(m.into());
                }
                if let Some(cwd) = jstr(p.cwd) {
                    t.meta.cwd.get_or_insert_with(|| cwd.into_owned());
                }
                if let Some(effort) = jstr(p.effort) {
                    self.effort = Some(effort.into());
                }
                if let Some(policy) = jstr(p.approval_policy) {
                    // Issue 23 item 10: under `untrusted` every command not known safe waits
                    // for the user's approval (analysis::waiting).
                    t.meta.commands_need_approval = policy == "untrusted";
                }
                self.demote_injected_before_context(t);
                l.entry(Role::Context, outer)
            }
            "response_item" => self.response_item(l, p, l.span_of(raw.get()), &rt, t),
            "event_msg" => self.event_msg(l, p, inner.as_deref().unwrap_or(""), &rt, t),
            "compacted" => {
                let mut e = l.entry(
                    Role::CompactBoundary(Box::new(crate::model::CompactBoundary {
                        trigger: None,
                        pre_tokens: None,
                    })),
                    outer,
                );
                if let Some(m) = p.message
                    && let Some(s) = l.str_of(m).filter(|s| !s.is_empty())
                {
                    e.blocks.push(Block {
                        span: l.span_of(m.get()),
                        kind: BlockKind::Text { text: s },
                    });
                }
                self.compaction_open = true;
                if let Some(id) = jstr(p.compaction_response_id) {
                    self.compaction_named(&id, t);
                }
                e
            }
            "token_usage_record" => self.token_usage_record(l, p, outer, t),
            "world_state" => l.entry(Role::Context, outer),
            "inter_agent_communication_metadata" => l.entry(Role::Meta, outer),
            _ => {
                t.note_unknown("record type", &rt, l.line, l.span.clone());
                l.entry(Role::Other, &rt)
            }
        }
    }

    /// `session_meta`: fills the session metadata (first values seen) and starts over the
    /// task state (a resume or fork appends a new `session_meta`).
    fn session_meta(
        &mut self,
        l: &Line,
        p: &Payload,
        raw: Option<Raw<'_>>,
        t: &mut Transcript,
    ) -> Entry {
        let first = !self.session_meta_seen;
        self.session_meta_seen = true;
        if let Some(id) = jstr(p.id) {
            t.meta.session_id.get_or_insert_with(|| id.into_owned());
        }
        if let Some(v) = jstr(p.cli_version) {
            t.meta.version.get_or_insert_with(|| v.into_owned());
        }
        if let Some(cwd) = jstr(p.cwd) {
            t.meta.cwd.get_or_insert_with(|| cwd.into_owned());
        }
        let sub = p
            .source
            .filter(|s| is_object(s))
            .and_then(|s| object::<SourceObj>(s.get()).ok())
            .and_then(|s| s.subagent);
        if first && sub.is_some() {
            t.meta.is_subagent_file = true;
            t.meta.agent_id = jstr(p.id).map(Cow::into_owned);
        }
        // A `session_meta` naming a parent opens a replay, on line 1 or later (a file holding
        // several rollouts); one read inside an open replay is the parent's own (issue 20
        // item 1).
        // Another session in the same file (issue 20 item 3): a `session_meta` with a new id
        // that no open replay holds. Its cumulative totals start from its own baseline.
        let id = jstr(p.id);
        if !first
            && !self.inherit.open
            && let Some(id) = id.as_deref()
            && self.session.as_deref() != Some(id)
        {
            self.session = Some(id.into());
            self.totals = None;
            let parent = raw
                .and_then(|r| object::<Lineage>(r.get()).ok())
                .and_then(|lin| jstr(lin.forked_from_id).or_else(|| jstr(lin.parent_thread_id)))
                .map(Cow::into_owned);
            t.meta.sessions.push(crate::model::SessionStart {
                entry: t.entries.len(),
                line: l.line,
                id: id.to_string(),
                parent,
            });
        } else if first {
            self.session = id.as_deref().map(Into::into);
        }
        let resumed = self.inherit.child_id.is_some()
            && jstr(p.id) == self.inherit.child_id.as_deref().map(Cow::Borrowed);
        if !self.inherit.open && !resumed {
            let lineage = raw.and_then(|r| object::<Lineage>(r.get()).ok());
            if let Some(lin) = lineage {
                let spawn_parent = sub
                    .filter(|s| is_object(s))
                    .and_then(|s| object::<SubagentObj>(s.get()).ok())
                    .and_then(|s| s.thread_spawn)
                    .filter(|s| is_object(s))
                    .and_then(|s| object::<Lineage>(s.get()).ok())
                    .and_then(|l| jstr(l.parent_thread_id));
                let parent = jstr(lin.forked_from_id)
                    .or_else(|| jstr(lin.parent_thread_id))
                    .or(spawn_parent);
                if first && jstr(lin.thread_source).as_deref() == Some("guardian_review") {
                    t.meta.automatic_review = true;
                }
                if let Some(parent) = parent {
                    if first {
                        t.meta.parent_thread_id = Some(parent.into_owned());
                    }
                    self.inherit = Inherit {
                        open: true,
                        from: t.entries.len() + 1,
                        start_ordinal: jcount(lin.subagent_history_start_ordinal),
                        instant: None,
                        child: true,
                        own_id: jstr(p.id).and_then(|id| uuid_key(&id)),
                        child_id: jstr(p.id).map(|id| id.as_ref().into()),
                    };
                }
            }
        }
        self.end_task();
        self.bump();
        l.entry(Role::Context, "session_meta")
    }

    /// The legacy first line `{"id","timestamp","instructions","git"}`.
    fn legacy_meta(&mut self, l: &Line, id: Option<Raw<'_>>, t: &mut Transcript) -> Entry {
        self.session_meta_seen = true;
        if let Some(id) = jstr(id) {
            t.meta.session_id.get_or_insert_with(|| id.into_owned());
        }
        l.entry(Role::Context, "session_meta")
    }

    /// A response item (`kind` = its `type`), enveloped or bare.
    fn response_item(
        &mut self,
        l: &Line,
        p: &Payload,
        pspan: Span,
        rt: &str,
        t: &mut Transcript,
    ) -> Entry {
        let kind = jstr(p.ty).unwrap_or_default();
        match kind.as_ref() {
            "message" => self.message(l, p, rt, t),
            "reasoning" => self.reasoning(l, p, rt, t),
            "function_call"
            | "custom_tool_call"
            | "web_search_call"
            | "local_shell_call"
            | "tool_search_call"
            | "image_generation_call" => {
                let tool = tool_use(l, p, kind.as_ref(), pspan.clone());
                let idx = t.entries.len();
                let mut e = l.entry(Role::Model, rt);
                e.step = Some(Box::new(self.model_step(idx, None, None)));
                e.blocks.push(Block {
                    span: pspan,
                    kind: BlockKind::ToolUse(Box::new(tool)),
                });
                e
            }
            "function_call_output" | "custom_tool_call_output" | "tool_search_output" => {
                self.input_since_model = true;
                let mut e = l.entry(Role::ToolResults, rt);
                let mut result = tool_result(l, p, kind.as_ref());
                if let Some(pos) = self
                    .spawned
                    .iter()
                    .position(|(c, _)| **c == *result.tool_use_id)
                {
                    let (_, thread) = self.spawned.remove(pos);
                    result.subagent = Some(crate::model::SubagentResult {
                        agent_id: Some(thread.into()),
                        ..Default::default()
                    });
                }
                e.blocks.push(Block {
                    span: pspan,
                    kind: BlockKind::ToolResult(Box::new(result)),
                });
                e
            }
            "agent_message" => {
                // A message between agents (collab): injected context, not a prompt.
                let mut e = l.entry(Role::Context, rt);
                e.blocks = content_blocks(l, p.content).0.into();
                e
            }
            "ghost_snapshot" => l.entry(Role::Meta, rt),
            _ => {
                t.note_unknown("record type", rt, l.line, l.span.clone());
                l.entry(Role::Other, rt)
            }
        }
    }

    /// `message` items: developer / system -> Context; user -> Prompt, Steering, Context or
    /// LocalCommand; assistant -> Model text.
    fn message(&mut self, l: &Line, p: &Payload, rt: &str, t: &mut Transcript) -> Entry {
        let (blocks, texts) = content_blocks(l, p.content);
        let role = jstr(p.role).unwrap_or_default();
        let id = jstr(p.id).map(|s| Box::<str>::from(s.as_ref()));
        let idx = t.entries.len();
        let mut e = l.entry(Role::Other, rt);
        e.blocks = blocks.into();
        match role.as_ref() {
            "developer" | "system" => e.role = Role::Context,
            "assistant" => {
                let hash = text_hash(texts.iter().map(|s| s.as_ref()));
                let mut probe = Logged::new(Family::Assistant, vec![hash], id, idx);
                let paired = self.pair_item(t, &mut probe);
                let stop = match jstr(p.phase).as_deref() {
                    Some("final_answer") => Some(StopReason::EndTurn),
                    _ => None,
                };
                e.role = Role::Model;
                let mut step = self.model_step(idx, stop, paired.step);
                merge_timing(&mut step, paired.timing);
                e.step = Some(Box::new(step));
                self.remember(probe);
            }
            "user" => {
                if self.confirmed {
                    self.demote_unpaired_prompts(t);
                }
                let first = texts.first().map(|s| s.as_ref()).unwrap_or("");
                let mut class = self.classify_user(first, None);
                // Outside any task in a file that writes tasks: context re-sent at a resume
                // (FORMATS-2026 §2; issue 9 item 3).
                if class == UserClass::Prompt && self.tasks_seen && !self.task_open {
                    class = UserClass::Context;
                }
                // The text the user typed: `<image>` wrappers around image parts are not part
                // of it (the copy carries the images separately).
                let hash = text_hash(
                    texts
                        .iter()
                        .map(|s| s.as_ref())
                        .filter(|s| !is_image_marker(s)),
                );
                let mut probe = Logged::new(Family::User, vec![hash], id, idx);
                probe.context = class != UserClass::Prompt;
                let paired = self.pair_item(t, &mut probe);
                e.role = match (class, paired.role) {
                    (UserClass::Context, _) => Role::Context,
                    (UserClass::LocalCommand, _) => Role::LocalCommand,
                    (UserClass::Prompt, Some(prev @ (Role::Prompt(_) | Role::Steering))) => {
                        let demoted = self.confirm(t, idx);
                        if demoted && prev == Role::Steering {
                            Role::Prompt(PromptKind::Typed)
                        } else {
                            prev
                        }
                    }
                    // Its copy said it is context (`kind: environment_context`).
                    (UserClass::Prompt, Some(other)) => other,
                    (UserClass::Prompt, None) => {
                        if !self.confirmed && self.preamble_candidates.len() < DEDUP_CAP {
                            self.preamble_candidates.push(idx);
                        }
                        self.new_prompt()
                    }
                };
                // Remembered after `new_prompt`, which forgets the previous turn's items.
                probe.context = !matches!(e.role, Role::Prompt(_) | Role::Steering);
                self.remember(probe);
            }
            _ => {}
        }
        e
    }

    /// `reasoning` items: Model with one Thinking block (first summary text, else first
    /// reasoning text; `encrypted` when only `encrypted_content` holds it).
    fn reasoning(&mut self, l: &Line, p: &Payload, rt: &str, t: &mut Transcript) -> Entry {
        let texts = |field: Option<Raw<'_>>| -> Vec<(Span, Str, u64)> {
            let mut out = Vec::new();
            for el in elements(field) {
                let Ok(item) = object::<ContentItem>(el.get()) else {
                    continue;
                };
                let Some(text) = item.text.and_then(|r| l.str_of(r)) else {
                    continue;
                };
                let hash = text_hash([jstr(item.text).unwrap_or_default().as_ref()]);
                out.push((l.span_of(el.get()), text, hash));
            }
            out
        };
        let summary = texts(p.summary);
        let hashes: Vec<u64> = summary.iter().map(|(_, _, h)| *h).collect();
        let idx = t.entries.len();
        let id = jstr(p.id).map(|s| Box::<str>::from(s.as_ref()));
        let mut probe = Logged::new(Family::Reasoning, hashes, id, idx);
        let paired = self.pair_item(t, &mut probe);
        let mut e = l.entry(Role::Model, rt);
        let mut step = self.model_step(idx, None, paired.step);
        merge_timing(&mut step, paired.timing);
        e.step = Some(Box::new(step));
        self.remember(probe);
        let first = summary
            .into_iter()
            .next()
            .or_else(|| texts(p.content).into_iter().next());
        let block = match first {
            Some((span, text, _)) => Block {
                span,
                kind: BlockKind::Thinking {
                    text,
                    encrypted: false,
                },
            },
            None => Block {
                span: e.span.clone(),
                kind: BlockKind::Thinking {
                    text: l.empty_str(),
                    encrypted: p.encrypted_content.is_some(),
                },
            },
        };
        e.blocks.push(block);
        e
    }

    /// An `event_msg` line; `inner` is its payload type.
    fn event_msg(
        &mut self,
        l: &Line,
        p: &Payload,
        inner: &str,
        rt: &str,
        t: &mut Transcript,
    ) -> Entry {
        match inner {
            "user_message" => {
                let images = elements(p.images)
                    .into_iter()
                    .map(|img| (img, image_of(Some(img))))
                    .chain(
                        elements(p.local_images)
                            .into_iter()
                            .map(|img| (img, ("image/unknown".into(), 0))),
                    )
                    .collect();
                let copy = Copy {
                    texts: p.message.map(|m| vec![m]).unwrap_or_default(),
                    id: None,
                    phase: None,
                    timing: None,
                };
                self.user_copy(l, &copy, jstr(p.kind).as_deref(), images, rt, t)
            }
            "agent_message" => {
                let copy = Copy {
                    texts: p.message.map(|m| vec![m]).unwrap_or_default(),
                    id: None,
                    phase: jstr(p.phase).map(Cow::into_owned),
                    timing: None,
                };
                self.model_copy(l, Family::Assistant, &copy, rt, t)
            }
            "agent_reasoning" => {
                let copy = Copy {
                    texts: p.text.map(|m| vec![m]).unwrap_or_default(),
                    id: None,
                    phase: None,
                    timing: None,
                };
                self.model_copy(l, Family::Reasoning, &copy, rt, t)
            }
            "item_completed" => self.item_completed(l, p, rt, t),
            "token_usage_record" => self.token_usage_record(l, p, rt, t),
            "collab_agent_spawn_end" => {
                self.spawn_end(p, t);
                l.entry(Role::Meta, rt)
            }
            "thread_settings_applied" => {
                // Codex 0.14x: the model and effort the following requests run with.
                if let Some(ts) = p.thread_settings.filter(|r| is_object(r))
                    && let Ok(ts) = object::<ThreadSettings>(ts.get())
                {
                    if let Some(m) = jstr(ts.model) {
                        t.meta.model.get_or_insert_with(|| m.to_string());
                        self.model = Some(m.into());
                    }
                    if let Some(e) = jstr(ts.reasoning_effort) {
                        self.effort = Some(e.into());
                    }
                }
                l.entry(Role::Meta, rt)
            }
            "token_count" => self.token_count(l, p, rt, t),
            "task_started" => {
                self.bump();
                if self.confirmed {
                    self.demote_unpaired_prompts(t);
                }
                self.task_open = true;
                self.tasks_seen = true;
                self.task_prompts = u32::from(self.prompt_since_task_end);
                l.entry(
                    Role::TurnStarted {
                        turn_id: jstr(p.turn_id).map(|s| Box::new(s.into())),
                    },
                    rt,
                )
            }
            "task_complete" => {
                if self.confirmed {
                    self.demote_unpaired_prompts(t);
                }
                self.end_task();
                let role = Role::TurnCompleted(Box::new(crate::model::TurnCompleted {
                    turn_id: jstr(p.turn_id).map(|s| s.into()),
                    duration_ms: jcount(p.duration_ms),
                    time_to_first_token_ms: jcount(p.time_to_first_token_ms),
                }));
                l.entry(role, rt)
            }
            "turn_aborted" => {
                if self.confirmed {
                    self.demote_unpaired_prompts(t);
                }
                self.end_task();
                l.entry(Role::Interruption, rt)
            }
            "thread_name_updated" => {
                if let Some(name) = jstr(p.thread_name).filter(|n| !n.trim().is_empty()) {
                    t.meta.title = Some(name.trim().to_string());
                    t.meta.title_source = Some(crate::model::TitleSource::ThreadName);
                }
                l.entry(Role::Meta, rt)
            }
            "context_compacted" => {
                if std::mem::take(&mut self.compaction_open) {
                    l.entry(Role::Meta, rt)
                } else {
                    l.entry(
                        Role::CompactBoundary(Box::new(crate::model::CompactBoundary {
                            trigger: None,
                            pre_tokens: None,
                        })),
                        rt,
                    )
                }
            }
            _ => l.entry(Role::Meta, rt),
        }
    }

    /// `event_msg/item_completed` (Codex 0.147+, which writes no `user_message` /
    /// `agent_message` copies): the copy of a `UserMessage`, `AgentMessage` or `Reasoning`
    /// item, paired like the older copies, with the item's generation timing
    /// (`started_at_ms`, `completed_at_ms`). Other item types are `Meta`.
    fn item_completed(&mut self, l: &Line, p: &Payload, rt: &str, t: &mut Transcript) -> Entry {
        let Some(item) = p
            .item
            .filter(|i| is_object(i))
            .and_then(|i| object::<CompletedItem>(i.get()).ok())
        else {
            return l.entry(Role::Meta, rt);
        };
        let kind = jstr(item.ty).unwrap_or_default();
        let rt = format!("{rt}/{kind}");
        let timing = match (jcount(p.started_at_ms), jcount(p.completed_at_ms)) {
            (Some(a), Some(b)) if b >= a => Some((a as i64, b as i64)),
            _ => None,
        };
        let id = jstr(item.id).map(Cow::into_owned);
        match kind.as_ref() {
            "UserMessage" => {
                let copy = Copy {
                    texts: item_texts(item.content),
                    id,
                    phase: None,
                    timing,
                };
                self.user_copy(l, &copy, None, Vec::new(), &rt, t)
            }
            "AgentMessage" => {
                let copy = Copy {
                    texts: item_texts(item.content),
                    id,
                    phase: jstr(item.phase).map(Cow::into_owned),
                    timing,
                };
                self.model_copy(l, Family::Assistant, &copy, &rt, t)
            }
            "Reasoning" => {
                let copy = Copy {
                    texts: item_texts(item.summary_text),
                    id,
                    phase: None,
                    timing,
                };
                self.model_copy(l, Family::Reasoning, &copy, &rt, t)
            }
            _ => l.entry(Role::Meta, &rt),
        }
    }

    /// A copy of an assistant message or reasoning item: `Meta` (with `copy_of`) when its
    /// item is in the turn, else a stand-in `Model` record until the item arrives.
    fn model_copy(
        &mut self,
        l: &Line,
        family: Family,
        copy: &Copy,
        rt: &str,
        t: &mut Transcript,
    ) -> Entry {
        let idx = t.entries.len();
        let decoded: Vec<Cow<str>> = copy.texts.iter().filter_map(|r| jstr(Some(*r))).collect();
        let hashes = if family == Family::Reasoning {
            decoded.iter().map(|s| text_hash([s.as_ref()])).collect()
        } else {
            vec![text_hash(decoded.iter().map(|s| s.as_ref()))]
        };
        let mut probe = Logged::new(family, hashes, copy.id.as_deref().map(Into::into), idx);
        probe.timing = copy.timing;
        if let Some(item) = self.copy_pairs_item(t, &probe) {
            let mut e = l.entry(Role::Meta, rt);
            e.set_copy_of(Some(item));
            return e;
        }
        let stop = match copy.phase.as_deref() {
            Some("final_answer") => Some(StopReason::EndTurn),
            _ => None,
        };
        let mut e = l.entry(Role::Model, rt);
        let mut step = self.model_step(idx, stop, None);
        merge_timing(&mut step, copy.timing);
        e.step = Some(Box::new(step));
        let mut first = true;
        for r in &copy.texts {
            let Some(s) = l.str_of(r) else { continue };
            let kind = if family == Family::Reasoning {
                // One thinking block per record, as for reasoning items.
                if !first {
                    continue;
                }
                BlockKind::Thinking {
                    text: s,
                    encrypted: false,
                }
            } else {
                BlockKind::Text { text: s }
            };
            first = false;
            e.blocks.push(Block {
                span: l.span_of(r.get()),
                kind,
            });
        }
        if family == Family::Reasoning && e.blocks.is_empty() {
            e.blocks.push(Block {
                span: e.span.clone(),
                kind: BlockKind::Thinking {
                    text: l.empty_str(),
                    encrypted: false,
                },
            });
        }
        self.push_logged(false, probe);
        e
    }

    /// A copy of a user message (`event_msg/user_message`, `item_completed` `UserMessage`):
    /// Meta when its user item is in the turn, else a stand-in prompt (or context, for
    /// `kind: user_instructions | environment_context` and preamble text). `images` are the
    /// copy's `images` / `local_images` with their media type and base64 length.
    fn user_copy(
        &mut self,
        l: &Line,
        copy: &Copy,
        kind: Option<&str>,
        images: Vec<(Raw<'_>, (Box<str>, usize))>,
        rt: &str,
        t: &mut Transcript,
    ) -> Entry {
        let idx = t.entries.len();
        let decoded: Vec<Cow<str>> = copy.texts.iter().filter_map(|r| jstr(Some(*r))).collect();
        let first = decoded.first().map(|s| s.as_ref()).unwrap_or("");
        let class = self.classify_user(first, kind);
        let hash = text_hash(decoded.iter().map(|s| s.as_ref()));
        let mut probe = Logged::new(
            Family::User,
            vec![hash],
            copy.id.as_deref().map(Into::into),
            idx,
        );
        probe.context = class != UserClass::Prompt;
        if let Some(item) = self.copy_pairs_item(t, &probe) {
            self.confirmed_user(t, item);
            let mut e = l.entry(Role::Meta, rt);
            e.set_copy_of(Some(item));
            return e;
        }
        let role = match class {
            UserClass::Context => Role::Context,
            UserClass::LocalCommand => Role::LocalCommand,
            UserClass::Prompt => self.new_prompt(),
        };
        self.push_logged(false, probe);
        let mut e = l.entry(role, rt);
        for r in &copy.texts {
            if let Some(s) = l.str_of(r) {
                e.blocks.push(Block {
                    span: l.span_of(r.get()),
                    kind: BlockKind::Text { text: s },
                });
            }
        }
        for (img, (media_type, data_len)) in images {
            e.blocks.push(Block {
                span: l.span_of(img.get()),
                kind: BlockKind::Image {
                    media_type,
                    data_len,
                },
            });
        }
        e
    }

    /// A user item at entry `item` got its copy: it is a confirmed prompt (and earlier
    /// preamble candidates become context).
    fn confirmed_user(&mut self, t: &mut Transcript, item: usize) {
        let is_prompt = t
            .entries
            .get(item)
            .is_some_and(|e| matches!(e.role, Role::Prompt(_) | Role::Steering));
        if is_prompt
            && self.confirm(t, item)
            && let Some(e) = t.revise(item)
        {
            e.role = Role::Prompt(PromptKind::Typed);
        }
    }

    /// `token_usage_record {response_id, usage}` (Codex 0.14x): the usage of one response,
    /// counted only when a `compacted.compaction_response_id` names it (the compaction
    /// request, which no `token_count` meters; FORMATS-2026 §2). Meta; the usage is set on
    /// this entry as its own step once named, in either order.
    fn token_usage_record(&mut self, l: &Line, p: &Payload, rt: &str, t: &mut Transcript) -> Entry {
        let e = l.entry(Role::Meta, rt);
        let (Some(id), Some(u)) = (
            jstr(p.response_id),
            p.usage.and_then(|u| object::<Totals>(u.get()).ok()),
        ) else {
            return e;
        };
        let usage = Usage {
            input: u
                .input_tokens
                .saturating_sub(u.cached_input_tokens)
                .saturating_sub(u.cache_write_input_tokens),
            output: u.output_tokens,
            cache_creation: u.cache_write_input_tokens,
            cache_read: u.cached_input_tokens,
            reasoning: u.reasoning_output_tokens,
        };
        let mut e = e;
        if let Some(pos) = self.compaction_ids.iter().position(|c| **c == *id) {
            self.compaction_ids.remove(pos);
            e.step = Some(Box::new(compaction_step(&id, self.model.clone(), usage)));
            return e;
        }
        if self.usage_records.len() >= DEDUP_CAP {
            self.usage_records.remove(0);
        }
        self.usage_records
            .push((id.as_ref().into(), t.entries.len(), usage));
        e
    }

    /// A compaction names the response that produced it.
    fn compaction_named(&mut self, id: &str, t: &mut Transcript) {
        if self.compaction_ids.len() >= DEDUP_CAP {
            self.compaction_ids.remove(0);
        }
        self.compaction_ids.push(id.into());
        self.compaction_named_pending(t);
    }

    /// Sets the usage of every `token_usage_record` a compaction has named.
    fn compaction_named_pending(&mut self, t: &mut Transcript) {
        let ids = &mut self.compaction_ids;
        let model = self.model.clone();
        self.usage_records.retain(|(rid, entry, usage)| {
            let Some(pos) = ids.iter().position(|c| c == rid) else {
                return true;
            };
            ids.remove(pos);
            if let Some(e) = t.revise(*entry) {
                e.step = Some(Box::new(compaction_step(rid, model.clone(), *usage)));
            }
            false
        });
    }

    /// `event_msg/collab_agent_spawn_end {call_id, new_thread_id, new_agent_nickname,
    /// new_agent_role}` (Codex 0.14x): the call with that `call_id` spawned the sub-agent
    /// thread `new_thread_id`. The call gets a `SubagentSpawn` (nickname, role) and its output
    /// a `SubagentResult` naming the thread (now, or when the output arrives), so the call is a
    /// sub-agent call linked by thread id, never by time.
    fn spawn_end(&mut self, p: &Payload, t: &mut Transcript) {
        let (Some(call), Some(thread)) = (jstr(p.call_id), jstr(p.new_thread_id)) else {
            return;
        };
        let spawn = crate::model::SubagentSpawn {
            description: jstr(p.new_agent_nickname).map(Cow::into_owned),
            agent_type: jstr(p.new_agent_role).map(Cow::into_owned),
        };
        // The latest call and output with that id (ids are unique in real rollouts).
        let from = t.entries.len().saturating_sub(MERGE_CAP);
        let (mut call_seen, mut output_seen) = (false, false);
        for e in t.revise_from(from).iter_mut().rev() {
            for b in &mut e.blocks {
                match &mut b.kind {
                    BlockKind::ToolUse(u) if !call_seen && *u.id == *call => {
                        call_seen = true;
                        u.subagent.get_or_insert(spawn.clone());
                    }
                    BlockKind::ToolResult(r) if !output_seen && *r.tool_use_id == *call => {
                        output_seen = true;
                        r.subagent = Some(crate::model::SubagentResult {
                            agent_id: Some(thread.to_string()),
                            ..Default::default()
                        });
                    }
                    _ => {}
                }
            }
            if call_seen {
                break; // the output comes after its call
            }
        }
        if !output_seen {
            if self.spawned.len() >= DEDUP_CAP {
                self.spawned.remove(0);
            }
            self.spawned
                .push((call.as_ref().into(), thread.as_ref().into()));
        }
    }

    /// `event_msg/token_count`: Meta; new totals end the current call and set its usage.
    fn token_count(&mut self, l: &Line, p: &Payload, rt: &str, t: &mut Transcript) -> Entry {
        let mut e = l.entry(Role::Meta, rt);
        let Some(info) = p.info else { return e };
        let totals = match object::<TokenInfo>(info.get()) {
            Ok(i) => i.total_token_usage,
            Err(err) => {
                t.problems.push(Problem {
                    line: l.line,
                    span: l.span_of(info.get()),
                    severity: Severity::Hint,
                    message: format!("token_count info has an unexpected shape: {err}"),
                });
                None
            }
        };
        let Some(new) = totals else { return e };
        if self.totals == Some(new) {
            return e; // a re-emit (rate-limit refresh): counts nothing
        }
        let base = match self.totals {
            Some(prev) if new.covers(&prev) => prev,
            _ => Totals::default(), // first totals, or counting restarted
        };
        self.totals = Some(new);
        let d = Totals {
            input_tokens: new.input_tokens - base.input_tokens,
            cached_input_tokens: new.cached_input_tokens - base.cached_input_tokens,
            cache_write_input_tokens: new.cache_write_input_tokens - base.cache_write_input_tokens,
            output_tokens: new.output_tokens - base.output_tokens,
            reasoning_output_tokens: new.reasoning_output_tokens - base.reasoning_output_tokens,
        };
        if d == Totals::default() {
            return e;
        }
        let usage = Usage {
            input: d
                .input_tokens
                .saturating_sub(d.cached_input_tokens)
                .saturating_sub(d.cache_write_input_tokens),
            output: d.output_tokens,
            cache_creation: d.cache_write_input_tokens,
            cache_read: d.cached_input_tokens,
            reasoning: d.reasoning_output_tokens,
        };
        if !self.metered {
            self.metered = true;
            self.merge_unmetered(t);
        }
        let target = self
            .call_last_model
            .and_then(|i| t.revise(i))
            .and_then(|e| e.step.as_mut());
        match target {
            Some(step) => step.usage = Some(step.usage.map_or(usage, |u| u.add(usage))),
            None => {
                // A call with no model record (e.g. a compaction request): the usage stays
                // on this Meta entry so file totals remain exact.
                e.step = Some(Box::new(StepInfo {
                    key: self.key(),
                    model: self.model.clone(),
                    usage: Some(usage),
                    ..StepInfo::default()
                }));
            }
        }
        self.call_has_records = true;
        self.bump();
        e
    }

    /// How a user-role text reads. `kind` is `user_message.kind` when given.
    fn classify_user(&self, text: &str, kind: Option<&str>) -> UserClass {
        if matches!(kind, Some("user_instructions" | "environment_context")) {
            return UserClass::Context;
        }
        let s = text.trim_start();
        if s.starts_with("<user_shell_command>") {
            return UserClass::LocalCommand;
        }
        if CONTEXT_PREFIXES.iter().any(|p| s.starts_with(p)) {
            return UserClass::Context;
        }
        if !self.real_prompt_seen {
            let first_line = s.lines().next().unwrap_or("");
            if first_line.starts_with('#') && first_line.contains("AGENTS.md") {
                return UserClass::Context;
            }
            if wrapped_in_one_tag(s.trim_end()) {
                return UserClass::Context;
            }
        }
        UserClass::Prompt
    }

    /// Side effects of a new (non-duplicate) prompt; returns its role.
    fn new_prompt(&mut self) -> Role {
        let steering = self.task_open && self.task_prompts > 0;
        if !steering {
            self.reset_turn();
            self.bump();
            self.unmetered.clear();
        }
        if self.task_open {
            self.task_prompts += 1;
        }
        self.prompt_since_task_end = true;
        self.input_since_model = true;
        self.real_prompt_seen = true;
        if steering {
            Role::Steering
        } else {
            Role::Prompt(PromptKind::Typed)
        }
    }

    /// A user item at `prompt` was paired with its copy. The first time, user items read as
    /// prompts before it become `Context` (injected messages get no copy). Returns true when
    /// some were demoted.
    fn confirm(&mut self, t: &mut Transcript, prompt: usize) -> bool {
        if self.confirmed {
            return false;
        }
        self.confirmed = true;
        let mut demoted = false;
        for i in std::mem::take(&mut self.preamble_candidates) {
            if i >= prompt {
                continue;
            }
            if t.entries
                .get(i)
                .is_some_and(|e| matches!(e.role, Role::Prompt(_) | Role::Steering))
                && let Some(e) = t.revise(i)
            {
                e.role = Role::Context;
                demoted = true;
            }
        }
        if demoted && self.task_open {
            self.task_prompts = 1;
        }
        demoted
    }

    /// A task ended (or a new session started): its prompts and duplicates are done. The
    /// current call stays open: a `token_count` after `turn_aborted` still belongs to it.
    fn end_task(&mut self) {
        self.task_open = false;
        self.task_prompts = 0;
        self.prompt_since_task_end = false;
        self.reset_turn();
    }

    /// Forgets the unpaired duplicates of the turn that ended (context messages excepted).
    fn reset_turn(&mut self) {
        self.items.retain(|c| c.context);
        self.events.retain(|c| c.context);
    }

    /// Remembers a response item that can still absorb copies.
    fn remember(&mut self, probe: Logged) {
        if probe.slots > 0 {
            self.push_logged(true, probe);
        }
    }

    fn push_logged(&mut self, item: bool, logged: Logged) {
        let list = if item {
            &mut self.items
        } else {
            &mut self.events
        };
        if list.len() >= DEDUP_CAP {
            list.remove(0);
        }
        list.push(logged);
    }

    /// A copy arrived: pairs it with its response item if the turn has one (consuming one of
    /// the item's slots, and giving the item's step the copy's timing). Returns the item's
    /// entry index.
    fn copy_pairs_item(&mut self, t: &mut Transcript, probe: &Logged) -> Option<usize> {
        let pos = find_pair(&self.items, probe)?;
        let item = &mut self.items[pos];
        let entry = item.entry;
        if let Some(h) = probe.hashes.iter().find(|h| item.hashes.contains(h)) {
            let h = *h;
            if let Some(i) = item.hashes.iter().position(|x| *x == h) {
                item.hashes.remove(i);
            }
        }
        item.slots = item.slots.saturating_sub(1);
        if item.slots == 0 {
            self.items.remove(pos);
        }
        if let Some(step) = t.revise(entry).and_then(|e| e.step.as_mut()) {
            merge_timing(step, probe.timing);
        }
        Some(entry)
    }

    /// A response item arrived: stand-in copies of it (by id, text, or structure for the
    /// first one) are demoted to `Meta` with `copy_of` = the item (blocks and step removed).
    /// `probe.slots` is reduced by the copies absorbed.
    fn pair_item(&mut self, t: &mut Transcript, probe: &mut Logged) -> Paired {
        let mut paired = Paired::default();
        let mut first = true;
        while probe.slots > 0 {
            let pos = if first {
                find_pair(&self.events, probe)
            } else {
                // Further copies of a multi-part reasoning item: by id or text only.
                self.events.iter().position(|c| {
                    c.family == probe.family
                        && ((probe.id.is_some() && c.id == probe.id)
                            || c.hashes.iter().any(|h| probe.hashes.contains(h)))
                })
            };
            let Some(pos) = pos else { break };
            first = false;
            let stand_in = self.events.remove(pos);
            probe.slots -= 1;
            if let Some(h) = stand_in.hashes.first()
                && let Some(i) = probe.hashes.iter().position(|x| x == h)
            {
                probe.hashes.remove(i);
            }
            paired.timing = match (paired.timing, stand_in.timing) {
                (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
                (x, y) => x.or(y),
            };
            let Some(e) = t.revise(stand_in.entry) else {
                continue;
            };
            paired.role.get_or_insert(e.role.clone());
            e.role = Role::Meta;
            e.blocks.clear();
            e.set_copy_of(Some(probe.entry));
            if let Some(step) = e.step.take()
                && step.usage.is_some()
            {
                paired.step = Some(*step);
            }
            if self.call_last_model == Some(stand_in.entry) {
                self.call_last_model = None;
            }
        }
        paired
    }

    /// In a file that writes user-message copies, a user item that got none by the next
    /// user item or task boundary is context, not a prompt (FORMATS-2026 §2; issue 9 item 3).
    /// A `turn_context` arrived: a user item still without its `user_message` copy (in a file
    /// that logs copies), written in the same millisecond as the prompt of its turn that got
    /// one, is context the CLI injected with that prompt, not a prompt queued by the user
    /// (issue 20 item 7). It becomes `Context` and no longer counts as the task's prompt.
    fn demote_injected_before_context(&mut self, t: &mut Transcript) {
        if !self.confirmed {
            return;
        }
        let mut demoted = 0;
        self.items.retain(|c| {
            if c.family != Family::User || c.context {
                return true;
            }
            let Some(e) = t.entries.get(c.entry) else {
                return true;
            };
            if e.role != Role::Steering {
                return true;
            }
            let Some(ts) = e.timestamp_ms() else {
                return true;
            };
            // The prompt of its turn: the nearest earlier prompt entry (a few lines back).
            let start = c.entry.saturating_sub(16);
            let prompt = (start..c.entry)
                .rev()
                .find(|&i| matches!(t.entries[i].role, Role::Prompt(_)));
            let same_ms = prompt.is_some_and(|i| t.entries[i].timestamp_ms() == Some(ts));
            if !same_ms {
                return true;
            }
            if let Some(e) = t.revise(c.entry) {
                e.role = Role::Context;
                demoted += 1;
            }
            false
        });
        if self.task_open {
            self.task_prompts = self.task_prompts.saturating_sub(demoted);
        }
    }

    fn demote_unpaired_prompts(&mut self, t: &mut Transcript) {
        let mut demoted = 0;
        self.items.retain(|c| {
            if c.family != Family::User || c.context {
                return true;
            }
            if t.entries
                .get(c.entry)
                .is_some_and(|e| matches!(e.role, Role::Prompt(_) | Role::Steering))
                && let Some(e) = t.revise(c.entry)
            {
                e.role = Role::Context;
                demoted += 1;
            }
            false
        });
        if self.task_open {
            self.task_prompts = self.task_prompts.saturating_sub(demoted);
        }
    }

    /// Step info for a model record at entry `idx`. A record that replaces a stand-in which
    /// already carries its call's usage takes over that step.
    fn model_step(
        &mut self,
        idx: usize,
        stop: Option<StopReason>,
        inherited: Option<StepInfo>,
    ) -> StepInfo {
        if let Some(mut step) = inherited {
            if stop.is_some() {
                step.stop = stop;
            }
            return step;
        }
        if !self.metered {
            if self.input_since_model {
                self.bump();
            }
            if self.unmetered.is_empty() {
                self.unmetered_base = self.call;
            }
            if self.unmetered.len() < MERGE_CAP {
                self.unmetered.push(idx);
            }
        }
        self.input_since_model = false;
        self.call_has_records = true;
        self.call_last_model = Some(idx);
        StepInfo {
            key: self.key(),
            model: self.model.clone(),
            effort: self.effort.clone(),
            stop,
            ..StepInfo::default()
        }
    }

    /// The first `token_count` with new totals closes one API call: the model records of the
    /// turn read before it (split at tool results while the file looked unmetered) become
    /// that one call.
    fn merge_unmetered(&mut self, t: &mut Transcript) {
        let list = std::mem::take(&mut self.unmetered);
        if list.is_empty() || list.len() >= MERGE_CAP {
            return;
        }
        self.call = self.unmetered_base;
        self.call_has_records = true;
        let key = self.key();
        for i in list {
            if let Some(step) = t.revise(i).and_then(|e| e.step.as_mut()) {
                step.key = key.clone();
                self.call_last_model = Some(i);
            }
        }
    }

    fn key(&self) -> Box<str> {
        format!("codex-call-{}", self.call + 1).into()
    }

    /// Ends the current call if it has records.
    fn bump(&mut self) {
        if self.call_has_records {
            self.call += 1;
            self.call_has_records = false;
            self.call_last_model = None;
        }
    }
}

/// What pairing a response item with earlier stand-ins found.
#[derive(Default)]
struct Paired {
    /// Role of the first demoted stand-in.
    role: Option<Role>,
    /// Step of a demoted stand-in that carried usage.
    step: Option<StepInfo>,
    /// Generation timing of the demoted stand-ins.
    timing: Option<(i64, i64)>,
}

/// Detection (agent registry, FORMATS.md §2): `{"timestamp","type","payload"}` with `type` in
/// `session_meta`, `turn_context`, `response_item`, `event_msg`, `compacted`; without the
/// Claude envelope also any other `type` with a `payload` and a `timestamp` (`world_state`, …),
/// and legacy Codex: a bare meta object `{"id","timestamp","instructions","git"}`
/// (`instructions` may be `null`), `{"record_type":"state"}` lines, bare response items
/// (`{"type":"message","role":…}`, `{"type":"function_call",…}`, …).
pub fn detect(p: &super::agents::Probe) -> bool {
    let ty = p.ty();
    if p.val("payload")
        && matches!(
            ty,
            Some("session_meta" | "turn_context" | "response_item" | "event_msg" | "compacted")
        )
    {
        return true;
    }
    if p.claude_envelope() {
        return false;
    }
    if p.has("instructions") || p.has("record_type") {
        return true;
    }
    if p.val("payload") && p.has("timestamp") && ty.is_some() {
        return true;
    }
    if ty.is_none() && p.has("git") && p.has("timestamp") {
        return true;
    }
    match ty {
        Some("message") => p.has("role"),
        Some(
            "reasoning"
            | "function_call"
            | "function_call_output"
            | "custom_tool_call"
            | "custom_tool_call_output"
            | "local_shell_call"
            | "web_search_call",
        ) => true,
        _ => false,
    }
}

impl super::agents::LineReader for State {
    fn line(&mut self, source: &str, line: usize, span: Span, t: &mut Transcript) {
        State::line(self, source, line, span, t);
    }
}

/// The entry a grown rollout's tail is read from, given its last turn's opener (agent
/// registry `tail_start`, the session index's tail read): the first of the records right
/// before the opener that belong to no turn's content (task start, context, settings, event
/// copies, token counts, the previous task's completion), so that reading from there pairs
/// the same records as the whole file.
pub fn tail_start(t: &Transcript, opener: usize) -> usize {
    let mut i = opener;
    while i > 0 {
        let e = &t.entries[i - 1];
        let bookkeeping = e.copy_of().is_some()
            || matches!(
                e.role,
                Role::Meta
                    | Role::Context
                    | Role::TurnStarted { .. }
                    | Role::TurnCompleted { .. }
                    | Role::Other
            );
        if !bookkeeping || e.inherited {
            break;
        }
        i -= 1;
    }
    i
}
