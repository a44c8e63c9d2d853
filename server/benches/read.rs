//! Throughput of reading a large Claude Code transcript (DESIGN.md §6: a 100 MB transcript
//! must open and answer its first requests in well under a second on a 2-core machine).
//!
//! Input: `transcript_ls::testing::synth_claude_transcript` (deterministic, ~100 MB; set
//! `TRANSCRIPT_LS_BENCH_MB` to change the size). Measured, in bytes of input per second:
//! * `line_index`: `source::LineIndex::new` over the whole text;
//! * `read+analysis`: `formats::read` then `analysis::analyze`;
//! * `bare_serde_json`: the baseline, one typed serde_json pass over every line (a few
//!   borrowed fields, the rest skipped), i.e. the least a JSONL reader can cost.
//!
//! Before criterion runs, each is timed directly (best of 3) and printed as plain lines,
//! `read+analysis: X MB/s; bare serde_json: Y MB/s` (MB = 10^6 bytes; criterion's own report
//! says MiB/s). `cargo bench --bench read -- --quick` for a short run; under `--test` (as in
//! `cargo test --benches`) the input is 4 MB.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput};
use transcript_ls::analysis::{self, Options};
use transcript_ls::formats;
use transcript_ls::source::LineIndex;
use transcript_ls::testing::synth_claude_transcript;

mod common;
use common::bare::bare_pass as bare_serde;

fn read_and_analyze(text: &str) -> (usize, usize) {
    let transcript = formats::read(text);
    let analysis = analysis::analyze(&transcript, text, &Options::default());
    (transcript.entries.len(), analysis.turns.len())
}

/// Best of `runs` timings of `f`, in MB/s (10^6 bytes) of `bytes` input.
fn mb_per_s<T>(bytes: usize, runs: usize, mut f: impl FnMut() -> T) -> f64 {
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        black_box(f());
        best = best.min(t.elapsed());
    }
    bytes as f64 / 1e6 / best.as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let test_mode = has("--test") || has("--list");
    let mb: usize = std::env::var("TRANSCRIPT_LS_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if test_mode { 4 } else { 100 });

    let t = Instant::now();
    let text = synth_claude_transcript(mb * 1_000_000, 1);
    let generated = t.elapsed();
    let index = LineIndex::new(&text);
    println!(
        "input: synthetic Claude Code transcript, {} bytes, {} lines (generated in {:.0} ms)",
        text.len(),
        index.record_line_count(),
        generated.as_secs_f64() * 1e3
    );

    if !has("--list") {
        let runs = if test_mode { 1 } else { 3 };
        let index_rate = mb_per_s(text.len(), runs, || LineIndex::new(&text));
        let read_rate = mb_per_s(text.len(), runs, || read_and_analyze(&text));
        let serde_rate = mb_per_s(text.len(), runs, || bare_serde(&text));
        let (entries, turns) = read_and_analyze(&text);
        let (records, _) = bare_serde(&text);
        println!("line index: {index_rate:.0} MB/s");
        println!("read+analysis: {read_rate:.0} MB/s; bare serde_json: {serde_rate:.0} MB/s");
        println!(
            "(best of {runs}; MB = 10^6 bytes; read: {entries} entries, {turns} turns; \
             bare serde_json: {records} records)"
        );
    }

    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    {
        let mut group = c.benchmark_group(format!("read_{mb}MB"));
        group
            .sampling_mode(SamplingMode::Flat)
            .throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function("line_index", |b| {
            b.iter(|| LineIndex::new(black_box(&text)))
        });
        group.bench_function("read+analysis", |b| {
            b.iter(|| read_and_analyze(black_box(&text)))
        });
        group.bench_function("bare_serde_json", |b| {
            b.iter(|| bare_serde(black_box(&text)))
        });
        group.finish();
    }
    c.final_summary();
}
