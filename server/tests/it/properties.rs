//! Property tests over reader + analysis + view (issue 8): arbitrary mutations of real corpus
//! lines never panic, every non-blank line ends up a record or a problem, and feeding a source
//! in growing pieces reads the same as reading it whole. Bounded: a fixed number of cases of a
//! few dozen lines each.

use crate::common;

use proptest::prelude::*;
use transcript_ls::analysis;
use transcript_ls::formats::{self, Reader};
use transcript_ls::view::{self, ViewOptions};

/// Lines of real transcripts, at most 40 per file and 2048 bytes per line.
fn corpus_lines() -> Vec<String> {
    common::corpus_lines(40, 2048)
}

/// One way to damage a line.
#[derive(Debug, Clone)]
enum Mutation {
    Keep,
    /// Cut at this fraction of the line.
    Truncate(f64),
    /// Insert this text at this fraction.
    Insert(f64, String),
    /// Remove this fraction's byte range.
    Delete(f64, f64),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let nasty = prop_oneof![
        Just("\u{2028}".to_string()),
        Just("\u{202E}".to_string()),
        Just("\u{FEFF}".to_string()),
        Just("\r".to_string()),
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just("\\u".to_string()),
        Just("}".to_string()),
        Just("\u{0}".to_string()),
        Just("😀".to_string()),
        "[ -~]{1,8}",
    ];
    prop_oneof![
        3 => Just(Mutation::Keep),
        1 => (0.0..1.0).prop_map(Mutation::Truncate),
        2 => (0.0..1.0, nasty).prop_map(|(at, s)| Mutation::Insert(at, s)),
        1 => (0.0..1.0, 0.0..0.2).prop_map(|(a, n)| Mutation::Delete(a, n)),
    ]
}

fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(line: &str, m: &Mutation) -> String {
    let at = |f: f64| floor(line, (line.len() as f64 * f) as usize);
    match m {
        Mutation::Keep => line.to_string(),
        Mutation::Truncate(f) => line[..at(*f)].to_string(),
        Mutation::Insert(f, s) => format!("{}{s}{}", &line[..at(*f)], &line[at(*f)..]),
        Mutation::Delete(f, n) => {
            let a = at(*f);
            let b = at((*f + *n).min(1.0)).max(a);
            format!("{}{}", &line[..a], &line[b..])
        }
    }
}

fn source() -> impl Strategy<Value = String> {
    let lines = corpus_lines();
    let n = lines.len();
    (
        proptest::collection::vec((0..n, mutation()), 1..30),
        any::<bool>(),
        0usize..3,
    )
        .prop_map(move |(picks, final_newline, blanks)| {
            let mut text = String::new();
            for (k, (i, m)) in picks.iter().enumerate() {
                if k > 0 {
                    text.push('\n');
                }
                if k == 1 {
                    text.push_str(&"\n".repeat(blanks));
                }
                text.push_str(&apply(&lines[*i], m));
            }
            if final_newline {
                text.push('\n');
            }
            text
        })
}

fn read_complete(text: &str) -> transcript_ls::model::Transcript {
    let mut r = Reader::new();
    r.feed(text);
    r.finish(text);
    r.into_transcript()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Reading, analysing and rendering (quiet and verbose) never panic; every non-blank
    /// line of a complete source is an entry, in a run of bare records, or carries a problem.
    #[test]
    fn every_line_is_a_record_or_a_problem(text in source()) {
        let t = read_complete(&text);
        let a = analysis::analyze(&t, &text, &analysis::Options::default());
        for verbose in [false, true] {
            let v = view::render(&t, &a, &text, &ViewOptions { verbose });
            prop_assert!(!v.text.contains('\u{202E}'), "a bidi override reached the view");
        }
        let mut covered = std::collections::HashSet::new();
        covered.extend(t.entries.iter().map(|e| e.line));
        covered.extend(t.problems.iter().map(|p| p.line));
        // A run of bare records is one entry for all its lines (issue 25 item 8).
        covered.extend(t.runs.iter().flat_map(|r| r.line..=r.last_line));
        // Records are split on `\n`; line numbers are the editor's, where a lone `\r` inside
        // a record's line ends a line too (LSP 3.17; issue 25).
        let mut i = 0;
        for line in text.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if !line.trim().is_empty() {
                prop_assert!(covered.contains(&i), "line {i} {line:?} is neither a record nor a problem");
            }
            i += 1 + line.matches('\r').count();
        }
    }

    /// Feeding growing prefixes, then finishing, equals reading the whole source at once.
    #[test]
    fn incremental_feeding_equals_a_whole_read(text in source(), cuts in proptest::collection::vec(0.0f64..1.0, 0..6)) {
        let whole = read_complete(&text);
        let mut cuts: Vec<usize> = cuts.iter().map(|f| floor(&text, (text.len() as f64 * f) as usize)).collect();
        cuts.sort_unstable();
        let mut r = Reader::new();
        for c in cuts {
            r.feed(&text[..c]);
        }
        r.feed(&text);
        r.finish(&text);
        let inc = r.into_transcript();
        prop_assert_eq!(&inc.entries, &whole.entries);
        prop_assert_eq!(&inc.problems, &whole.problems);
        prop_assert_eq!(&inc.runs, &whole.runs);
        prop_assert_eq!(inc.format, whole.format);
        prop_assert_eq!(inc.line_count, whole.line_count);
        let _ = formats::read(&text);
    }
}

/// Issue 25 item 8: in every format of the corpus, `{}` lines in a row after a file's real
/// records are one entry (`source::room` counts a `{}` line that repeats the one before as a
/// line of a run, not as a record: that is only safe while every reader joins them), and
/// every record is still counted.
#[test]
fn repeated_empty_objects_are_one_entry_in_every_format() {
    let mut formats = std::collections::BTreeSet::new();
    for f in common::jsonl_files(&common::shared().join("corpus")) {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let head: String = text.lines().take(20).map(|l| format!("{l}\n")).collect();
        let plain = formats::read(&head);
        if !plain.format().is_known() {
            continue; // no record of a known format in its first 20 lines
        }
        let with = formats::read(&format!("{head}{}", "{}\n".repeat(50)));
        assert_eq!(with.format, plain.format, "{}", f.display());
        assert_eq!(
            with.entries.len(),
            plain.entries.len() + 1,
            "{}: 50 `{{}}` lines after 20 records",
            f.display()
        );
        assert_eq!(
            with.records_in(0..with.entries.len()),
            plain.records_in(0..plain.entries.len()) + 50
        );
        formats.insert(format!("{:?}", with.format()));
    }
    assert!(formats.len() >= 8, "formats seen: {formats:?}");
}
