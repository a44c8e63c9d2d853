//! The session index (issue 7, DESIGN.md §5b): one small entry per transcript file under the
//! configured roots, answering `transcript/sessions` and workspace symbols without re-reading
//! any file per query.
//!
//! * [`summary`] turns a file's text (whole, or from the opening line of its last turn after an
//!   append) into an entry, through the same format readers and analysis as an open document:
//!   titles, turn counts and completion states follow the same rules everywhere.
//! * [`disk`] is the only part that touches the file system: scanning roots, stat, reading a
//!   file whole or from an offset, the on-disk cache for warm starts; [`walk`] is what lies
//!   under the roots (shared with the file follower), [`session_files`] the files of one
//!   session (sub-agents, compaction runs) and the way back from a sub-agent file to it.
//! * [`SessionIndex`] holds the entries (keyed by path) and answers queries: sessions newest
//!   first with fuzzy matching, turns for workspace symbols, parent / children links.
//!
//! * [`search`] is the full-text search over every session's text (issue 26), kept in step
//!   with the index file by file.
//!
//! Memory: an entry keeps no transcript text, only its title, first prompt (at most
//! [`summary::PROMPT_MAX`] characters), project path, a few numbers and one short name per turn
//! (the turn titles that workspace symbols search), and per turn the files it changed
//! ([`ChangedFile`]: path, action, counts; issue 22 item 3) that the file history and agent
//! blame ([`history`]) start from.

pub mod disk;
pub mod history;
pub mod search;
pub mod session_files;
pub mod summary;
pub mod walk;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::analysis::waiting::Waiting;
use crate::model::{Format, TitleSource};

/// How long after its file's last change a session that waits for the user is said to wait
/// (ms): a day (issue 23 item 10). Longer than [`LIVE_WINDOW_MS`], as a question may wait
/// while its user is away.
pub const WAITING_WINDOW_MS: i64 = 24 * 60 * 60 * 1000;

/// A session counts as live when its last turn has no completion evidence and the file was
/// modified less than this long ago (ms): the file-age rule of the views and the CLI
/// ([`crate::source::age::SETTLED_AFTER`], 2 minutes), so the index never calls live a
/// session whose view reads it as finished.
pub const LIVE_WINDOW_MS: i64 = crate::source::age::SETTLED_AFTER.as_millis() as i64;

/// One turn, for workspace symbols.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnSymbol {
    /// 1-based turn number.
    pub n: usize,
    /// The turn title (first prompt line, at most 80 characters; a wake-up's label).
    pub title: Box<str>,
    /// 0-based first and last line of the turn in the raw file (inclusive).
    pub start_line: usize,
    pub end_line: usize,
    /// True for a machine wake-up turn (seed 004).
    pub wake: bool,
}

/// One file a turn changed (issue 22 item 3): what the file history answers from without
/// reading a transcript again. Filled from the turn's change set (`view::changes`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedFile {
    /// Absolute path as the change set gives it (relative Codex paths joined to the session's
    /// `cwd`, normalised lexically; symlinks not resolved).
    pub path: Box<str>,
    /// 1-based turn number.
    pub turn: usize,
    pub action: crate::view::changes::FileAction,
    /// Lines added and removed by the turn's net change of the file.
    pub added: u32,
    pub removed: u32,
    /// 0-based line of the turn's opening record in the transcript.
    pub line: usize,
    /// The turn's time (epoch ms): its opening record's timestamp, else its first record's.
    #[serde(default)]
    pub ms: Option<i64>,
}

/// Where an append is read from: the opening line of the file's last turn (its state may
/// change with the new records; for Codex the bookkeeping records just before it,
/// `summary::tail_readable`), with what comes before it summed up.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tail {
    /// Byte offset and 0-based line where the tail starts (0 when the file has no turn yet).
    pub offset: u64,
    pub line: usize,
    /// Turns that end before `offset`.
    pub turns_before: usize,
    /// FNV-1a hash of the first bytes (at most [`summary::ANCHOR_BYTES`]) from `offset`: an
    /// append keeps them, a rewrite almost surely does not.
    pub anchor: u64,
    /// FNV-1a hash of the file's first `head_len` bytes (at most `index::disk::HEAD_BYTES`)
    /// when read: a file grown whose head changed was rewritten, not appended to (issue 25
    /// item 2; 0 and 0 in caches written before it, which never match: read whole once).
    #[serde(default)]
    pub head: u64,
    #[serde(default)]
    pub head_len: u64,
}

/// What the index knows about one transcript file. No transcript text beyond the short
/// strings below.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionEntry {
    pub format: Format,
    /// The title the file gives itself (`custom-title` > `ai-title` > a `summary` whose
    /// `leafUuid` is in the file; Codex `thread_name_updated`), and which record gave it.
    pub title: Option<Box<str>>,
    pub title_source: Option<TitleSource>,
    /// First line of the first human prompt, at most [`summary::PROMPT_MAX`] characters.
    pub first_prompt: Option<Box<str>>,
    /// Working directory recorded in the file (`cwd`), not the folder slug.
    pub project: Option<Box<str>>,
    /// Claude `sessionId` of the first record / Codex `session_meta.id`.
    pub session_id: Option<Box<str>>,
    /// True for a sub-agent transcript (every record a sidechain record).
    pub subagent: bool,
    /// The session this one was forked or spawned from, by id (Codex `forked_from_id` /
    /// `parent_thread_id`).
    #[serde(default)]
    pub parent_session: Option<Box<str>>,
    /// Earliest and latest record timestamps (epoch ms).
    pub started_ms: Option<i64>,
    pub ended_ms: Option<i64>,
    /// Turns opened by a prompt or a wake-up (the preamble is not counted).
    pub turns: usize,
    /// True when the last turn has no completion evidence (analysis `TurnState::InFlight`).
    pub last_turn_open: bool,
    /// File size (bytes) and modification time when read.
    pub bytes: u64,
    pub modified_ms: Option<i64>,
    /// The turns, for workspace symbols.
    pub symbols: Vec<TurnSymbol>,
    pub tail: Tail,
    /// The files each turn changed, by turn then in the order the turn first touched them
    /// (issue 22 item 3; absent in caches written before it).
    #[serde(default)]
    pub changes: Vec<ChangedFile>,
    /// Why the session waits for the user at its end, if it does (issue 23 item 10,
    /// `analysis::waiting`; absent in caches written before it).
    #[serde(default)]
    pub waiting: Option<Waiting>,
}

impl SessionEntry {
    /// The name shown for the session: its own title, else its first prompt, else the file name.
    /// Invisible characters in a title are shown as the rest of the project shows them
    /// (`analysis::text::show_invisible`).
    pub fn display_title(&self, path: &Path) -> String {
        if let Some(t) = self.title.as_deref().or(self.first_prompt.as_deref()) {
            return crate::analysis::text::show_invisible(t).into_owned();
        }
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// True when the session is being written: last turn open and modified within
    /// [`LIVE_WINDOW_MS`] of `now_ms`.
    pub fn is_live(&self, now_ms: i64) -> bool {
        self.last_turn_open
            && self
                .modified_ms
                .is_some_and(|m| now_ms.saturating_sub(m) < LIVE_WINDOW_MS)
    }

    /// Why the session waits for the user, when it does and its file was modified within
    /// [`WAITING_WINDOW_MS`] of `now_ms` (an old session that ended on a question was left,
    /// not kept waiting).
    pub fn waiting_at(&self, now_ms: i64) -> Option<&Waiting> {
        self.waiting.as_ref().filter(|_| {
            self.modified_ms
                .is_some_and(|m| now_ms.saturating_sub(m) < WAITING_WINDOW_MS)
        })
    }

    /// The most recent time known for the session (ms): its last record, else the file's
    /// modification time.
    pub fn recency_ms(&self) -> i64 {
        self.ended_ms.or(self.modified_ms).unwrap_or(0)
    }

    /// The title of turn `n` (its workspace-symbol name), when the entry has it.
    pub fn turn_title(&self, n: usize) -> Option<&str> {
        let i = self.symbols.binary_search_by_key(&n, |s| s.n).ok()?;
        Some(&self.symbols[i].title)
    }
}

/// Milliseconds since the Unix epoch of a modification time.
pub fn system_time_ms(t: SystemTime) -> Option<i64> {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_millis() as i64)
}

/// One session as `transcript/sessions` returns it (PROTOCOL.md). Times are ISO 8601 UTC.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The file (the protocol names it by URI; left out of the serialized form, which a
    /// path that is not UTF-8 would make fail: issue 25, Low list).
    #[serde(skip)]
    pub path: PathBuf,
    /// `claude-code` | `codex`.
    pub format: &'static str,
    pub title: String,
    /// `custom-title` | `ai-title` | `summary` | `thread-name` | `session-name` | `prompt` | `file`.
    pub title_source: &'static str,
    pub first_prompt: Option<String>,
    pub project: Option<String>,
    pub started: Option<String>,
    pub ended: Option<String>,
    pub turns: usize,
    pub bytes: u64,
    pub live: bool,
    /// Why the session waits for the user (`SessionEntry::waiting_at`), else `null`.
    pub waiting: Option<Waiting>,
    /// Named by URI in the protocol (not serialized).
    #[serde(skip)]
    pub parent: Option<PathBuf>,
    #[serde(skip)]
    pub children: Vec<PathBuf>,
}

/// A `transcript/sessions` query.
#[derive(Debug, Clone, Default)]
pub struct SessionQuery {
    /// Fuzzy text matched against title, project and first prompt (every word must match).
    pub query: Option<String>,
    /// Only sessions whose project is this path or below it.
    pub project: Option<String>,
    /// At most this many sessions (default [`DEFAULT_LIMIT`]).
    pub limit: Option<usize>,
}

/// Sessions returned when the query gives no limit.
pub const DEFAULT_LIMIT: usize = 200;

/// The index: entries keyed by path.
#[derive(Debug, Clone, Default)]
pub struct SessionIndex {
    files: BTreeMap<PathBuf, SessionEntry>,
}

impl SessionIndex {
    pub fn new() -> SessionIndex {
        SessionIndex::default()
    }

    /// Number of indexed files (transcripts or not).
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// Number of indexed transcripts.
    pub fn session_count(&self) -> usize {
        self.files
            .values()
            .filter(|e| e.format != Format::Unknown)
            .count()
    }

    /// Number of indexed turns.
    pub fn turn_count(&self) -> usize {
        self.files.values().map(|f| f.turns).sum()
    }

    pub fn get(&self, path: &Path) -> Option<&SessionEntry> {
        self.files.get(path)
    }

    /// Every entry, by path.
    pub fn entries(&self) -> impl Iterator<Item = (&PathBuf, &SessionEntry)> {
        self.files.iter()
    }

    pub fn insert(&mut self, path: PathBuf, entry: SessionEntry) {
        self.files.insert(path, entry);
    }

    /// Drops a file (deleted, or outside the roots now).
    pub fn remove(&mut self, path: &Path) {
        self.files.remove(path);
    }

    /// Drops every file not under one of `roots`.
    pub fn retain_roots(&mut self, roots: &[PathBuf]) {
        self.files
            .retain(|p, _| roots.iter().any(|r| p.starts_with(r)));
    }

    /// The session a file belongs to, if that session is indexed: a sub-agent file's main
    /// transcript (`<stem>/subagents/agent-*.jsonl`, `<stem>.agent-*.jsonl`, or a flat
    /// `agent-*.jsonl` whose `sessionId` names a sibling), the session a resumed / forked
    /// Claude Code file continues (its first `sessionId` is another file's name in the same
    /// folder), or the thread a Codex rollout was forked or spawned from (by session id,
    /// anywhere in the index).
    pub fn parent_of(&self, path: &Path) -> Option<PathBuf> {
        self.parent_with(path, &self.by_session_id())
    }

    fn by_session_id(&self) -> HashMap<&str, &PathBuf> {
        self.files
            .iter()
            .filter_map(|(p, e)| Some((e.session_id.as_deref()?, p)))
            .collect()
    }

    fn parent_with(&self, path: &Path, by_id: &HashMap<&str, &PathBuf>) -> Option<PathBuf> {
        let e = self.files.get(path)?;
        if let Some(parent) = e.parent_session.as_deref()
            && let Some(p) = by_id.get(parent)
            && p.as_path() != path
        {
            return Some((*p).clone());
        }
        // (A Codex rollout's parent is its `parent_session`, above: no file is read here;
        // the registry's `index_by_path` says which agents' children link by path.)
        let by_path = crate::formats::agents::of(e.format)
            .is_some_and(|a| a.layout.is_none_or(|l| l.index_by_path));
        let main = if by_path {
            crate::index::session_files::main_of(path)
        } else {
            path.to_path_buf()
        };
        if main != path && self.files.contains_key(&main) {
            return Some(main);
        }
        let dir = path.parent()?;
        let name = path.file_name()?.to_str()?;
        if let Some((stem, _)) = name.split_once(".agent-") {
            let p = dir.join(format!("{stem}.jsonl"));
            if self.files.contains_key(&p) {
                return Some(p);
            }
        }
        let sid = e.session_id.as_deref()?;
        if path.file_stem().and_then(|s| s.to_str()) == Some(sid) {
            return None;
        }
        let p = dir.join(format!("{sid}.jsonl"));
        (p != path && self.files.contains_key(&p)).then_some(p)
    }

    /// True for a file that is no session of its own: Antigravity's `transcript_full.jsonl`,
    /// the unfiltered copy of the conversation beside its `transcript.jsonl` (issue 21 item 3).
    fn not_a_session(path: &Path, e: &SessionEntry) -> bool {
        e.format == Format::Antigravity && crate::formats::antigravity::is_unfiltered_view(path)
    }

    /// Sessions matching `q`, most recent first (by last record time). Files that are not
    /// transcripts are left out. `now_ms` decides `live`.
    pub fn sessions(&self, q: &SessionQuery, now_ms: i64) -> Vec<SessionInfo> {
        let words: Vec<String> = q
            .query
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        let project = q.project.as_deref().map(|p| p.trim_end_matches('/'));
        let mut children: HashMap<PathBuf, Vec<PathBuf>> = HashMap::new();
        let mut parents: HashMap<&Path, PathBuf> = HashMap::new();
        let by_id = self.by_session_id();
        for (p, e) in &self.files {
            if e.format == Format::Unknown || Self::not_a_session(p, e) {
                continue;
            }
            if let Some(parent) = self.parent_with(p, &by_id) {
                children.entry(parent.clone()).or_default().push(p.clone());
                parents.insert(p, parent);
            }
        }
        let mut hits: Vec<(i64, i64, &PathBuf, &SessionEntry)> = Vec::new();
        // Per hit: every word matched as a substring (not only as a subsequence).
        let mut wholes: Vec<bool> = Vec::new();
        for (p, e) in &self.files {
            if e.format == Format::Unknown || Self::not_a_session(p, e) {
                continue;
            }
            if let Some(want) = project {
                let Some(proj) = e.project.as_deref() else {
                    continue;
                };
                if !Path::new(proj).starts_with(want) {
                    continue;
                }
            }
            let score = if words.is_empty() {
                Some((0, true))
            } else {
                let title = e.display_title(p);
                fuzzy_match(
                    &words,
                    &[
                        (&title, 3),
                        (e.first_prompt.as_deref().unwrap_or(""), 2),
                        (e.project.as_deref().unwrap_or(""), 1),
                    ],
                )
            };
            if let Some((s, whole)) = score {
                hits.push((s, e.recency_ms(), p, e));
                wholes.push(whole);
            }
        }
        // Cut (issue 23 item 3): when some session holds every word whole, the sessions that
        // match a word only as scattered characters are noise (`pre-session` matched three
        // unrelated titles after the right one).
        if wholes.iter().any(|&w| w) {
            let mut keep = wholes.into_iter();
            hits.retain(|_| keep.next().unwrap_or(true));
        }
        // Best match first when there is a query, then most recent.
        hits.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(b.2)));
        hits.truncate(q.limit.unwrap_or(DEFAULT_LIMIT));
        hits.into_iter()
            .map(|(_, _, p, e)| {
                let mut kids = children.remove(p).unwrap_or_default();
                kids.sort();
                SessionInfo {
                    path: p.clone(),
                    format: e.format.as_str(),
                    title: e.display_title(p),
                    title_source: match (e.title_source, &e.first_prompt) {
                        (Some(s), _) if e.title.is_some() => s.as_str(),
                        (_, Some(_)) => "prompt",
                        _ => "file",
                    },
                    first_prompt: e.first_prompt.as_deref().map(str::to_string),
                    project: e.project.as_deref().map(str::to_string),
                    started: e.started_ms.and_then(iso),
                    ended: e.ended_ms.and_then(iso),
                    turns: e.turns,
                    bytes: e.bytes,
                    live: e.is_live(now_ms),
                    waiting: e.waiting_at(now_ms).cloned(),
                    parent: parents.get(p.as_path()).cloned(),
                    children: kids,
                }
            })
            .collect()
    }
}

/// ISO 8601 UTC with milliseconds (`2026-11-30T09:14:03.512Z`).
pub fn iso(ms: i64) -> Option<String> {
    let ts = jiff::Timestamp::from_millisecond(ms).ok()?;
    Some(format!("{ts:.3}"))
}

/// Fuzzy match of `words` (lower-case) against weighted fields: every word must match one
/// field, as a substring (score 4 at a word start, 3 elsewhere) or as a subsequence of
/// characters (score 1); each word's best field score is multiplied by the field's weight and
/// summed. `None` when a word matches nowhere.
pub fn fuzzy_score(words: &[String], fields: &[(&str, i64)]) -> Option<i64> {
    fuzzy_match(words, fields).map(|(s, _)| s)
}

/// [`fuzzy_score`] and whether every word occurs whole (as a substring) in some field, not
/// only as a subsequence of characters (`transcript/sessions` drops subsequence-only matches
/// when a whole match exists, issue 23 item 3).
pub fn fuzzy_match(words: &[String], fields: &[(&str, i64)]) -> Option<(i64, bool)> {
    let lowered: Vec<(String, i64)> = fields.iter().map(|(f, w)| (f.to_lowercase(), *w)).collect();
    let mut total = 0;
    let mut whole = true;
    for w in words {
        let (best, sub) = lowered
            .iter()
            .filter_map(|(f, weight)| word_score(f, w).map(|s| (s * weight, s > 1)))
            .max_by_key(|&(s, sub)| (sub, s))?;
        total += best;
        whole &= sub;
    }
    Some((total, whole))
}

fn word_score(field: &str, word: &str) -> Option<i64> {
    if let Some(i) = field.find(word) {
        let at_start = field[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        return Some(if at_start { 4 } else { 3 });
    }
    let mut chars = field.chars();
    word.chars()
        .all(|wc| chars.by_ref().any(|fc| fc == wc))
        .then_some(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(title: &str, project: &str, ended: i64) -> SessionEntry {
        SessionEntry {
            format: Format::ClaudeCode,
            title: Some(title.into()),
            title_source: Some(TitleSource::AiTitle),
            first_prompt: Some("first".into()),
            project: Some(project.into()),
            session_id: None,
            subagent: false,
            parent_session: None,
            started_ms: Some(ended - 1000),
            ended_ms: Some(ended),
            turns: 1,
            last_turn_open: false,
            bytes: 10,
            modified_ms: Some(ended),
            symbols: Vec::new(),
            tail: Tail::default(),
            changes: Vec::new(),
            waiting: None,
        }
    }

    #[test]
    fn sessions_newest_first_fuzzy_and_by_project() {
        let mut idx = SessionIndex::new();
        idx.insert(
            "/r/a.jsonl".into(),
            entry("Fix the login bug", "/home/me/app", 3000),
        );
        idx.insert(
            "/r/b.jsonl".into(),
            entry("Write docs", "/home/me/app", 5000),
        );
        idx.insert(
            "/r/c.jsonl".into(),
            entry("Login page styles", "/home/me/web", 4000),
        );
        let titles = |q: SessionQuery| -> Vec<String> {
            idx.sessions(&q, 0).into_iter().map(|s| s.title).collect()
        };
        assert_eq!(
            titles(SessionQuery::default()),
            ["Write docs", "Login page styles", "Fix the login bug"]
        );
        // Word-start substring in the title beats a mid-word one; ties by recency.
        let q = |s: &str| SessionQuery {
            query: Some(s.into()),
            ..SessionQuery::default()
        };
        assert_eq!(
            titles(q("login")),
            ["Login page styles", "Fix the login bug"]
        );
        assert_eq!(titles(q("LOGIN bug")), ["Fix the login bug"]);
        // Subsequence match ("flb" in "fix the login bug").
        assert_eq!(titles(q("flb")), ["Fix the login bug"]);
        // Project words match too, with less weight.
        assert_eq!(titles(q("web")), ["Login page styles"]);
        assert!(titles(q("zzz")).is_empty());
        let p = SessionQuery {
            project: Some("/home/me/app/".into()),
            limit: Some(1),
            ..SessionQuery::default()
        };
        assert_eq!(titles(p), ["Write docs"]);
    }

    #[test]
    fn scattered_matches_are_cut_when_a_whole_match_exists() {
        // Issue 23 item 3: `pre-session` found the right session and three unrelated ones.
        let mut idx = SessionIndex::new();
        idx.insert(
            "/r/a.jsonl".into(),
            entry("Add a pre-session hook", "/home/me/app", 1000),
        );
        idx.insert(
            "/r/b.jsonl".into(),
            entry("Prepare the release-session notes", "/home/me/app", 3000),
        );
        idx.insert(
            "/r/c.jsonl".into(),
            entry("Print every session", "/home/me/app", 2000),
        );
        let titles = |s: &str| -> Vec<String> {
            let q = SessionQuery {
                query: Some(s.into()),
                ..SessionQuery::default()
            };
            idx.sessions(&q, 0).into_iter().map(|s| s.title).collect()
        };
        assert_eq!(titles("pre-session"), ["Add a pre-session hook"]);
        // Without a whole match the scattered ones stay (best first, then newest).
        assert_eq!(
            titles("prsession"),
            [
                "Prepare the release-session notes",
                "Print every session",
                "Add a pre-session hook"
            ]
        );
        assert_eq!(
            titles("session"),
            [
                "Prepare the release-session notes",
                "Print every session",
                "Add a pre-session hook"
            ]
        );
    }

    #[test]
    fn a_codex_fork_links_to_its_parent_thread_by_id() {
        let mut idx = SessionIndex::new();
        let mut parent = entry("Parent thread", "/p", 1000);
        parent.format = Format::Codex;
        parent.session_id = Some("T-1".into());
        let mut fork = entry("Forked thread", "/p", 2000);
        fork.format = Format::Codex;
        fork.session_id = Some("T-2".into());
        fork.parent_session = Some("T-1".into());
        idx.insert("/s/2026/11/01/rollout-a.jsonl".into(), parent);
        idx.insert("/s/2026/11/30/rollout-b.jsonl".into(), fork);
        let list = idx.sessions(&SessionQuery::default(), 0);
        assert_eq!(list[0].title, "Forked thread");
        assert_eq!(
            list[0].parent.as_deref(),
            Some(Path::new("/s/2026/11/01/rollout-a.jsonl"))
        );
        assert_eq!(
            list[1].children,
            vec![PathBuf::from("/s/2026/11/30/rollout-b.jsonl")]
        );
    }

    #[test]
    fn live_needs_an_open_turn_and_a_recent_write() {
        let mut e = entry("x", "/p", 1_000_000);
        assert!(!e.is_live(1_000_000));
        e.last_turn_open = true;
        assert!(e.is_live(1_000_000 + LIVE_WINDOW_MS - 1));
        assert!(!e.is_live(1_000_000 + LIVE_WINDOW_MS));
    }

    #[test]
    fn iso_times_are_utc_with_milliseconds() {
        assert_eq!(iso(0).as_deref(), Some("1970-01-01T00:00:00.000Z"));
        assert_eq!(
            iso(1_764_495_243_512).as_deref(),
            Some("2025-11-30T09:34:03.512Z")
        );
    }
}
