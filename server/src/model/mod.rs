//! The format-neutral transcript (DESIGN.md §3).
//!
//! A [`Transcript`] is what a format reader (`crate::formats`) produces from the bytes of one
//! file: its [`Entry`]s in file order, one per physical line that holds a record, each with its
//! byte span in the source and its content [`Block`]s. Nothing here knows about editors or LSP.
//!
//! Conventions used throughout the crate:
//! * **Lines** are 0-based line numbers of the source as an editor counts them (`\n`, `\r\n`
//!   and a lone `\r` end a line: LSP 3.17; issue 25). Records are split on `\n` only, so a
//!   record whose line holds a lone `\r` spans two lines and its [`Entry::line`] is the first.
//! * **Byte spans** ([`Span`]) are half-open byte ranges into the source text (the whole file
//!   or editor buffer), never into a line.
//! * **Times** are Unix epoch milliseconds (UTC) in `i64`; durations are milliseconds in `u64`.
//! * **Tokens** are counts in `u64`.
//! * Text inside JSON is kept as a [`Str`]: the span of the string literal's raw contents
//!   (escapes undecoded), decoded on demand with [`Str::decode`].

use std::borrow::Cow;
use std::sync::Arc;

use thin_vec::ThinVec;

use crate::source::json_string;

/// A half-open byte range `[start, end)` into the source text.
pub type Span = std::ops::Range<usize>;

/// The transcript formats this crate reads. Detected from content, never from the file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Format {
    /// Claude Code session files (`~/.claude/projects/**.jsonl`), versions 1.0.24 – 2.1.x.
    ClaudeCode,
    /// OpenAI Codex CLI rollouts (`~/.codex/sessions/**/rollout-*.jsonl`).
    Codex,
    /// Pi coding agent sessions (`~/.pi/agent/sessions/**.jsonl`), session versions 1–3: a
    /// `session` header, then entries of an `id` / `parentId` tree (FORMATS-2026 §3).
    Pi,
    /// GitHub Copilot CLI event logs (`~/.copilot/session-state/<uuid>/events.jsonl`): lines
    /// `{type, data, id, timestamp, parentId}` with dotted types (`session.start`,
    /// `assistant.message`, …) (FORMATS-2026 §4).
    CopilotCli,
    /// Kiro CLI v2 sessions (`~/.kiro/sessions/cli/<uuid>.jsonl`): `{version, kind, data}`
    /// envelopes with a `<uuid>.json` sidecar (FORMATS-MORE-AGENTS.md "kiro-cli"; issue 21).
    KiroCli,
    /// Mistral Vibe sessions (`~/.vibe/logs/session/<session>/messages.jsonl`): OpenAI-style
    /// chat messages with a `meta.json` sidecar (FORMATS-MORE-AGENTS.md "mistral-vibe").
    MistralVibe,
    /// Gemini CLI session files (`~/.gemini/tmp/<project>/chats/session-*.jsonl`): an
    /// append-only mutation log of header, messages, `$set` and `$rewindTo` lines (issue 21
    /// item 2; `crate::formats::gemini`).
    GeminiCli,
    /// Antigravity CLI conversations
    /// (`~/.gemini/antigravity-cli/brain/<conversation>/.system_generated/logs/transcript.jsonl`):
    /// one step per line `{step_index, source, type, status, created_at, …}` (issue 21 item 3).
    Antigravity,
    /// Valid or invalid JSONL that is none of the above (or an empty file).
    Unknown,
}

/// `Format::as_str` (the stable id: `claude-code`) and `Format::display_name` (`Claude Code`)
/// come from the agent registry, `crate::formats::agents`, which implements them there: the
/// model does not look up the layer above it (issue 24 item 3).
impl Format {
    /// True for a recognised transcript format (anything but `Unknown`).
    pub fn is_known(self) -> bool {
        self != Format::Unknown
    }
}

/// A JSON string value inside the source. `raw` spans the literal's contents between its
/// quotes, escapes undecoded (so `raw.len()` is in source bytes, not characters).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Str {
    pub raw: Span,
}

impl Str {
    /// Decodes the string (JSON escapes resolved; a lone surrogate escape such as `\udcb2`
    /// becomes U+FFFD). Borrows from `source` when the literal has no escapes.
    pub fn decode<'s>(&self, source: &'s str) -> Cow<'s, str> {
        json_string::decode(&source[self.raw.clone()])
    }

    /// True when the literal is empty (`""`).
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }
}

/// One transcript file read into the model.
#[derive(Clone, Default)]
pub struct Transcript {
    pub format: Option<Format>,
    /// One entry per physical line that holds a record (valid or not), in file order, except
    /// that a run of bare records is one entry ([`Transcript::runs`]). Blank lines have no
    /// entry; a pending tail (see below) has no entry.
    pub entries: Vec<Entry>,
    /// Problems found while reading: invalid JSON lines, unknown shapes worth a hint.
    pub problems: Vec<Problem>,
    /// Number of lines in the source as an editor counts them (a last line without a break
    /// counts; a lone `\r` is a break).
    pub line_count: usize,
    /// The last line when it has no final `\n` and is not valid JSON yet: the file may still
    /// be growing (FORMATS.md §4 item 2, case 03). It is reported as a problem only once it
    /// is no longer the tail or the file is known to be complete.
    pub pending_tail: Option<PendingTail>,
    /// Session-level metadata gathered while reading (first values seen).
    pub meta: SessionMeta,
    /// The lowest index of an entry a reader changed after pushing it, since the last
    /// [`Transcript::take_revised`] (issue 12: an append is analysed from the start of the last
    /// turn only while no earlier record changed). Readers change pushed entries only through
    /// [`Transcript::revise`] / [`Transcript::revise_from`], which note it. Bookkeeping, not
    /// part of what the file says: `Debug` leaves it out.
    pub revised_from: Option<usize>,
    /// Record types (and attachments, system subtypes) no reader knows, one per name, in the
    /// order first read, at most [`MAX_UNKNOWN_KINDS`] (issue 20 item 11: drift stays
    /// visible). Published as one Information diagnostic each and as `stats --json`
    /// `unknown_records`. Left out of `Debug` (the problems and entries show the same lines).
    pub unknown: Vec<UnknownRecord>,
    /// The records that span more than one line because their line holds a lone `\r` (an
    /// editor's line break: LSP 3.17; issue 25): `(first line, last line)`, in line order.
    /// Empty for almost every file. Read with [`Transcript::last_line`]. Left out of `Debug`.
    pub split_lines: Vec<(usize, usize)>,
    /// Runs of bare records read as one entry (issue 25 item 8: 10 M `{}` lines took an
    /// [`Entry`] of 88 bytes each, 30× the file): the entry starting on a run's first line
    /// stands for all of its records; its span is the first record's. In line order; empty
    /// for almost every real file. Read with [`Transcript::last_line`],
    /// [`Transcript::records_of`] and [`Transcript::run_at`].
    pub runs: Vec<RecordRun>,
    /// Problems found past the first [`MAX_PROBLEMS`], not kept (issue 25 item 8: a problem
    /// and its message took some 140 bytes a line, more than `source::room` counts per line,
    /// on a file of millions of invalid lines). Each such line is still an
    /// [`Role::Unparsed`] entry. Diagnostics and the outline say how many were left out.
    pub problems_left_out: usize,
}

/// Most problems kept per transcript ([`Transcript::problems_left_out`] counts the rest):
/// ten times what the server publishes as diagnostics.
pub const MAX_PROBLEMS: usize = 10_000;

/// Consecutive bare records ([`Entry::is_bare`]) of one role and record type, kept as the
/// one entry that starts on `line` (issue 25 item 8: memory per record is bounded by the
/// record's bytes, whatever the shape of the input). 32 bytes per run, none per record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordRun {
    /// 0-based line of the run's first record (the entry's [`Entry::line`]).
    pub line: usize,
    /// 0-based line of its last record.
    pub last_line: usize,
    /// How many records it holds (at least 2).
    pub records: usize,
    /// Byte offset just past the last record (without its line break).
    pub end: usize,
}

/// Most distinct unknown record kinds kept per transcript (bounded memory on any input).
pub const MAX_UNKNOWN_KINDS: usize = 256;

/// A record kind no reader knows ([`Transcript::unknown`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRecord {
    /// What it is: `record type`, `attachment` or `system subtype`.
    pub what: &'static str,
    /// Its name as written (`worktree-state`; `(no type)` when the record has none).
    pub name: String,
    /// Number of lines of this kind.
    pub lines: usize,
    /// The first such line (0-based) and its byte span.
    pub line: usize,
    pub span: Span,
    /// The agent whose record this is, when it is another agent's than the transcript's (a
    /// Codex `session_meta` in a Claude Code file: files of two agents joined; issue 25,
    /// Low list: the other format's records were ignored without saying whose they are).
    pub other_format: Option<Format>,
}

impl Transcript {
    /// Notes one line of a kind no reader knows ([`Transcript::unknown`]): counted with the
    /// earlier lines of the same kind and name.
    pub fn note_unknown(&mut self, what: &'static str, name: &str, line: usize, span: Span) {
        if let Some(u) = self
            .unknown
            .iter_mut()
            .find(|u| u.what == what && u.name == name)
        {
            u.lines += 1;
        } else if self.unknown.len() < MAX_UNKNOWN_KINDS {
            self.unknown.push(UnknownRecord {
                what,
                name: name.to_string(),
                lines: 1,
                line,
                span,
                other_format: None,
            });
        }
    }
}

impl std::fmt::Debug for Transcript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transcript")
            .field("format", &self.format)
            .field("entries", &self.entries)
            .field("problems", &self.problems)
            .field("line_count", &self.line_count)
            .field("pending_tail", &self.pending_tail)
            .field("meta", &self.meta)
            .field("runs", &self.runs)
            .field("problems_left_out", &self.problems_left_out)
            .finish()
    }
}

impl Transcript {
    /// The last line of the record that starts on `line` (0-based): `line` itself unless a
    /// lone `\r` inside it ends an editor line ([`Transcript::split_lines`]).
    ///
    /// For the entry of a run of bare records ([`Transcript::runs`]), the run's last line.
    pub fn last_line(&self, line: usize) -> usize {
        if let Some(run) = self.run_starting(line) {
            return run.last_line;
        }
        match self
            .split_lines
            .binary_search_by_key(&line, |&(first, _)| first)
        {
            Ok(i) => self.split_lines[i].1,
            Err(_) => line,
        }
    }

    /// The run of bare records whose first line is `line`, if any.
    fn run_starting(&self, line: usize) -> Option<&RecordRun> {
        if self.runs.is_empty() {
            return None;
        }
        let i = self.runs.binary_search_by_key(&line, |r| r.line).ok()?;
        self.runs.get(i)
    }

    /// The run of bare records that holds `line` (0-based), if any: the entry that stands
    /// for the record on that line starts on the run's `line`.
    pub fn run_at(&self, line: usize) -> Option<&RecordRun> {
        let i = self.runs.partition_point(|r| r.line <= line);
        let run = self.runs.get(i.checked_sub(1)?)?;
        (line <= run.last_line).then_some(run)
    }

    /// How many records entry `e` stands for: 1, or a run's count ([`Transcript::runs`]); 0
    /// when there is no such entry.
    pub fn records_of(&self, e: usize) -> usize {
        match self.entries.get(e) {
            None => 0,
            Some(entry) => self.run_starting(entry.line).map_or(1, |r| r.records),
        }
    }

    /// How many records the entries `range` stand for (runs counted whole).
    pub fn records_in(&self, range: std::ops::Range<usize>) -> usize {
        let n = range.len();
        if self.runs.is_empty() {
            return n;
        }
        let end = range.end.min(self.entries.len());
        let start = range.start.min(end);
        let extra: usize = self.entries[start..end]
            .iter()
            .filter_map(|e| self.run_starting(e.line))
            .map(|r| r.records - 1)
            .sum();
        n + extra
    }

    /// Drops the problems past [`MAX_PROBLEMS`], counting them in
    /// [`Transcript::problems_left_out`]. Called by the reader after each line.
    pub fn cap_problems(&mut self) {
        if self.problems.len() > MAX_PROBLEMS {
            self.problems_left_out += self.problems.len() - MAX_PROBLEMS;
            self.problems.truncate(MAX_PROBLEMS);
        }
    }

    /// The format, `Unknown` when none was detected.
    pub fn format(&self) -> Format {
        self.format.unwrap_or(Format::Unknown)
    }

    /// Entry `i`, to change a record already pushed: notes `i` in
    /// [`Transcript::revised_from`].
    pub fn revise(&mut self, i: usize) -> Option<&mut Entry> {
        if i < self.entries.len() {
            self.note_revised(i);
        }
        self.entries.get_mut(i)
    }

    /// Entries from `from` on, to change records already pushed: notes `from`.
    pub fn revise_from(&mut self, from: usize) -> &mut [Entry] {
        let from = from.min(self.entries.len());
        if from < self.entries.len() {
            self.note_revised(from);
        }
        &mut self.entries[from..]
    }

    /// Notes that entry `i` changed after it was pushed.
    pub fn note_revised(&mut self, i: usize) {
        self.revised_from = Some(self.revised_from.map_or(i, |r| r.min(i)));
    }

    /// The lowest entry changed since the last call (see [`Transcript::revised_from`]), and
    /// forgets it.
    pub fn take_revised(&mut self) -> Option<usize> {
        self.revised_from.take()
    }
}

/// The torn last line of a file that may still be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingTail {
    /// 0-based line index.
    pub line: usize,
    /// Byte span of the partial line.
    pub span: Span,
}

/// Metadata about the session a file records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionMeta {
    /// Claude `sessionId` of the first record / Codex `session_meta.id`.
    pub session_id: Option<String>,
    /// Agent CLI version of the first record that carries one (`version` / `cli_version`).
    pub version: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Model of the first model response (`message.model` / `turn_context.model`).
    pub model: Option<String>,
    /// A title if the file has one: Claude Code `custom-title` > `ai-title` > the first
    /// `summary` whose `leafUuid` is a record of this file (FORMATS.md §1.3; a later record
    /// of the two title kinds replaces an earlier one); Codex `thread_name_updated` (the
    /// last one). Issue 7.
    pub title: Option<String>,
    /// Which record gave `title`.
    pub title_source: Option<TitleSource>,
    /// True when every record is a sidechain record (a sub-agent file).
    pub is_subagent_file: bool,
    /// True for a `/btw` aside file whose replayed parent history was marked inherited
    /// (`formats::claude_code::aside`, issue 9): its first own prompt is the person's side
    /// question, not a task a parent agent wrote.
    pub is_aside: bool,
    /// The sub-agent id when this is a sub-agent file (`agentId`).
    pub agent_id: Option<String>,
    /// Git branch the session ran on, when the format records it (Copilot CLI
    /// `session.start.context.branch`).
    pub git_branch: Option<String>,
    /// The session's usage as the format records it for the whole session, per model, when it
    /// does (Copilot CLI `session.shutdown.modelMetrics`; the latest shutdown wins, its figures
    /// being cumulative across resumes). When non-empty, analysis takes it as the session's
    /// usage instead of the sum of the steps (whose counts are partial there: output only), so
    /// nothing is counted twice (issue 10).
    pub recorded_usage: Vec<ModelUsage>,
    /// The session's cost in US dollars as the agent computed it (Claude Code 2.1.2xx: the
    /// last `cost-state.totalCostUSD`; server/FORMATS.md). Never added to token totals.
    pub cost_usd: Option<f64>,
    /// The session's total API time in ms (the last `cost-state.totalAPIDuration`).
    pub api_duration_ms: Option<u64>,
    /// The thread this file was forked or spawned from (Codex `session_meta.forked_from_id`,
    /// `parent_thread_id`, `source.subagent.thread_spawn.parent_thread_id`).
    pub parent_thread_id: Option<String>,
    /// True for an automatic review thread, not the user's conversation (Codex
    /// `session_meta.thread_source: guardian_review`).
    pub automatic_review: bool,
    /// The sessions after the first in a file that holds several (issue 20 item 3; Codex: a
    /// later `session_meta` with another id, not one replayed by a fork; Copilot CLI: a
    /// `session.start` with another `sessionId`; Pi: a `session` header with another `id`;
    /// Claude Code: a main-thread `sessionId` not read before), in file order.
    /// Each session's figures count once: Codex's cumulative totals start from its own
    /// baseline, Copilot's `session.shutdown` usages add up, Pi's earlier active branches stay.
    pub sessions: Vec<SessionStart>,
    /// Per-turn figures the agent records outside the file's lines (Kiro CLI's `<uuid>.json`
    /// sidecar `user_turn_metadatas`, issue 21 item 4), by the entry of the prompt that opens
    /// the turn, in file order.
    pub recorded_turns: Vec<RecordedTurn>,
    /// True when the latest turn context says every command not known safe waits for the
    /// user's approval before it runs (Codex `turn_context.approval_policy: "untrusted"`;
    /// issue 23 item 10: a command call left without output there is a permission prompt).
    pub commands_need_approval: bool,
}

/// What the agent recorded for one turn outside its lines ([`SessionMeta::recorded_turns`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecordedTurn {
    /// Entry index of the turn's opening prompt.
    pub entry: usize,
    /// The turn's duration as the agent measured it, in ms.
    pub duration_ms: Option<u64>,
    /// Credits the agent metered for the turn (Kiro `metering_usage`, unit `credit`).
    pub credits: Option<f64>,
}

/// Where a later session of the file starts ([`SessionMeta::sessions`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionStart {
    /// Entry index of its first record (its `session_meta`).
    pub entry: usize,
    /// Its line (0-based).
    pub line: usize,
    /// Its session id as written.
    pub id: String,
    /// The thread it was forked or spawned from, when it names one (`forked_from_id`,
    /// `parent_thread_id`).
    pub parent: Option<String>,
}

/// The record a session title comes from, lowest rank first (a higher rank replaces a lower
/// one; issue 7).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum TitleSource {
    /// Claude Code `summary` record whose `leafUuid` is in the file.
    Summary,
    /// Claude Code `ai-title`.
    AiTitle,
    /// Codex `event_msg/thread_name_updated`.
    ThreadName,
    /// The session's name in the agent's own metadata beside the file (Kiro CLI's
    /// `<uuid>.json` sidecar `title`, Mistral Vibe's `meta.json` `title`; issue 21).
    SessionName,
    /// Claude Code `custom-title` (set by the user).
    CustomTitle,
}

impl TitleSource {
    /// `summary` | `ai-title` | `thread-name` | `custom-title`, as in the protocol.
    pub fn as_str(self) -> &'static str {
        match self {
            TitleSource::Summary => "summary",
            TitleSource::AiTitle => "ai-title",
            TitleSource::ThreadName => "thread-name",
            TitleSource::SessionName => "session-name",
            TitleSource::CustomTitle => "custom-title",
        }
    }
}

/// Usage of one model over a whole session, as a format records it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelUsage {
    /// Model name as written (`gpt-5-mini`, `claude-haiku-4.5`).
    pub model: String,
    /// Number of model requests, when given.
    pub requests: Option<u64>,
    pub usage: Usage,
}

/// Severity of a [`Problem`], mapped to LSP diagnostic severity by `crate::lsp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

/// Something in the input a reader could not take as a normal record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 0-based line index.
    pub line: usize,
    /// Byte span the problem covers (usually the whole line, or one byte for a JSON error).
    pub span: Span,
    pub severity: Severity,
    /// Human-readable, e.g. `invalid JSON: control character (\u0000-\u001F) found while
    /// parsing a string at column 42`.
    pub message: String,
}

impl Problem {
    /// The warning for a line the loader found invalid UTF-8 on
    /// ([`crate::source::load::InvalidUtf8`]): `invalid UTF-8: 2 bytes replaced by U+FFFD`.
    pub fn invalid_utf8(u: &crate::source::load::InvalidUtf8) -> Problem {
        Problem {
            line: u.line,
            span: u.at..u.at + '\u{fffd}'.len_utf8(),
            severity: Severity::Warning,
            message: format!(
                "invalid UTF-8: {} replaced by U+FFFD",
                if u.bytes == 1 {
                    "1 byte".to_string()
                } else {
                    format!("{} bytes", u.bytes)
                }
            ),
        }
    }
}

/// An immutable string shared between records (a record type, a session id), one pointer
/// wide: `Arc<str>` is a pointer and a length, 16 bytes in every entry (issue 25 item 8,
/// memory per record). Reads as a `str` (`Deref`); `Debug` and `Display` are the `str`'s.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SharedStr(Arc<Box<str>>);

impl SharedStr {
    /// True when both are the same shared string (not merely equal).
    pub fn ptr_eq(a: &SharedStr, b: &SharedStr) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// How many holders share this string.
    pub fn strong_count(s: &SharedStr) -> usize {
        Arc::strong_count(&s.0)
    }
}

impl std::ops::Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for SharedStr {
    fn from(s: &str) -> SharedStr {
        SharedStr(Arc::new(s.into()))
    }
}

impl From<String> for SharedStr {
    fn from(s: String) -> SharedStr {
        SharedStr(Arc::new(s.into_boxed_str()))
    }
}

impl From<Box<str>> for SharedStr {
    fn from(s: Box<str>) -> SharedStr {
        SharedStr(Arc::new(s))
    }
}

impl std::fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl std::fmt::Display for SharedStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&**self, f)
    }
}

impl PartialEq<str> for SharedStr {
    fn eq(&self, s: &str) -> bool {
        **self == *s
    }
}

/// One record (one JSONL line) of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// 0-based line of the record's first byte, as an editor counts lines (see the module's
    /// doc: a lone `\r` before it in the file counts).
    pub line: usize,
    /// Byte span of the line, without its `\n` (and without a trailing `\r`).
    pub span: Span,
    /// What the record is for a reader.
    pub role: Role,
    /// The record's own `type` (and `subtype` / payload type) as written, e.g. `assistant`,
    /// `system/turn_duration`, `response_item/function_call`. For hover and verbose views.
    /// Shared: the reader gives every record of one type the same string (issue 12), one
    /// pointer wide ([`SharedStr`]; issue 25 item 8).
    pub record_type: SharedStr,
    /// `isSidechain: true` (inline sub-agent records, and every record of a sub-agent file).
    pub sidechain: bool,
    /// The record's `timestamp` in epoch ms, [`NO_TIME`] when it has none (or none that
    /// parses). Inline, not in [`Entry::ids`]: records that carry a time and no id (every
    /// Codex record, one-line prompts) took a 104-byte box for it (issue 25 item 8: memory
    /// per record). Read with [`Entry::timestamp_ms`], set with [`Entry::set_timestamp_ms`].
    time: i64,
    /// The record's ids, boxed and only when it has any: plain and invalid lines carry none,
    /// and inline they made every entry 80 bytes bigger (issue 12, memory per line). Read
    /// with [`Entry::uuid`] …, set with the `set_` methods.
    pub ids: Option<Box<EntryIds>>,
    /// Set on records that are part of one model response (a *step*). Boxed: most records
    /// have none, and an inline `StepInfo` made every entry 120 bytes bigger (issue 8 defect
    /// 10, memory per line).
    pub step: Option<Box<StepInfo>>,
    /// Content blocks, in order. Claude assistant lines hold exactly one. A [`ThinVec`]: one
    /// pointer, length and capacity on the heap beside the blocks, none for a record without
    /// blocks (a `Vec` took 24 bytes in every entry; issue 25 item 8, memory per record).
    pub blocks: ThinVec<Block>,
    /// True when the record lies on a branch the session left: not on the path from the root
    /// to the session's current leaf (Pi branches in place: the last entry picks the active
    /// branch, FORMATS-2026 §3). Analysis keeps such records out of turns, steps, usage and
    /// answers, and shows each maximal run of them as one abandoned branch (issue 10). A
    /// reader may flip it on earlier entries when a later record switches branch.
    pub abandoned: bool,
    /// True for a record replayed from a parent thread at the start of a fork or sub-agent
    /// file (Codex `forked_from_id` / `parent_thread_id` rollouts; server/FORMATS.md "Forks
    /// and sub-agents"): not this file's own work, never a turn, never in its token totals.
    pub inherited: bool,
    /// True for a record written again byte for byte later in the same file (Claude Code: a
    /// record whose `uuid` was already read, as a resumed session may repeat earlier records;
    /// issue 20 item 2). It is read once: the repeat is [`Role::Meta`] with no blocks and no
    /// step, its [`Entry::copy_of`] the first record, never a turn, a tool call or tokens;
    /// the verbose view folds a run of them as `repeated records (N)`.
    pub repeated: bool,
    /// True when the agent cut the record's text before writing it (Antigravity CLI
    /// `truncated_fields`, issue 21 item 3): its text blocks hold only the start of what was
    /// said; the view says so after them.
    pub cut_by_agent: bool,
}

impl Entry {
    /// True for a record that says nothing but its type: a [`Role::Other`] record (of a type
    /// its reader does not know, so keeps no state for) with no blocks, ids, step, time or
    /// flag (`{}`, `{"type":"x"}`). Consecutive bare records of one type are read as one
    /// entry ([`Transcript::runs`]; issue 25 item 8).
    pub fn is_bare(&self) -> bool {
        matches!(self.role, Role::Other)
            && self.blocks.is_empty()
            && self.ids.is_none()
            && self.step.is_none()
            && self.time == NO_TIME
            && !(self.sidechain
                || self.abandoned
                || self.inherited
                || self.repeated
                || self.cut_by_agent)
    }

    /// A bare entry with the given role; the other fields empty. For readers and tests.
    pub fn new(line: usize, span: Span, role: Role, record_type: &str) -> Entry {
        Entry::with_record_type(line, span, role, record_type.into())
    }

    /// [`Entry::new`] with a record type already shared (no allocation).
    pub fn with_record_type(line: usize, span: Span, role: Role, record_type: SharedStr) -> Entry {
        Entry {
            line,
            span,
            role,
            record_type,
            sidechain: false,
            time: NO_TIME,
            ids: None,
            step: None,
            blocks: ThinVec::new(),
            abandoned: false,
            inherited: false,
            repeated: false,
            cut_by_agent: false,
        }
    }

    /// `timestamp` in epoch ms, when present and parseable.
    pub fn timestamp_ms(&self) -> Option<i64> {
        (self.time != NO_TIME).then_some(self.time)
    }

    /// The record's own id (Claude `uuid`, Pi / Copilot CLI `id`).
    pub fn uuid(&self) -> Option<&RecordId> {
        self.ids.as_ref()?.uuid.as_ref()
    }

    /// The id of the record this one follows (`parentUuid` / `parentId`).
    pub fn parent_uuid(&self) -> Option<&RecordId> {
        self.ids.as_ref()?.parent_uuid.as_ref()
    }

    /// The session id the record carries (Claude `sessionId`).
    pub fn session_id(&self) -> Option<&str> {
        self.ids.as_ref()?.session_id.as_deref()
    }

    /// `agentId` of a sidechain record.
    pub fn agent_id(&self) -> Option<&str> {
        self.ids.as_ref()?.agent_id.as_deref()
    }

    /// Entry index of the record this one repeats, see [`EntryIds::copy_of`].
    pub fn copy_of(&self) -> Option<usize> {
        self.ids.as_ref()?.copy_of.map(|i| i as usize)
    }

    /// The ids, allocated on first use.
    fn ids_mut(&mut self) -> &mut EntryIds {
        self.ids.get_or_insert_with(Default::default)
    }

    /// Sets `timestamp_ms` (never allocates). `Some(i64::MIN)`, which no timestamp parses to
    /// (jiff's range is years -9999..=9999), reads back as `None`.
    pub fn set_timestamp_ms(&mut self, v: Option<i64>) {
        self.time = v.unwrap_or(NO_TIME);
    }

    /// Sets `uuid` (the id as written; see [`RecordId`]).
    pub fn set_uuid(&mut self, v: Option<&str>) {
        if v.is_some() || self.ids.is_some() {
            self.ids_mut().uuid = v.map(RecordId::new);
        }
    }

    /// Sets `parent_uuid` (the id as written).
    pub fn set_parent_uuid(&mut self, v: Option<&str>) {
        if v.is_some() || self.ids.is_some() {
            self.ids_mut().parent_uuid = v.map(RecordId::new);
        }
    }

    /// Sets `session_id`.
    pub fn set_session_id(&mut self, v: Option<SharedStr>) {
        if v.is_some() || self.ids.is_some() {
            self.ids_mut().session_id = v;
        }
    }

    /// Sets `agent_id`.
    pub fn set_agent_id(&mut self, v: Option<Box<str>>) {
        if v.is_some() || self.ids.is_some() {
            self.ids_mut().agent_id = v;
        }
    }

    /// Sets `copy_of` (an entry index; indices past `u32::MAX` cannot occur, a record taking
    /// at least two bytes of a file read whole, and are dropped).
    pub fn set_copy_of(&mut self, v: Option<usize>) {
        let v = v.and_then(|i| u32::try_from(i).ok());
        if v.is_some() || self.ids.is_some() {
            self.ids_mut().copy_of = v;
        }
    }
}

/// [`Entry::timestamp_ms`] of a record without a time.
const NO_TIME: i64 = i64::MIN;

/// The ids of a record ([`Entry::ids`]): the fields most records of one format carry
/// together and plain or invalid lines lack.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EntryIds {
    pub uuid: Option<RecordId>,
    pub parent_uuid: Option<RecordId>,
    /// Shared like `record_type`: a session's records all carry the same id.
    pub session_id: Option<SharedStr>,
    /// `agentId` of a sidechain record.
    pub agent_id: Option<Box<str>>,
    /// Entry index of the record this one repeats, when it is a copy written for the UI
    /// (Codex `event_msg` copies: `user_message`, `agent_message`, `agent_reasoning`,
    /// `item_completed`; server/FORMATS.md "Codex"). A copy is never new input: it is not
    /// a request start and carries no content of its own.
    pub copy_of: Option<u32>,
}

/// A record id as written (Claude `uuid` / `parentUuid`, Pi and Copilot CLI `id` /
/// `parentId`), kept without a heap allocation when it is a canonical UUID (36 characters,
/// lowercase hex in 8-4-4-4-12 groups: stored as its 16 bytes) or at most 22 bytes long
/// (stored inline); any other id is boxed. Issue 12, memory per record: two boxed UUIDs cost
/// 96 bytes of heap per Claude Code record. One string has one representation, so equality
/// and hashing are the strings'. `Debug` and `Display` show the id as written.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum RecordId {
    /// A canonical UUID's 16 bytes.
    Uuid([u8; 16]),
    /// An id of at most 22 bytes: its length and bytes.
    Short(u8, [u8; 22]),
    /// Any other id.
    Long(Box<str>),
}

impl RecordId {
    /// The id of the text `s`.
    pub fn new(s: &str) -> RecordId {
        if let Some(b) = pack_uuid(s) {
            RecordId::Uuid(b)
        } else if s.len() <= 22 {
            let mut b = [0; 22];
            b[..s.len()].copy_from_slice(s.as_bytes());
            RecordId::Short(s.len() as u8, b)
        } else {
            RecordId::Long(s.into())
        }
    }

    /// The id as written (allocates for a UUID only).
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            RecordId::Uuid(b) => Cow::Owned(unpack_uuid(b)),
            RecordId::Short(n, b) => {
                Cow::Borrowed(std::str::from_utf8(&b[..*n as usize]).unwrap_or_default())
            }
            RecordId::Long(s) => Cow::Borrowed(s),
        }
    }
}

impl PartialEq<str> for RecordId {
    fn eq(&self, s: &str) -> bool {
        match self {
            RecordId::Uuid(b) => pack_uuid(s).as_ref() == Some(b),
            RecordId::Short(n, b) => &b[..*n as usize] == s.as_bytes(),
            RecordId::Long(l) => &**l == s,
        }
    }
}

impl std::fmt::Display for RecordId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

impl std::fmt::Debug for RecordId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.text(), f)
    }
}

/// The 16 bytes of a canonical UUID text (lowercase hex, hyphens at 8, 13, 18 and 23).
///
/// Every record of a Claude Code file carries two ids, so this is on the reader's hot path
/// (issue 12): the hyphens are checked at their fixed places and the 32 digits read eight at
/// a time in a `u64` (each byte checked to be `0-9` or `a-f`, then turned into its value and
/// paired with its neighbour), without a branch or a table look-up per character.
fn pack_uuid(s: &str) -> Option<[u8; 16]> {
    let s: &[u8; 36] = s.as_bytes().try_into().ok()?;
    if s[8] != b'-' || s[13] != b'-' || s[18] != b'-' || s[23] != b'-' {
        return None;
    }
    let word = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap_or([0; 8]));
    let half = |at: usize| {
        u64::from(u32::from_le_bytes(
            s[at..at + 4].try_into().unwrap_or([0; 4]),
        ))
    };
    let word2 = |a: usize, b: usize| half(a) | (half(b) << 32);
    let mut out = [0u8; 16];
    for (i, w) in [word(0), word2(9, 14), word2(19, 24), word(28)]
        .into_iter()
        .enumerate()
    {
        out[i * 4..i * 4 + 4].copy_from_slice(&hex8(w)?.to_le_bytes());
    }
    Some(out)
}

/// The four bytes written as eight lowercase hex digits in `w` (first digit in its lowest
/// byte), first byte lowest; `None` when a byte is not a lowercase hex digit.
fn hex8(w: u64) -> Option<u32> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Per byte, with every byte below 0x80: its high bit set when the byte is >= c (no
    // borrow crosses bytes, since each byte is made >= 0x80 first).
    let at_least = |c: u8| (w | HIGH).wrapping_sub(ONES * u64::from(c)) & HIGH;
    let digit = at_least(b'0') & !at_least(b'9' + 1);
    let letter = at_least(b'a') & !at_least(b'f' + 1);
    if w & HIGH != 0 || digit | letter != HIGH {
        return None;
    }
    // '0'-'9' are 0x30-0x39, 'a'-'f' 0x61-0x66: the low nibble, plus 9 for a letter (bit 6).
    let v = (w & (ONES * 0x0f)) + ((w >> 6) & ONES) * 9;
    // Pairs: byte 2k becomes (digit 2k) << 4 | digit 2k+1; then bytes 0, 2, 4, 6 close up.
    let pairs = ((v << 4) | (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let halves = (pairs | (pairs >> 8)) & 0x0000_ffff_0000_ffff;
    Some((halves | (halves >> 16)) as u32)
}

/// The canonical text of a packed UUID.
fn unpack_uuid(b: &[u8; 16]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(36);
    for (i, &byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push(HEX[usize::from(byte >> 4)] as char);
        s.push(HEX[usize::from(byte & 15)] as char);
    }
    s
}

/// What a record is, for a reader of the conversation. Readers decide this from the format's
/// own fields (FORMATS.md); analysis only looks at roles and blocks.
#[derive(Debug, Clone, PartialEq)]
pub enum Role {
    /// A real human prompt: opens a turn. Claude: a `user` line with string / text / image
    /// content that is not `isMeta`, not `isCompactSummary`, not a tool-result carrier, not a
    /// local-command or bash-mode wrapper. Codex: `response_item` user message (or its
    /// `event_msg/user_message` copy when the former is absent) after the context preamble.
    Prompt(PromptKind),
    /// A machine-authored wake-up that opens a turn without a human message (seed 000 turn
    /// boundary; seed 004 background task cards): never counted as a human prompt.
    Wake(WakeKind),
    /// A prompt typed while the agent worked (queued / steering input), absorbed by the
    /// running turn (case 07, 08). Its text is in `blocks`.
    Steering,
    /// Output of the model: text, thinking and tool_use blocks (Claude `assistant`, Codex
    /// `response_item` assistant message / reasoning / function_call / custom_tool_call /
    /// web_search_call).
    Model,
    /// A record carrying tool results (Claude `user` line with `tool_result` blocks, Codex
    /// `function_call_output` / `custom_tool_call_output`).
    ToolResults,
    /// `[Request interrupted by user]` / `[Request interrupted by user for tool use]`, Codex
    /// `turn_aborted`.
    Interruption,
    /// A local slash command, its output, or bash-mode input/output (`<command-name>`,
    /// `<local-command-stdout>`, `<bash-input>`, `system/local_command`). Not a turn start.
    LocalCommand,
    /// Injected context that is not a prompt: Codex developer / `<environment_context>` /
    /// AGENTS.md messages, `session_meta`, `turn_context`.
    Context,
    /// `system/compact_boundary` (Claude) or `compacted` / `context_compacted` (Codex).
    /// Boxed (as the payloads of the other rare roles): inline it made every entry's role
    /// 48 bytes (issue 12, memory per record).
    CompactBoundary(Box<CompactBoundary>),
    /// The summary that follows a compact boundary (`isCompactSummary: true`). Its text is in
    /// `blocks`.
    CompactSummary,
    /// `system/turn_duration`: closes a turn (completion evidence) with its measured duration.
    TurnDuration { duration_ms: u64 },
    /// Codex `event_msg/task_started`. The id is boxed twice so that the role stays 16 bytes
    /// (issue 25 item 8: memory per record).
    TurnStarted { turn_id: Option<Box<Box<str>>> },
    /// Codex `event_msg/task_complete`: completion evidence, with measured timings when given.
    TurnCompleted(Box<TurnCompleted>),
    /// Anything else the format defines that is not conversation: `isMeta` user rows,
    /// hook/system chatter, `progress`, `attachment`, `file-history-snapshot`,
    /// `permission-mode`, `last-prompt`, titles, `summary`, Codex `token_count`, duplicate
    /// `event_msg` copies. Shown in verbose views only.
    Meta,
    /// A record of a type this crate does not know (kept, shown in verbose views, never
    /// breaks its neighbours).
    Other,
    /// A line that is not valid JSON (or not a JSON object). A [`Problem`] on the same line
    /// says why.
    Unparsed,
}

/// What a compact boundary record says (`Role::CompactBoundary`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompactBoundary {
    /// `auto` | `manual` when given.
    pub trigger: Option<Box<str>>,
    /// Tokens in context before compaction, when given.
    pub pre_tokens: Option<u64>,
}

/// What a Codex `event_msg/task_complete` says (`Role::TurnCompleted`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnCompleted {
    pub turn_id: Option<Box<str>>,
    /// `duration_ms`, when given.
    pub duration_ms: Option<u64>,
    /// `time_to_first_token_ms`, when given.
    pub time_to_first_token_ms: Option<u64>,
}

impl Role {
    /// True for roles that open a turn.
    pub fn opens_turn(&self) -> bool {
        matches!(self, Role::Prompt(_) | Role::Wake(_))
    }
}

/// How a prompt was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptKind {
    /// Typed by the human.
    Typed,
    /// A prompt-type slash command (`/init`, custom commands): the command line; its expanded
    /// prompt follows as a `Meta` record.
    Command,
}

/// Why a turn opened without a human message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeKind {
    /// `<task-notification>` from a background task finishing.
    TaskNotification,
    /// A recovery re-run (auth refresh, rate-limit move, stuck-turn sweep) or other
    /// machine-authored resume.
    Recovery,
    /// The agent's own CLI telling it to go on with nothing typed by the human (Copilot CLI
    /// autopilot: a `user.message` whose `content` is empty and whose `transformedContent`
    /// holds the CLI's nudge).
    Continuation,
}

/// Facts about the model response a record belongs to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepInfo {
    /// Groups the records of one model response. Claude: `message.id` + `requestId` when both
    /// exist, else `message.id`, else the record's `uuid` (case 10). Codex: one key per API
    /// call (records between two `token_count` events with new totals).
    pub key: Box<str>,
    /// `message.model` / `turn_context.model`.
    pub model: Option<Box<str>>,
    /// Usage as this record states it. Claude repeats a snapshot on every line of a response:
    /// analysis takes the component-wise maximum over the group, never the sum. Codex: the
    /// delta of cumulative totals, set on one record of the call.
    pub usage: Option<Usage>,
    /// `stop_reason` / `finish_reason` / Codex `phase` where it means completion.
    pub stop: Option<StopReason>,
    /// True when the output count in `usage` is known to be a streaming placeholder (Claude
    /// versions listed in FORMATS.md §1.6 with `stop_reason: null`), so no throughput may be
    /// computed from it.
    pub output_is_placeholder: bool,
    /// The API-level error text of a synthetic error response (`isApiErrorMessage`), or of a
    /// response the format marks as failed (Pi `stopReason: "error"`, `errorMessage`).
    pub api_error: Option<Box<str>>,
    /// True when the format itself says this response's text is the turn's final answer
    /// (Copilot CLI `phase: "final_answer"`). The heuristic rules of seed 000 then apply
    /// only to turns where no response declares it (issue 10).
    pub declares_final: bool,
    /// Cost of the response in US dollars as the format records it (Pi `usage.cost.total`).
    pub cost_usd: Option<f64>,
    /// When the format measured the generation of this record: the first and last token
    /// times (epoch ms; Codex 0.14x `event_msg/item_completed {started_at_ms,
    /// completed_at_ms}`, server/FORMATS.md "Codex timing"). `None` when only row timestamps
    /// exist.
    pub stream_ms: Option<(i64, i64)>,
    /// Usage of a second model consulted inside this response (Claude Code
    /// `usage.iterations` of type `advisor_message`), never part of `usage`.
    pub advisor_usage: Option<Usage>,
    /// Reasoning effort the step ran with, as written (`xhigh`, `high`; Claude Code 2.1.2xx
    /// top-level `effort`, Codex `turn_context.effort` / `thread_settings_applied`).
    pub effort: Option<Box<str>>,
}

/// Why a model response ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// `end_turn` / `stop` / Codex `phase: final_answer`: the answer is complete.
    EndTurn,
    /// `tool_use` / `tool_calls`.
    ToolUse,
    /// `max_tokens` / `length`.
    MaxTokens,
    /// Any other value, as written.
    Other(Box<str>),
}

/// Token counts (FORMATS.md §1.9, §2). All fields are token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Uncached input tokens (Claude `input_tokens`; Codex `input_tokens - cached_input_tokens`).
    pub input: u64,
    /// Output tokens including reasoning.
    pub output: u64,
    /// Claude `cache_creation_input_tokens` (Codex: 0).
    pub cache_creation: u64,
    /// Claude `cache_read_input_tokens`; Codex `cached_input_tokens`.
    pub cache_read: u64,
    /// Reasoning output tokens when the format reports them separately (included in `output`).
    pub reasoning: u64,
}

impl Usage {
    /// Component-wise maximum: the rule for the repeated snapshots of one Claude response.
    pub fn max(self, o: Usage) -> Usage {
        Usage {
            input: self.input.max(o.input),
            output: self.output.max(o.output),
            cache_creation: self.cache_creation.max(o.cache_creation),
            cache_read: self.cache_read.max(o.cache_read),
            reasoning: self.reasoning.max(o.reasoning),
        }
    }

    /// Component-wise sum: for adding different steps together. Saturating: a sum past
    /// `u64::MAX` stays `u64::MAX` (issue 25 item 10: two `input_tokens` of 2^63 wrapped to
    /// 0 in a release build and panicked in a debug one); shown as overflowed by
    /// `view::text::fmt_tokens`.
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, o: Usage) -> Usage {
        Usage {
            input: self.input.saturating_add(o.input),
            output: self.output.saturating_add(o.output),
            cache_creation: self.cache_creation.saturating_add(o.cache_creation),
            cache_read: self.cache_read.saturating_add(o.cache_read),
            reasoning: self.reasoning.saturating_add(o.reasoning),
        }
    }

    /// Every count added up (saturating, as [`Usage::add`]), `reasoning` left out (it is
    /// part of `output`).
    pub fn total(self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_creation)
            .saturating_add(self.cache_read)
    }
}

/// One content block of a record.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// Byte span of the block's JSON value in the source (for hover, definition, tokens).
    pub span: Span,
    pub kind: BlockKind,
}

/// The kinds of content block, across formats.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockKind {
    /// Prose (agent text, prompt text, steering text, compaction summary text).
    Text { text: Str },
    /// Reasoning. May be empty (Opus 4.7 stores only a signature; Codex reasoning is often
    /// encrypted: then `text` is empty and `encrypted` is true).
    Thinking { text: Str, encrypted: bool },
    /// A tool call. Boxed, as is the result: the two are 120 and 168 bytes, and inline they
    /// made every block (text, thinking) that big (issue 12, memory per record).
    ToolUse(Box<ToolUse>),
    /// A tool result.
    ToolResult(Box<ToolResult>),
    /// An image; never decoded or shown as base64.
    Image {
        /// e.g. `image/png`; `image/unknown` when not given.
        media_type: Box<str>,
        /// Length of the base64 payload in source bytes (0 when not inline).
        data_len: usize,
    },
    /// A block of a type this crate does not know (kept, never breaks its siblings).
    Other { block_type: Box<str> },
}

/// A tool call (`tool_use`, Codex `function_call` / `custom_tool_call` / `web_search_call`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUse {
    /// `toolu_…` / Codex `call_id`.
    pub id: Box<str>,
    /// Tool name as written (`Bash`, `Read`, `Task`, `Agent`, `exec_command`, `apply_patch`…).
    pub name: Box<str>,
    /// Byte span of the raw input JSON (object, or for Codex the `arguments`/`input` string).
    pub input: Span,
    /// The key argument, one line, at most 160 chars (command, file path, pattern, url,
    /// description…), e.g. `cargo test` or `src/main.rs`.
    pub summary: String,
    /// Set when this call spawns a sub-agent (`Task` / `Agent`): its description.
    pub subagent: Option<SubagentSpawn>,
}

/// What a sub-agent-spawning call says about the sub-agent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SubagentSpawn {
    /// `input.description`.
    pub description: Option<String>,
    /// `input.subagent_type`.
    pub agent_type: Option<String>,
}

/// A tool result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The call it answers (`tool_use_id` / `call_id`).
    pub tool_use_id: Box<str>,
    /// `is_error: true`, a rejection, or a non-zero exit code.
    pub is_error: bool,
    /// Byte span of the result content (string literal contents, or the array) in the source.
    pub content: Span,
    /// Total size of the result content in source bytes.
    pub content_len: usize,
    /// First meaningful line of the result, at most 160 chars, images as placeholders.
    pub summary: String,
    /// Images inside the result content, as `(media_type, base64 length)`.
    pub images: Vec<(Box<str>, usize)>,
    /// Set when the result reports on a sub-agent (`toolUseResult.agentId` …).
    pub subagent: Option<SubagentResult>,
}

/// Totals the parent file records for a finished sub-agent (`toolUseResult` of Task/Agent).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SubagentResult {
    pub agent_id: Option<String>,
    /// `totalDurationMs`.
    pub duration_ms: Option<u64>,
    /// `totalTokens`.
    pub total_tokens: Option<u64>,
    /// `totalToolUseCount`.
    pub tool_uses: Option<u64>,
}

/// A sub-agent transcript file found beside a session (FORMATS.md §1.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentFile {
    /// `a4ca7529859c158c2`, `ea02459f`, `acompact-fffbd0` (from the file name).
    pub agent_id: String,
    pub path: std::path::PathBuf,
    /// `meta.json` `toolUseId` when present: the call that spawned it.
    pub tool_use_id: Option<String>,
    /// `meta.json` `description` / `agentType`.
    pub description: Option<String>,
    pub agent_type: Option<String>,
    /// True for the compaction summariser run (`agent-acompact-*`).
    pub is_compaction: bool,
    /// True for a 2.0.x "Warmup" noise file.
    pub is_warmup: bool,
}

/// Parses an ISO-8601 / RFC 3339 timestamp (`2026-04-18T13:19:11.336Z`, with or without
/// fractional seconds, `Z` or an explicit `+hh:mm` offset) into epoch milliseconds (UTC).
/// Returns `None` for anything else (e.g. `"[trimmed for fixture]"`) — never panics.
pub fn parse_timestamp(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(ms) = canonical_timestamp(s) {
        return Some(ms);
    }
    let ts: jiff::Timestamp = s.parse().ok()?;
    Some(ts.as_millisecond())
}

/// The fast path of [`parse_timestamp`] for the form every Claude Code record writes,
/// `YYYY-MM-DDTHH:MM:SS.sssZ` (24 bytes; also without `.sss`, 20 bytes), years 0001–9998
/// (jiff's timestamps end in the last days of 9999):
/// epoch milliseconds, exactly what jiff gives for it (issue 12: jiff's general parser was
/// 1.5 % of `stats` on a 100 MB file). `None` for anything else, including a leap second
/// `:60` and impossible dates, which the caller hands to jiff.
fn canonical_timestamp(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let frac = match b.len() {
        24 if b[19] == b'.' => true,
        20 => false,
        _ => return None,
    };
    if b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    if *b.last()? != b'Z' {
        return None;
    }
    /// The decimal number of the ASCII digits `digits`.
    #[inline(always)]
    fn num(digits: &[u8]) -> Option<i64> {
        let mut n = 0;
        for &c in digits {
            if !c.is_ascii_digit() {
                return None;
            }
            n = n * 10 + i64::from(c - b'0');
        }
        Some(n)
    }
    let (year, month, day) = (num(&b[0..4])?, num(&b[5..7])?, num(&b[8..10])?);
    let (hour, minute, second) = (num(&b[11..13])?, num(&b[14..16])?, num(&b[17..19])?);
    let ms = if frac { num(&b[20..23])? } else { 0 };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if !(1..=9998).contains(&year)
        || day == 0
        || day > month_days
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    // Days from 1970-01-01 to the civil date (proleptic Gregorian; H. Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_with_and_without_fraction_and_offsets() {
        assert_eq!(parse_timestamp("1970-01-01T00:00:01.500Z"), Some(1500));
        assert_eq!(
            parse_timestamp("2026-03-02T00:20:00Z"),
            Some(1_772_410_800_000)
        );
        assert_eq!(
            parse_timestamp("2026-03-01T16:20:00-08:00"),
            Some(1_772_410_800_000)
        );
        assert_eq!(parse_timestamp("[trimmed for fixture]"), None);
    }

    /// The canonical fast path gives exactly jiff's answer on every form it takes, and leaves
    /// to jiff (or refuses) every stamp it does not: a spread of dates over 0001–9999 with
    /// every month end, leap days, leap seconds and out-of-range fields.
    #[test]
    fn canonical_timestamps_read_as_jiff_reads_them() {
        let jiff = |s: &str| {
            s.trim()
                .parse::<jiff::Timestamp>()
                .ok()
                .map(|t| t.as_millisecond())
        };
        let mut stamps = Vec::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..20_000 {
            let year = match next(4) {
                0 => next(10_000),
                1 => 1900 + next(300),
                _ => 2020 + next(10),
            };
            let (month, day) = (next(14), next(33));
            let (h, m, sec, ms) = (next(26), next(62), next(62), next(1000));
            stamps.push(format!(
                "{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{sec:02}.{ms:03}Z"
            ));
            stamps.push(format!(
                "{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{sec:02}Z"
            ));
        }
        for year in [
            1, 4, 100, 400, 1600, 1900, 1969, 1970, 2000, 2024, 2100, 9999,
        ] {
            for month in 1..=12 {
                for day in 27..=32 {
                    stamps.push(format!("{year:04}-{month:02}-{day:02}T23:59:59.999Z"));
                    stamps.push(format!("{year:04}-{month:02}-{day:02}T00:00:00Z"));
                }
            }
        }
        stamps.extend(
            [
                "2026-04-18T13:19:11.336Z",
                " 2026-04-18T13:19:11.336Z\n",
                "2026-04-18T13:19:11.336z",
                "2026-04-18t13:19:11.336Z",
                "2026-04-18 13:19:11.336Z",
                "2026-04-18T13:19:60.000Z",
                "2016-12-31T23:59:60Z",
                "2026-04-18T13:19:11.33Z",
                "2026-04-18T13:19:11.3366Z",
                "2026-04-18T13:19:11,336Z",
                "+2026-04-18T13:19:11.336Z",
                "2026-4-18T13:19:11.336Z0",
                "0000-01-01T00:00:00.000Z",
                "2026-04-18T13:19:11.336+00:00",
                "２026-04-18T13:19:11.336Z",
                "2026-04-1８T13:19:11.336Z",
            ]
            .map(String::from),
        );
        let mut fast = 0;
        for s in &stamps {
            let got = parse_timestamp(s);
            assert_eq!(got, jiff(s), "{s}");
            if canonical_timestamp(s.trim()).is_some() {
                fast += 1;
            }
        }
        // The fast path really was taken for most of them.
        assert!(fast > 20_000, "{fast} of {}", stamps.len());
        assert_eq!(
            canonical_timestamp("2026-04-18T13:19:11.336Z"),
            Some(1_776_518_351_336)
        );
        assert_eq!(canonical_timestamp("2016-12-31T23:59:60Z"), None);
        assert_eq!(canonical_timestamp("2023-02-29T00:00:00Z"), None);
    }

    /// Memory per record (issue 12): every record holds an entry, a role and its blocks, so
    /// their sizes are the per-line cost of a transcript. Tool calls and results (120 and 168
    /// bytes) and the rare roles' payloads are boxed so that text blocks and plain entries do
    /// not pay for them; so are the ids. Before: Block 184, Role 48, Entry 224, then
    /// 200 bytes (ids inline). Issue 25 item 8: the time moved out of the ids' box into the
    /// entry (a record with a time and no id took a 104-byte box for it), paid for by a role
    /// of 16 bytes instead of 24. Then the record type one pointer ([`SharedStr`], was an
    /// `Arc<str>` of 16 bytes) and the blocks a `ThinVec` (was a `Vec` of 24): Entry 112 → 88
    /// bytes, EntryIds 88 → 80; `source::room::LINE_COST` (what the refusal counts per line)
    /// stays above an entry and an empty record's own bytes, and a record without blocks
    /// allocates nothing for them.
    #[test]
    fn per_record_types_stay_compact() {
        assert_eq!(size_of::<Block>(), 48);
        assert_eq!(size_of::<Role>(), 16);
        assert_eq!(size_of::<Entry>(), 88);
        assert_eq!(size_of::<EntryIds>(), 80);
        assert_eq!(size_of::<SharedStr>(), 8);
        assert!(crate::source::room::LINE_COST >= size_of::<Entry>() as u64 + 3);
        assert!(crate::source::room::LINE_COST <= size_of::<Entry>() as u64 + 32);
        let plain = Entry::new(0, 0..2, Role::Meta, "");
        assert!(!plain.blocks.has_capacity());
        let mut e = Entry::new(0, 0..2, Role::Meta, "x");
        e.set_timestamp_ms(Some(1_776_518_351_336));
        assert!(e.ids.is_none());
        assert_eq!(e.timestamp_ms(), Some(1_776_518_351_336));
        e.set_timestamp_ms(Some(-5));
        assert_eq!(e.timestamp_ms(), Some(-5));
        e.set_timestamp_ms(None);
        assert_eq!(e.timestamp_ms(), None);
    }

    /// Record ids (issue 12): canonical UUIDs and short ids need no heap, every id reads back
    /// as written, and one text has one representation.
    #[test]
    fn record_ids_read_back_as_written() {
        assert_eq!(size_of::<Option<RecordId>>(), 24);
        assert_eq!(size_of::<EntryIds>(), 80);
        for s in [
            "0b3c9a54-7d1e-4c2f-9a8b-1c2d3e4f5a6b",
            "0B3C9A54-7D1E-4C2F-9A8B-1C2D3E4F5A6B",
            "0b3c9a54-7d1e-4c2f-9a8b-1c2d3e4f5a6",
            "0b3c9a54x7d1e-4c2f-9a8b-1c2d3e4f5a6b",
            "0b3c9a54-7d1e-4c2f-9a8b-1c2d3e4f5a6g",
            "",
            "u-1",
            "a4ca7529859c158c2",
            "1234567890123456789012",
            "12345678901234567890123",
            "é-ü-\u{FFFD}",
        ] {
            let id = RecordId::new(s);
            assert_eq!(id.text(), s);
            assert_eq!(id.to_string(), s);
            assert_eq!(format!("{id:?}"), format!("{s:?}"));
            assert!(id == *s, "{s}");
            assert_eq!(id, RecordId::new(&String::from(s)));
        }
        assert!(matches!(
            RecordId::new("0b3c9a54-7d1e-4c2f-9a8b-1c2d3e4f5a6b"),
            RecordId::Uuid(_)
        ));
        assert!(matches!(RecordId::new("u-1"), RecordId::Short(3, _)));
        assert!(RecordId::new("u-1") != *"u-2");
        assert!(
            RecordId::new("0b3c9a54-7d1e-4c2f-9a8b-1c2d3e4f5a6b")
                != *"0b3c9a54-7d1e-4c2f-9a8b-1c2d3e4f5a6c"
        );
    }

    /// The word-at-a-time UUID reading packs what reading digit by digit packs, and refuses
    /// what it refuses: every byte value at every place of a few UUIDs (each digit place's
    /// neighbours of `0-9`/`a-f`, upper case, `-`, non-ASCII bytes as the lead byte of a
    /// character), and the bytes of every UUID of the digits 0-f in turn.
    #[test]
    fn uuids_pack_as_digit_by_digit() {
        fn reference(s: &str) -> Option<[u8; 16]> {
            let s: &[u8; 36] = s.as_bytes().try_into().ok()?;
            let mut out = [0u8; 16];
            let mut k = 0;
            for (i, &c) in s.iter().enumerate() {
                if [8, 13, 18, 23].contains(&i) {
                    if c != b'-' {
                        return None;
                    }
                    continue;
                }
                let d = match c {
                    b'0'..=b'9' => c - b'0',
                    b'a'..=b'f' => c - b'a' + 10,
                    _ => return None,
                };
                out[k / 2] |= if k % 2 == 0 { d << 4 } else { d };
                k += 1;
            }
            Some(out)
        }
        let mut tried = 0;
        for base in [
            "0b3c9a54-7d1e-4c2f-9a8b-1c2d3e4f5a6b",
            "00000000-0000-0000-0000-000000000000",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
            "01234567-89ab-cdef-0123-456789abcdef",
            "fedcba98-7654-3210-fedc-ba9876543210",
        ] {
            assert_eq!(pack_uuid(base), reference(base), "{base}");
            assert!(pack_uuid(base).is_some());
            for at in 0..36 {
                for c in 0u8..=0x7f {
                    let mut b = base.as_bytes().to_vec();
                    b[at] = c;
                    let t = std::str::from_utf8(&b).unwrap();
                    assert_eq!(pack_uuid(t), reference(t), "{t:?}");
                    tried += 1;
                }
                // A two-byte character in place of this byte and the next: 37 bytes.
                let t = format!("{}é{}", &base[..at], &base[at + 1..]);
                assert_eq!(pack_uuid(&t), None);
                // Two bytes replaced by one two-byte character: still 36 bytes.
                if at < 35 {
                    let t = format!("{}é{}", &base[..at], &base[at + 2..]);
                    assert_eq!(pack_uuid(&t), reference(&t), "{t:?}");
                }
            }
        }
        for d in "0123456789abcdef".chars() {
            let u: String = (0..36)
                .map(|i| if [8, 13, 18, 23].contains(&i) { '-' } else { d })
                .collect();
            assert_eq!(pack_uuid(&u), reference(&u), "{u}");
            assert_eq!(unpack_uuid(&pack_uuid(&u).unwrap()), u);
        }
        assert!(tried > 20_000);
    }
}
