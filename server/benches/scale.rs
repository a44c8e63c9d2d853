//! Big, live sessions against a bare parse (issue 12): every figure of the table in one
//! run, each printed beside its goal.
//!
//! Inputs are made by repeating one real Claude Code transcript (corpus spotter `258c7280…`,
//! found under `$TRANSCRIPT_LS_CORPUS`, default `../shared/corpus` seen from the workspace),
//! each copy with its own record ids (`repeat_to`), until 100 MB (10^6 bytes) and 1 GB; they
//! are written under a fresh directory in `/tmp` (deleted at the end, also on failure) with a
//! modification time an hour back, so every reader takes them as finished files.
//!
//! The baseline, *bare pass*: read the file (`std::fs::read`), check UTF-8, split lines with
//! `memchr`, and decode one borrowed, typed serde_json struct per line (a few envelope fields,
//! the message content kept raw), i.e. the least a JSONL reader can cost. Each figure is a
//! ratio to it, or to the file size for memory:
//!
//! | figure | how |
//! |---|---|
//! | `stats --json` / bare | the release binary, `stats --json FILE`, wall time |
//! | didOpen → first documentSymbol / bare | a fresh `transcript-ls --stdio`, from writing `didOpen` (JSON prepared beforehand) to the `documentSymbol` answer |
//! | peak RSS after open / size | `VmHWM` of the server (`/proc/PID/status`) after that answer |
//! | RSS after 15 appends / size | `VmRSS` after 15 `didChange` appends of one record, each followed by `documentSymbol` |
//! | append + documentSymbol, 100 MB / 1 MB | median time of those 15 vs the same on a 1 MB document (another server) |
//! | view from disk / bare | a fresh server, `workspace/textDocumentContent` of `transcript:///FILE` |
//! | peak RSS serving the view / size | `VmHWM` after that answer |
//! | memory per tiny line | peak RSS of `stats --json --complete` on 1M `{}` lines / 1M, less the peak on a one-line file when that run lasts long enough to be sampled (usually not: a few bytes per line more); the same for 1M tiny prompts (no goal) |
//!
//! Times are the best of 3 runs (1 for the 1 GB input), as CPU time (user + system: `wait4`
//! for the command line, the sum of `/proc/PID/task/*/schedstat` for the server, the thread's
//! own for the bare pass) and wall time. Goals are judged on CPU time, which other load on a
//! shared machine changes least; the load average (`/proc/loadavg`) is printed at the start
//! and the end.
//!
//! `cargo bench --bench scale` (about 2 minutes with the 1 GB input, which needs ~3 GB in
//! `/tmp`); `--quick` (or `TRANSCRIPT_LS_SCALE_QUICK=1`) skips the 1 GB input;
//! `TRANSCRIPT_LS_SCALE_MB` changes the 100 MB size. Under `--test` or in a debug build (as in
//! `cargo test --all-targets`) the sizes are 2 MB / 0.2 MB / 10,000 tiny lines and no 1 GB, so
//! the harness itself is tested.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// The binary measured: `$TRANSCRIPT_LS_BIN` (to compare another build), else this package's.
fn bin() -> String {
    std::env::var("TRANSCRIPT_LS_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_transcript-ls").into())
}
const CORPUS_FILE: &str = "258c7280-ae70-4798-800f-63464d01a85d.jsonl";

mod common;

/// The bare pass over a file: read, UTF-8 check, memchr line split, one typed struct per
/// line. Returns the records decoded and their output tokens (so nothing is optimised away).
fn bare_pass(path: &Path) -> (usize, u64) {
    let bytes = std::fs::read(path).expect("read input");
    common::bare::bare_pass(std::str::from_utf8(&bytes).expect("UTF-8 input"))
}

/// What a piece of work cost: wall time, and CPU time (user + system) of the process doing
/// it. On a machine busy with other work the CPU time is the steadier figure; the goals are
/// judged on it, and both are printed.
#[derive(Clone, Copy, Debug)]
struct Cost {
    wall: Duration,
    cpu: Duration,
}

impl Cost {
    const MAX: Cost = Cost {
        wall: Duration::MAX,
        cpu: Duration::MAX,
    };

    /// Component-wise minimum (best of several runs).
    fn min(self, o: Cost) -> Cost {
        Cost {
            wall: self.wall.min(o.wall),
            cpu: self.cpu.min(o.cpu),
        }
    }

    /// `self / base` on CPU time (wall time in brackets).
    fn over(self, base: Cost) -> (f64, f64) {
        (
            self.cpu.as_secs_f64() / base.cpu.as_secs_f64().max(1e-9),
            self.wall.as_secs_f64() / base.wall.as_secs_f64().max(1e-9),
        )
    }
}

fn show(c: Cost) -> String {
    format!("{} cpu, {} wall", ms(c.cpu), ms(c.wall))
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// CPU time of every thread of process `pid` so far (`/proc/PID/task/*/schedstat`, ns).
fn process_cpu(pid: u32) -> Duration {
    let mut ns = 0u64;
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            if let Ok(s) = std::fs::read_to_string(t.path().join("schedstat")) {
                ns += s
                    .split_whitespace()
                    .next()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
    }
    Duration::from_nanos(ns)
}

/// Best of `runs` costs of `f`, which returns its cost and a value (the last one is kept).
fn best<T>(runs: usize, mut f: impl FnMut() -> (Cost, T)) -> (Cost, T) {
    let mut best = Cost::MAX;
    let mut last = None;
    for _ in 0..runs {
        let (c, v) = f();
        best = best.min(c);
        last = Some(v);
    }
    (best, last.expect("runs >= 1"))
}

/// The bare pass on this thread: its cost and result.
fn bare_cost(path: &Path) -> (Cost, (usize, u64)) {
    let (t, c) = (Instant::now(), thread_cpu());
    let v = bare_pass(path);
    let cost = Cost {
        wall: t.elapsed(),
        cpu: thread_cpu() - c,
    };
    (cost, v)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// Field `key` of `/proc/PID/status`, in bytes (`VmHWM`, `VmRSS`).
fn proc_status_bytes(pid: u32, key: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(key) && l[key.len()..].starts_with(':'))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Runs the binary with `args`, output discarded: (cost, peak RSS in bytes, success). The
/// peak is the child's own `VmHWM`, read every 2 ms while it runs (`wait4`'s `ru_maxrss`
/// would count this process's memory too: a spawned child starts from its parent's); the CPU
/// time is `wait4`'s.
fn run_cli(args: &[&str]) -> (Cost, u64, bool) {
    run_cli_polling(args, Duration::from_millis(2))
}

/// [`run_cli`], reading `VmHWM` every `poll` (zero: as often as it can, for a run of a few
/// ms whose peak a 2 ms poll would miss).
fn run_cli_polling(args: &[&str], poll: Duration) -> (Cost, u64, bool) {
    let t = Instant::now();
    let child = Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn transcript-ls");
    let pid = child.id();
    std::mem::forget(child); // reaped below with wait4
    let mut peak = 0;
    loop {
        let mut status = 0;
        // SAFETY: valid pointers; the child is ours and reaped only here.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid as libc::pid_t {
            let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
            let cost = Cost {
                wall: t.elapsed(),
                cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
            };
            let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            return (cost, peak, ok);
        }
        assert!(r == 0, "wait4 failed");
        peak = peak.max(proc_status_bytes(pid, "VmHWM"));
        if poll.is_zero() {
            std::thread::yield_now();
        } else {
            std::thread::sleep(poll);
        }
    }
}

/// A message from the server, kept raw (a view of 100 MB is not decoded into a `Value`).
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<Value>,
}

/// A `transcript-ls --stdio` child and a thread reading its messages: server requests are
/// answered `null` at once, responses are handed over by id.
struct Server {
    child: Child,
    stdin: Arc<Mutex<ChildStdin>>,
    responses: Receiver<(i64, Result<usize, String>)>,
    next_id: i64,
    _home: tempfile::TempDir,
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

impl Server {
    fn start() -> Server {
        // An empty home and cache: no session index of the machine's own transcripts.
        let home = tempfile::tempdir().expect("temp home");
        let mut child = Command::new(bin())
            .arg("--stdio")
            .env("HOME", home.path())
            .env("XDG_CACHE_HOME", home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn transcript-ls --stdio");
        let stdin = Arc::new(Mutex::new(child.stdin.take().expect("stdin")));
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        let answer = stdin.clone();
        std::thread::spawn(move || read_messages(stdout, answer, tx));
        let mut s = Server {
            child,
            stdin,
            responses: rx,
            next_id: 0,
            _home: home,
        };
        s.request(
            "initialize",
            json!({
                "processId": null, "rootUri": null, "capabilities": {},
                "initializationOptions": { "roots": [], "indexCache": false }
            }),
        )
        .expect("initialize");
        s.notify("initialized", json!({}));
        s
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn send_raw(&self, body: &[u8]) {
        let mut w = self.stdin.lock().unwrap();
        w.write_all(&frame(body)).expect("write to server");
        w.flush().expect("flush");
    }

    fn notify(&self, method: &str, params: Value) {
        let body = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send_raw(body.to_string().as_bytes());
    }

    /// Sends a request, waits for its answer: the size of its `result` in bytes.
    fn request(&mut self, method: &str, params: Value) -> Result<usize, String> {
        self.next_id += 1;
        let id = self.next_id;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(body.to_string().as_bytes());
        self.wait(id)
    }

    fn wait(&self, id: i64) -> Result<usize, String> {
        loop {
            let (got, r) = self
                .responses
                .recv_timeout(Duration::from_secs(600))
                .expect("server answered within 10 minutes");
            if got == id {
                return r;
            }
        }
    }

    fn stop(mut self) {
        let _ = self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_messages(
    stdout: impl Read,
    answer: Arc<Mutex<ChildStdin>>,
    tx: Sender<(i64, Result<usize, String>)>,
) {
    let mut r = BufReader::with_capacity(1 << 20, stdout);
    let mut line = String::new();
    loop {
        let mut len = None;
        loop {
            line.clear();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some(v) = l.strip_prefix("Content-Length:") {
                len = v.trim().parse::<usize>().ok();
            }
        }
        let Some(len) = len else { return };
        let mut body = vec![0; len];
        if r.read_exact(&mut body).is_err() {
            return;
        }
        let Ok(msg) = serde_json::from_slice::<Incoming>(&body) else {
            continue;
        };
        match (msg.id, msg.method) {
            (Some(id), Some(_)) => {
                // A server request (configuration, progress tokens, refreshes): `null`.
                let reply = json!({"jsonrpc": "2.0", "id": id, "result": null}).to_string();
                let mut w = answer.lock().unwrap();
                let _ = w.write_all(&frame(reply.as_bytes()));
                let _ = w.flush();
            }
            (Some(Value::Number(n)), None) => {
                let r = match msg.error {
                    Some(e) => Err(e.to_string()),
                    None => Ok(msg.result.map_or(0, |v| v.get().len())),
                };
                let _ = tx.send((n.as_i64().unwrap_or(-1), r));
            }
            _ => {}
        }
    }
}

fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Opens `text` as `path` in a fresh server and asks for its outline: (time from the first
/// byte of `didOpen` to the answer, the server), or the server's error.
fn open_and_outline(path: &Path, text: &str) -> Result<(Cost, Server), String> {
    let mut s = Server::start();
    let uri = file_uri(path);
    let body = serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": { "textDocument": { "uri": uri, "languageId": "jsonl", "version": 1, "text": text } }
    }))
    .unwrap();
    let (t, c) = (Instant::now(), process_cpu(s.pid()));
    s.send_raw(&body);
    drop(body);
    let symbols = s.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    );
    let elapsed = Cost {
        wall: t.elapsed(),
        cpu: process_cpu(s.pid()) - c,
    };
    match symbols {
        Ok(n) if n > 2 => Ok((elapsed, s)),
        Ok(_) => Err("an empty outline".into()),
        Err(e) => {
            s.stop();
            Err(e)
        }
    }
}

/// Appends `record` (one line, `\n` added) `n` times at line `lines`, each followed by
/// `documentSymbol`: the cost of each (didChange + answer; the server's CPU time).
fn appends(s: &mut Server, path: &Path, mut lines: usize, record: &str, n: usize) -> Vec<Cost> {
    let uri = file_uri(path);
    let mut times = Vec::new();
    for i in 0..n {
        let text = format!("{record}\n");
        let (t, c) = (Instant::now(), process_cpu(s.pid()));
        s.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": 2 + i},
                "contentChanges": [{
                    "range": {"start": {"line": lines, "character": 0}, "end": {"line": lines, "character": 0}},
                    "text": text
                }]
            }),
        );
        s.request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        )
        .expect("documentSymbol after append");
        times.push(Cost {
            wall: t.elapsed(),
            cpu: process_cpu(s.pid()) - c,
        });
        lines += 1;
    }
    times
}

/// Median wall time and median CPU time.
fn median(v: &[Cost]) -> Cost {
    let mut w: Vec<_> = v.iter().map(|c| c.wall).collect();
    let mut c: Vec<_> = v.iter().map(|c| c.cpu).collect();
    w.sort();
    c.sort();
    Cost {
        wall: w[w.len() / 2],
        cpu: c[c.len() / 2],
    }
}

/// The view of `path` from disk in a fresh server: (time to the answer, peak RSS, view bytes).
fn disk_view(path: &Path) -> (Cost, (u64, usize)) {
    let mut s = Server::start();
    let uri = format!("transcript://{}", path.display());
    let (t, c) = (Instant::now(), process_cpu(s.pid()));
    let n = s
        .request("workspace/textDocumentContent", json!({"uri": uri}))
        .expect("view text");
    let cost = Cost {
        wall: t.elapsed(),
        cpu: process_cpu(s.pid()) - c,
    };
    let hwm = proc_status_bytes(s.pid(), "VmHWM");
    s.stop();
    (cost, (hwm, n))
}

fn find_corpus_file() -> PathBuf {
    let root = std::env::var_os("TRANSCRIPT_LS_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"));
    fn walk(dir: &Path, depth: usize) -> Option<PathBuf> {
        for e in std::fs::read_dir(dir).ok()?.flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == CORPUS_FILE) {
                return Some(p);
            }
            if depth < 8
                && e.file_type().is_ok_and(|t| t.is_dir())
                && let Some(found) = walk(&p, depth + 1)
            {
                return Some(found);
            }
        }
        None
    }
    walk(&root, 0).unwrap_or_else(|| {
        panic!(
            "corpus transcript {CORPUS_FILE} not found under {} (set TRANSCRIPT_LS_CORPUS)",
            root.display()
        )
    })
}

/// Writes `unit` repeated until the file has at least `bytes` bytes; returns its size. Each
/// copy after the first gets its own record ids (the first 8 hex digits of every `uuid` and
/// `parentUuid` value become the copy's number), so that every copy is read as new records:
/// a line repeating an earlier record byte for byte is read once (issue 20 item 2), and a
/// real 100 MB session holds no such copies.
fn repeat_to(path: &Path, unit: &[u8], bytes: u64) -> u64 {
    let mut f = std::io::BufWriter::with_capacity(1 << 22, std::fs::File::create(path).unwrap());
    let mut written = 0;
    let mut copy = unit.to_vec();
    let mut k = 0u32;
    while written < bytes {
        if k > 0 {
            renumber_ids(unit, &mut copy, k);
        }
        f.write_all(&copy).unwrap();
        written += copy.len() as u64;
        k += 1;
    }
    let f = f.into_inner().unwrap();
    settle(&f);
    written
}

/// `copy` = `unit` with the first 8 characters of each `"uuid":"…"` / `"parentUuid":"…"`
/// value replaced by `k` in 8 hex digits when they are hex digits (same length).
fn renumber_ids(unit: &[u8], copy: &mut [u8], k: u32) {
    copy.copy_from_slice(unit);
    let digits = format!("{k:08x}");
    for key in [&b"\"uuid\":\""[..], &b"\"parentUuid\":\""[..]] {
        let mut at = 0;
        while let Some(i) = memchr::memmem::find(&unit[at..], key) {
            let v = at + i + key.len();
            if v + 8 <= unit.len() && unit[v..v + 8].iter().all(u8::is_ascii_hexdigit) {
                copy[v..v + 8].copy_from_slice(digits.as_bytes());
            }
            at = v;
        }
    }
}

/// An hour-old modification time: the file reads as finished.
fn settle(f: &std::fs::File) {
    let _ = f.set_modified(SystemTime::now() - Duration::from_secs(3600));
}

struct Row {
    figure: String,
    value: String,
    goal: String,
    met: Option<bool>,
}

#[derive(Default)]
struct Report {
    rows: Vec<Row>,
}

impl Report {
    fn ratio(&mut self, figure: &str, value: f64, detail: String, goal: f64) {
        println!("  {figure}: {value:.2}x ({detail})");
        self.rows.push(Row {
            figure: figure.into(),
            value: format!("{value:.2}x"),
            goal: format!("<= {goal}x"),
            met: Some(value <= goal),
        });
    }

    /// A time ratio `cost / base`: judged on CPU time, wall time beside it.
    fn timed(&mut self, figure: &str, cost: Cost, base: Cost, detail: String, goal: f64) {
        let (cpu, wall) = cost.over(base);
        println!("  {figure}: {cpu:.2}x cpu, {wall:.2}x wall ({detail})");
        self.rows.push(Row {
            figure: figure.into(),
            value: format!("{cpu:.2}x cpu ({wall:.2}x wall)"),
            goal: format!("<= {goal}x"),
            met: Some(cpu <= goal),
        });
    }

    fn plain(&mut self, figure: &str, value: String, goal: &str, met: Option<bool>) {
        println!("  {figure}: {value}");
        self.rows.push(Row {
            figure: figure.into(),
            value,
            goal: goal.into(),
            met,
        });
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn mb(b: u64) -> String {
    format!("{:.0} MB", b as f64 / 1e6)
}

/// The figures on one big input (`full`: also the LSP open and append figures).
fn big_input(
    report: &mut Report,
    path: &Path,
    size: u64,
    runs: usize,
    small: &Path,
    record: &str,
    full: bool,
) {
    let label = mb(size);
    println!("input {} ({label})", path.display());
    // Warm the page cache, then the baseline.
    let _ = bare_pass(path);
    let (bare, (records, _)) = best(runs, || bare_cost(path));
    println!("  bare pass: {} ({records} records)", show(bare));

    let p = path.to_str().unwrap();
    let (stats, (stats_rss, ok)) = best(runs, || {
        let (c, rss, ok) = run_cli(&["stats", "--json", p]);
        (c, (rss, ok))
    });
    assert!(ok, "stats --json {p} failed");
    report.timed(
        &format!("stats --json / bare ({label})"),
        stats,
        bare,
        format!("{}, peak RSS {}", show(stats), mb(stats_rss)),
        1.5,
    );

    let (view, (view_rss, view_bytes)) = best(runs, || disk_view(path));
    report.timed(
        &format!("view from disk / bare ({label})"),
        view,
        bare,
        format!("{}, view text {} KB", show(view), view_bytes / 1000),
        1.5,
    );
    report.ratio(
        &format!("server peak RSS serving the disk view / size ({label})"),
        view_rss as f64 / size as f64,
        mb(view_rss),
        1.0,
    );

    let text = std::fs::read_to_string(path).unwrap();
    let lines = text.bytes().filter(|&c| c == b'\n').count();
    let mut open_best = Cost::MAX;
    let mut server = None;
    for _ in 0..runs {
        let (t, s) = match open_and_outline(path, &text) {
            Ok(v) => v,
            Err(e) => {
                report.plain(
                    &format!("didOpen -> first documentSymbol ({label})"),
                    format!("failed: {e}"),
                    "opens",
                    Some(false),
                );
                return;
            }
        };
        open_best = open_best.min(t);
        if let Some(old) = server.replace(s) {
            Server::stop(old);
        }
    }
    let mut s = server.unwrap();
    report.timed(
        &format!("didOpen -> first documentSymbol / bare ({label})"),
        open_best,
        bare,
        show(open_best),
        2.5,
    );
    let hwm = proc_status_bytes(s.pid(), "VmHWM");
    report.ratio(
        &format!("server peak RSS after opening / size ({label})"),
        hwm as f64 / size as f64,
        mb(hwm),
        1.5,
    );
    if !full {
        s.stop();
        return;
    }
    let big_times = appends(&mut s, path, lines, record, 15);
    let rss = proc_status_bytes(s.pid(), "VmRSS");
    report.ratio(
        &format!("server RSS after 15 one-record appends / size ({label})"),
        rss as f64 / size as f64,
        format!(
            "{}, peak {}",
            mb(rss),
            mb(proc_status_bytes(s.pid(), "VmHWM"))
        ),
        1.5,
    );
    s.stop();
    drop(text);

    let small_text = std::fs::read_to_string(small).unwrap();
    let small_lines = small_text.bytes().filter(|&c| c == b'\n').count();
    let (_, mut s) = open_and_outline(small, &small_text).expect("open the small document");
    let small_times = appends(&mut s, small, small_lines, record, 15);
    s.stop();
    let (big_m, small_m) = (median(&big_times), median(&small_times));
    report.timed(
        &format!(
            "append one record + documentSymbol, {label} doc / {} doc",
            mb(small_text.len() as u64)
        ),
        big_m,
        small_m,
        format!("median of 15: {} vs {}", show(big_m), show(small_m)),
        3.0,
    );
}

/// Memory per line of `stats --json` on `n` lines of `line` after a Claude `summary` record
/// (so the file is a Claude Code transcript), over the same on the first line alone.
fn per_line(
    report: &mut Report,
    dir: &Path,
    name: &str,
    n: usize,
    line: impl Fn(usize) -> String,
    goal: Option<u64>,
) {
    let head = "{\"type\":\"summary\",\"summary\":\"s\",\"leafUuid\":\"x\"}\n";
    let one = dir.join(format!("{name}-1.jsonl"));
    std::fs::write(&one, head).unwrap();
    let many = dir.join(format!("{name}.jsonl"));
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&many).unwrap());
        f.write_all(head.as_bytes()).unwrap();
        for i in 0..n {
            f.write_all(line(i).as_bytes()).unwrap();
            f.write_all(b"\n").unwrap();
        }
        settle(&f.into_inner().unwrap());
    }
    // The one-line run ends within a few ms, before a 2 ms poll sees its peak (the baseline
    // read ~0.5 MB, /usr/bin/time's 5.5 MB): polled without pause, the highest of ten runs
    // is its fixed cost (a low baseline would show as memory per line).
    let base = (0..10)
        .map(|_| {
            let args = ["stats", "--json", "--complete", one.to_str().unwrap()];
            run_cli_polling(&args, Duration::ZERO).1
        })
        .max()
        .unwrap_or(0);
    let (t, rss, ok) = run_cli(&["stats", "--json", "--complete", many.to_str().unwrap()]);
    assert!(ok, "stats on {name} failed");
    let per = rss.saturating_sub(base) / n as u64;
    let size = std::fs::metadata(&many).unwrap().len();
    report.plain(
        &format!("memory per line, {n} {name} lines"),
        format!(
            "{per} bytes (peak RSS {} for a {} file, {})",
            mb(rss),
            mb(size),
            show(t)
        ),
        &goal.map_or("-".into(), |g| format!("<= {g} bytes")),
        goal.map(|g| per <= g),
    );
}

struct TempDir(PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    if has("--list") {
        return;
    }
    let test_mode = has("--test") || cfg!(debug_assertions);
    let quick = test_mode
        || has("--quick")
        || std::env::var("TRANSCRIPT_LS_SCALE_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
    let big_mb: u64 = std::env::var("TRANSCRIPT_LS_SCALE_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if test_mode { 2 } else { 100 });
    let small_bytes: u64 = if test_mode { 200_000 } else { 1_000_000 };
    let tiny_lines = if test_mode { 10_000 } else { 1_000_000 };
    let runs = if test_mode { 1 } else { 3 };

    let corpus = find_corpus_file();
    let unit = std::fs::read(&corpus).unwrap();
    assert!(unit.ends_with(b"\n"));
    // The appended record: the first assistant record of 1–4 KB of the corpus file.
    let record = std::str::from_utf8(&unit)
        .unwrap()
        .lines()
        .find(|l| l.contains("\"type\":\"assistant\"") && (1000..4000).contains(&l.len()))
        .expect("an assistant record of 1-4 KB")
        .to_string();

    let dir =
        TempDir(std::env::temp_dir().join(format!("transcript-ls-scale-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    println!(
        "transcript-ls scale benchmark (issue 12); binary {}\nload average at start: {}; corpus unit {} ({} bytes); appended record {} bytes",
        bin(),
        load_average(),
        corpus.display(),
        unit.len(),
        record.len()
    );

    let mut report = Report::default();
    let small = dir.0.join("small.jsonl");
    // The small document: the corpus transcript cut to about `small_bytes` (whole lines).
    {
        let mut cut = 0;
        for (i, &c) in unit.iter().enumerate() {
            if c == b'\n' {
                cut = i + 1;
                if cut as u64 >= small_bytes {
                    break;
                }
            }
        }
        std::fs::write(&small, &unit[..cut]).unwrap();
    }

    let big = dir.0.join(format!("big-{big_mb}MB.jsonl"));
    let size = repeat_to(&big, &unit, big_mb * 1_000_000);
    big_input(&mut report, &big, size, runs, &small, &record, true);
    std::fs::remove_file(&big).unwrap();

    per_line(
        &mut report,
        &dir.0,
        "{}",
        tiny_lines,
        |_| "{}".into(),
        Some(120),
    );
    per_line(
        &mut report,
        &dir.0,
        "tiny-prompt",
        tiny_lines,
        |i| {
            format!(
                "{{\"type\":\"user\",\"uuid\":\"u{i}\",\"sessionId\":\"s\",\"message\":{{\"role\":\"user\",\"content\":\"hi {i}\"}}}}"
            )
        },
        None,
    );

    if quick {
        println!("1 GB input skipped (--quick, TRANSCRIPT_LS_SCALE_QUICK or test mode)");
    } else {
        let gb = dir.0.join("big-1GB.jsonl");
        let size = repeat_to(&gb, &unit, 1_000_000_000);
        big_input(&mut report, &gb, size, 1, &small, &record, false);
        std::fs::remove_file(&gb).unwrap();
    }

    println!("\nload average at end: {}", load_average());
    println!("\n| figure | value | goal | met |\n|---|---|---|---|");
    for r in &report.rows {
        let met = match r.met {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        println!("| {} | {} | {} | {met} |", r.figure, r.value, r.goal);
    }
}
