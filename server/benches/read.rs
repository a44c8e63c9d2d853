//! Throughput of reading a large Claude Code transcript (DESIGN.md §6: a 100 MB transcript
//! must open and answer its first requests in well under a second on a 2-core machine).
//!
//! Input: `transcript_ls::testing::synth_claude_transcript` (deterministic, ~100 MB; set
//! `TRANSCRIPT_LS_BENCH_MB` to change the size). Measured, in bytes of input per second:
//! * `line_index`: `source::LineIndex::new` over the whole text;
//! * `positions_utf16` (printed only): `source::position::offset_to_position` and back
//!   (`position_to_offset`) in UTF-16 columns for 200,000 offsets spread over the
//!   whole text, in millions of round trips per second (the line lookups a client's requests
//!   cost; issue 25 item 8, the index stored as `u32`);
//! * the same two (printed only) on 10 M tiny lines (`{}`, 30 MB), where the line index is
//!   the biggest structure and the line lookups dominate the conversions;
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
use transcript_ls::source::position::{self as source, Encoding};
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

/// Best of `runs` timings of converting `offsets` to UTF-16 positions and back, in millions
/// of round trips per second.
fn positions_per_s(text: &str, index: &LineIndex, offsets: &[usize], runs: usize) -> f64 {
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        let mut sum = 0usize;
        for &o in offsets {
            let p = source::offset_to_position(text, index, o, Encoding::Utf16);
            sum += source::position_to_offset(text, index, p, Encoding::Utf16).unwrap_or(0);
        }
        black_box(sum);
        best = best.min(t.elapsed());
    }
    offsets.len() as f64 / 1e6 / best.as_secs_f64()
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
        // A multiplicative step spreads the offsets over the text in no order.
        let offsets: Vec<usize> = (0..200_000usize)
            .map(|i| i.wrapping_mul(2_654_435_761) % text.len().max(1))
            .collect();
        let position_rate = positions_per_s(&text, &index, &offsets, runs);
        let (entries, turns) = read_and_analyze(&text);
        let (records, _) = bare_serde(&text);
        let tiny = "{}\n".repeat(if test_mode { 100_000 } else { 10_000_000 });
        let tiny_index = LineIndex::new(&tiny);
        let tiny_offsets: Vec<usize> = (0..200_000usize)
            .map(|i| i.wrapping_mul(2_654_435_761) % tiny.len())
            .collect();
        let tiny_index_rate = mb_per_s(tiny.len(), runs, || LineIndex::new(&tiny));
        let tiny_position_rate = positions_per_s(&tiny, &tiny_index, &tiny_offsets, runs);
        println!("line index: {index_rate:.0} MB/s");
        println!("positions (UTF-16, offset -> position -> offset): {position_rate:.2} M/s");
        println!(
            "tiny lines ({} lines): line index {tiny_index_rate:.0} MB/s; positions \
             {tiny_position_rate:.2} M/s",
            tiny_index.line_count()
        );
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
