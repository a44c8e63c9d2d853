//! Full-text search across every indexed session (issue 26): prompts, answers, the agent's
//! comments, tool inputs and tool results of every agent's transcripts, in plain data (no LSP
//! types; `transcript/search` and `transcript-ls search` answer from here).
//!
//! * [`docs`] turns a read of a transcript into documents (one per text), [`text`] splits
//!   text into words and makes snippets.
//! * [`SearchIndex`] is a tantivy index on disk beside the session index cache
//!   ([`crate::index::disk::search_dir`]), one per set of roots. It is kept in step with the
//!   session index file by file ([`refresh_file`]): the same read serves both, and an append
//!   re-indexes only what the session index reads again (the file's last turn and what
//!   follows: the documents of the re-read turns are replaced). A file gone leaves the index.
//!   What was indexed of each file (size and modification time) is kept in the index itself,
//!   committed with its documents, so a restart reads only the files that changed since.
//! * Queries ([`SearchIndex::search`]): words (all must match), `"quoted phrases"`, the last
//!   word a prefix while it is being typed (no space after it), case-insensitive and
//!   Unicode-aware ([`text`]). Ranking: hits holding the query's words as one phrase first,
//!   then prompts and answers before comments and tool text, then BM25, then newer sessions
//!   before older ones.
//!
//! Bounds: one indexing thread with a [`WRITER_MEMORY`] budget (tantivy flushes a segment to
//! disk when it is reached) and one merge thread; at most [`docs::MAX_DOC_BYTES`] of text per
//! document; queries read the index memory-mapped (the page cache, not the heap).

pub mod docs;
pub mod text;

use std::collections::HashMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tantivy::collector::{DocSetCollector, TopDocs};
use tantivy::query::{
    BooleanQuery, Occur, PhrasePrefixQuery, PhraseQuery, Query, RangeQuery, TermQuery,
};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::{DocAddress, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use super::disk::{self, Refresh};
use super::{SessionEntry, SessionIndex};
pub use text::Snippet;

/// The memory budget of the index writer (bytes): documents are buffered up to it, then
/// written to disk as a segment (tantivy's minimum is 15 MB).
pub const WRITER_MEMORY: usize = 24 * 1024 * 1024;

/// How a candidate hit ranks before the tie-breaks: its kind's class (answers first), the
/// query's score, and its time (epoch ms).
type Ranked = (u8, f32, i64);

/// Hits returned when the query gives no limit.
pub const DEFAULT_LIMIT: usize = 50;
/// The most hits one query returns.
pub const MAX_LIMIT: usize = 1000;
/// Characters of a query read (the rest is ignored), and words of it.
pub const MAX_QUERY_CHARS: usize = 1000;
pub const MAX_QUERY_WORDS: usize = 32;

/// Bumped when the documents or the schema change: an index of another version is rebuilt.
pub const SCHEMA_VERSION: u32 = 1;

/// What kind of text a hit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DocKind {
    /// A prompt (typed, or typed while the agent worked).
    Prompt,
    /// The final answer of a turn (seed 000).
    Answer,
    /// Agent prose outside the final answer (seed 000 comments).
    Comment,
    /// A tool call: its name and the strings of its input.
    ToolInput,
    /// A tool result.
    ToolResult,
}

impl DocKind {
    /// `prompt` | `answer` | `comment` | `tool-input` | `tool-result`.
    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Prompt => "prompt",
            DocKind::Answer => "answer",
            DocKind::Comment => "comment",
            DocKind::ToolInput => "tool-input",
            DocKind::ToolResult => "tool-result",
        }
    }

    fn code(self) -> u64 {
        match self {
            DocKind::Prompt => 1,
            DocKind::Answer => 2,
            DocKind::Comment => 3,
            DocKind::ToolInput => 4,
            DocKind::ToolResult => 5,
        }
    }

    fn from_code(c: u64) -> Option<DocKind> {
        Some(match c {
            1 => DocKind::Prompt,
            2 => DocKind::Answer,
            3 => DocKind::Comment,
            4 => DocKind::ToolInput,
            5 => DocKind::ToolResult,
            _ => return None,
        })
    }
}

/// Ranking class of a kind code: prompts and answers above the rest.
fn class(code: u64) -> u8 {
    u8::from(code == 1 || code == 2)
}

/// Kind code of the per-file state documents (not text; never a hit).
const STATE: u64 = 9;

/// A query (`transcript/search`, `transcript-ls search`).
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    /// Words, `"quoted phrases"`; the last word is a prefix unless the text ends with white
    /// space or a closing quote.
    pub text: String,
    /// At most this many hits (default [`DEFAULT_LIMIT`], at most [`MAX_LIMIT`]).
    pub limit: Option<usize>,
    /// Only sessions whose file is under one of these directories (none: all).
    pub roots: Vec<PathBuf>,
}

/// One hit.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The transcript file.
    pub path: PathBuf,
    /// The agent (its format id: `claude-code`, `codex`, …).
    pub agent: &'static str,
    /// The session's title, as `transcript/sessions` gives it.
    pub title: String,
    /// The session's project (recorded working directory), when known.
    pub project: Option<String>,
    /// Turn number (1-based; 0 before the first prompt) and its title.
    pub turn: usize,
    pub turn_title: String,
    /// 0-based line of the record in the transcript.
    pub line: usize,
    pub kind: DocKind,
    pub snippet: Snippet,
    /// True when the text holds the query's words as one phrase.
    pub phrase: bool,
    /// The session's latest time (epoch ms; its last record, else the file's modification).
    pub session_ms: i64,
}

impl SearchHit {
    /// The hit's fields as JSON, written once for `transcript-ls search --json` and
    /// `transcript/search` (issue 24 item 3 of the tidy-up: each wrote them), without where the
    /// hit is (the CLI adds `path`, the server `uri` and `viewUri`): `agent`, `title`,
    /// `project`, `turn`, `turnTitle`, `line` (0-based), `kind`, `snippet: { text, matches:
    /// [[start, end], …] }` and `time` (ISO 8601 UTC of `session_ms`). `col` turns a byte offset
    /// in the snippet's text into the caller's unit: UTF-8 bytes for the CLI (`|b| b`), columns
    /// in the negotiated encoding for LSP.
    pub fn json_fields(
        &self,
        col: impl Fn(usize) -> usize,
    ) -> serde_json::Map<String, serde_json::Value> {
        use serde_json::json;
        let matches: Vec<_> = self
            .snippet
            .matches
            .iter()
            .map(|r| json!([col(r.start), col(r.end)]))
            .collect();
        [
            ("agent", json!(self.agent)),
            ("title", json!(self.title)),
            ("project", json!(self.project)),
            ("turn", json!(self.turn)),
            ("turnTitle", json!(self.turn_title)),
            ("line", json!(self.line)),
            ("kind", json!(self.kind.as_str())),
            (
                "snippet",
                json!({ "text": self.snippet.text, "matches": matches }),
            ),
            ("time", json!(crate::index::iso(self.session_ms))),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// A query's answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SearchResults {
    pub hits: Vec<SearchHit>,
    /// False while the index is still being built: the hits may be partial.
    pub complete: bool,
}

/// Why the index cannot answer or be opened.
#[derive(Debug)]
pub enum SearchError {
    /// The index directory or its files (I/O, a corrupt segment, a lock).
    Index(String),
}

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchError::Index(m) => write!(f, "search index: {m}"),
        }
    }
}

impl std::error::Error for SearchError {}

impl From<tantivy::TantivyError> for SearchError {
    fn from(e: tantivy::TantivyError) -> SearchError {
        SearchError::Index(e.to_string())
    }
}

/// One indexing thread with [`WRITER_MEMORY`], one merge thread.
fn writer_options() -> tantivy::indexer::IndexWriterOptions {
    tantivy::indexer::IndexWriterOptions::builder()
        .memory_budget_per_thread(WRITER_MEMORY)
        .num_worker_threads(1)
        .num_merge_threads(1)
        .build()
}

/// The schema's fields.
#[derive(Clone, Copy)]
struct Fields {
    text: Field,
    /// The transcript path's bytes (content documents).
    path: Field,
    /// Every directory above the transcript (the `roots` filter).
    dir: Field,
    /// `path` + 0x00 + turn number (deleting a file's re-read turns).
    turn_key: Field,
    turn: Field,
    line: Field,
    kind: Field,
    time: Field,
    /// State documents: the file's path bytes, size and modification time.
    state_path: Field,
    state_bytes: Field,
    state_mtime: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text_opts = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(text::ANALYZER)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
        .set_stored();
    let f = Fields {
        text: b.add_text_field("text", text_opts),
        path: b.add_bytes_field("path", INDEXED | STORED),
        dir: b.add_bytes_field("dir", INDEXED),
        turn_key: b.add_bytes_field("turn_key", INDEXED),
        turn: b.add_u64_field("turn", STORED),
        line: b.add_u64_field("line", STORED),
        kind: b.add_u64_field("kind", INDEXED | STORED | FAST),
        time: b.add_i64_field("time", FAST),
        state_path: b.add_bytes_field("state_path", INDEXED | STORED),
        state_bytes: b.add_u64_field("state_bytes", STORED),
        state_mtime: b.add_i64_field("state_mtime", STORED),
    };
    (b.build(), f)
}

/// The bytes a path is kept as (its OS bytes on Unix: names that are not UTF-8 too).
fn path_bytes(p: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        p.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        p.to_string_lossy().into_owned().into_bytes()
    }
}

fn path_of(b: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(b))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(b).into_owned())
    }
}

fn turn_key(p: &[u8], turn: usize) -> Vec<u8> {
    let mut k = p.to_vec();
    k.push(0);
    k.extend_from_slice(&(turn as u64).to_be_bytes());
    k
}

/// What was indexed of a file: its size and modification time then (the session index
/// entry's `bytes` and `modified_ms`).
type FileState = (u64, Option<i64>);

fn state_of(e: &SessionEntry) -> FileState {
    (e.bytes, e.modified_ms)
}

/// The search index (see the module documentation). Every method takes `&self`; the writer
/// is behind a lock.
pub struct SearchIndex {
    index: Index,
    /// The index's folder.
    dir: PathBuf,
    reader: IndexReader,
    fields: Fields,
    /// `None` when another process holds the index's writer lock: searches then read what
    /// that process writes, and nothing is indexed here.
    writer: Mutex<Option<IndexWriter>>,
    /// What is indexed of each file, committed or not.
    states: Mutex<HashMap<PathBuf, FileState>>,
    /// Documents added or removed since the last commit.
    pending: AtomicBool,
    /// True once the first build is over (set by the builder).
    complete: AtomicBool,
    /// A temporary directory removed on drop ([`SearchIndex::open_temporary`]).
    temporary: Option<PathBuf>,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("files", &self.states.lock().map(|s| s.len()).unwrap_or(0))
            .finish()
    }
}

impl Drop for SearchIndex {
    fn drop(&mut self) {
        if let Ok(mut w) = self.writer.lock()
            && let Some(w) = w.take()
        {
            let _ = w.wait_merging_threads();
        }
        if let Some(d) = &self.temporary {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

impl SearchIndex {
    /// Opens (or creates) the index in `dir`. An index that cannot be read or was written by
    /// another schema version is deleted and made again (it is a cache: the transcripts are
    /// the truth). When another process holds the writer lock the index is opened read-only.
    pub fn open(dir: &Path) -> Result<SearchIndex, SearchError> {
        match Self::open_once(dir) {
            Ok(i) => Ok(i),
            Err(SearchError::Index(m)) if m.contains("lock") || m.contains("Lock") => {
                Err(SearchError::Index(m))
            }
            Err(_) => {
                let _ = std::fs::remove_dir_all(dir);
                Self::open_once(dir)
            }
        }
    }

    /// An index in a fresh temporary directory, removed when the index is dropped (the
    /// server with `indexCache: false`).
    pub fn open_temporary() -> Result<SearchIndex, SearchError> {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "transcript-ls-search-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let mut i = Self::open_once(&dir)?;
        i.temporary = Some(dir);
        Ok(i)
    }

    fn open_once(dir: &Path) -> Result<SearchIndex, SearchError> {
        std::fs::create_dir_all(dir).map_err(|e| SearchError::Index(e.to_string()))?;
        let version = dir.join("transcript-ls-version");
        let want = SCHEMA_VERSION.to_string();
        let fresh = std::fs::read_to_string(&version).ok().as_deref() != Some(want.as_str());
        if fresh {
            // Another version's files (or none): start empty.
            for e in std::fs::read_dir(dir)
                .map_err(|e| SearchError::Index(e.to_string()))?
                .flatten()
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
        let (schema, fields) = schema();
        let mmap = tantivy::directory::MmapDirectory::open(dir)
            .map_err(|e| SearchError::Index(e.to_string()))?;
        let index = Index::builder()
            .schema(schema)
            .settings(tantivy::IndexSettings {
                docstore_compression: tantivy::store::Compressor::Lz4,
                ..Default::default()
            })
            .open_or_create(mmap)?;
        index
            .tokenizers()
            .register(text::ANALYZER, text::analyzer());
        if fresh {
            std::fs::write(&version, &want).map_err(|e| SearchError::Index(e.to_string()))?;
        }
        let writer = index.writer_with_options(writer_options()).ok();
        let policy = if writer.is_some() {
            ReloadPolicy::Manual
        } else {
            ReloadPolicy::OnCommitWithDelay
        };
        let reader = index.reader_builder().reload_policy(policy).try_into()?;
        let si = SearchIndex {
            index,
            dir: dir.to_path_buf(),
            reader,
            fields,
            writer: Mutex::new(writer),
            states: Mutex::new(HashMap::new()),
            pending: AtomicBool::new(false),
            complete: AtomicBool::new(false),
            temporary: None,
        };
        let states = si.load_states()?;
        *si.states.lock().unwrap_or_else(|e| e.into_inner()) = states;
        Ok(si)
    }

    /// Takes the writer lock when this index has none (the process that held it may be gone:
    /// a server restarting finds its predecessor's lock for a moment), then reads again what
    /// is committed. True when the index is writable after.
    pub fn try_writable(&self) -> bool {
        {
            let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
            if w.is_some() {
                return true;
            }
            match self.index.writer_with_options(writer_options()) {
                Ok(nw) => *w = Some(nw),
                Err(_) => return false,
            }
        }
        let _ = self.reader.reload();
        if let Ok(st) = self.load_states() {
            *self.states.lock().unwrap_or_else(|e| e.into_inner()) = st;
        }
        true
    }

    /// True when this process can write the index (no other process holds its lock).
    pub fn writable(&self) -> bool {
        self.writer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    fn load_states(&self) -> Result<HashMap<PathBuf, FileState>, SearchError> {
        let searcher = self.reader.searcher();
        let q = TermQuery::new(
            Term::from_field_u64(self.fields.kind, STATE),
            IndexRecordOption::Basic,
        );
        let mut out = HashMap::new();
        for addr in searcher.search(&q, &DocSetCollector)? {
            let d: TantivyDocument = searcher.doc(addr)?;
            let f = &self.fields;
            let Some(p) = d.get_first(f.state_path).and_then(|v| v.as_bytes()) else {
                continue;
            };
            let bytes = d.get_first(f.state_bytes).and_then(|v| v.as_u64());
            let mtime = d.get_first(f.state_mtime).and_then(|v| v.as_i64());
            if let Some(b) = bytes {
                out.insert(path_of(p), (b, mtime));
            }
        }
        Ok(out)
    }

    /// Bytes of the index's files on disk.
    pub fn size_bytes(&self) -> u64 {
        std::fs::read_dir(&self.dir)
            .map(|rd| {
                rd.flatten()
                    .filter_map(|e| e.metadata().ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0)
    }

    /// Number of files indexed (committed or not).
    pub fn file_count(&self) -> usize {
        self.states.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// The files indexed, with what was indexed of each (size, modification time).
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self
            .states
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect();
        v.sort();
        v
    }

    /// Number of text documents searchable now (committed).
    pub fn doc_count(&self) -> u64 {
        let states = self.states.lock().map(|s| s.len() as u64).unwrap_or(0);
        self.reader.searcher().num_docs().saturating_sub(states)
    }

    /// Marks the first build over (or not): [`SearchResults::complete`].
    pub fn set_complete(&self, v: bool) {
        self.complete.store(v, Ordering::SeqCst);
    }

    /// Whether the first build is over.
    pub fn is_complete(&self) -> bool {
        self.complete.load(Ordering::SeqCst)
    }

    /// Whether `path` is indexed as the session index `entry` has it (same size and
    /// modification time; no entry and no state count as in step).
    pub fn in_step(&self, path: &Path, entry: Option<&SessionEntry>) -> bool {
        let states = self.states.lock().unwrap_or_else(|e| e.into_inner());
        match (entry, states.get(path)) {
            (Some(e), Some(s)) => state_of(e) == *s,
            (None, None) => true,
            _ => false,
        }
    }

    fn with_writer<R>(&self, f: impl FnOnce(&IndexWriter) -> R) -> Option<R> {
        let w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        w.as_ref().map(f)
    }

    fn add_state(&self, w: &IndexWriter, pb: &[u8], state: FileState) -> Result<(), SearchError> {
        let f = &self.fields;
        w.delete_term(Term::from_field_bytes(f.state_path, pb));
        let mut d = TantivyDocument::new();
        d.add_bytes(f.state_path, pb);
        d.add_u64(f.kind, STATE);
        d.add_u64(f.state_bytes, state.0);
        if let Some(m) = state.1 {
            d.add_i64(f.state_mtime, m);
        }
        w.add_document(d)?;
        Ok(())
    }

    fn add_docs(
        &self,
        w: &IndexWriter,
        path: &Path,
        pb: &[u8],
        docs: Vec<docs::Doc>,
        file_ms: Option<i64>,
    ) -> Result<(), SearchError> {
        let f = &self.fields;
        let dirs: Vec<Vec<u8>> = path.ancestors().skip(1).map(path_bytes).collect();
        for doc in docs {
            let mut d = TantivyDocument::new();
            d.add_text(f.text, &doc.text);
            d.add_bytes(f.path, pb);
            for dir in &dirs {
                d.add_bytes(f.dir, dir.as_slice());
            }
            d.add_bytes(f.turn_key, turn_key(pb, doc.turn).as_slice());
            d.add_u64(f.turn, doc.turn as u64);
            d.add_u64(f.line, doc.line as u64);
            d.add_u64(f.kind, doc.kind.code());
            d.add_i64(f.time, doc.time_ms.or(file_ms).unwrap_or(0));
            w.add_document(d)?;
        }
        Ok(())
    }

    /// Replaces every document of `path` with `docs` (a whole read) and records `state`.
    pub fn replace(
        &self,
        path: &Path,
        docs: Vec<docs::Doc>,
        entry: &SessionEntry,
    ) -> Result<(), SearchError> {
        let pb = path_bytes(path);
        self.with_writer(|w| {
            w.delete_term(Term::from_field_bytes(self.fields.path, &pb));
            self.add_docs(w, path, &pb, docs, entry.modified_ms)?;
            self.add_state(w, &pb, state_of(entry))
        })
        .transpose()?;
        self.note(path, Some(state_of(entry)));
        Ok(())
    }

    /// Replaces the documents of turns `from` to `to` (inclusive; the turns a tail read read
    /// again) with `docs` and records `state`.
    pub fn replace_turns(
        &self,
        path: &Path,
        from: usize,
        to: usize,
        docs: Vec<docs::Doc>,
        entry: &SessionEntry,
    ) -> Result<(), SearchError> {
        let pb = path_bytes(path);
        self.with_writer(|w| {
            for n in from..=to.max(from) {
                w.delete_term(Term::from_field_bytes(
                    self.fields.turn_key,
                    &turn_key(&pb, n),
                ));
            }
            self.add_docs(w, path, &pb, docs, entry.modified_ms)?;
            self.add_state(w, &pb, state_of(entry))
        })
        .transpose()?;
        self.note(path, Some(state_of(entry)));
        Ok(())
    }

    /// Removes every document of `path` (the file is gone).
    pub fn remove(&self, path: &Path) {
        let pb = path_bytes(path);
        self.with_writer(|w| {
            w.delete_term(Term::from_field_bytes(self.fields.path, &pb));
            w.delete_term(Term::from_field_bytes(self.fields.state_path, &pb));
        });
        self.note(path, None);
    }

    fn note(&self, path: &Path, state: Option<FileState>) {
        if !self.writable() {
            return;
        }
        let mut s = self.states.lock().unwrap_or_else(|e| e.into_inner());
        match state {
            Some(st) => s.insert(path.to_path_buf(), st),
            None => s.remove(path),
        };
        self.pending.store(true, Ordering::SeqCst);
    }

    /// Removes the files not under one of `roots` (the roots changed), and those `keep` says
    /// are gone.
    pub fn retain(&self, keep: impl Fn(&Path) -> bool) {
        let gone: Vec<PathBuf> = self
            .states
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .filter(|p| !keep(p))
            .cloned()
            .collect();
        for p in gone {
            self.remove(&p);
        }
    }

    /// Makes what was added and removed searchable (a tantivy commit, then the reader
    /// reloaded). Nothing to do when nothing changed or the index is read-only.
    pub fn commit(&self) -> Result<(), SearchError> {
        if !self.pending.swap(false, Ordering::SeqCst) {
            return Ok(());
        }
        {
            let mut w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
            let Some(w) = w.as_mut() else {
                return Ok(());
            };
            w.commit()?;
        }
        self.reader.reload()?;
        Ok(())
    }

    /// The hits of `q` over the committed documents; sessions are described (title, agent,
    /// project, turn titles, recency) by `sessions`, and a hit of a file the session index no
    /// longer has (deleted, outside the roots) is left out. An empty query has no hits.
    pub fn search(
        &self,
        q: &SearchQuery,
        sessions: &SessionIndex,
    ) -> Result<SearchResults, SearchError> {
        let complete = self.is_complete();
        let parsed = parse(&q.text);
        if parsed.parts.is_empty() {
            return Ok(SearchResults {
                hits: Vec::new(),
                complete,
            });
        }
        let limit = q.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let f = self.fields;
        let roots: Option<Box<dyn Query>> = (!q.roots.is_empty()).then(|| {
            let any: Vec<(Occur, Box<dyn Query>)> = q
                .roots
                .iter()
                .map(|r| {
                    let t = Term::from_field_bytes(f.dir, &path_bytes(r));
                    (
                        Occur::Should,
                        Box::new(TermQuery::new(t, IndexRecordOption::Basic)) as Box<dyn Query>,
                    )
                })
                .collect();
            Box::new(BooleanQuery::new(any)) as Box<dyn Query>
        });
        let with_roots = |main: Box<dyn Query>| -> Box<dyn Query> {
            match &roots {
                Some(r) => Box::new(BooleanQuery::new(vec![
                    (Occur::Must, main),
                    (Occur::Must, r.box_clone()),
                ])),
                None => main,
            }
        };
        let main = with_roots(parsed.query(f.text));
        let phrase = parsed.phrase_query(f.text).map(with_roots);
        let searcher = self.reader.searcher();
        let want = limit * 2 + 20;
        let top = |query: &dyn Query| -> Result<Vec<(Ranked, DocAddress)>, SearchError> {
            let c = TopDocs::with_limit(want).tweak_score(|seg: &tantivy::SegmentReader| {
                let kinds = seg.fast_fields().u64("kind").ok();
                let times = seg.fast_fields().i64("time").ok();
                move |doc: tantivy::DocId, score: tantivy::Score| {
                    let k = kinds.as_ref().and_then(|c| c.first(doc)).unwrap_or(0);
                    let t = times.as_ref().and_then(|c| c.first(doc)).unwrap_or(0);
                    (class(k), score, t)
                }
            });
            Ok(searcher.search(query, &c)?)
        };
        let mut cands: HashMap<DocAddress, (bool, u8, f32)> = HashMap::new();
        if let Some(p) = &phrase {
            for ((c, s, _), a) in top(p.as_ref())? {
                cands.insert(a, (true, c, s));
            }
        }
        for ((c, s, _), a) in top(main.as_ref())? {
            cands.entry(a).or_insert((phrase.is_none(), c, s));
        }
        let mut hits: Vec<(bool, u8, f32, SearchHit, String)> = Vec::new();
        for (addr, (ph, c, s)) in cands {
            let d: TantivyDocument = searcher.doc(addr)?;
            let Some(pb) = d.get_first(f.path).and_then(|v| v.as_bytes()) else {
                continue;
            };
            let path = path_of(pb);
            let Some(e) = sessions.get(&path) else {
                continue;
            };
            let num = |fl: Field| d.get_first(fl).and_then(|v| v.as_u64()).unwrap_or(0);
            let Some(kind) = DocKind::from_code(num(f.kind)) else {
                continue;
            };
            let turn = num(f.turn) as usize;
            let text = d
                .get_first(f.text)
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string();
            hits.push((
                ph,
                c,
                s,
                SearchHit {
                    agent: e.format.as_str(),
                    title: e.display_title(&path),
                    project: e.project.as_deref().map(str::to_string),
                    turn,
                    turn_title: e.turn_title(turn).unwrap_or("").to_string(),
                    line: num(f.line) as usize,
                    kind,
                    snippet: Snippet {
                        text: String::new(),
                        matches: Vec::new(),
                    },
                    phrase: ph,
                    session_ms: e.recency_ms(),
                    path,
                },
                text,
            ));
        }
        hits.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(b.1.cmp(&a.1))
                .then(b.2.total_cmp(&a.2))
                .then(b.3.session_ms.cmp(&a.3.session_ms))
                .then_with(|| a.3.path.cmp(&b.3.path))
                .then(a.3.line.cmp(&b.3.line))
        });
        hits.truncate(limit);
        let marks = parsed.marks();
        Ok(SearchResults {
            hits: hits
                .into_iter()
                .map(|(_, _, _, mut h, text)| {
                    h.snippet = text::snippet(&text, &marks);
                    h
                })
                .collect(),
            complete,
        })
    }
}

/// One required part of a query: a word, or a phrase (a quoted one, or a word the analyzer
/// splits, such as `app.py`), its last word a prefix when `prefix`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Part {
    words: Vec<String>,
    prefix: bool,
}

/// A parsed query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Parsed {
    parts: Vec<Part>,
}

/// Splits a query into its parts (see [`SearchQuery::text`]).
fn parse(q: &str) -> Parsed {
    let q: String = q.chars().take(MAX_QUERY_CHARS).collect();
    let trailing = q.ends_with(|c: char| c.is_whitespace() || c == '"');
    let mut raw: Vec<(String, bool)> = Vec::new(); // (text, quoted)
    let mut rest = q.as_str();
    while !rest.is_empty() {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix('"') {
            let (inside, after) = match r.find('"') {
                Some(i) => (&r[..i], &r[i + 1..]),
                None => (r, ""),
            };
            raw.push((inside.to_string(), true));
            rest = after;
        } else {
            let end = rest
                .find(|c: char| c.is_whitespace() || c == '"')
                .unwrap_or(rest.len());
            if end > 0 {
                raw.push((rest[..end].to_string(), false));
            }
            rest = &rest[end..];
        }
    }
    let unclosed_quote = q.matches('"').count() % 2 == 1;
    let mut parts = Vec::new();
    let mut total = 0;
    let n = raw.len();
    for (i, (s, _quoted)) in raw.into_iter().enumerate() {
        let mut words: Vec<String> = text::words(&s).into_iter().map(|(w, _)| w).collect();
        words.truncate(MAX_QUERY_WORDS.saturating_sub(total));
        if words.is_empty() {
            continue;
        }
        total += words.len();
        let last = i + 1 == n;
        parts.push(Part {
            words,
            prefix: last && (!trailing || (unclosed_quote && !q.ends_with('"'))),
        });
    }
    Parsed { parts }
}

fn term_query(field: Field, w: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(
        Term::from_field_text(field, w),
        IndexRecordOption::WithFreqs,
    ))
}

/// The query of the words `words` as one phrase (the last one a prefix when `prefix`).
fn phrase_of(field: Field, words: &[String], prefix: bool) -> Box<dyn Query> {
    let terms: Vec<Term> = words
        .iter()
        .map(|w| Term::from_field_text(field, w))
        .collect();
    match (terms.len(), prefix) {
        (1, false) => term_query(field, &words[0]),
        (1, true) => {
            let w = &words[0];
            let lo = Term::from_field_text(field, w);
            let mut hi = Term::from_field_text(field, w);
            // No UTF-8 text holds the byte 0xFF: every word that starts with `w` is below.
            hi.append_bytes(&[0xFF]);
            Box::new(BooleanQuery::new(vec![
                (Occur::Should, term_query(field, w)),
                (
                    Occur::Should,
                    Box::new(RangeQuery::new(Bound::Included(lo), Bound::Excluded(hi))),
                ),
            ]))
        }
        (_, false) => Box::new(PhraseQuery::new(terms)),
        (_, true) => Box::new(PhrasePrefixQuery::new(terms)),
    }
}

impl Parsed {
    /// Every part required.
    fn query(&self, field: Field) -> Box<dyn Query> {
        Box::new(BooleanQuery::new(
            self.parts
                .iter()
                .map(|p| (Occur::Must, phrase_of(field, &p.words, p.prefix)))
                .collect(),
        ))
    }

    /// All the query's words as one phrase, when it has two or more.
    fn phrase_query(&self, field: Field) -> Option<Box<dyn Query>> {
        let words: Vec<String> = self.parts.iter().flat_map(|p| p.words.clone()).collect();
        let prefix = self.parts.last().is_some_and(|p| p.prefix);
        (words.len() >= 2).then(|| phrase_of(field, &words, prefix))
    }

    fn marks(&self) -> text::Marks {
        text::Marks {
            parts: self.parts.iter().map(|p| p.words.clone()).collect(),
            prefix: self.parts.last().is_some_and(|p| p.prefix),
        }
    }
}

/// Brings `path` up to date in the session index's terms and the search index's, from one
/// read: when the search index holds the file as `old` (the session index's entry) has it,
/// [`disk::refresh_visit`] reads what changed (an append: from the last turn) and the
/// re-read turns' documents are replaced; otherwise (a file the search index has not seen,
/// or saw at another size) the file is read whole and all its documents replaced. Returns the
/// session index's [`Refresh`] (a whole read where the search index needed one). Errors are
/// `disk::refresh`'s; the search index is left as it was then.
pub fn refresh_file(
    path: &Path,
    old: Option<&SessionEntry>,
    search: &SearchIndex,
) -> std::io::Result<Refresh> {
    if !search.writable() {
        return disk::refresh(path, old);
    }
    let in_step = search.in_step(path, old);
    let from = if in_step { old } else { None };
    let mut got: Option<Vec<docs::Doc>> = None;
    let mut visit = |t: &crate::model::Transcript,
                     a: &crate::analysis::Analysis,
                     text: &str,
                     base: super::summary::Base| {
        got = Some(docs::extract(t, a, text, base));
    };
    let r = disk::refresh_visit(path, from, Some(&mut visit))?;
    let err = |e: SearchError| std::io::Error::other(e.to_string());
    match &r {
        Refresh::Unchanged => {}
        Refresh::Whole(e) => search
            .replace(path, got.unwrap_or_default(), e)
            .map_err(err)?,
        // A tail from the file's start (no turn before the last one) is the whole file.
        Refresh::Tail { entry, .. } if from.is_none_or(|o| o.tail.offset == 0) => search
            .replace(path, got.unwrap_or_default(), entry)
            .map_err(err)?,
        Refresh::Tail { entry, .. } => {
            let o = from.map(|o| (o.tail.turns_before, o.turns));
            let (before, turns) = o.unwrap_or((0, 0));
            search
                .replace_turns(
                    path,
                    before + 1,
                    turns.max(before + 1),
                    got.unwrap_or_default(),
                    entry,
                )
                .map_err(err)?;
        }
        Refresh::Gone => search.remove(path),
    }
    Ok(r)
}

/// Brings `index` and `search` up to date with the files under `roots` (the CLI's `search`;
/// the server does the same file by file in its index build): files gone leave both, every
/// other file is refreshed with [`refresh_file`], then the search index is committed and
/// marked complete. Files that cannot be read are left out. Returns whether the session
/// index changed.
pub fn sync(
    roots: &[PathBuf],
    index: &mut SessionIndex,
    search: &SearchIndex,
) -> Result<bool, SearchError> {
    let files = disk::scan_roots(roots);
    let present: std::collections::HashSet<&PathBuf> = files.iter().collect();
    let mut changed = false;
    let gone: Vec<PathBuf> = index
        .entries()
        .map(|(p, _)| p.clone())
        .filter(|p| !present.contains(p))
        .collect();
    for p in gone {
        index.remove(&p);
        changed = true;
    }
    search.retain(|p| present.contains(&p.to_path_buf()));
    for p in &files {
        match refresh_file(p, index.get(p), search) {
            Ok(Refresh::Unchanged) | Err(_) => {}
            Ok(Refresh::Whole(e) | Refresh::Tail { entry: e, .. }) => {
                index.insert(p.clone(), e);
                changed = true;
            }
            Ok(Refresh::Gone) => {
                index.remove(p);
                changed = true;
            }
        }
    }
    search.commit()?;
    search.set_complete(true);
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(q: &str) -> Vec<(Vec<&'static str>, bool)> {
        parse(q)
            .parts
            .into_iter()
            .map(|p| {
                (
                    p.words
                        .into_iter()
                        .map(|w| &*Box::leak(w.into_boxed_str()))
                        .collect(),
                    p.prefix,
                )
            })
            .collect()
    }

    #[test]
    fn queries_split_into_words_phrases_and_a_prefix() {
        assert_eq!(
            parts("Flaky te"),
            [(vec!["flaky"], false), (vec!["te"], true)]
        );
        assert_eq!(
            parts("flaky test "),
            [(vec!["flaky"], false), (vec!["test"], false)]
        );
        assert_eq!(
            parts(r#""flaky test" retry"#),
            [(vec!["flaky", "test"], false), (vec!["retry"], true)]
        );
        assert_eq!(parts(r#""flaky test""#), [(vec!["flaky", "test"], false)]);
        // An unclosed quote: a phrase being typed, its last word a prefix.
        assert_eq!(parts(r#""flaky te"#), [(vec!["flaky", "te"], true)]);
        // A word the analyzer splits is a phrase of its words.
        assert_eq!(parts("app.py"), [(vec!["app", "py"], true)]);
        assert!(parts("  -- ").is_empty());
        assert!(parts("").is_empty());
    }
}
