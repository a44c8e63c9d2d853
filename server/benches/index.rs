//! The session index (issue 7) against its targets, printed as plain figures:
//!
//! * cold index of N transcripts (default 2,000 totalling ~1 GB, generated from the corpus'
//!   Claude Code and Codex files under `/tmp/transcript-ls-index-bench/`, reused when present)
//!   vs one bare typed serde_json pass over the same files (read from disk the same way);
//!   target: at most 2x;
//! * warm start with nothing changed (cache load + one `stat` per file); target: <= 0.5 s;
//! * an append to one session (2 KB, then 200 KB) vs re-reading that file whole; target: time
//!   in proportion to the appended bytes (plus the session's last turn);
//! * index memory per session (its fixed part, plus titles and turn names, plus the changed
//!   files per turn of issue 22 item 3: records and paths).
//!
//! * full-text search (issue 26): the search index built with the session index over the same
//!   files (time, size on disk, peak memory of the build), then a word query's latency cold
//!   (a fresh open of the index: the first query) and warm (median of 20; goal < 50 ms).
//!
//! `cargo bench --bench index` (env `TRANSCRIPT_LS_INDEX_SEARCH_ONLY=1`: the search figures
//! alone; `TRANSCRIPT_LS_INDEX_FILES`, `TRANSCRIPT_LS_INDEX_MB` change
//! the size); under `--test` or in a debug build (`cargo test --benches`) 20 files of ~10 MB.

use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use transcript_ls::index::disk::{self, Refresh};
use transcript_ls::index::{ChangedFile, SessionEntry, SessionIndex, TurnSymbol};
use transcript_ls::model::Format;

mod common;

fn bare_serde_file(path: &Path) -> usize {
    let bytes = std::fs::read(path).unwrap();
    common::bare::bare_pass(&String::from_utf8_lossy(&bytes)).0
}

fn corpus_transcripts() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl")
                && let Ok(text) = std::fs::read_to_string(&p)
                && text.len() > 20_000
                && transcript_ls::formats::read(&text).format() != Format::Unknown
            {
                out.push(text);
            }
        }
    }
    out.sort();
    out
}

/// Writes `files` transcripts of `total` bytes in all under `dir` (20 project folders), each
/// a corpus file repeated to its target size (sizes spread from 0.1x to 1.9x the mean).
fn generate(dir: &Path, files: usize, total: u64) {
    let marker = dir.join(format!("generated-{files}-{total}"));
    if marker.exists() {
        return;
    }
    let _ = std::fs::remove_dir_all(dir);
    let sources = corpus_transcripts();
    assert!(!sources.is_empty(), "no corpus transcripts found");
    let mean = total / files as u64;
    for i in 0..files {
        let src = &sources[i % sources.len()];
        let factor = 0.1 + 1.8 * ((i * 7919) % 1000) as f64 / 1000.0;
        let target = (mean as f64 * factor) as usize;
        let proj = dir.join(format!("-home-me-project-{:02}", i % 20));
        std::fs::create_dir_all(&proj).unwrap();
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(proj.join(format!("s{i:05}.jsonl"))).unwrap(),
        );
        let mut written = 0;
        'fill: loop {
            for line in src.split_inclusive('\n') {
                f.write_all(line.as_bytes()).unwrap();
                written += line.len();
                if written >= target.max(1) {
                    break 'fill;
                }
            }
        }
    }
    std::fs::write(marker, "").unwrap();
}

/// Bytes of an entry's changed files (issue 22 item 3): the records and their paths.
fn changes_heap_bytes(e: &SessionEntry) -> usize {
    e.changes.capacity() * std::mem::size_of::<ChangedFile>()
        + e.changes.iter().map(|c| c.path.len()).sum::<usize>()
}

fn entry_heap_bytes(e: &SessionEntry) -> (usize, usize) {
    let s = |o: &Option<Box<str>>| o.as_deref().map_or(0, str::len);
    let fixed = std::mem::size_of::<SessionEntry>()
        + e.symbols.capacity() * std::mem::size_of::<TurnSymbol>()
        + s(&e.project)
        + s(&e.session_id);
    let titles =
        s(&e.title) + s(&e.first_prompt) + e.symbols.iter().map(|t| t.title.len()).sum::<usize>();
    (fixed, titles)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` (or any debug build): a small run that only checks it works.
    let test_mode = args.iter().any(|a| a == "--test" || a == "--list") || cfg!(debug_assertions);
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let files =
        env("TRANSCRIPT_LS_INDEX_FILES").unwrap_or(if test_mode { 20 } else { 2000 }) as usize;
    let total =
        env("TRANSCRIPT_LS_INDEX_MB").unwrap_or(if test_mode { 10 } else { 1000 }) * 1_000_000;
    let dir = PathBuf::from(format!(
        "/tmp/transcript-ls-index-bench/{files}-{}",
        total / 1_000_000
    ));
    let t = Instant::now();
    generate(&dir, files, total);
    let paths = disk::scan_roots(std::slice::from_ref(&dir));
    let bytes: u64 = paths
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    println!(
        "input: {} transcripts, {:.1} MB, in {} ({:.1} s to generate or find)",
        paths.len(),
        bytes as f64 / 1e6,
        dir.display(),
        t.elapsed().as_secs_f64()
    );
    // Warm the page cache so both passes read from memory.
    for p in &paths {
        black_box(std::fs::read(p).unwrap().len());
    }
    search_figures(&dir, bytes);
    if std::env::var_os("TRANSCRIPT_LS_INDEX_SEARCH_ONLY").is_some() {
        return;
    }

    let best = |runs: usize, f: &mut dyn FnMut()| -> Duration {
        let mut best = Duration::MAX;
        for _ in 0..runs {
            let t = Instant::now();
            f();
            best = best.min(t.elapsed());
        }
        best
    };
    let runs = if test_mode { 1 } else { 2 };
    let bare = best(runs, &mut || {
        let n: usize = paths.iter().map(|p| bare_serde_file(p)).sum();
        black_box(n);
    });
    // For the record: the format readers alone (no analysis), over the same files.
    let reader_only = best(runs, &mut || {
        let n: usize = paths
            .iter()
            .map(|p| {
                let bytes = std::fs::read(p).unwrap();
                transcript_ls::formats::read(&String::from_utf8_lossy(&bytes))
                    .entries
                    .len()
            })
            .sum();
        black_box(n);
    });
    let mut index = SessionIndex::new();
    let cold = best(runs, &mut || {
        let mut idx = SessionIndex::new();
        for p in disk::scan_roots(std::slice::from_ref(&dir)) {
            disk::update(&mut idx, &p).unwrap();
        }
        index = idx;
    });
    println!(
        "format readers alone (no analysis): {:.2} s = {:.2}x the bare pass",
        reader_only.as_secs_f64(),
        reader_only.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "bare serde_json pass: {:.2} s ({:.0} MB/s); cold index: {:.2} s ({:.0} MB/s) = {:.2}x the bare pass (target <= 2x); {} sessions, {} turns",
        bare.as_secs_f64(),
        bytes as f64 / 1e6 / bare.as_secs_f64(),
        cold.as_secs_f64(),
        bytes as f64 / 1e6 / cold.as_secs_f64(),
        cold.as_secs_f64() / bare.as_secs_f64(),
        index.session_count(),
        index.turn_count()
    );

    // Memory.
    let (mut fixed, mut titles, mut changed, mut changed_n) = (0, 0, 0, 0);
    for (_, e) in index.entries() {
        let (f, t) = entry_heap_bytes(e);
        fixed += f;
        titles += t;
        changed += changes_heap_bytes(e);
        changed_n += e.changes.len();
    }
    let n = index.file_count().max(1);
    println!(
        "index memory: {:.0} B per session fixed (entry, turn records, project, ids; target <= 2 KB) + {:.0} B per session of titles, first prompts and turn names",
        fixed as f64 / n as f64,
        titles as f64 / n as f64
    );
    println!(
        "index memory with changed paths: {:.0} B per session in all; the changed files alone {:.0} B per session ({} changed-file records, {:.1} per session, {} B each + its path)",
        (fixed + titles + changed) as f64 / n as f64,
        changed as f64 / n as f64,
        changed_n,
        changed_n as f64 / n as f64,
        std::mem::size_of::<ChangedFile>()
    );

    // Warm start: cache, then one stat per file.
    let cache = std::env::temp_dir().join(format!(
        "transcript-ls-index-bench-{}.json",
        std::process::id()
    ));
    disk::save_cache(&cache, std::slice::from_ref(&dir), &index).unwrap();
    let cache_len = std::fs::metadata(&cache).unwrap().len();
    let warm = best(runs, &mut || {
        let roots = std::slice::from_ref(&dir);
        let mut idx = disk::load_cache(&cache, roots);
        for p in disk::scan_roots(roots) {
            let r = disk::update(&mut idx, &p).unwrap();
            assert_eq!(r, Refresh::Unchanged);
        }
        black_box(idx.file_count());
    });
    let _ = std::fs::remove_file(&cache);
    println!(
        "warm start (cache {:.1} MB + {} stats): {:.3} s (target <= 0.5 s)",
        cache_len as f64 / 1e6,
        paths.len(),
        warm.as_secs_f64()
    );

    // Appends to the largest session whose last turn is in its second half (a session an agent
    // works on: many turns; a file with no turn is read whole, from offset 0).
    let big = paths
        .iter()
        .filter(|p| {
            index
                .get(p)
                .is_some_and(|e| e.format == Format::ClaudeCode && e.tail.offset > e.bytes / 2)
        })
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap_or(&paths[0]);
    let live = std::env::temp_dir().join(format!(
        "transcript-ls-index-bench-live-{}.jsonl",
        std::process::id()
    ));
    std::fs::copy(big, &live).unwrap();
    let mut idx = SessionIndex::new();
    let t = Instant::now();
    disk::update(&mut idx, &live).unwrap();
    let whole = t.elapsed();
    let len = std::fs::metadata(&live).unwrap().len();
    println!(
        "append target: {} ({:.1} MB), its last turn starts at byte {} ({} B before the end)",
        big.display(),
        len as f64 / 1e6,
        idx.get(&live).unwrap().tail.offset,
        len - idx.get(&live).unwrap().tail.offset
    );
    for size in [2_000usize, 200_000] {
        let mut line = String::from(
            r#"{"type":"user","uuid":"bench-append","parentUuid":null,"sessionId":"b","timestamp":"2027-01-01T00:00:00.000Z","isSidechain":false,"message":{"role":"user","content":""#,
        );
        line.push_str(&"x".repeat(size.saturating_sub(line.len() + 10)));
        line.push_str("\"}}\n");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&live)
            .unwrap();
        f.write_all(line.as_bytes()).unwrap();
        drop(f);
        let t = Instant::now();
        let r = disk::update(&mut idx, &live).unwrap();
        let took = t.elapsed();
        let read = match r {
            Refresh::Tail { read, .. } => read,
            other => panic!("not a tail read: {other:?}"),
        };
        println!(
            "append of {} B to a {:.1} MB session: {:.2} ms, {} B read (the new last turn) vs {:.1} ms to read the file whole",
            line.len(),
            len as f64 / 1e6,
            took.as_secs_f64() * 1e3,
            read,
            whole.as_secs_f64() * 1e3
        );
    }
    let _ = std::fs::remove_file(&live);
}

/// `VmHWM` / `VmRSS` of this process in kB (Linux).
fn vm(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// Full-text search (issue 26): build, size, memory, cold and warm query latency.
fn search_figures(dir: &Path, bytes: u64) {
    use transcript_ls::index::search::{self, SearchIndex, SearchQuery};
    let index_dir =
        std::env::temp_dir().join(format!("transcript-ls-search-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&index_dir);
    let roots = [dir.to_path_buf()];
    // Peak memory from here (clear_refs 5 resets VmHWM).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let rss0 = vm("VmRSS:");
    let t = Instant::now();
    let mut sessions = SessionIndex::new();
    let s = SearchIndex::open(&index_dir).unwrap();
    search::sync(&roots, &mut sessions, &s).unwrap();
    let build = t.elapsed();
    let hwm = vm("VmHWM:");
    let size = s.size_bytes();
    println!(
        "search index build (with the session index, one read per file): {:.1} s ({:.0} MB/s of transcripts), {} texts of {} sessions; {:.1} MB on disk = {:.1} % of the {:.0} MB of transcripts",
        build.as_secs_f64(),
        bytes as f64 / 1e6 / build.as_secs_f64(),
        s.doc_count(),
        sessions.session_count(),
        size as f64 / 1e6,
        size as f64 * 100.0 / bytes as f64,
        bytes as f64 / 1e6
    );
    println!(
        "search build memory: peak RSS {:.0} MB ({:.0} MB above the {:.0} MB before it; writer budget {} MiB, one indexing thread, one merge thread)",
        hwm as f64 / 1e3,
        hwm.saturating_sub(rss0) as f64 / 1e3,
        rss0 as f64 / 1e3,
        search::WRITER_MEMORY >> 20
    );
    drop(s);
    let query = |text: &str| SearchQuery {
        text: text.to_string(),
        ..SearchQuery::default()
    };
    for q in ["test ", "error ", "migration ", "fla", "\"cargo test\""] {
        // Cold: the index opened afresh (its files in the page cache, nothing in the process).
        let t = Instant::now();
        let s = SearchIndex::open(&index_dir).unwrap();
        s.set_complete(true);
        let r = s.search(&query(q), &sessions).unwrap();
        let cold = t.elapsed();
        let mut warm: Vec<Duration> = (0..20)
            .map(|_| {
                let t = Instant::now();
                black_box(s.search(&query(q), &sessions).unwrap().hits.len());
                t.elapsed()
            })
            .collect();
        warm.sort();
        println!(
            "search {q:?}: {} hits (limit 50); cold (open + first query) {:.1} ms, warm median {:.2} ms, max {:.2} ms (goal < 50 ms warm)",
            r.hits.len(),
            cold.as_secs_f64() * 1e3,
            warm[10].as_secs_f64() * 1e3,
            warm[19].as_secs_f64() * 1e3
        );
    }
    let _ = std::fs::remove_dir_all(&index_dir);
}
