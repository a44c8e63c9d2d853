//! Gemini CLI session files (issue 21 item 2; `../shared/docs/FORMATS-MORE-AGENTS.md`
//! "gemini-cli"; gemini-cli 0.4x `chatRecordingService`).
//!
//! `~/.gemini/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl` (sub-agents:
//! `chats/<parent session id>/<session id>.jsonl`, header `kind: "subagent"`). The file is an
//! append-only **mutation log** of one conversation record, replayed line by line:
//!
//! | line | what it does | entry |
//! |---|---|---|
//! | header `{sessionId, projectHash, startTime, lastUpdated, kind}` | starts the record (a second header: another session of the file) | `Context` `session` |
//! | bare message `{id, timestamp, type, content, …}` | appends to the history, or **re-writes** the last message under the same id (streaming: the last copy wins) | by `type`, below |
//! | `{"$set": {"lastUpdated"}}` | heartbeat | `Meta` `$set/lastUpdated`, no time |
//! | `{"$set": {"messages": […]}}` | replaces the history: bootstrap context, compaction, rewind sync | `Context` / `CompactBoundary` / `Meta` `$set/messages` |
//! | `{"$set": {"summary"}}` / `sessionId` / `memoryScratchpad` / `directories` | metadata (`summary` is the session's title, source `summary`; `directories[0]` the cwd) | `Meta` `$set/<key>` |
//! | `{"$rewindTo": "<message id>"}` | drops that message and everything after it | `Meta` `$rewindTo`; the dropped records are flagged [`crate::model::Entry::abandoned`] |
//!
//! Messages by `type`:
//! * `user`: `functionResponse` parts → `ToolResults` (paired to the call by
//!   `functionResponse.id`; an error when the response holds `error` or the call's `status` is
//!   not `success`); text starting `<session_context>` → `Context`; text starting `I ran the
//!   following shell command:` (the `!` shell mode) → `LocalCommand`; any other → `Prompt`
//!   (its `displayContent`, what the person typed, when present).
//! * `gemini`: `Model` with one step (key `gemini-<id>`): `content` text (a string, or parts
//!   where `thought: true` is thinking), `thoughts[{subject, description}]` as thinking
//!   blocks, `toolCalls[{id, name, args, result, status}]` as tool calls, `model`, and
//!   `tokens {input, output, cached, thoughts, tool, total}` read as [`Usage`]: `input` =
//!   `input - cached + tool` (uncached prompt plus tool-use prompt), `cache_read` = `cached`,
//!   `output` = `output + thoughts`, `reasoning` = `thoughts` (so the counts add up to
//!   `total`). No finish reason is recorded: a message with tool calls stops for tool use,
//!   any other has no stop reason (completion comes from a later turn or the file's age).
//! * `error` (`[API Error: …]`, what the CLI showed for a failed request): `Meta` with its
//!   text, no step (no response, no tokens); the view shows it as a `⚠ error` notice line.
//! * `info` `Request cancelled.` → `Interruption`; other `info` and `warning` → `Meta`.
//!
//! **Streaming copies.** Gemini re-writes the last message under its id as it learns more
//! (tokens, then its tool calls). The new copy is read; the superseded one becomes `Meta`
//! with no blocks and no step, [`crate::model::Entry::repeated`], its `copy_of` the copy that
//! replaced it: its tokens count once and it is never a request time.
//!
//! **Tool results.** gemini-cli 0.45+ writes each result twice: inside the call
//! (`toolCalls[].result`) and as the next `user` message of `functionResponse` parts, which
//! is read as the result. A call whose result only lives inside the call (0.40, and files
//! migrated from the older `.json` sessions) gets it as a `ToolResult` block of its own
//! message once the next message shows that no `functionResponse` follows.
//!
//! **History rewrites** (`$set.messages`): messages whose ids are in the current history are
//! kept as they were read; the others are new. Before any conversation the rewrite is the
//! bootstrap context (`Context`; history written before this file is `inherited`). When it
//! adds messages and drops conversation (or adds a `<state_snapshot>`), it is a compaction
//! (`CompactBoundary` carrying the snapshot text; the recent turns it re-creates under new
//! ids are copies, not turns). One that only adds is injected `Context`; one that adds
//! nothing (after a rewind, output masking) is `Meta`.
//!
//! **Rewinds.** `$rewindTo` drops the named message and every later one: the records from
//! that message's line to the rewind are flagged abandoned (kept and folded as an abandoned
//! branch, never counted, like Pi's). A target not in the history drops nothing (a hint).
//!
//! **Several sessions in one file** (a recording that joins session files): a second header,
//! or a message whose id was read before in this session and is not the last message (not a
//! streaming copy), starts another session ([`crate::model::SessionMeta::sessions`]), read
//! from an empty history. When it is the same session written again (a repeated id, or a
//! header with the same `sessionId`), a message already read in the session before is a copy:
//! `Meta`, [`crate::model::Entry::repeated`], `copy_of` that entry, never a turn or tokens
//! again.
//!
//! **Live following.** The state is the replayed history (ids, their entries) and the open
//! tool calls: an appended line is applied to it, costing what it adds. A streaming copy
//! revises one earlier entry; a rewind revises the entries it drops
//! ([`Transcript::revise`]).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use super::json::{self, Line, Raw, call_summary, elements, jbool, jcount, jstr, object, one_line};
use thin_vec::ThinVec;

use crate::model::{
    Block, BlockKind, Entry, PromptKind, Role, SessionStart, Severity, Span, StepInfo, StopReason,
    Str, TitleSource, ToolResult, ToolUse, Transcript, Usage, parse_timestamp,
};

/// The text that opens the bootstrap context message.
const SESSION_CONTEXT: &str = "<session_context>";
/// The text that opens a `!` shell-mode message.
const SHELL_ESCAPE: &str = "I ran the following shell command:";
/// The tag of a compaction's summary message.
const STATE_SNAPSHOT: &str = "<state_snapshot>";

/// Line-reader state kept across the lines of one file: the replayed history.
#[derive(Debug, Default)]
pub struct State {
    /// A header was read.
    header_seen: bool,
    /// `sessionId` of the latest header.
    session: Option<Box<str>>,
    /// The conversation's messages now, in order.
    history: Vec<Msg>,
    /// Every message id read in this session (history, rewound-away and replaced ones), with
    /// the entry that holds its latest copy.
    seen: HashMap<Box<str>, usize>,
    /// The ids of the session before this one when this one is the same session written
    /// again (a repeated id, or a header with the same `sessionId`): a message among them is
    /// a copy of that entry, read once.
    earlier: HashMap<Box<str>, usize>,
    /// Tool calls of the latest `gemini` message not answered by a `functionResponse` yet:
    /// the message's entry, and per call its id and whether its status is not `success`.
    open: Option<OpenCalls>,
}

/// The entry of a `gemini` message and its calls still unanswered: `(call id, failed)`.
type OpenCalls = (usize, Vec<(Box<str>, bool)>);

/// A message of the history.
#[derive(Debug, Clone)]
struct Msg {
    id: Box<str>,
    /// The entry that holds it: its own line, or the `$set.messages` line that wrote it.
    entry: usize,
    /// True when `entry` is the message's own line.
    own: bool,
    kind: Kind,
}

/// What a message is for telling a bootstrap or a compaction from a plain history sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `<session_context>` (or a `<state_snapshot>` summary).
    Context,
    /// A prompt, a tool result or a model message.
    Conversation,
    /// `info`, `error`, `warning`.
    Other,
}

/// One line (header, message, `$set` or `$rewindTo`), and one message of `$set.messages`.
/// Every field is a borrowed raw value, interpreted where it is used.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Record<'a> {
    #[serde(rename = "type", borrow)]
    ty: Option<Raw<'a>>,
    #[serde(borrow)]
    id: Option<Raw<'a>>,
    #[serde(borrow)]
    timestamp: Option<Raw<'a>>,
    #[serde(borrow)]
    content: Option<Raw<'a>>,
    #[serde(rename = "displayContent", borrow)]
    display_content: Option<Raw<'a>>,
    #[serde(borrow)]
    thoughts: Option<Raw<'a>>,
    #[serde(borrow)]
    tokens: Option<Raw<'a>>,
    #[serde(borrow)]
    model: Option<Raw<'a>>,
    #[serde(rename = "toolCalls", borrow)]
    tool_calls: Option<Raw<'a>>,
    #[serde(rename = "sessionId", borrow)]
    session_id: Option<Raw<'a>>,
    #[serde(rename = "projectHash", borrow)]
    project_hash: Option<Raw<'a>>,
    #[serde(rename = "startTime", borrow)]
    start_time: Option<Raw<'a>>,
    #[serde(borrow)]
    kind: Option<Raw<'a>>,
    #[serde(borrow)]
    directories: Option<Raw<'a>>,
    #[serde(rename = "$set", borrow)]
    set: Option<Raw<'a>>,
    #[serde(rename = "$rewindTo", borrow)]
    rewind_to: Option<Raw<'a>>,
}

/// The members of a `$set` envelope this reader uses.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Set<'a> {
    #[serde(borrow)]
    messages: Option<Raw<'a>>,
    #[serde(borrow)]
    summary: Option<Raw<'a>>,
    #[serde(borrow)]
    directories: Option<Raw<'a>>,
}

/// A content part (`{text, thought}`, `{functionResponse}`, `{inlineData}`, …).
#[derive(Deserialize, Default)]
#[serde(default)]
struct Part<'a> {
    #[serde(borrow)]
    text: Option<Raw<'a>>,
    #[serde(borrow)]
    thought: Option<Raw<'a>>,
    #[serde(rename = "functionResponse", borrow)]
    function_response: Option<Raw<'a>>,
    #[serde(rename = "functionCall", borrow)]
    function_call: Option<Raw<'a>>,
    #[serde(rename = "inlineData", borrow)]
    inline_data: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct FunctionResponse<'a> {
    #[serde(borrow)]
    id: Option<Raw<'a>>,
    #[serde(borrow)]
    response: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Response<'a> {
    #[serde(borrow)]
    output: Option<Raw<'a>>,
    #[serde(borrow)]
    error: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct InlineData<'a> {
    #[serde(rename = "mimeType", borrow)]
    mime_type: Option<Raw<'a>>,
    #[serde(borrow)]
    data: Option<Raw<'a>>,
}

/// A `toolCalls[]` element.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Call<'a> {
    #[serde(borrow)]
    id: Option<Raw<'a>>,
    #[serde(borrow)]
    name: Option<Raw<'a>>,
    #[serde(borrow)]
    args: Option<Raw<'a>>,
    #[serde(borrow)]
    result: Option<Raw<'a>>,
    #[serde(borrow)]
    status: Option<Raw<'a>>,
    #[serde(borrow)]
    description: Option<Raw<'a>>,
}

/// A `thoughts[]` element.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Thought<'a> {
    #[serde(borrow)]
    subject: Option<Raw<'a>>,
    #[serde(borrow)]
    description: Option<Raw<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Tokens<'a> {
    #[serde(borrow)]
    input: Option<Raw<'a>>,
    #[serde(borrow)]
    output: Option<Raw<'a>>,
    #[serde(borrow)]
    cached: Option<Raw<'a>>,
    #[serde(borrow)]
    thoughts: Option<Raw<'a>>,
    #[serde(borrow)]
    tool: Option<Raw<'a>>,
}

/// Reads Gemini's `tokens` object as [`Usage`] (see the module docs for the mapping).
fn usage_of(tokens: Option<Raw<'_>>) -> Option<Usage> {
    let t = object::<Tokens>(tokens?.get()).ok()?;
    let n = |r: Option<Raw<'_>>| jcount(r).unwrap_or(0);
    let (input, cached, thoughts) = (n(t.input), n(t.cached), n(t.thoughts));
    Some(Usage {
        input: input.saturating_sub(cached).saturating_add(n(t.tool)),
        output: n(t.output).saturating_add(thoughts),
        cache_creation: 0,
        cache_read: cached,
        reasoning: thoughts,
    })
}

/// The parts of a `content` (or `displayContent`) value: a string is one text part.
fn parts<'a>(content: Option<Raw<'a>>) -> Vec<(Raw<'a>, Part<'a>)> {
    let Some(c) = content else {
        return Vec::new();
    };
    if c.get().starts_with('"') {
        return vec![(
            c,
            Part {
                text: Some(c),
                ..Part::default()
            },
        )];
    }
    elements(Some(c))
        .into_iter()
        .map(|el| (el, object::<Part>(el.get()).unwrap_or_default()))
        .collect()
}

/// The decoded text of the first text part of `content`.
fn first_text<'a>(content: Option<Raw<'a>>) -> Option<Cow<'a, str>> {
    parts(content)
        .into_iter()
        .find_map(|(_, p)| jstr(p.text).filter(|s| !s.trim().is_empty()))
}

/// What a `user` message is, from its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UserKind {
    ToolResults,
    Context,
    Shell,
    Prompt,
}

fn user_kind(content: Option<Raw<'_>>) -> UserKind {
    let ps = parts(content);
    if ps.iter().any(|(_, p)| p.function_response.is_some()) {
        return UserKind::ToolResults;
    }
    match first_text(content) {
        Some(s) if s.trim_start().starts_with(SESSION_CONTEXT) => UserKind::Context,
        Some(s) if s.trim_start().starts_with(STATE_SNAPSHOT) => UserKind::Context,
        Some(s) if s.trim_start().starts_with(SHELL_ESCAPE) => UserKind::Shell,
        _ => UserKind::Prompt,
    }
}

/// The kind of a message record for history bookkeeping.
fn kind_of(rec: &Record) -> Kind {
    match jstr(rec.ty).as_deref() {
        Some("user") => match user_kind(rec.content) {
            UserKind::Context => Kind::Context,
            _ => Kind::Conversation,
        },
        Some("gemini") => Kind::Conversation,
        _ => Kind::Other,
    }
}

/// The first workspace directory a `<session_context>` text names (`- **Workspace
/// Directories:**` then `  - <path>`).
fn workspace_of(text: &str) -> Option<String> {
    let at = text.find("**Workspace Directories:**")?;
    let rest = &text[at..];
    let line = rest.lines().nth(1)?.trim();
    let path = line.strip_prefix("- ")?.trim();
    (!path.is_empty()).then(|| path.to_string())
}

impl State {
    /// Reads one complete, non-blank line (`span` excludes the newline) and appends exactly
    /// one entry to `t` (an `Unparsed` entry plus a problem when the line is not a JSON
    /// object). May revise earlier entries: a superseded streaming copy, the records a rewind
    /// drops, a call's result read from inside it.
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
        let entry = if let Some(set) = rec.set {
            self.set(&l, set, t)
        } else if let Some(target) = rec.rewind_to {
            self.rewind(&l, target, t)
        } else if rec.ty.is_none() && rec.session_id.is_some() && rec.project_hash.is_some() {
            self.header(&l, &rec, t)
        } else if let Some(id) = jstr(rec.id) {
            self.message(&l, &rec, &id, t)
        } else {
            let name = jstr(rec.ty).map_or_else(|| "(no type)".to_string(), |s| s.into_owned());
            t.note_unknown("record type", &name, l.line, l.span.clone());
            l.entry(
                Role::Other,
                if rec.ty.is_some() { &name } else { "unknown" },
            )
        };
        t.entries.push(entry);
    }

    /// Forgets the history: another session of the file starts at the entry about to be
    /// pushed. With `same`, it is the one before written again: its messages are copies.
    fn new_session(&mut self, l: &Line, id: Option<&str>, same: bool, t: &mut Transcript) {
        self.history.clear();
        let ended = std::mem::take(&mut self.seen);
        self.earlier = if same { ended } else { HashMap::new() };
        self.open = None;
        t.meta.sessions.push(SessionStart {
            entry: t.entries.len(),
            line: l.line,
            id: id.or(self.session.as_deref()).unwrap_or("").to_string(),
            parent: None,
        });
    }

    /// The header `{sessionId, projectHash, startTime, lastUpdated, kind, directories}`.
    fn header(&mut self, l: &Line, rec: &Record, t: &mut Transcript) -> Entry {
        let id = jstr(rec.session_id);
        self.close_calls(l.source, t);
        if self.header_seen {
            let same = id.is_some() && id.as_deref() == self.session.as_deref();
            self.new_session(l, Some(id.as_deref().unwrap_or("")), same, t);
        } else {
            self.header_seen = true;
            if jstr(rec.kind).as_deref() == Some("subagent") {
                t.meta.is_subagent_file = true;
            }
        }
        self.session = id.as_deref().map(Into::into);
        if let Some(id) = &id {
            t.meta.session_id.get_or_insert_with(|| id.to_string());
        }
        self.note_directories(rec.directories, t);
        let mut e = l.entry(Role::Context, "session");
        e.set_timestamp_ms(jstr(rec.start_time).and_then(|s| parse_timestamp(&s)));
        e
    }

    /// `directories` (a sub-agent's header, `$set.directories`): the first is the cwd.
    fn note_directories(&mut self, dirs: Option<Raw<'_>>, t: &mut Transcript) {
        if t.meta.cwd.is_none()
            && let Some(d) = elements(dirs).into_iter().find_map(|d| jstr(Some(d)))
            && !d.trim().is_empty()
        {
            t.meta.cwd = Some(d.into_owned());
        }
    }

    /// A `$set` envelope.
    fn set(&mut self, l: &Line, set: Raw<'_>, t: &mut Transcript) -> Entry {
        let Ok(s) = object::<Set>(set.get()) else {
            l.problem(
                t,
                Severity::Hint,
                "Gemini CLI `$set` that is not an object".to_string(),
            );
            return l.entry(Role::Other, "$set");
        };
        if let Some(summary) = jstr(s.summary).filter(|s| !s.trim().is_empty()) {
            // gemini-cli's generated session summary (its `/resume` list shows it): the last
            // one is the title.
            t.meta.title = Some(one_line(&summary));
            t.meta.title_source = Some(TitleSource::Summary);
        }
        self.note_directories(s.directories, t);
        if let Some(messages) = s.messages {
            return self.set_messages(l, messages, t);
        }
        // Named by its first member other than the heartbeat (`$set/lastUpdated` alone).
        let keys = json::members(Some(set));
        let key = keys
            .iter()
            .map(|(k, _)| k.as_ref())
            .find(|k| *k != "lastUpdated")
            .or(keys.first().map(|(k, _)| k.as_ref()))
            .unwrap_or("");
        let rt = match key {
            "lastUpdated" => "$set/lastUpdated",
            "sessionId" => "$set/sessionId",
            "summary" => "$set/summary",
            "memoryScratchpad" => "$set/memoryScratchpad",
            "directories" => "$set/directories",
            _ => "$set",
        };
        // No time: a heartbeat is not an input to the model (a request time) nor a message.
        Entry::new(l.line, l.span.clone(), Role::Meta, rt)
    }

    /// `$set.messages`: the history replaced (module docs, "History rewrites").
    fn set_messages(&mut self, l: &Line, messages: Raw<'_>, t: &mut Transcript) -> Entry {
        self.close_calls(l.source, t);
        let idx = t.entries.len();
        let els = elements(Some(messages));
        let recs: Vec<(Raw<'_>, Record<'_>)> = els
            .iter()
            .map(|el| (*el, object::<Record>(el.get()).unwrap_or_default()))
            .collect();
        let had_conversation = self.history.iter().any(|m| m.kind == Kind::Conversation);
        let ids: HashSet<String> = recs
            .iter()
            .filter_map(|(_, r)| jstr(r.id).map(Cow::into_owned))
            .collect();
        let dropped_conversation = self
            .history
            .iter()
            .any(|m| m.kind == Kind::Conversation && !ids.contains(&*m.id));
        let mut next = Vec::with_capacity(recs.len());
        let mut fresh: Vec<(&Record, Kind)> = Vec::new();
        // One pass over each list: no input makes a rewrite quadratic.
        let known: HashMap<&str, &Msg> = self.history.iter().map(|m| (&*m.id, m)).collect();
        for (_, r) in &recs {
            let Some(id) = jstr(r.id) else {
                continue;
            };
            let kind = kind_of(r);
            match known.get(id.as_ref()) {
                Some(m) => next.push((*m).clone()),
                None => {
                    fresh.push((r, kind));
                    next.push(Msg {
                        id: id.as_ref().into(),
                        entry: idx,
                        own: false,
                        kind,
                    });
                }
            }
        }
        let snapshot = |r: &Record| {
            jstr(r.ty).as_deref() == Some("user")
                && parts(r.content)
                    .iter()
                    .any(|(_, p)| jstr(p.text).is_some_and(|s| s.contains(STATE_SNAPSHOT)))
        };
        let mut e = if !had_conversation {
            // The bootstrap context; conversation already in it was written before this file.
            let mut e = l.entry(Role::Context, "$set/messages");
            for (r, _) in &fresh {
                if let Some(text) = first_text(r.content)
                    && let Some(cwd) = workspace_of(&text)
                {
                    t.meta.cwd.get_or_insert(cwd);
                }
                self.text_blocks(l, r.content, &mut e.blocks);
            }
            e.inherited = fresh.iter().any(|(_, k)| *k == Kind::Conversation);
            e
        } else if !fresh.is_empty()
            && (dropped_conversation || fresh.iter().any(|(r, _)| snapshot(r)))
        {
            let mut e = l.entry(Role::CompactBoundary(Box::default()), "$set/messages");
            // The summary: the snapshot message, else the first new user message.
            let summary = fresh
                .iter()
                .find(|(r, _)| snapshot(r))
                .or_else(|| {
                    fresh
                        .iter()
                        .find(|(r, _)| jstr(r.ty).as_deref() == Some("user"))
                })
                .map(|(r, _)| *r);
            if let Some(r) = summary {
                self.text_blocks(l, r.content, &mut e.blocks);
            }
            e
        } else if !fresh.is_empty() {
            let mut e = l.entry(Role::Context, "$set/messages");
            for (r, _) in &fresh {
                self.text_blocks(l, r.content, &mut e.blocks);
            }
            e
        } else {
            l.entry(Role::Meta, "$set/messages")
        };
        // A history rewrite carries no time of its own (`lastUpdated` is a heartbeat).
        e.set_timestamp_ms(None);
        for m in &next {
            self.seen.entry(m.id.clone()).or_insert(m.entry);
        }
        self.history = next;
        e
    }

    /// `{"$rewindTo": id}`: drops the message and all after it (module docs, "Rewinds").
    fn rewind(&mut self, l: &Line, target: Raw<'_>, t: &mut Transcript) -> Entry {
        self.close_calls(l.source, t);
        let e = Entry::new(l.line, l.span.clone(), Role::Meta, "$rewindTo");
        let Some(id) = jstr(Some(target)) else {
            l.problem(
                t,
                Severity::Hint,
                "Gemini CLI `$rewindTo` without a message id".to_string(),
            );
            return e;
        };
        let Some(pos) = self.history.iter().position(|m| *m.id == *id) else {
            l.problem(
                t,
                Severity::Hint,
                format!(
                    "rewind to message `{}`, which is not in the history; nothing dropped",
                    one_line(&id)
                ),
            );
            return e;
        };
        let first = &self.history[pos];
        let from = if first.own {
            first.entry
        } else {
            first.entry + 1
        };
        self.history.truncate(pos);
        for i in from..t.entries.len() {
            if !t.entries[i].abandoned
                && let Some(e) = t.revise(i)
            {
                e.abandoned = true;
            }
        }
        e
    }

    /// A bare message line (`user`, `gemini`, `info`, `error`, `warning`).
    fn message(&mut self, l: &Line, rec: &Record, id: &str, t: &mut Transcript) -> Entry {
        let idx = t.entries.len();
        let ty = jstr(rec.ty).unwrap_or(Cow::Borrowed(""));
        let user = if ty == "user" {
            Some(user_kind(rec.content))
        } else {
            None
        };
        let last = self.history.last().is_some_and(|m| *m.id == *id);
        if last {
            // A streaming copy: this one wins, the earlier copy is superseded.
            let m = self.history.pop().expect("last message");
            if m.own
                && let Some(old) = t.revise(m.entry)
            {
                old.role = Role::Meta;
                old.blocks = ThinVec::new();
                old.step = None;
                old.repeated = true;
                old.set_copy_of(Some(idx));
            }
            if self.open.as_ref().is_some_and(|(e, _)| *e == m.entry) {
                self.open = None;
            }
        } else if self.seen.contains_key(id) {
            // An id read before that is not a streaming copy: a joined file, the same
            // session written again.
            self.close_calls(l.source, t);
            self.new_session(l, None, true, t);
        }
        let copy_of = match self.seen.contains_key(id) {
            false => self.earlier.get(id).copied(),
            true => None,
        };
        if user != Some(UserKind::ToolResults) {
            self.close_calls(l.source, t);
        }
        let kind = match user {
            Some(UserKind::Context) => Kind::Context,
            Some(_) => Kind::Conversation,
            None if ty == "gemini" => Kind::Conversation,
            None => Kind::Other,
        };
        let mut e = match ty.as_ref() {
            _ if copy_of.is_some() => {
                // Read in the session this one writes again: read once.
                self.close_calls(l.source, t);
                let mut e = l.entry(Role::Meta, &ty);
                e.repeated = true;
                e.set_copy_of(copy_of);
                e
            }
            "user" => match user {
                Some(UserKind::ToolResults) => {
                    let mut e = l.entry(Role::ToolResults, "user");
                    self.results(l, rec.content, &mut e.blocks);
                    e
                }
                Some(UserKind::Context) => {
                    let mut e = l.entry(Role::Context, "user");
                    if let Some(text) = first_text(rec.content)
                        && let Some(cwd) = workspace_of(&text)
                    {
                        t.meta.cwd.get_or_insert(cwd);
                    }
                    self.text_blocks(l, rec.content, &mut e.blocks);
                    e
                }
                Some(UserKind::Shell) => {
                    let mut e = l.entry(Role::LocalCommand, "user");
                    self.text_blocks(l, rec.content, &mut e.blocks);
                    e
                }
                _ => {
                    let mut e = l.entry(Role::Prompt(PromptKind::Typed), "user");
                    let shown = if first_text(rec.display_content).is_some() {
                        rec.display_content
                    } else {
                        rec.content
                    };
                    self.text_blocks(l, shown, &mut e.blocks);
                    e
                }
            },
            "gemini" => self.gemini(l, rec, id, idx, t),
            "error" => {
                // What the CLI showed for a failed request: no model response, no tokens.
                let mut e = l.entry(Role::Meta, "error");
                self.text_blocks(l, rec.content, &mut e.blocks);
                e
            }
            "info" => {
                let cancelled = first_text(rec.content)
                    .is_some_and(|s| s.trim().starts_with("Request cancelled"));
                let mut e = l.entry(
                    if cancelled {
                        Role::Interruption
                    } else {
                        Role::Meta
                    },
                    "info",
                );
                self.text_blocks(l, rec.content, &mut e.blocks);
                e
            }
            "warning" => {
                let mut e = l.entry(Role::Meta, "warning");
                self.text_blocks(l, rec.content, &mut e.blocks);
                e
            }
            other => {
                let name = if other.is_empty() { "(no type)" } else { other };
                t.note_unknown("record type", name, l.line, l.span.clone());
                l.entry(
                    Role::Other,
                    if other.is_empty() { "unknown" } else { other },
                )
            }
        };
        e.set_uuid(Some(id));
        self.seen.insert(id.into(), idx);
        self.history.push(Msg {
            id: id.into(),
            entry: idx,
            own: true,
            kind,
        });
        e
    }

    /// A `gemini` message: text, thinking, tool calls and one step.
    fn gemini(
        &mut self,
        l: &Line,
        rec: &Record,
        id: &str,
        idx: usize,
        t: &mut Transcript,
    ) -> Entry {
        let mut e = l.entry(Role::Model, "gemini");
        for el in elements(rec.thoughts) {
            let Ok(th) = object::<Thought>(el.get()) else {
                continue;
            };
            let text = th
                .description
                .and_then(|d| l.str_of(d))
                .filter(|s| !s.is_empty())
                .or_else(|| th.subject.and_then(|s| l.str_of(s)));
            let span = l.raw_span(el);
            e.blocks.push(Block {
                kind: BlockKind::Thinking {
                    text: text.unwrap_or(Str {
                        raw: span.start..span.start,
                    }),
                    encrypted: false,
                },
                span,
            });
        }
        self.text_blocks(l, rec.content, &mut e.blocks);
        let mut calls = Vec::new();
        for el in elements(rec.tool_calls) {
            let span = l.raw_span(el);
            let Ok(c) = object::<Call>(el.get()) else {
                e.blocks.push(Block {
                    span,
                    kind: BlockKind::Other {
                        block_type: "toolCall".into(),
                    },
                });
                continue;
            };
            let call_id: Box<str> = jstr(c.id).unwrap_or_default().as_ref().into();
            let failed = jstr(c.status).is_some_and(|s| s != "success");
            let description = jstr(c.description);
            e.blocks.push(Block {
                span: span.clone(),
                kind: BlockKind::ToolUse(Box::new(ToolUse {
                    id: call_id.clone(),
                    name: jstr(c.name).unwrap_or_default().as_ref().into(),
                    input: c.args.map_or(span.start..span.start, |a| l.raw_span(a)),
                    summary: call_summary(c.args, description.as_deref()),
                    subagent: None,
                })),
            });
            calls.push((call_id, failed));
        }
        let model: Option<Box<str>> = jstr(rec.model).map(|m| m.as_ref().into());
        if let Some(m) = &model {
            t.meta.model.get_or_insert_with(|| m.to_string());
        }
        e.step = Some(Box::new(StepInfo {
            key: format!("gemini-{id}").into(),
            model,
            usage: usage_of(rec.tokens),
            stop: (!calls.is_empty()).then_some(StopReason::ToolUse),
            ..StepInfo::default()
        }));
        if !calls.is_empty() {
            self.open = Some((idx, calls));
        }
        e
    }

    /// The `ToolResult` blocks of a `user` message of `functionResponse` parts; the calls
    /// answered are no longer open.
    fn results(&mut self, l: &Line, content: Option<Raw<'_>>, out: &mut ThinVec<Block>) {
        for (el, p) in parts(content) {
            let Some(fr) = p.function_response else {
                if let Some(text) = p.text.and_then(|r| l.str_of(r)) {
                    out.push(Block {
                        span: l.raw_span(el),
                        kind: BlockKind::Text { text },
                    });
                }
                continue;
            };
            let f = object::<FunctionResponse>(fr.get()).unwrap_or_default();
            let call_id: Box<str> = jstr(f.id).unwrap_or_default().as_ref().into();
            let mut failed = false;
            if let Some((_, calls)) = &mut self.open
                && let Some(k) = calls.iter().position(|(c, _)| *c == call_id)
            {
                failed = calls.remove(k).1;
            }
            out.push(result_block(l, call_id, f.response, fr, failed));
        }
        if self.open.as_ref().is_some_and(|(_, c)| c.is_empty()) {
            self.open = None;
        }
    }

    /// The calls of the latest `gemini` message that no `functionResponse` message answered,
    /// now that another message follows: each gets the result written inside it, as a
    /// `ToolResult` block of that message (module docs, "Tool results").
    fn close_calls(&mut self, source: &str, t: &mut Transcript) {
        let Some((idx, calls)) = self.open.take() else {
            return;
        };
        let Some(entry) = t.entries.get(idx) else {
            return;
        };
        let (line, span) = (entry.line, entry.span.clone());
        let Some(text) = source.get(span.clone()) else {
            return;
        };
        let Ok(rec) = object::<Record>(text) else {
            return;
        };
        let l = Line {
            source,
            line,
            span,
            ts: None,
        };
        let mut blocks = Vec::new();
        for el in elements(rec.tool_calls) {
            let Ok(c) = object::<Call>(el.get()) else {
                continue;
            };
            let call_id: Box<str> = jstr(c.id).unwrap_or_default().as_ref().into();
            let Some(&(_, failed)) = calls.iter().find(|(c, _)| *c == call_id) else {
                continue;
            };
            let Some(result) = c.result.filter(|r| r.get() != "null") else {
                continue;
            };
            // The response of the call's own functionResponse part, else the whole result.
            let response = elements(Some(result)).into_iter().find_map(|p| {
                let part = object::<Part>(p.get()).ok()?;
                let f = object::<FunctionResponse>(part.function_response?.get()).ok()?;
                f.response
            });
            blocks.push(result_block(
                &l,
                call_id,
                response.or(Some(result)),
                result,
                failed,
            ));
        }
        if !blocks.is_empty()
            && let Some(e) = t.revise(idx)
        {
            e.blocks.extend(blocks);
        }
    }

    /// Text (and thinking, image) blocks of a `content` value: a string, or parts (`text`,
    /// `thought: true` text as thinking, `inlineData` as an image, others as `Other`).
    fn text_blocks(&self, l: &Line, content: Option<Raw<'_>>, out: &mut ThinVec<Block>) {
        for (el, p) in parts(content) {
            let span = l.raw_span(el);
            if let Some(text) = p.text.and_then(|r| l.str_of(r)) {
                if text.is_empty() {
                    continue;
                }
                let span = if el.get().starts_with('"') {
                    text.raw.clone()
                } else {
                    span
                };
                let kind = if jbool(p.thought) == Some(true) {
                    BlockKind::Thinking {
                        text,
                        encrypted: false,
                    }
                } else {
                    BlockKind::Text { text }
                };
                out.push(Block { span, kind });
            } else if let Some(d) = p.inline_data {
                let d = object::<InlineData>(d.get()).unwrap_or_default();
                out.push(Block {
                    span,
                    kind: BlockKind::Image {
                        media_type: jstr(d.mime_type)
                            .map_or_else(|| "image/unknown".into(), |m| m.as_ref().into()),
                        data_len: d.data.and_then(|r| l.str_of(r)).map_or(0, |s| s.raw.len()),
                    },
                });
            } else if p.function_call.is_some() || p.function_response.is_some() {
                // Calls and results are read from `toolCalls` and functionResponse messages.
            } else if !el.get().starts_with('"') {
                out.push(Block {
                    span,
                    kind: BlockKind::Other {
                        block_type: "part".into(),
                    },
                });
            }
        }
    }
}

/// A `ToolResult` block: `response` is the `functionResponse.response` object (`output` /
/// `error`), `whole` the value the block spans.
fn result_block(
    l: &Line,
    call_id: Box<str>,
    response: Option<Raw<'_>>,
    whole: Raw<'_>,
    failed: bool,
) -> Block {
    let content = l.raw_span(response.unwrap_or(whole));
    let r = response
        .and_then(|r| object::<Response>(r.get()).ok())
        .unwrap_or_default();
    let error = r.error.is_some_and(|e| e.get() != "null");
    let summary = jstr(r.error)
        .or_else(|| jstr(r.output))
        .map(|s| one_line(&s))
        .unwrap_or_default();
    Block {
        span: l.raw_span(whole),
        kind: BlockKind::ToolResult(Box::new(ToolResult {
            tool_use_id: call_id,
            is_error: failed || error,
            content_len: content.len(),
            content,
            summary,
            images: Vec::new(),
            subagent: None,
        })),
    }
}

/// Detection (issue 21 item 2): the header `{"sessionId","projectHash",…}` without a `type`, a
/// `{"$set":…}` or `{"$rewindTo":…}` envelope, or a `{"type":"gemini","id","content"}`
/// message. A bare `{"type":"user","content":…}` alone says nothing (the retired shape of
/// `fixtures/detection-cases.json` stays unknown until one of those follows).
pub fn detect(p: &super::agents::Probe) -> bool {
    if p.ty().is_none() && p.val("sessionId") && p.has("projectHash") {
        return true;
    }
    if p.ty().is_none() && !p.val("uuid") && (p.has("$set") || p.has("$rewindTo")) {
        return true;
    }
    p.ty() == Some("gemini") && p.has("id") && p.has("content") && !p.val("message")
}

impl super::agents::LineReader for State {
    fn line(&mut self, source: &str, line: usize, span: Span, t: &mut Transcript) {
        State::line(self, source, line, span, t);
    }
}

/// The `sessionId` of a Gemini CLI file's header (its first line, read up to 64 KiB); `None`
/// when the file cannot be read or does not open with a header.
fn header_session_id(path: &std::path::Path) -> Option<String> {
    use std::io::{BufRead, Read};
    let f = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(f.take(64 * 1024))
        .read_line(&mut line)
        .ok()?;
    #[derive(Deserialize)]
    struct Header {
        #[serde(rename = "sessionId")]
        session_id: String,
        #[serde(rename = "projectHash")]
        _project_hash: serde::de::IgnoredAny,
    }
    serde_json::from_str::<Header>(line.trim_end())
        .ok()
        .map(|h| h.session_id)
}

/// True for a main session file's name: `session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl`.
fn is_session_name(name: &str) -> bool {
    name.starts_with("session-") && name.ends_with(".jsonl")
}

/// The sub-agent files of the Gemini CLI session stored at `main`
/// (`…/chats/session-….jsonl`): gemini-cli writes a sub-agent's record to
/// `…/chats/<parent session id>/<its session id>.jsonl` (header `kind: "subagent"`). Sorted by
/// path; the agent id is the file stem (its session id). Any other path, or a missing folder,
/// gives none; never panics.
pub fn children(main: &std::path::Path, _child_ids: &[&str]) -> Vec<crate::model::SubagentFile> {
    let (Some(dir), Some(name)) = (main.parent(), main.file_name().and_then(|n| n.to_str())) else {
        return Vec::new();
    };
    if !is_session_name(name) || dir.file_name().is_none_or(|d| d != "chats") {
        return Vec::new();
    }
    let Some(sid) = header_session_id(main)
        .filter(|s| !s.is_empty() && !s.contains(['/', '\\']) && s != "." && s != "..")
    else {
        return Vec::new();
    };
    let Ok(rd) = std::fs::read_dir(dir.join(&sid)) else {
        return Vec::new();
    };
    let mut out: Vec<crate::model::SubagentFile> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .filter_map(|p| {
            let agent_id = p.file_stem()?.to_str()?.to_string();
            Some(crate::model::SubagentFile {
                agent_id,
                path: p,
                tool_use_id: None,
                description: None,
                agent_type: None,
                is_compaction: false,
                is_warmup: false,
            })
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The main session file of a Gemini CLI sub-agent file `…/chats/<parent id>/<id>.jsonl`: the
/// `…/chats/session-…-<first 8 of parent id>.jsonl` whose header names the parent id. `None`
/// for any other path.
pub fn main_of(path: &std::path::Path) -> Option<std::path::PathBuf> {
    let sub = path.parent()?;
    let chats = sub.parent()?;
    if chats.file_name()? != "chats" || path.extension()? != "jsonl" {
        return None;
    }
    let parent_id = sub.file_name()?.to_str()?;
    let short = parent_id.get(..8)?;
    let suffix = format!("-{short}.jsonl");
    let mut candidates: Vec<std::path::PathBuf> = std::fs::read_dir(chats)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| is_session_name(n) && n.ends_with(&suffix))
        })
        .collect();
    candidates.sort();
    candidates
        .into_iter()
        .find(|p| header_session_id(p).as_deref() == Some(parent_id))
}
