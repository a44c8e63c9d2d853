//! The `LanguageServer` implementation: document sync (mutations applied synchronously before
//! the first `.await`, LSP-NOTES §1.2), and every feature of DESIGN.md §5 on raw `file:`
//! documents and on `transcript:` views.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use ropey::Rope;
use serde_json::Value;
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use crate::ide;
use crate::ide::host::{self, SettingsStamp, Snapshot, Source, ViewSnap};
use crate::index::SessionIndex;
use crate::lsp::capabilities::{self, ClientCaps, VIEW_SCHEME};
use crate::lsp::config::{Settings, TokenLegend};
use crate::lsp::convert::{self, Encoding, LineIndex};
use crate::lsp::dispatch::off_loop;
use crate::lsp::watcher::Event;

/// Identifies a rendered view: the transcript file and the view options.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ViewKey {
    pub path: PathBuf,
    pub verbose: bool,
}

/// A view document the client opened.
pub struct ViewDoc {
    pub uri: Uri,
    pub key: ViewKey,
    pub version: i32,
    pub rope: Rope,
    /// Hash of `rope` (computed on demand).
    pub hash: Option<u64>,
}

struct DiskEntry {
    source: Arc<Source>,
    last_use: u64,
}

/// Open documents and the sources behind them.
#[derive(Default)]
pub struct Store {
    /// Raw documents open in the editor, by URI string.
    pub raw: HashMap<String, (Uri, Arc<Source>)>,
    /// View documents open in the editor, by URI string.
    pub views: HashMap<String, ViewDoc>,
    disk: HashMap<PathBuf, DiskEntry>,
    /// The last views served to the client, per key (newest last).
    served: HashMap<ViewKey, VecDeque<Arc<ViewSnap>>>,
    clock: u64,
}

/// Disk sources kept without an open view before the least recently used are dropped.
const MAX_IDLE_DISK_SOURCES: usize = 16;
/// Views kept per key to match what the client shows.
const SERVED_VIEWS: usize = 4;

impl Store {
    /// Paths of every disk source (the files the watcher follows).
    pub fn disk_paths(&self) -> Vec<PathBuf> {
        self.disk.keys().cloned().collect()
    }

    /// The disk source of `path`, if loaded.
    pub fn disk_source(&self, path: &Path) -> Option<Arc<Source>> {
        self.disk.get(path).map(|d| d.source.clone())
    }

    /// URIs of open views (as the client spelled them) showing `path`.
    pub fn view_uris_of(&self, path: &Path) -> Vec<Uri> {
        self.views
            .values()
            .filter(|v| v.key.path == path)
            .map(|v| v.uri.clone())
            .collect()
    }

    /// Raw documents open on `path`.
    pub fn raw_uris_of(&self, path: &Path) -> Vec<Uri> {
        self.raw
            .values()
            .filter(|(_, s)| s.path.as_deref() == Some(path))
            .map(|(u, _)| u.clone())
            .collect()
    }

    fn record_served(&mut self, key: &ViewKey, vs: Arc<ViewSnap>) {
        let q = self.served.entry(key.clone()).or_default();
        if q.back().is_some_and(|b| b.hash == vs.hash) {
            return;
        }
        q.push_back(vs);
        while q.len() > SERVED_VIEWS {
            q.pop_front();
        }
    }
}

/// State shared by the handlers and the background tasks.
pub struct Shared {
    pub client: Client,
    pub caps: RwLock<ClientCaps>,
    /// Raw `initialize` params, captured by the service wrapper before dispatch.
    pub raw_init: Mutex<Option<Value>>,
    pub settings: RwLock<Settings>,
    settings_stamp: AtomicU64,
    /// The legend advertised at `initialize` (fixed for the session).
    pub legend: RwLock<TokenLegend>,
    pub store: Mutex<Store>,
    /// Last full semantic tokens per document URI: `(resultId, tokens)`.
    pub(crate) tokens: Mutex<HashMap<String, (String, Vec<SemanticToken>)>>,
    token_ids: AtomicU64,
    /// The session index (issue 7): sessions and workspace symbols.
    pub index: RwLock<SessionIndex>,
    /// True once the first index build finished (a `transcript/sessions` request before that
    /// answers what is indexed so far, with `complete: false`).
    pub index_ready: AtomicBool,
    pub events: mpsc::UnboundedSender<Event>,
    pub events_rx: Mutex<Option<mpsc::UnboundedReceiver<Event>>>,
    pub shutdown: tokio::sync::watch::Sender<bool>,
    pub shutdown_requested: AtomicBool,
    /// `initialize.processId` (0 until known or when the client sent `null`).
    pub client_pid: AtomicU32,
    logged_unknown: Mutex<HashSet<String>>,
    /// Step counts of sub-agent files: path -> (len, steps).
    steps_cache: Mutex<HashMap<PathBuf, (u64, usize)>>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn read<T>(m: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(m: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|e| e.into_inner())
}

/// An `InvalidParams` error with a message.
pub fn invalid(msg: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InvalidParams,
        message: msg.into().into(),
        data: None,
    }
}

fn internal(msg: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InternalError,
        message: msg.into().into(),
        data: None,
    }
}

impl Shared {
    pub fn new(client: Client) -> Shared {
        let (tx, rx) = mpsc::unbounded_channel();
        let (stx, _) = tokio::sync::watch::channel(false);
        Shared {
            client,
            caps: RwLock::new(ClientCaps::default()),
            raw_init: Mutex::new(None),
            settings: RwLock::new(Settings::default()),
            settings_stamp: AtomicU64::new(1),
            legend: RwLock::new(TokenLegend::Custom),
            store: Mutex::new(Store::default()),
            tokens: Mutex::new(HashMap::new()),
            token_ids: AtomicU64::new(1),
            index: RwLock::new(SessionIndex::new()),
            index_ready: AtomicBool::new(false),
            events: tx,
            events_rx: Mutex::new(Some(rx)),
            shutdown: stx,
            shutdown_requested: AtomicBool::new(false),
            client_pid: AtomicU32::new(0),
            logged_unknown: Mutex::new(HashSet::new()),
            steps_cache: Mutex::new(HashMap::new()),
        }
    }

    /// The negotiated encoding.
    pub fn enc(&self) -> Encoding {
        read(&self.caps).encoding
    }

    /// The settings stamp for builds.
    pub fn stamp(&self) -> SettingsStamp {
        let s = read(&self.settings);
        SettingsStamp {
            stamp: self.settings_stamp.load(Ordering::SeqCst),
            options: s.analysis_options(),
            verbose: s.verbose,
            file_state: s.file_state,
        }
    }

    /// Marks settings as changed (snapshots rebuild their analysis).
    pub fn bump_settings(&self) {
        self.settings_stamp.fetch_add(1, Ordering::SeqCst);
    }

    /// Logs to stderr and `window/logMessage` (sent from a spawned task: never blocks the
    /// caller, so it is safe in sync-mutation handlers).
    pub fn log(&self, typ: MessageType, msg: impl Into<String>) {
        let msg = msg.into();
        eprintln!("transcript-ls: {msg}");
        let client = self.client.clone();
        if tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(async move { client.log_message(typ, msg).await });
        }
    }

    fn note_not_transcript(&self, uri: &Uri, snap: &Snapshot) {
        if snap.text.trim().is_empty() {
            return;
        }
        if lock(&self.logged_unknown).insert(uri.as_str().to_string()) {
            self.log(
                MessageType::INFO,
                format!(
                    "{} is not a Claude Code, Codex, Pi or Copilot CLI transcript; serving empty results",
                    uri.as_str()
                ),
            );
        }
    }

    /// The disk source of `path`, loading it (on a blocking thread) when needed.
    pub async fn disk_source(&self, path: &Path) -> Result<Arc<Source>> {
        {
            let mut st = lock(&self.store);
            st.clock += 1;
            let now = st.clock;
            if let Some(d) = st.disk.get_mut(path) {
                d.last_use = now;
                return Ok(d.source.clone());
            }
        }
        let p = path.to_path_buf();
        let loaded = tokio::task::spawn_blocking(move || Source::disk(p))
            .await
            .map_err(|e| internal(format!("reading {}: {e}", path.display())))?
            .map_err(|e| invalid(format!("cannot read {}: {e}", path.display())))?;
        let mut st = lock(&self.store);
        st.clock += 1;
        let now = st.clock;
        if let Some(d) = st.disk.get_mut(path) {
            d.last_use = now;
            return Ok(d.source.clone());
        }
        let source = Arc::new(loaded);
        st.disk.insert(
            path.to_path_buf(),
            DiskEntry {
                source: source.clone(),
                last_use: now,
            },
        );
        let _ = self.events.send(Event::Watch(path.to_path_buf()));
        // Evict idle sources (no open view) beyond the cap, least recently used first.
        let open: HashSet<PathBuf> = st.views.values().map(|v| v.key.path.clone()).collect();
        let mut idle: Vec<(u64, PathBuf)> = st
            .disk
            .iter()
            .filter(|(p, _)| !open.contains(*p) && *p != path)
            .map(|(p, d)| (d.last_use, p.clone()))
            .collect();
        if idle.len() > MAX_IDLE_DISK_SOURCES {
            idle.sort();
            let n = idle.len() - MAX_IDLE_DISK_SOURCES;
            for (_, p) in idle.into_iter().take(n) {
                st.disk.remove(&p);
                st.served.retain(|k, _| k.path != p);
                let _ = self.events.send(Event::Unwatch(p));
            }
        }
        Ok(source)
    }

    /// Number of lines of `path`'s text as the server knows it (for locations in raw files).
    fn raw_location(
        &self,
        path: &Path,
        snap: Option<&Snapshot>,
        span: Option<std::ops::Range<usize>>,
    ) -> Option<Location> {
        let uri = Uri::from_file_path(path)?;
        let range = match (snap, span) {
            (Some(s), Some(sp)) => convert::range(&s.text, &s.lines, sp, self.enc()),
            _ => Range::default(),
        };
        Some(Location { uri, range })
    }

    /// Step count of a sub-agent transcript (distinct response keys), cached by file size.
    pub fn steps_in(&self, path: &Path) -> Option<usize> {
        let len = crate::source::load::regular_file(path).ok()?.len();
        if let Some((l, n)) = lock(&self.steps_cache).get(path)
            && *l == len
        {
            return Some(*n);
        }
        // The one loader (regular files only, lossy UTF-8), as for every transcript read.
        let text = crate::source::load::load(path, crate::source::load::MAX_FILE_BYTES)
            .ok()?
            .text;
        let t = crate::formats::read(&text);
        let keys: HashSet<&str> = t
            .entries
            .iter()
            .filter_map(|e| e.step.as_ref().map(|s| &*s.key))
            .collect();
        let n = keys.len();
        lock(&self.steps_cache).insert(path.to_path_buf(), (len, n));
        Some(n)
    }

    pub(crate) fn next_result_id(&self) -> String {
        self.token_ids.fetch_add(1, Ordering::SeqCst).to_string()
    }
}

/// A resolved document.
pub enum Doc {
    Raw {
        uri: Uri,
        source: Arc<Source>,
    },
    View {
        uri: Uri,
        key: ViewKey,
        source: Arc<Source>,
    },
}

/// A document with the data a request needs.
pub enum Ctx {
    Raw {
        uri: Uri,
        snap: Arc<Snapshot>,
    },
    View {
        uri: Uri,
        key: ViewKey,
        snap: Arc<Snapshot>,
        view: Arc<ViewSnap>,
    },
}

impl Ctx {
    pub fn snap(&self) -> &Arc<Snapshot> {
        match self {
            Ctx::Raw { snap, .. } | Ctx::View { snap, .. } => snap,
        }
    }

    pub fn text(&self) -> &str {
        match self {
            Ctx::Raw { snap, .. } => &snap.text,
            Ctx::View { view, .. } => &view.view.text,
        }
    }

    pub fn lines(&self) -> &LineIndex {
        match self {
            Ctx::Raw { snap, .. } => &snap.lines,
            Ctx::View { view, .. } => &view.lines,
        }
    }

    pub fn uri(&self) -> &Uri {
        match self {
            Ctx::Raw { uri, .. } | Ctx::View { uri, .. } => uri,
        }
    }
}

/// Parses a `transcript:` URI into its view key (`verbose` defaults to the setting). The query
/// may be percent-encoded as a whole (`?verbose%3D1`, as VS Code sends it) or plain
/// (`?verbose=1`, as [`view_uri`] writes it).
pub fn view_key(uri: &Uri, default_verbose: bool) -> Result<ViewKey> {
    let mut path = uri.path().decode().to_string_lossy().into_owned();
    let mut verbose = default_verbose;
    if let Some(q) = uri.query() {
        // The query is decoded as a whole (VS Code's `Uri.toString()` encodes `=` and `&`
        // too). `path=` must come last: everything after it is the file, `&` included.
        let q = percent_decode(q.as_str());
        let at = q
            .match_indices("path=")
            .map(|(i, _)| i)
            .find(|&i| i == 0 || q.as_bytes()[i - 1] == b'&');
        let params = match at {
            Some(i) => {
                // `transcript:/<title>?path=<file>`: the URI path is only a name for the
                // editor's tab (issue 7).
                path = q[i + "path=".len()..].to_string();
                &q[..i]
            }
            None => &q[..],
        };
        for pair in params.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, "1"));
            if k == "verbose" {
                verbose = matches!(v, "1" | "true" | "yes");
            }
            if k == "call" {
                // One side of a file edit (`transcript.showDiff`): text only.
                return Err(invalid(format!(
                    "{} is one side of a file edit's diff: it has text only, no transcript features",
                    uri.as_str()
                )));
            }
        }
    }
    if path.is_empty() || !path.starts_with('/') {
        return Err(invalid(format!(
            "a transcript: URI must name an absolute path: {}",
            uri.as_str()
        )));
    }
    Ok(ViewKey {
        path: PathBuf::from(path),
        verbose,
    })
}

/// Decodes `%XX` escapes (UTF-8); a malformed escape is kept as written.
pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `transcript:` URI of a file's view; `verbose` adds `?verbose=1` / `?verbose=0`.
pub fn view_uri(path: &Path, verbose: Option<bool>) -> Option<Uri> {
    let mut s = String::from("transcript://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    match verbose {
        Some(true) => s.push_str("?verbose=1"),
        Some(false) => s.push_str("?verbose=0"),
        None => {}
    }
    s.parse().ok()
}

/// The backend behind `LspService` (cheap to clone: handlers move a clone onto the
/// blocking pool).
#[derive(Clone)]
pub struct Backend {
    pub shared: Arc<Shared>,
}

impl Backend {
    pub fn new(client: Client) -> Backend {
        Backend {
            shared: Arc::new(Shared::new(client)),
        }
    }

    /// Resolves a URI to an open raw document or a view (loading the file behind a view).
    pub async fn resolve(&self, uri: &Uri) -> Result<Doc> {
        if uri.scheme().as_str() == VIEW_SCHEME {
            let key = view_key(uri, read(&self.shared.settings).verbose)?;
            let source = self.shared.disk_source(&key.path).await?;
            return Ok(Doc::View {
                uri: uri.clone(),
                key,
                source,
            });
        }
        let st = lock(&self.shared.store);
        match st.raw.get(uri.as_str()) {
            Some((u, s)) => Ok(Doc::Raw {
                uri: u.clone(),
                source: s.clone(),
            }),
            None => Err(invalid(format!(
                "unknown document {} (not opened with textDocument/didOpen)",
                uri.as_str()
            ))),
        }
    }

    /// Resolves and builds what a request needs.
    pub async fn ctx(&self, uri: &Uri) -> Result<Ctx> {
        match self.resolve(uri).await? {
            Doc::Raw { uri, source } => {
                let snap = source.snapshot(&self.shared.stamp()).await;
                if !snap.is_transcript() {
                    self.shared.note_not_transcript(&uri, &snap);
                }
                Ok(Ctx::Raw { uri, snap })
            }
            Doc::View { uri, key, source } => {
                let snap = source.snapshot(&self.shared.stamp()).await;
                let view = self.view_for(&uri, &key, &snap).await?;
                Ok(Ctx::View {
                    uri,
                    key,
                    snap,
                    view,
                })
            }
        }
    }

    /// The rendered view to answer requests on `uri`: the one whose text the client shows
    /// when the client opened the view and an earlier rendering matches it, else the latest.
    async fn view_for(
        &self,
        uri: &Uri,
        key: &ViewKey,
        snap: &Arc<Snapshot>,
    ) -> Result<Arc<ViewSnap>> {
        let s = snap.clone();
        let verbose = key.verbose;
        let latest = tokio::task::spawn_blocking(move || s.view(verbose))
            .await
            .map_err(|e| internal(format!("rendering the view failed: {e}")))?;
        // What does the client show?
        let client = {
            let st = lock(&self.shared.store);
            st.views
                .get(uri.as_str())
                .map(|v| (v.hash, v.rope.clone(), v.version))
        };
        let Some((hash, rope, version)) = client else {
            return Ok(latest);
        };
        let hash = match hash {
            Some(h) => h,
            None => {
                let h = tokio::task::spawn_blocking(move || host::rope_hash(&rope))
                    .await
                    .unwrap_or(0);
                let mut st = lock(&self.shared.store);
                if let Some(v) = st.views.get_mut(uri.as_str())
                    && v.version == version
                {
                    v.hash = Some(h);
                }
                h
            }
        };
        if hash == latest.hash {
            return Ok(latest);
        }
        let st = lock(&self.shared.store);
        if let Some(old) = st
            .served
            .get(key)
            .and_then(|q| q.iter().rev().find(|v| v.hash == hash))
        {
            return Ok(old.clone());
        }
        Ok(latest)
    }

    /// Renders the view text for `workspace/textDocumentContent` and remembers it as served.
    pub async fn view_text(&self, uri: &Uri) -> Result<String> {
        if uri.scheme().as_str() != VIEW_SCHEME {
            return Err(invalid(format!(
                "not a {VIEW_SCHEME}: URI: {} (use transcript.openView to get one)",
                uri.as_str()
            )));
        }
        let key = view_key(uri, read(&self.shared.settings).verbose)?;
        let source = self.shared.disk_source(&key.path).await?;
        let snap = source.snapshot(&self.shared.stamp()).await;
        if !snap.is_transcript() {
            self.shared.note_not_transcript(uri, &snap);
        }
        let s = snap.clone();
        let verbose = key.verbose;
        let vs = tokio::task::spawn_blocking(move || s.view(verbose))
            .await
            .map_err(|e| internal(format!("rendering the view failed: {e}")))?;
        lock(&self.shared.store).record_served(&key, vs.clone());
        Ok(vs.view.text.clone())
    }

    /// Publishes diagnostics of a raw document (after `delay_ms`, skipped when a newer change
    /// arrived meanwhile).
    pub fn schedule_diagnostics(&self, uri: Uri, source: Arc<Source>, delay_ms: u64) {
        let shared = self.shared.clone();
        let generation = source.generation();
        tokio::spawn(async move {
            if delay_ms > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
                if source.generation() != generation {
                    return;
                }
            }
            let snap = source.snapshot(&shared.stamp()).await;
            // Closed meanwhile?
            let open = lock(&shared.store).raw.contains_key(uri.as_str());
            if !open {
                return;
            }
            let diags = if snap.is_transcript() {
                let enc = shared.enc();
                ide::diagnostics::diagnostics(&snap.transcript, &snap.analysis)
                    .into_iter()
                    .map(|d| Diagnostic {
                        range: convert::range(&snap.text, &snap.lines, d.span.clone(), enc),
                        severity: Some(match d.severity {
                            crate::model::Severity::Error => DiagnosticSeverity::ERROR,
                            crate::model::Severity::Warning => DiagnosticSeverity::WARNING,
                            crate::model::Severity::Information => DiagnosticSeverity::INFORMATION,
                            crate::model::Severity::Hint => DiagnosticSeverity::HINT,
                        }),
                        code: Some(NumberOrString::String(d.code.to_string())),
                        source: Some("transcript-ls".to_string()),
                        message: d.message,
                        ..Diagnostic::default()
                    })
                    .collect()
            } else {
                shared.note_not_transcript(&uri, &snap);
                Vec::new()
            };
            shared
                .client
                .publish_diagnostics(uri, diags, snap.version)
                .await;
        });
    }

    fn position_error(ctx: &Ctx, pos: Position) -> Error {
        invalid(format!(
            "position {}:{} is out of range (the document has {} lines)",
            pos.line,
            pos.character,
            ctx.lines().line_count()
        ))
    }

    /// The `(entry, block)` under a position.
    pub fn item_at(&self, ctx: &Ctx, pos: Position) -> Result<Option<(usize, Option<usize>)>> {
        let enc = self.shared.enc();
        match ctx {
            Ctx::Raw { snap, .. } => {
                let off = convert::offset(&snap.text, &snap.lines, pos, enc)
                    .map_err(|_| Self::position_error(ctx, pos))?;
                let Some(ei) = ide::lookup::entry_at_line(&snap.transcript, pos.line as usize)
                else {
                    return Ok(None);
                };
                let block = ide::lookup::block_at_offset(&snap.transcript.entries[ei], off);
                Ok(Some((ei, block)))
            }
            Ctx::View { view, .. } => {
                if pos.line as usize >= view.lines.line_count() {
                    return Err(Self::position_error(ctx, pos));
                }
                match view.view.lines.get(pos.line as usize).map(|l| &l.origin) {
                    Some(crate::view::Origin::Entry { entry, block, .. }) => {
                        Ok(Some((*entry, *block)))
                    }
                    _ => Ok(None),
                }
            }
        }
    }

    /// The location of a navigation target in the document of `ctx`.
    pub fn target_location(&self, ctx: &Ctx, t: &ide::navigation::Target) -> Option<Location> {
        use ide::navigation::Target;
        let enc = self.shared.enc();
        let snap = ctx.snap();
        match t {
            Target::File { path } => Some(Location {
                uri: Uri::from_file_path(path)?,
                range: Range::default(),
            }),
            Target::Block { entry, block } => {
                let e = snap.transcript.entries.get(*entry)?;
                match ctx {
                    Ctx::Raw { uri, .. } => {
                        let span = e
                            .blocks
                            .get(*block)
                            .map_or(e.span.clone(), |b| b.span.clone());
                        Some(Location {
                            uri: uri.clone(),
                            range: convert::range(&snap.text, &snap.lines, span, enc),
                        })
                    }
                    Ctx::View { uri, view, key, .. } => {
                        match view.index.line_of_block(*entry, *block) {
                            Some(l) => Some(Location {
                                uri: uri.clone(),
                                range: convert::line_range(&view.view.text, &view.lines, l, enc)?,
                            }),
                            None => {
                                let span = e
                                    .blocks
                                    .get(*block)
                                    .map_or(e.span.clone(), |b| b.span.clone());
                                self.shared.raw_location(&key.path, Some(snap), Some(span))
                            }
                        }
                    }
                }
            }
            Target::Entry { entry } => {
                let e = snap.transcript.entries.get(*entry)?;
                match ctx {
                    Ctx::Raw { uri, .. } => Some(Location {
                        uri: uri.clone(),
                        range: convert::range(&snap.text, &snap.lines, e.span.clone(), enc),
                    }),
                    Ctx::View { uri, view, key, .. } => match view.index.line_of_entry(*entry) {
                        Some(l) => Some(Location {
                            uri: uri.clone(),
                            range: convert::line_range(&view.view.text, &view.lines, l, enc)?,
                        }),
                        None => {
                            self.shared
                                .raw_location(&key.path, Some(snap), Some(e.span.clone()))
                        }
                    },
                }
            }
        }
    }

    /// Turn opener lines of the document (raw: the opener record; view: the heading).
    pub fn turn_lines(&self, ctx: &Ctx) -> Vec<usize> {
        let snap = ctx.snap();
        let mut out: Vec<usize> = match ctx {
            Ctx::Raw { .. } => snap
                .analysis
                .turns
                .iter()
                .filter(|t| t.n > 0)
                .map(|t| {
                    t.opener
                        .and_then(|e| snap.transcript.entries.get(e))
                        .map_or(t.start_line, |e| e.line)
                })
                .collect(),
            Ctx::View { view, .. } => snap
                .analysis
                .turns
                .iter()
                .filter(|t| t.n > 0)
                .filter_map(|t| view.index.turn_heading(t.n))
                .collect(),
        };
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Gate lines of the document.
    pub fn gate_lines(&self, ctx: &Ctx) -> Vec<usize> {
        let snap = ctx.snap();
        let mut out: Vec<usize> = match ctx {
            Ctx::Raw { .. } => snap.analysis.gates.iter().map(|g| g.line).collect(),
            Ctx::View { view, .. } => (0..snap.analysis.gates.len())
                .filter_map(|g| view.index.line_of_gate(&snap.analysis, g))
                .collect(),
        };
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Sends `window/showDocument` from a spawned task (never awaited by a handler), when the
    /// client supports it.
    pub fn reveal(&self, uri: Uri, range: Option<Range>) {
        if !read(&self.shared.caps).show_document {
            return;
        }
        let client = self.shared.client.clone();
        tokio::spawn(async move {
            let _ = client
                .show_document(ShowDocumentParams {
                    uri,
                    external: Some(false),
                    take_focus: Some(true),
                    selection: range,
                })
                .await;
        });
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let raw = lock(&self.shared.raw_init).take();
        if let Some(pid) = params.process_id {
            self.shared.client_pid.store(pid, Ordering::SeqCst);
        }
        let caps = ClientCaps::from_params(&params.capabilities, raw.as_ref());
        let enc = caps.encoding;
        *write(&self.shared.caps) = caps;
        let mut problems = Vec::new();
        if let Some(opts) = &params.initialization_options {
            problems = write(&self.shared.settings).apply(opts);
        }
        let legend = read(&self.shared.settings).semantic_tokens;
        *write(&self.shared.legend) = legend;
        for p in problems {
            self.shared
                .log(MessageType::WARNING, format!("setting ignored: {p}"));
        }
        Ok(InitializeResult {
            capabilities: capabilities::server_capabilities(enc, legend),
            server_info: Some(ServerInfo {
                name: "transcript-ls".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        crate::lsp::watcher::start(self.shared.clone());
        let enc = match self.shared.enc() {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16 => "utf-16",
        };
        self.shared.log(
            MessageType::INFO,
            format!(
                "transcript-ls {} ready (positions in {enc})",
                env!("CARGO_PKG_VERSION")
            ),
        );
    }

    async fn shutdown(&self) -> Result<()> {
        self.shared.shutdown_requested.store(true, Ordering::SeqCst);
        let _ = self.shared.shutdown.send(true);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        // Synchronous mutation first (LSP-NOTES §1.2 rule 1).
        let td = params.text_document;
        let uri = td.uri;
        if uri.scheme().as_str() == VIEW_SCHEME {
            let key = match view_key(&uri, read(&self.shared.settings).verbose) {
                Ok(k) => k,
                Err(e) => {
                    self.shared.log(MessageType::WARNING, e.message.to_string());
                    return;
                }
            };
            {
                let mut st = lock(&self.shared.store);
                st.views.insert(
                    uri.as_str().to_string(),
                    ViewDoc {
                        uri: uri.clone(),
                        key: key.clone(),
                        version: td.version,
                        rope: Rope::from_str(&td.text),
                        hash: None,
                    },
                );
            }
            // Load (and watch) the file behind the view.
            let shared = self.shared.clone();
            tokio::spawn(async move {
                if let Err(e) = shared.disk_source(&key.path).await {
                    shared.log(MessageType::WARNING, e.message.to_string());
                }
            });
            return;
        }
        let path = uri.to_file_path().map(|p| p.into_owned());
        let source = Arc::new(Source::editor(path.clone(), td.text, td.version));
        {
            let mut st = lock(&self.shared.store);
            st.raw
                .insert(uri.as_str().to_string(), (uri.clone(), source.clone()));
        }
        lock(&self.shared.tokens).remove(uri.as_str());
        if let Some(p) = path {
            let _ = self.shared.events.send(Event::Watch(p));
        }
        self.schedule_diagnostics(uri, source, 0);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let version = params.text_document.version;
        let enc = self.shared.enc();
        // Synchronous mutation first (LSP-NOTES §1.2 rule 1).
        if uri.scheme().as_str() == VIEW_SCHEME {
            let mut st = lock(&self.shared.store);
            let Some(v) = st.views.get_mut(uri.as_str()) else {
                drop(st);
                self.shared.log(
                    MessageType::WARNING,
                    format!("didChange for a view that is not open: {}", uri.as_str()),
                );
                return;
            };
            if version <= v.version {
                let have = v.version;
                drop(st);
                self.shared.log(
                    MessageType::LOG,
                    format!(
                        "stale didChange dropped for {} (have v{have}, got v{version})",
                        uri.as_str()
                    ),
                );
                return;
            }
            for ch in params.content_changes {
                match ch.range {
                    None => v.rope = Rope::from_str(&ch.text),
                    Some(r) => {
                        let end = v.rope.len_chars();
                        let a = convert::rope_char(&v.rope, r.start, enc).unwrap_or(end);
                        let b = convert::rope_char(&v.rope, r.end, enc).unwrap_or(end);
                        let (a, b) = (a.min(b), a.max(b));
                        v.rope.remove(a..b);
                        v.rope.insert(a, &ch.text);
                    }
                }
            }
            v.version = version;
            v.hash = None;
            return;
        }
        let source = lock(&self.shared.store)
            .raw
            .get(uri.as_str())
            .map(|(_, s)| s.clone());
        let Some(source) = source else {
            self.shared.log(
                MessageType::WARNING,
                format!(
                    "didChange for a document that is not open: {}",
                    uri.as_str()
                ),
            );
            return;
        };
        match source.apply_changes(
            version,
            params
                .content_changes
                .into_iter()
                .map(convert::edit)
                .collect(),
            enc,
        ) {
            Ok(()) => self.schedule_diagnostics(uri, source, 150),
            Err(e) => self.shared.log(
                MessageType::LOG,
                format!("didChange dropped for {}: {e:?}", uri.as_str()),
            ),
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        let removed = {
            let mut st = lock(&self.shared.store);
            st.views.remove(uri.as_str());
            st.raw.remove(uri.as_str())
        };
        lock(&self.shared.tokens).remove(uri.as_str());
        if let Some((_, source)) = removed {
            if let Some(p) = &source.path {
                let _ = self.shared.events.send(Event::Unwatch(p.clone()));
            }
            self.shared
                .client
                .publish_diagnostics(uri, Vec::new(), None)
                .await;
        }
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let (problems, legend_changed, roots_changed) = {
            let mut s = write(&self.shared.settings);
            let before_legend = s.semantic_tokens;
            let before_roots = s.roots.clone();
            let p = s.apply(&params.settings);
            (
                p,
                s.semantic_tokens != before_legend,
                s.roots != before_roots,
            )
        };
        self.shared.bump_settings();
        for p in problems {
            self.shared
                .log(MessageType::WARNING, format!("setting ignored: {p}"));
        }
        if legend_changed {
            self.shared.log(
                MessageType::INFO,
                "`semanticTokens` legend changes take effect when the server restarts",
            );
        }
        let _ = self
            .shared
            .events
            .send(Event::SettingsChanged { roots_changed });
        let uris: Vec<Uri> = lock(&self.shared.store)
            .raw
            .values()
            .map(|(u, s)| (u.clone(), s.clone()))
            .map(|(u, s)| {
                self.schedule_diagnostics(u.clone(), s, 0);
                u
            })
            .collect();
        let _ = uris;
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        let uri = params.text_document.uri.clone();
        let ctx = self.ctx(&uri).await?;
        let this = self.clone();
        off_loop(&self.shared, "textDocument/foldingRange", move || {
            this.folding_range_now(&ctx, params)
        })
        .await
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let uri = params.text_document.uri.clone();
        let ctx = self.ctx(&uri).await?;
        let this = self.clone();
        off_loop(&self.shared, "textDocument/documentSymbol", move || {
            this.document_symbol_now(&ctx, params)
        })
        .await
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        let uri = params.text_document.uri.clone();
        let ctx = self.ctx(&uri).await?;
        let this = self.clone();
        off_loop(
            &self.shared,
            "textDocument/semanticTokens/full",
            move || this.semantic_tokens_full_now(&ctx, params),
        )
        .await
    }

    async fn semantic_tokens_full_delta(
        &self,
        params: SemanticTokensDeltaParams,
    ) -> Result<Option<SemanticTokensFullDeltaResult>> {
        let uri = params.text_document.uri.clone();
        let ctx = self.ctx(&uri).await?;
        let this = self.clone();
        off_loop(
            &self.shared,
            "textDocument/semanticTokens/full/delta",
            move || this.semantic_tokens_full_delta_now(&ctx, params),
        )
        .await
    }

    async fn semantic_tokens_range(
        &self,
        params: SemanticTokensRangeParams,
    ) -> Result<Option<SemanticTokensRangeResult>> {
        let uri = params.text_document.uri.clone();
        let ctx = self.ctx(&uri).await?;
        let this = self.clone();
        off_loop(
            &self.shared,
            "textDocument/semanticTokens/range",
            move || this.semantic_tokens_range_now(&ctx, params),
        )
        .await
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let uri = params.text_document.uri.clone();
        let ctx = self.ctx(&uri).await?;
        let this = self.clone();
        off_loop(&self.shared, "textDocument/inlayHint", move || {
            this.inlay_hint_now(&ctx, params)
        })
        .await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let ctx = Arc::new(self.ctx(&params.text_document.uri).await?);
        if let Ctx::Raw { snap, .. } = &*ctx
            && !snap.is_transcript()
        {
            return Ok(Some(Vec::new()));
        }
        let phases = read(&self.shared.settings).gate_phases.clone();
        let shared = self.shared.clone();
        let c = ctx.clone();
        let lenses = tokio::task::spawn_blocking(move || {
            let snap = c.snap();
            let files = snap.session_files().subagents.clone();
            let a = &snap.analysis;
            let mut lenses = match &*c {
                Ctx::Raw { .. } => ide::code_lens::lenses(
                    a,
                    &phases,
                    &files,
                    |g| a.gates.get(g).map(|g| g.line),
                    |e, _| snap.transcript.entries.get(e).map(|x| x.line),
                    |f| shared.steps_in(&f.path),
                ),
                Ctx::View { view, .. } => ide::code_lens::lenses(
                    a,
                    &phases,
                    &files,
                    |g| view.index.line_of_gate(a, g),
                    |e, b| view.index.line_of_block(e, b),
                    |f| shared.steps_in(&f.path),
                ),
            };
            crate::lsp::handlers::diff::add_edit_lenses(&c, &mut lenses);
            crate::lsp::handlers::diff::add_activity_lenses(&c, &mut lenses);
            lenses
        })
        .await
        .map_err(|e| internal(format!("code lens failed: {e}")))?;
        let uri = ctx.uri().clone();
        let gate_lines: Vec<Option<usize>> = match &*ctx {
            Ctx::Raw { snap, .. } => snap.analysis.gates.iter().map(|g| Some(g.line)).collect(),
            Ctx::View { snap, view, .. } => (0..snap.analysis.gates.len())
                .map(|g| view.index.line_of_gate(&snap.analysis, g))
                .collect(),
        };
        let out = lenses
            .into_iter()
            .map(|l| {
                let pos = Position::new(l.line as u32, 0);
                let command = match &l.action {
                    ide::code_lens::LensAction::NextGate { gate, .. } => Command {
                        title: l.title.clone(),
                        command: "transcript.nextGate".to_string(),
                        arguments: Some(vec![serde_json::json!({
                            "uri": uri.as_str(),
                            "line": gate_lines.get(*gate).copied().flatten().unwrap_or(l.line),
                            "reveal": true,
                        })]),
                    },
                    ide::code_lens::LensAction::OpenFile { path } => Command {
                        title: l.title.clone(),
                        command: "transcript.openView".to_string(),
                        arguments: Uri::from_file_path(path).map(|u| {
                            vec![serde_json::json!({ "uri": u.as_str(), "reveal": true })]
                        }),
                    },
                    ide::code_lens::LensAction::OpenVerbose { turn } => Command {
                        title: l.title.clone(),
                        command: "transcript.openView".to_string(),
                        arguments: Some(vec![serde_json::json!({
                            "uri": uri.as_str(),
                            "verbose": true,
                            "turn": turn,
                            "reveal": true,
                        })]),
                    },
                    ide::code_lens::LensAction::ShowDiff { .. } => Command {
                        title: l.title.clone(),
                        command: crate::lsp::handlers::diff::SHOW_DIFF.to_string(),
                        arguments: Some(vec![serde_json::json!({
                            "uri": uri.as_str(),
                            "line": l.line,
                        })]),
                    },
                    ide::code_lens::LensAction::None => Command {
                        title: l.title.clone(),
                        command: String::new(),
                        arguments: None,
                    },
                };
                CodeLens {
                    range: Range::new(pos, pos),
                    command: Some(command),
                    data: None,
                }
            })
            .collect();
        Ok(Some(out))
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let uri = params
            .text_document_position_params
            .text_document
            .uri
            .clone();
        let ctx = self.ctx(&uri).await?;
        let this = self.clone();
        off_loop(&self.shared, "textDocument/hover", move || {
            this.hover_now(&ctx, params)
        })
        .await
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let tdp = params.text_document_position_params;
        let ctx = self.ctx(&tdp.text_document.uri).await?;
        let Some((entry, block)) = self.item_at(&ctx, tdp.position)? else {
            return Ok(None);
        };
        let snap = ctx.snap().clone();
        let s2 = snap.clone();
        let files = tokio::task::spawn_blocking(move || s2.session_files().subagents.clone())
            .await
            .unwrap_or_default();
        let targets = ide::navigation::definition(
            &snap.transcript,
            &snap.analysis,
            &snap.lookup,
            &files,
            entry,
            block,
        );
        let mut locs: Vec<Location> = targets
            .iter()
            .filter_map(|t| self.target_location(&ctx, t))
            .collect();
        if locs.is_empty() {
            // On the view, reveal the full record in the raw file (the view shortens).
            if let Ctx::View { key, .. } = &ctx
                && let Some(e) = snap.transcript.entries.get(entry)
            {
                let span = block
                    .and_then(|b| e.blocks.get(b))
                    .map_or(e.span.clone(), |b| b.span.clone());
                locs.extend(self.shared.raw_location(&key.path, Some(&snap), Some(span)));
            }
        }
        Ok(match locs.len() {
            0 => None,
            1 => Some(GotoDefinitionResponse::Scalar(locs.remove(0))),
            _ => Some(GotoDefinitionResponse::Array(locs)),
        })
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let uri = params.text_document_position.text_document.uri.clone();
        let ctx = self.ctx(&uri).await?;
        let this = self.clone();
        off_loop(&self.shared, "textDocument/references", move || {
            this.references_now(&ctx, params)
        })
        .await
    }

    #[allow(deprecated)]
    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Result<Option<WorkspaceSymbolResponse>> {
        let idx = read(&self.shared.index);
        let hits = crate::ide::workspace_symbols::query(&idx, &params.query, 500);
        let out = hits
            .into_iter()
            .filter_map(|t| {
                let uri = Uri::from_file_path(t.path)?;
                let pos = Position::new(t.turn.start_line as u32, 0);
                Some(SymbolInformation {
                    name: t.name,
                    kind: SymbolKind::EVENT,
                    tags: None,
                    deprecated: None,
                    location: Location {
                        uri,
                        range: Range::new(pos, pos),
                    },
                    container_name: Some(t.container),
                })
            })
            .collect();
        Ok(Some(WorkspaceSymbolResponse::Flat(out)))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        crate::lsp::custom::execute_command(self, params).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::handlers::tokens::token_edits;

    fn tok(l: u32, s: u32) -> SemanticToken {
        SemanticToken {
            delta_line: l,
            delta_start: s,
            length: 1,
            token_type: 0,
            token_modifiers_bitset: 0,
        }
    }

    #[test]
    fn token_edits_are_prefix_suffix_diffs() {
        let old = vec![tok(0, 1), tok(1, 2), tok(1, 3)];
        let new = vec![tok(0, 1), tok(1, 2), tok(2, 0), tok(1, 3)];
        let e = token_edits(&old, &new);
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].start, e[0].delete_count), (10, 0));
        assert_eq!(e[0].data.as_deref(), Some(&[tok(2, 0)][..]));
        assert!(token_edits(&old, &old).is_empty());
        let e = token_edits(&old, &[]);
        assert_eq!((e[0].start, e[0].delete_count), (0, 15));
    }

    #[test]
    fn view_uris_round_trip() {
        let uri = view_uri(Path::new("/tmp/a b/s.jsonl"), Some(true)).unwrap();
        assert_eq!(uri.as_str(), "transcript:///tmp/a%20b/s.jsonl?verbose=1");
        let key = view_key(&uri, false).unwrap();
        assert_eq!(key.path, PathBuf::from("/tmp/a b/s.jsonl"));
        assert!(key.verbose);
        let plain: Uri = "transcript:///x/y.jsonl".parse().unwrap();
        assert!(!view_key(&plain, false).unwrap().verbose);
        assert!(view_key(&plain, true).unwrap().verbose);
        // VS Code percent-encodes the query's `=` and `&` (issue 11, defect 1).
        let encoded: Uri = "transcript:///x/y.jsonl?verbose%3D1".parse().unwrap();
        assert!(view_key(&encoded, false).unwrap().verbose);
        let encoded: Uri = "transcript:///x/y.jsonl?a%3Db%26verbose%3D0"
            .parse()
            .unwrap();
        assert!(!view_key(&encoded, true).unwrap().verbose);
        let rel: Uri = "transcript:relative.jsonl".parse().unwrap();
        assert!(view_key(&rel, false).is_err());
        // Titled form: the tab shows the title, the query names the file.
        let titled: Uri =
            "transcript:/Fix%20the%20login%20bug?verbose=1&path=%2Ftmp%2Fa%20b%2Fs.jsonl"
                .parse()
                .unwrap();
        let key = view_key(&titled, false).unwrap();
        assert_eq!(key.path, PathBuf::from("/tmp/a b/s.jsonl"));
        assert!(key.verbose);
        assert_eq!(percent_decode("%E2%96%B8%zz%aé%"), "▸%zz%aé%");
        // As VS Code writes it: `=` encoded as well, a `?` in the title encoded in the path.
        let vs: Uri =
            "transcript:/GET%20%E2%88%95a%3Fb?verbose%3D0%26path%3D%2Ftmp%2Fx%26y%3D1.jsonl"
                .parse()
                .unwrap();
        let key = view_key(&vs, true).unwrap();
        assert_eq!(key.path, PathBuf::from("/tmp/x&y=1.jsonl"));
        assert!(!key.verbose);
    }
}
