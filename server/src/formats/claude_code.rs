//! Claude Code session files (FORMATS.md §1), versions 1.0.24 – 2.1.x.
//!
//! [`State::line`] reads one JSONL line into exactly one [`Entry`]: typed, borrowed serde
//! structs (`raw`), content blocks read one by one (`blocks`), byte spans by pointer arithmetic
//! on `&RawValue`s borrowed from the line. Roles follow FORMATS.md §0 (turn boundary) and §1.8
//! (commands, meta rows, interruptions); steering records are paired across lines
//! (`steering`, cases 07 and 08). [`discover_subagents`] finds the sub-agent files of a session
//! (FORMATS.md §1.1, case 20).
//!
//! Roles, first matching rule wins:
//!
//! | record | role |
//! |---|---|
//! | `user` with a `tool_result` block (even `isMeta`) | `ToolResults` (errors and sub-agent totals from `toolUseResult`) |
//! | `user` `isCompactSummary` | `CompactSummary` |
//! | `user` `isMeta` | `Meta`; if its `parentUuid` is the last `<command-name>` line, that line becomes `Prompt(Command)` |
//! | `user` text starting `<task-notification>` | `Wake(TaskNotification)` |
//! | `user` text starting `[Request interrupted by user` | `Interruption` |
//! | `user` `<local-command-caveat>` / `Caveat: The messages below…` | `Meta` |
//! | `user` `<local-command-…>`, `<bash-input>`, `<bash-stdout>`, `<bash-stderr>`, `<command-name>` first | `LocalCommand` |
//! | `user` `<command-message>` first (`/init`, custom commands) | `Prompt(Command)` |
//! | `user` with no text and no image | `Meta` |
//! | other `user` (string, text / image blocks) | `Prompt(Typed)` (sidechain ones keep `sidechain: true`) |
//! | `assistant` | `Model` with a [`StepInfo`] |
//! | `system/compact_boundary`, `turn_duration`, `local_command` | `CompactBoundary`, `TurnDuration`, `LocalCommand`; other subtypes `Meta` |
//! | `attachment/queued_command`, `queue-operation` | `Steering` or `Meta` (pairing rules in `steering`) |
//! | other `attachment`, `progress`, envelope-less types of FORMATS.md §1.3 | `Meta` (titles go to `SessionMeta::title`) |
//! | any other `type` | `Other`, with one Hint problem per type and file |
//!
//! `record_type` is `type`, or `type/subtype` for `system/<subtype>`, `attachment/<type>`,
//! `progress/<data.type>` and `queue-operation/<operation>`. `SessionMeta::is_subagent_file`
//! counts envelope records only (those with `uuid` or `isSidechain`).
//!
//! Failure handling (DESIGN.md §7): a line that is not JSON becomes `Unparsed` plus a warning;
//! a line whose string escapes hold a lone surrogate (`\udcb2`, which serde rejects in
//! decoded strings) is read again from a copy where each lone surrogate escape is replaced by
//! `\ufffd` (same length, so spans still index the source); a valid JSON object that still
//! cannot be read is kept as `Other` with a warning.

pub mod aside;
mod blocks;
mod raw;
mod steering;
pub mod subagents;

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use serde::de::IgnoredAny;

use self::blocks::{Ctx, decode_prefix};
use self::raw::Record;
use self::steering::Steering;
use crate::model::{
    Block, BlockKind, Entry, Problem, PromptKind, Role, Severity, SharedStr, Span, StepInfo,
    StopReason, TitleSource, Transcript, Usage, WakeKind, parse_timestamp,
};

pub use self::blocks::{SUMMARY_MAX, one_line};
pub use self::subagents::discover_subagents;

/// Record types without conversation content that FORMATS.md §1.3 lists (real, schema or
/// catalog): read as [`Role::Meta`]. Any other unknown `type` is [`Role::Other`].
const META_TYPES: &[&str] = &[
    "file-history-snapshot",
    "permission-mode",
    "last-prompt",
    "agent-name",
    "pr-link",
    "agent-setting",
    "bridge-session",
    "worktree-state",
    "mode",
    "frame-link",
    "started",
    "result",
    "relocated",
    "atis-latch",
    "cost-state",
    "file-history-delta",
];

/// `system` subtypes FORMATS.md §1.3 and FORMATS-2026 list (real, schema or catalog; `""` is
/// 1.0.x hook chatter). Any other is noted in [`Transcript::unknown`] (issue 20 item 11).
const KNOWN_SYSTEM_SUBTYPES: &[&str] = &[
    "",
    "compact_boundary",
    "microcompact_boundary",
    "turn_duration",
    "local_command",
    "stop_hook_summary",
    "away_summary",
    "api_error",
    "api_refusal",
    "model_refusal_fallback",
    "error",
    "informational",
    "bridge_status",
    "scheduled_task_fire",
    "session_start",
];

/// `attachment.type`s seen in real files, the schema and the issue 20 item 11 list (plus the
/// `hook_*` and `plan_mode*` families). Any other is noted in [`Transcript::unknown`].
const KNOWN_ATTACHMENTS: &[&str] = &[
    "",
    "queued_command",
    "task_reminder",
    "todo_reminder",
    "deferred_tools_delta",
    "mcp_instructions_delta",
    "companion_intro",
    "compact_file_reference",
    "agent_listing_delta",
    "total_tokens_reminder",
    "prompt_snapshot",
    "skill_listing",
    "command_permissions",
    "auto_mode",
    "ultra_effort_enter",
    "ultra_effort_exit",
    "task_status",
    "silent_turn_reminder",
    "read_truncation_notice",
    "nested_memory",
    "invoked_skills",
    "file",
    "directory",
    "edited_text_file",
    "edited_image_file",
    "dynamic_skill",
    "date_change",
    "budget_usd",
    "batching_reminder_sent",
    "selected_lines_in_ide",
    "opened_file_in_ide",
    "diagnostics",
    "critical_system_reminder",
    "output_style",
    "mcp_resource",
    "compact_summary",
];

fn known_attachment(ty: &str) -> bool {
    KNOWN_ATTACHMENTS.contains(&ty) || ty.starts_with("hook_") || ty.starts_with("plan_mode")
}

/// A `pr-link` record `{prNumber, prUrl, prRepository}`: its `prUrl` becomes a `Text` block
/// (the view shows it as a link line; issue 20 item 11).
fn pr_link(r: &mut Reading) {
    #[derive(serde::Deserialize)]
    struct PrLink<'a> {
        #[serde(rename = "prUrl", borrow, default)]
        url: Option<&'a serde_json::value::RawValue>,
    }
    if let Ok(p) = serde_json::from_str::<PrLink>(r.ctx.text)
        && let Some(u) = p.url
        && let Some(text) = r.ctx.str(u)
        && !text.is_empty()
    {
        r.entry.blocks.push(Block {
            span: r.ctx.span(u),
            kind: BlockKind::Text { text },
        });
    }
}

/// A `system/api_error` record: the first `message` string of `error`, `error.error` or
/// `error.error.error` becomes a `Text` block (the view shows a warning line; issue 20
/// item 11).
fn api_error_text(r: &mut Reading) {
    use serde_json::value::RawValue;
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct Err<'a> {
        #[serde(borrow)]
        error: Option<&'a RawValue>,
        #[serde(borrow)]
        message: Option<&'a RawValue>,
    }
    let mut at: Option<&RawValue> = serde_json::from_str::<Err>(r.ctx.text)
        .ok()
        .and_then(|e| e.error);
    for _ in 0..3 {
        let Some(e) = at.and_then(|v| serde_json::from_str::<Err>(v.get()).ok()) else {
            return;
        };
        if let Some(m) = e.message
            && let Some(text) = r.ctx.str(m)
            && !text.is_empty()
        {
            r.entry.blocks.push(Block {
                span: r.ctx.span(m),
                kind: BlockKind::Text { text },
            });
            return;
        }
        at = e.error;
    }
}

/// Prefixes of record type families without conversation content (2.1.2xx
/// `artifact-*-ledger`): read as [`Role::Meta`].
const META_PREFIXES: &[&str] = &["artifact-"];

/// Content block types FORMATS.md §1.4 lists that this crate keeps as `Other` without a hint.
const KNOWN_OTHER_BLOCKS: &[&str] = &[
    "document",
    "tool_reference",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "advisor_tool_result",
    "fallback",
];

/// How many bytes of a user message are decoded to classify it (wrappers are at the start).
const HEAD: usize = 256;

/// Most distinct unknown record / block types hinted per file (bounded memory).
const MAX_HINTED: usize = 256;

/// Most `summary` records kept waiting for their leaf (bounded memory; files have at most a few
/// dozen at their top).
const MAX_PENDING_SUMMARIES: usize = 64;

/// Line-reader state kept across lines of one file.
#[derive(Debug, Default)]
pub struct State {
    steering: Steering,
    /// Envelope records (with `uuid` or `isSidechain`) seen, and whether one was not a
    /// sidechain record (for `SessionMeta::is_subagent_file`).
    envelope_records: usize,
    saw_main_thread: bool,
    /// Rank of the title kind in `t.meta.title`: 0 none, 1 `summary`, 2 `ai-title`,
    /// 3 `custom-title` (`t.meta.title_source` names it).
    title_rank: u8,
    /// `summary` records whose `leafUuid` was not seen yet: `(leafUuid, summary)`, at most
    /// [`MAX_PENDING_SUMMARIES`]. A summary names this file only when its leaf is one of this
    /// file's records (FORMATS.md §1.3: the leaf may be in another file; issue 7).
    pending_summaries: Vec<(Box<str>, Box<str>)>,
    /// Unknown record / block types already reported (one hint per type and file).
    hinted: HashSet<Box<str>>,
    /// The last `<command-name>` user line: `(entry index, uuid)`. An `isMeta` expansion whose
    /// `parentUuid` is that uuid makes it a prompt-type command (FORMATS.md §1.8).
    last_command: Option<(usize, Box<str>)>,
    /// The user line being read is hook feedback (record type `user/hook-feedback`).
    hook_note: bool,
    /// Record types given out so far (at most [`MAX_KEPT_TYPES`]): every record of one type
    /// gets the same shared string without building or hashing it again (issue 12: joining
    /// and allocating the type was 3 % of `stats`).
    types: Vec<SharedStr>,
    /// The last `sessionId` given out: a session's records all carry the same one.
    session: Option<SharedStr>,
    /// The main-thread `sessionId`s of `user` / `assistant` records read so far, in file order (at most
    /// [`MAX_KEPT_SESSIONS`]): a record with one not among them, after the first, starts
    /// another session of the file (issue 20 item 3).
    sessions_seen: Vec<SharedStr>,
    /// Every `uuid` read ([`uuid_hash`]), with the entry index of its first record: a later
    /// line with the same `uuid` and the same bytes is a repeat (`Entry::repeated`; issue 20
    /// item 2). Keyed by a hash, 16 bytes a record: a hit is checked against the first
    /// record's bytes, so a collision never makes a repeat.
    uuids: HashMap<u64, u32, BuildHasherDefault<Prehashed>>,
}

/// FNV-1a (64 bits) of a `uuid`: the key of [`State::uuids`].
fn uuid_hash(uuid: &str) -> u64 {
    uuid.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The hasher of keys that are hashes already: one multiply spreads their bits.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// Most distinct record types kept by [`State::record_type`] (more are allocated each time).
const MAX_KEPT_TYPES: usize = 64;
/// Most main-thread session ids remembered ([`State::sessions_seen`]; bounded memory).
const MAX_KEPT_SESSIONS: usize = 64;

impl State {
    /// Reads one complete, non-blank line (`span` excludes the newline) and appends what it
    /// holds to `t`: exactly one entry per line (an `Unparsed` entry plus a problem when the
    /// line is not valid JSON). May revise roles of earlier entries (steering pairing, a
    /// `<command-name>` line followed by its expanded prompt).
    pub fn line(&mut self, source: &str, line: usize, span: Span, t: &mut Transcript) {
        let text = &source[span.clone()];
        // Checked first: serde reads a struct from a JSON array too.
        let is_object = text.trim_start().starts_with('{');
        // The record is lent to `record`, not moved: it is some 900 bytes, and its moves
        // were 1 % of `stats` (issue 12).
        let err = if is_object {
            let mut rec = Record::default();
            match raw::read_record(text, &mut rec) {
                Ok(()) => {
                    let ctx = Ctx {
                        text,
                        base: span.start,
                    };
                    return self.record(source, ctx, &mut rec, line, span, t);
                }
                Err(e) => Some(e),
            }
        } else {
            None
        };
        if let Err(e) = serde_json::from_str::<IgnoredAny>(text) {
            return super::push_unparsed(t, text, line, span, Some(e));
        }
        let Some(mut err) = err else {
            t.problems.push(Problem {
                line,
                span: span.clone(),
                severity: Severity::Warning,
                message: "not a JSON object: a Claude Code record is one object per line"
                    .to_string(),
            });
            t.entries
                .push(Entry::new(line, span, Role::Unparsed, "unparsed"));
            return;
        };
        if let Some(patched) = patch_lone_surrogates(text) {
            let mut rec = Record::default();
            match raw::read_record(&patched, &mut rec) {
                Ok(()) => {
                    let ctx = Ctx {
                        text: &patched,
                        base: span.start,
                    };
                    return self.record(source, ctx, &mut rec, line, span, t);
                }
                Err(e) => err = e,
            }
        }
        let ty = serde_json::from_str::<raw::Typed>(text)
            .ok()
            .and_then(|r| r.ty.boxed())
            .unwrap_or_else(|| "unknown".into());
        t.problems.push(Problem {
            line,
            span: span.clone(),
            severity: Severity::Warning,
            message: format!("could not read this {ty} record ({err}); kept as raw JSON"),
        });
        t.entries.push(Entry::new(line, span, Role::Other, &ty));
    }

    fn record<'t>(
        &mut self,
        source: &str,
        ctx: Ctx<'t>,
        rec: &mut Record<'t>,
        line: usize,
        span: Span,
        t: &mut Transcript,
    ) {
        // Taken out to be read into blocks without copying its elements.
        let content = rec
            .message
            .0
            .as_mut()
            .map(|m| std::mem::take(&mut m.content))
            .unwrap_or_default();
        let mut e = Entry::with_record_type(line, span, Role::Meta, self.record_type(("", "")));
        e.set_timestamp_ms(rec.timestamp.get().and_then(parse_timestamp));
        let uuid = rec.uuid.get().filter(|s| !s.is_empty());
        e.set_uuid(uuid);
        if let Some(uuid) = uuid {
            let id = uuid_hash(uuid);
            let repeat = self.uuids.get(&id).map(|&f| f as usize).filter(|&f| {
                t.entries
                    .get(f)
                    .is_some_and(|f| source.get(f.span.clone()) == source.get(e.span.clone()))
            });
            if let Some(first) = repeat {
                // Written again byte for byte (a resumed session repeating earlier records,
                // issue 20 item 2): read once, the repeat is bookkeeping pointing at the
                // first. A record that only shares its uuid (placeholder ids) is read.
                e.record_type = t.entries[first].record_type.clone();
                e.sidechain = rec.is_sidechain.is_true();
                e.set_copy_of(Some(first));
                e.repeated = true;
                t.entries.push(e);
                return;
            }
            if let Ok(i) = u32::try_from(t.entries.len()) {
                self.uuids.entry(id).or_insert(i);
            }
        }
        if self.title_rank == 0
            && !self.pending_summaries.is_empty()
            && let Some(uuid) = uuid
            && let Some(i) = self
                .pending_summaries
                .iter()
                .position(|(l, _)| &**l == uuid)
        {
            let (_, summary) = self.pending_summaries.swap_remove(i);
            self.title(t, 1, Some(&summary));
            self.pending_summaries.clear();
        }
        e.set_parent_uuid(rec.parent_uuid.get().filter(|s| !s.is_empty()));
        let session = rec.session_id.get().filter(|s| !s.is_empty());
        let session = session.map(|s| self.session_id(s));
        e.sidechain = rec.is_sidechain.is_true();
        let new_session = session
            .as_ref()
            .filter(|s| {
                // Conversation records only: bookkeeping (`relocated`, `bridge-session`, …)
                // can name another session without starting one.
                !e.sidechain
                    && matches!(rec.ty.get(), Some("user" | "assistant"))
                    && self.sessions_seen.len() < MAX_KEPT_SESSIONS
                    && !self.sessions_seen.iter().any(|k| k == *s)
            })
            .cloned();
        if let Some(s) = &new_session {
            self.sessions_seen.push(s.clone());
        }
        e.set_session_id(session);
        e.set_agent_id(rec.agent_id.boxed());
        self.update_meta(rec, t);
        let mut r = Reading {
            source,
            ctx,
            line,
            entry: e,
            problems: Vec::new(),
        };
        let ty = rec.ty.get().unwrap_or("");
        let (role, record_type): (Role, TypeName) = match ty {
            "user" => {
                self.hook_note = false;
                let role = self.user(&mut r, rec, content, t);
                let rt = if std::mem::take(&mut self.hook_note) {
                    ("user", "hook-feedback")
                } else {
                    (ty, "")
                };
                (role, rt)
            }
            "assistant" => (self.assistant(&mut r, rec, content, t), (ty, "")),
            "system" => {
                let (role, rt) = system(&mut r, rec);
                if !KNOWN_SYSTEM_SUBTYPES.contains(&rt.1) {
                    t.note_unknown("system subtype", rt.1, line, r.entry.span.clone());
                }
                (role, rt)
            }
            "attachment" => {
                let (role, rt) = self.attachment(&mut r, rec, t);
                if !known_attachment(rt.1) {
                    t.note_unknown("attachment", rt.1, line, r.entry.span.clone());
                }
                (role, rt)
            }
            "pr-link" => {
                pr_link(&mut r);
                (Role::Meta, (ty, ""))
            }
            "progress" => {
                let sub = rec.data.0.as_ref().and_then(|d| d.ty.get()).unwrap_or("");
                (Role::Meta, ("progress", sub))
            }
            "queue-operation" => self.queue_operation(&mut r, rec, t),
            "summary" => {
                self.summary(t, rec.leaf_uuid.get(), rec.summary.get());
                (Role::Meta, (ty, ""))
            }
            "ai-title" => {
                self.title(t, 2, rec.ai_title.get());
                (Role::Meta, (ty, ""))
            }
            "custom-title" => {
                self.title(t, 3, rec.custom_title.get());
                (Role::Meta, (ty, ""))
            }
            "cost-state" => {
                // Session-cumulative: the last one is the session's own total.
                if let Some(c) = rec
                    .total_cost_usd
                    .and_then(|r| r.get().parse::<f64>().ok())
                    .filter(|c| c.is_finite() && *c >= 0.0)
                {
                    t.meta.cost_usd = Some(c);
                }
                if let Some(ms) = rec.total_api_duration.0 {
                    t.meta.api_duration_ms = Some(ms);
                }
                (Role::Meta, (ty, ""))
            }
            t if META_TYPES.contains(&t) || META_PREFIXES.iter().any(|p| t.starts_with(p)) => {
                (Role::Meta, (t, ""))
            }
            _ => {
                // One Information diagnostic per type (issue 20 item 11), from
                // `Transcript::unknown`.
                let name = if ty.is_empty() { "(no type)" } else { ty };
                t.note_unknown("record type", name, line, r.entry.span.clone());
                (
                    Role::Other,
                    (if ty.is_empty() { "unknown" } else { ty }, ""),
                )
            }
        };
        self.hint_unknown_blocks(&mut r);
        let Reading {
            mut entry,
            problems,
            ..
        } = r;
        entry.role = role;
        entry.record_type = self.record_type(record_type);
        t.problems.extend(problems);
        if let Some(id) = new_session
            && self.sessions_seen.len() > 1
        {
            t.meta.sessions.push(crate::model::SessionStart {
                entry: t.entries.len(),
                line: entry.line,
                id: id.to_string(),
                parent: None,
            });
        }
        t.entries.push(entry);
    }

    /// The shared string `ty/sub` (`ty` alone when `sub` is empty), from those given out
    /// before when it is one of them.
    fn record_type(&mut self, (ty, sub): TypeName) -> SharedStr {
        let is = |k: &str| {
            if sub.is_empty() {
                k == ty
            } else {
                k.len() == ty.len() + 1 + sub.len()
                    && k.starts_with(ty)
                    && k.ends_with(sub)
                    && k.as_bytes()[ty.len()] == b'/'
            }
        };
        if let Some(k) = self.types.iter().find(|k| is(k)) {
            return k.clone();
        }
        let k: SharedStr = if sub.is_empty() {
            ty.into()
        } else {
            format!("{ty}/{sub}").into()
        };
        if self.types.len() < MAX_KEPT_TYPES {
            self.types.push(k.clone());
        }
        k
    }

    /// The shared string of a `sessionId`: the last one given out when it is the same.
    fn session_id(&mut self, id: &str) -> SharedStr {
        if let Some(s) = self.session.as_ref().filter(|s| ***s == *id) {
            return s.clone();
        }
        let s: SharedStr = id.into();
        self.session = Some(s.clone());
        s
    }

    fn update_meta(&mut self, rec: &Record, t: &mut Transcript) {
        let m = &mut t.meta;
        let first = |slot: &mut Option<String>, v: Option<&str>| {
            if slot.is_none()
                && let Some(v) = v.filter(|v| !v.is_empty())
            {
                *slot = Some(v.to_string());
            }
        };
        first(&mut m.session_id, rec.session_id.get());
        first(&mut m.version, rec.version.get());
        first(&mut m.cwd, rec.cwd.get());
        if rec.uuid.0.is_some() || rec.is_sidechain.0.is_some() {
            self.envelope_records += 1;
            if !rec.is_sidechain.is_true() {
                self.saw_main_thread = true;
            }
        }
        m.is_subagent_file = self.envelope_records > 0 && !self.saw_main_thread;
        if m.is_subagent_file {
            first(&mut m.agent_id, rec.agent_id.get());
        } else {
            m.agent_id = None;
        }
    }

    /// A `summary` record: it titles the file when its `leafUuid` is a record of this file,
    /// seen before it or after it (then it waits in `pending_summaries`). The first matching
    /// summary wins; summaries about other files are ignored.
    fn summary(&mut self, t: &mut Transcript, leaf: Option<&str>, summary: Option<&str>) {
        let (Some(leaf), Some(summary)) = (leaf, summary) else {
            return;
        };
        if self.title_rank > 0 || summary.trim().is_empty() {
            return;
        }
        if t.entries
            .iter()
            .any(|e| e.uuid().is_some_and(|u| *u == *leaf))
        {
            self.title(t, 1, Some(summary));
            self.pending_summaries.clear();
        } else if self.pending_summaries.len() < MAX_PENDING_SUMMARIES {
            self.pending_summaries.push((leaf.into(), summary.into()));
        }
    }

    /// Sets the title when `rank` beats the current one; `ai-title` and `custom-title` are
    /// replaced by later records of the same kind, `summary` keeps the first.
    fn title(&mut self, t: &mut Transcript, rank: u8, title: Option<&str>) {
        let Some(title) = title.map(str::trim).filter(|s| !s.is_empty()) else {
            return;
        };
        if rank > self.title_rank || (rank == self.title_rank && rank >= 2) {
            self.title_rank = rank;
            t.meta.title = Some(title.to_string());
            t.meta.title_source = Some(match rank {
                1 => TitleSource::Summary,
                2 => TitleSource::AiTitle,
                _ => TitleSource::CustomTitle,
            });
        }
    }

    fn hint_once(&mut self, r: &mut Reading, key: String, message: String) {
        if self.hinted.len() < MAX_HINTED && self.hinted.insert(key.into()) {
            r.problems.push(Problem {
                line: r.line,
                span: r.entry.span.clone(),
                severity: Severity::Hint,
                message,
            });
        }
    }

    fn hint_unknown_blocks(&mut self, r: &mut Reading) {
        let unknown: Vec<(Box<str>, Span)> = r
            .entry
            .blocks
            .iter()
            .filter_map(|b| match &b.kind {
                BlockKind::Other { block_type }
                    if !KNOWN_OTHER_BLOCKS.contains(&&**block_type)
                        && !block_type.starts_with('(') =>
                {
                    Some((block_type.clone(), b.span.clone()))
                }
                _ => None,
            })
            .collect();
        for (ty, span) in unknown {
            if self.hinted.len() < MAX_HINTED && self.hinted.insert(format!("block:{ty}").into()) {
                r.problems.push(Problem {
                    line: r.line,
                    span,
                    severity: Severity::Hint,
                    message: format!("unknown content block type '{ty}' (kept as other)"),
                });
            }
        }
    }

    /// A `user` line (FORMATS.md §0 turn boundary, §1.7, §1.8).
    fn user<'t>(
        &mut self,
        r: &mut Reading<'_, 't>,
        rec: &Record,
        content: raw::Content<'t>,
        t: &mut Transcript,
    ) -> Role {
        if rec.message.0.is_none() {
            self.hint_once(
                r,
                "user-without-message".into(),
                "user record without a message object (kept as other)".into(),
            );
            return Role::Other;
        }
        if let Some(c) = blocks::message_blocks(r.ctx, content, &mut r.entry.blocks)
            && c.get() != "null"
        {
            r.entry.blocks.push(Block {
                span: r.ctx.span(c),
                kind: BlockKind::Other {
                    block_type: "(content)".into(),
                },
            });
            r.problems.push(Problem {
                line: r.line,
                span: r.ctx.span(c),
                severity: Severity::Hint,
                message: "user message content is neither a string nor a list of blocks \
                              (kept as raw JSON)"
                    .into(),
            });
        }
        let results = r
            .entry
            .blocks
            .iter()
            .filter(|b| matches!(b.kind, BlockKind::ToolResult(_)))
            .count();
        if results > 0 {
            if let Some((is_error, subagent)) =
                blocks::sidecar_result(r.ctx.text, &rec.tool_use_result)
            {
                for b in &mut r.entry.blocks {
                    if let BlockKind::ToolResult(tr) = &mut b.kind {
                        tr.is_error |= is_error;
                        if results == 1 {
                            tr.subagent = subagent.clone();
                        }
                    }
                }
            }
            return Role::ToolResults;
        }
        if rec.is_compact_summary.is_true() {
            return Role::CompactSummary;
        }
        let head = first_text(r).map(|s| decode_prefix(s, HEAD).trim_start().to_string());
        let head = head.as_deref().unwrap_or("");
        if rec.is_meta.is_true() {
            // A prompt-type command written `<command-name>` first is followed by its expanded
            // prompt as an `isMeta` line hanging off it.
            if let (Some((idx, uuid)), Some(parent)) = (&self.last_command, rec.parent_uuid.get())
                && **uuid == *parent
                && !is_caveat(head)
                && !head.starts_with("<local-command-")
            {
                if t.entries
                    .get(*idx)
                    .is_some_and(|e| e.role == Role::LocalCommand)
                    && let Some(e) = t.revise(*idx)
                {
                    e.role = Role::Prompt(PromptKind::Command);
                }
                self.last_command = None;
            }
            return Role::Meta;
        }
        let has_image = r
            .entry
            .blocks
            .iter()
            .any(|b| matches!(b.kind, BlockKind::Image { .. }));
        // Hook feedback written as a user message is a hook note, never a prompt (2.1.x:
        // `Stop hook feedback:`, `<user-prompt-submit-hook>`; issue 9 item 6).
        if is_hook_feedback(head) {
            self.hook_note = true;
            return Role::Meta;
        }
        // 2.1.161+ `promptSource` and 2.1.193+ `origin.kind`: the agent's own statement of
        // what wrote the line, before any content rule (older files have neither).
        let origin = rec.origin.0.as_ref().and_then(|o| o.kind.get());
        let typed = origin == Some("human") || rec.prompt_source.get() == Some("typed");
        let wrapper = head.starts_with("<command-")
            || head.starts_with("<local-command-")
            || head.starts_with("<bash-");
        let role = if origin == Some("task-notification") {
            Role::Wake(WakeKind::TaskNotification)
        } else if typed && !wrapper && (!head.is_empty() || has_image) {
            Role::Prompt(PromptKind::Typed)
        } else if head.starts_with("<task-notification>") {
            Role::Wake(WakeKind::TaskNotification)
        } else if head.starts_with("[Request interrupted by user") {
            Role::Interruption
        } else if is_caveat(head) {
            Role::Meta
        } else if head.starts_with("<local-command-")
            || head.starts_with("<bash-input>")
            || head.starts_with("<bash-stdout>")
            || head.starts_with("<bash-stderr>")
        {
            Role::LocalCommand
        } else if head.starts_with("<command-name>") {
            self.last_command = rec.uuid.boxed().map(|u| (t.entries.len(), u));
            Role::LocalCommand
        } else if head.starts_with("<command-message>") {
            Role::Prompt(PromptKind::Command)
        } else if head.is_empty() && !has_image {
            Role::Meta
        } else {
            Role::Prompt(PromptKind::Typed)
        };
        if role.opens_turn() && self.steering.has_claims(rec.session_id.get()) {
            let text = joined_text(r);
            self.steering.prompt(rec.session_id.get(), &text, t);
        }
        role
    }

    /// An `assistant` line: one model response step (FORMATS.md §1.4, §1.6).
    fn assistant<'t>(
        &mut self,
        r: &mut Reading<'_, 't>,
        rec: &Record,
        content: raw::Content<'t>,
        t: &mut Transcript,
    ) -> Role {
        let Some(msg) = &rec.message.0 else {
            self.hint_once(
                r,
                "assistant-without-message".into(),
                "assistant record without a message object (kept as other)".into(),
            );
            return Role::Other;
        };
        blocks::message_blocks(r.ctx, content, &mut r.entry.blocks);
        let id = msg.id.get().filter(|s| !s.is_empty());
        let req = rec.request_id.get().filter(|s| !s.is_empty());
        let key: Box<str> = match (id, req) {
            // Joined by hand: `format!` was 1 % of `stats` (issue 12).
            (Some(id), Some(req)) => [id, "|", req].concat().into(),
            (Some(id), None) => id.into(),
            _ => match rec.uuid.get().filter(|s| !s.is_empty()) {
                Some(u) => u.into(),
                None => format!("line:{}", r.line).into(),
            },
        };
        let model = msg.model.boxed();
        if t.meta.model.is_none()
            && let Some(m) = model.as_deref().filter(|m| *m != "<synthetic>")
        {
            t.meta.model = Some(m.to_string());
        }
        let mut usage = msg.usage.0.as_ref().map(|u| Usage {
            input: u.input_tokens.0.unwrap_or(0),
            output: u.output_tokens.0.unwrap_or(0),
            cache_creation: u.cache_creation_input_tokens.0.unwrap_or(0),
            cache_read: u.cache_read_input_tokens.0.unwrap_or(0),
            reasoning: 0,
        });
        // 2.1.1xx+ `usage.iterations`: an `advisor_message` iteration is a second model's
        // usage. It is counted apart; the main model's usage is then the sum of the `message`
        // iterations (never the advisor's twice).
        let mut advisor_usage = None;
        if let Some(its) = msg.usage.0.as_ref().and_then(|u| u.iterations) {
            let its = raw::iterations(its);
            let sum = |kind: &str| {
                its.iter().filter(|i| i.ty.get() == Some(kind)).fold(
                    None,
                    |acc: Option<Usage>, i| {
                        let u = Usage {
                            input: i.input_tokens.0.unwrap_or(0),
                            output: i.output_tokens.0.unwrap_or(0),
                            cache_creation: i.cache_creation_input_tokens.0.unwrap_or(0),
                            cache_read: i.cache_read_input_tokens.0.unwrap_or(0),
                            reasoning: 0,
                        };
                        Some(acc.map_or(u, |a| a.add(u)))
                    },
                )
            };
            advisor_usage = sum("advisor_message");
            if advisor_usage.is_some()
                && let Some(main) = sum("message")
            {
                usage = Some(main);
            }
        }
        let stop = msg.stop_reason.get().map(|s| match s {
            "end_turn" => StopReason::EndTurn,
            "tool_use" => StopReason::ToolUse,
            "max_tokens" => StopReason::MaxTokens,
            other => StopReason::Other(other.into()),
        });
        let synthetic = model.as_deref() == Some("<synthetic>");
        // Only error records need their text (issue 12: it was decoded for every step).
        let text = || first_text(r).map(|s| one_line(&decode_prefix(s, 4096), 500));
        let api_error = if rec.is_api_error_message.is_true() {
            Some(
                text()
                    .filter(|s| !s.is_empty())
                    .or_else(|| rec.error.get().map(str::to_string))
                    .unwrap_or_else(|| "API error".to_string()),
            )
        } else if synthetic {
            text().filter(|s| s.starts_with("API Error"))
        } else {
            None
        };
        r.entry.step = Some(Box::new(StepInfo {
            key,
            model,
            usage,
            output_is_placeholder: stop.is_none(),
            stop,
            api_error: api_error.map(Into::into),
            advisor_usage,
            effort: rec.effort.boxed(),
            ..StepInfo::default()
        }));
        Role::Model
    }

    /// An `attachment` line; `queued_command` is steering input (cases 07, 08).
    fn attachment<'r>(
        &mut self,
        r: &mut Reading,
        rec: &'r Record,
        t: &mut Transcript,
    ) -> (Role, TypeName<'r>) {
        let Some(att) = &rec.attachment.0 else {
            return (Role::Meta, ("attachment", ""));
        };
        let sub = att.ty.get().unwrap_or("");
        let record_type = ("attachment", sub);
        if sub != "queued_command" {
            return (Role::Meta, record_type);
        }
        let shaped = att
            .prompt
            .is_some_and(|p| blocks::content_blocks(r.ctx, p, &mut r.entry.blocks));
        if !shaped {
            let span = att.prompt.map_or(r.entry.span.clone(), |p| r.ctx.span(p));
            r.entry.blocks.push(Block {
                span: span.clone(),
                kind: BlockKind::Other {
                    block_type: "(queued prompt)".into(),
                },
            });
            r.problems.push(Problem {
                line: r.line,
                span,
                severity: Severity::Hint,
                message: "queued_command prompt is neither a string nor a list of blocks \
                          (shown as raw JSON)"
                    .into(),
            });
        }
        let text = joined_text(r);
        let machine = att.command_mode.get() == Some("task-notification")
            || text.trim_start().starts_with("<task-notification>");
        let text = Some(text.as_str()).filter(|s| !s.trim().is_empty());
        let role = self
            .steering
            .queued_command(rec.session_id.get(), text, machine, t);
        (role, record_type)
    }

    /// A `queue-operation` line (FORMATS.md §1.3; pairing rules in `steering`).
    fn queue_operation<'r>(
        &mut self,
        r: &mut Reading,
        rec: &'r Record,
        t: &mut Transcript,
    ) -> (Role, TypeName<'r>) {
        let op = rec.operation.get().unwrap_or("");
        let record_type = ("queue-operation", op);
        if let Some(c) = rec.content {
            blocks::content_blocks(r.ctx, c, &mut r.entry.blocks);
        }
        let text = joined_text(r);
        let text = Some(text.as_str()).filter(|s| !s.trim().is_empty());
        let session = rec.session_id.get();
        let idx = t.entries.len();
        let role = match op {
            "enqueue" => {
                let head = text.unwrap_or("").trim_start();
                let machine = head.starts_with('/') || head.starts_with("<task-notification>");
                self.steering.enqueue(session, text, machine, idx)
            }
            "remove" => self.steering.remove(session, text, idx),
            "dequeue" => {
                self.steering.dequeue(session, t);
                Role::Meta
            }
            "popAll" => {
                self.steering.pop_all(session, t);
                Role::Meta
            }
            _ => Role::Meta,
        };
        (role, record_type)
    }
}

/// The line being read: where its raw values sit, and the entry and problems built so far.
struct Reading<'s, 't> {
    source: &'s str,
    ctx: Ctx<'t>,
    line: usize,
    entry: Entry,
    problems: Vec<Problem>,
}

/// A `system` line (FORMATS.md §1.3): compact boundary, turn duration, local command, or meta.
fn system<'r>(r: &mut Reading, rec: &'r Record) -> (Role, TypeName<'r>) {
    let sub = rec.subtype.get().unwrap_or("");
    if let Some(c) = rec.content
        && let Some(text) = r.ctx.str(c)
    {
        r.entry.blocks.push(Block {
            span: r.ctx.span(c),
            kind: BlockKind::Text { text },
        });
    }
    let role = match sub {
        "compact_boundary" => {
            let cm = rec.compact_metadata.0.as_ref();
            Role::CompactBoundary(Box::new(crate::model::CompactBoundary {
                trigger: cm
                    .and_then(|m| m.trigger.boxed())
                    .or_else(|| rec.trigger.boxed()),
                pre_tokens: cm.and_then(|m| m.pre_tokens.0),
            }))
        }
        "turn_duration" => match rec.duration_ms.0 {
            Some(duration_ms) => Role::TurnDuration { duration_ms },
            None => Role::Meta,
        },
        "local_command" => Role::LocalCommand,
        "api_error" => {
            api_error_text(r);
            Role::Meta
        }
        _ => Role::Meta,
    };
    (role, ("system", sub))
}

/// A record type as `(type, subtype)`: the entry's `record_type` is `type/subtype`, or `type`
/// alone when the subtype is empty.
type TypeName<'a> = (&'a str, &'a str);

/// `<local-command-caveat>…` (2.x) or the plain `Caveat: The messages below…` (1.0.x).
/// Hook feedback Claude Code writes as a user message: `<user-prompt-submit-hook>…`, or a
/// first line `<Event> hook feedback:` (`Stop hook feedback:`, `SubagentStop hook feedback:`),
/// with the feedback on the following lines or on the same one (`Stop hook feedback: <text>`,
/// issue 20 item 8).
fn is_hook_feedback(head: &str) -> bool {
    if head.starts_with("<user-prompt-submit-hook>") {
        return true;
    }
    let first = head.lines().next().unwrap_or("");
    first
        .split_once(':')
        .and_then(|(f, _)| f.strip_suffix(" hook feedback"))
        .is_some_and(|ev| !ev.is_empty() && ev.chars().all(|c| c.is_ascii_alphanumeric()))
}

fn is_caveat(head: &str) -> bool {
    head.starts_with("<local-command-caveat>")
        || head.starts_with("Caveat: The messages below were generated by the user")
}

/// Raw (undecoded) contents of the entry's first text block.
fn first_text<'t>(r: &Reading<'_, 't>) -> Option<&'t str> {
    r.entry.blocks.iter().find_map(|b| match &b.kind {
        BlockKind::Text { text } => Some(r.ctx.raw_text(text)),
        _ => None,
    })
}

/// The decoded text of all text blocks of the entry, joined by `\n` (for pairing steering
/// records by text).
fn joined_text(r: &Reading) -> String {
    let mut out = String::new();
    for b in &r.entry.blocks {
        if let BlockKind::Text { text } = &b.kind {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&text.decode(r.source));
        }
    }
    out
}

/// A copy of `text` in which every lone surrogate escape (`\ud800`–`\udfff` not part of a
/// high+low pair) is replaced by `\ufffd`, or `None` when there is none. Same byte length, so
/// offsets into the copy are offsets into the original.
pub fn patch_lone_surrogates(text: &str) -> Option<String> {
    let mut out = text.as_bytes().to_vec();
    if !crate::source::json_string::patch_lone_surrogates(&mut out) {
        return None;
    }
    String::from_utf8(out).ok()
}

/// Detection (agent registry, FORMATS.md §1): a record with a `type` and the conversation
/// envelope (`uuid` or `sessionId`), one of the envelope-less Claude types (`summary`,
/// `file-history-snapshot`, `queue-operation`, …), or a `user` / `assistant` record with the
/// Anthropic `message` object (Gemini CLI writes `{"type":"user","content":…}`: not ours).
pub fn detect(p: &super::agents::Probe) -> bool {
    let ty = p.ty();
    if p.claude_envelope() && ty.is_some() {
        return true;
    }
    match ty {
        Some(
            "summary"
            | "file-history-snapshot"
            | "queue-operation"
            | "permission-mode"
            | "last-prompt"
            | "custom-title"
            | "ai-title"
            | "agent-name"
            | "pr-link"
            | "agent-setting"
            | "bridge-session"
            | "worktree-state",
        ) => true,
        Some("user" | "assistant") => p.val("message"),
        _ => false,
    }
}

impl super::agents::LineReader for State {
    fn line(&mut self, source: &str, line: usize, span: Span, t: &mut Transcript) {
        State::line(self, source, line, span, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Stop hook feedback: <text>` on one line is a hook note as the two-line form is (issue
    /// 20 item 8: it opened a turn); a person's sentence with a colon is not.
    #[test]
    fn hook_feedback_on_one_line_or_two() {
        assert!(is_hook_feedback(
            "Stop hook feedback:\nRun the tests first."
        ));
        assert!(is_hook_feedback("Stop hook feedback: Run the tests first."));
        assert!(is_hook_feedback("SubagentStop hook feedback: tests failed"));
        assert!(is_hook_feedback(
            "<user-prompt-submit-hook>ok</user-prompt-submit-hook>"
        ));
        assert!(!is_hook_feedback("Fix the hook feedback: it is noisy"));
        assert!(!is_hook_feedback("Note: the Stop hook feedback is wrong"));
        assert!(!is_hook_feedback("hook feedback: x"));
    }

    #[test]
    fn one_line_stop_hook_feedback_opens_no_turn() {
        let rec = |uuid: &str, parent: &str, ty: &str, content: &str, ts: &str| {
            format!(
                r#"{{"parentUuid":{parent},"isSidechain":false,"type":"{ty}","uuid":"{uuid}","sessionId":"s1","timestamp":"2026-06-01T10:00:0{ts}.000Z","message":{{"role":"{ty}","content":{content}}}}}"#
            )
        };
        let src = [
            rec("u1", "null", "user", r#""Add a test""#, "0"),
            rec(
                "a1",
                r#""u1""#,
                "assistant",
                r#"[{"type":"text","text":"Done."}]"#,
                "1",
            ),
            rec(
                "u2",
                r#""a1""#,
                "user",
                r#""Stop hook feedback: Run cargo test before you stop.""#,
                "2",
            ),
            rec(
                "a2",
                r#""u2""#,
                "assistant",
                r#"[{"type":"text","text":"Tests pass."}]"#,
                "3",
            ),
        ]
        .join("\n")
            + "\n";
        let t = crate::formats::read(&src);
        assert_eq!(t.entries[2].role, Role::Meta);
        assert_eq!(t.entries[2].record_type.as_ref(), "user/hook-feedback");
        let prompts = t
            .entries
            .iter()
            .filter(|e| matches!(e.role, Role::Prompt(_)))
            .count();
        assert_eq!(prompts, 1);
    }

    #[test]
    fn patches_only_lone_surrogates() {
        assert_eq!(patch_lone_surrogates(r#"{"a":"x"}"#), None);
        assert_eq!(patch_lone_surrogates(r#""\ud83d\ude00""#), None);
        assert_eq!(patch_lone_surrogates(r#""\\udcb2""#), None);
        assert_eq!(
            patch_lone_surrogates(r#""a\udcb2b""#).as_deref(),
            Some(r#""a\ufffdb""#)
        );
        assert_eq!(
            patch_lone_surrogates(r#""\ud83dz""#).as_deref(),
            Some(r#""\ufffdz""#)
        );
        assert_eq!(
            patch_lone_surrogates(r#""\ud83d\ud83d\ude00""#).as_deref(),
            Some(r#""\ufffd\ud83d\ude00""#)
        );
        assert_eq!(patch_lone_surrogates("\"end\\"), None);
    }
}
