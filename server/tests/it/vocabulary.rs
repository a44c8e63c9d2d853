//! One vocabulary across surfaces (issue 11 item 4): on the corpus's real transcripts (and the
//! project's gate fixtures), the CLI (`render`, `outline`, `stats`), the outline (document
//! symbols, raw and view), fold labels (raw and view), inlay hints and their tooltips, the
//! turn opener's hover, code lenses and `stats --json` say the same numbers with the same words
//! for the same turn:
//!
//! * a turn's comments and tool calls read the same on its hint, tooltip, hover, raw and view
//!   fold labels, outline detail and `stats` line, and equal `stats --json`;
//! * the outline's work runs of a turn add up (in tool calls) to the turn's tool calls, and
//!   so do the work-run fold labels;
//! * no surface counts "steps" (a word that meant two things), none says `0 <noun>`;
//! * `stats` counts the file's model responses as `N responses`, the JSON's `steps`;
//! * a gate's verdict word (`PASS`, `READY-TO-MERGE`) is the same in the lens, the outline,
//!   the view, `stats` and `stats --json`;
//! * a wake-up turn carries the same marker (`⏰`) in the view heading, the outline, both
//!   hints and `stats`;
//! * a turn's finish time in the hint is the local time `stats --json` gives;
//! * the view's summary lists every model `stats --json` lists;
//! * a turn's tok/s figure reads the same in its hint, folds, outline detail and `stats` line.

use crate::common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use common::{jsonl_files, repo_root, shared};
use transcript_ls::analysis::{Options, TurnKind};
use transcript_ls::ide::code_lens;
use transcript_ls::ide::folding::{self, FoldKind};
use transcript_ls::ide::hover;
use transcript_ls::ide::inlay_hints::{self, HintKind};
use transcript_ls::ide::lookup::Lookup;
use transcript_ls::ide::stats;
use transcript_ls::ide::symbols::{self, Symbol, SymbolKind};
use transcript_ls::view::{self, ViewOptions};

const TZ: &str = "America/New_York";

fn files() -> Vec<PathBuf> {
    let mut out = jsonl_files(&shared().join("corpus"));
    assert!(out.len() >= 40, "the corpus is beside the repository");
    out.push(repo_root().join("fixtures/rules/gates.jsonl"));
    out.extend(jsonl_files(&repo_root().join("fixtures/demo")));
    out
}

fn cli(args: &[&str], path: &Path) -> String {
    let mut argv: Vec<OsString> = args.iter().map(OsString::from).collect();
    argv.push(path.as_os_str().to_owned());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = transcript_ls::cli::run(argv, &mut out, &mut err);
    assert_eq!(code, 0, "{args:?} {}", String::from_utf8_lossy(&err));
    String::from_utf8(out).unwrap()
}

/// The numbers written before `noun` (singular or plural) in `s`: `numbers("2 comments · 1
/// comment", "comment")` is `[2, 1]`. A noun not preceded by a number is not counted.
fn numbers(s: &str, noun: &str) -> Vec<u64> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = s[from..].find(noun) {
        let at = from + i;
        from = at + noun.len();
        // Whole word after: `comment`, `comments`, not `commentary`.
        let rest = &s[from..];
        let rest = rest.strip_prefix('s').unwrap_or(rest);
        if rest.chars().next().is_some_and(|c| c.is_alphanumeric()) {
            continue;
        }
        let before = s[..at].strip_suffix(' ').unwrap_or("");
        let digits: String = before
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let lead = &before[..before.len() - digits.len()];
        if !digits.is_empty() && (lead.is_empty() || lead.ends_with([' ', '(', '*', '`'])) {
            out.push(digits.parse().unwrap());
        }
    }
    out
}

/// The count of `noun` in a label of figures: the number written before it (every time the
/// label writes it, the same), 0 when left out (the zero rule) or said `no <noun>s`.
fn count_in(label: &str, noun: &str) -> u64 {
    let n = numbers(label, noun);
    assert!(
        n.windows(2).all(|w| w[0] == w[1]),
        "{label:?} counts {noun} differently"
    );
    n.first().copied().unwrap_or(0)
}

fn flatten(syms: &[Symbol]) -> Vec<&Symbol> {
    let mut out = Vec::new();
    for s in syms {
        out.push(s);
        out.extend(flatten(&s.children));
    }
    out
}

/// Every person-read string must not count steps or write a zero count.
fn check_words(what: &str, s: &str, file: &Path) {
    assert!(
        numbers(s, "step").is_empty(),
        "{}: {what} counts steps (a response or a tool call?): {s:?}",
        file.display()
    );
    for noun in [
        "comment",
        "tool call",
        "response",
        "final answer",
        "replyless turn",
        "gate",
        "compaction",
        "sub-agent call",
    ] {
        assert!(
            !numbers(s, noun).contains(&0),
            "{}: {what} writes a zero count of {noun}s: {s:?}",
            file.display()
        );
    }
}

#[test]
fn surfaces_say_the_same_numbers_with_the_same_words() {
    let mut turns_checked = 0;
    let mut gates_checked = 0;
    let mut wakes_checked = 0;
    let mut runs_checked = 0;
    let mut models_checked = 0;
    let mut tps_checked = 0;
    for file in files() {
        let options = Options {
            time_zone: Some(TZ.to_string()),
            ..Default::default()
        };
        // Files of other agents (Gemini) are not transcripts this server reads.
        let Ok(l) = transcript_ls::cli::load(&file, &options, Some(true)) else {
            continue;
        };
        let (t, a, src) = (&l.transcript, &l.analysis, l.source.as_str());
        let st = stats::stats(file.display().to_string(), t, a);
        let json: serde_json::Value = serde_json::to_value(&st).unwrap();
        let stats_text = cli(&["stats", "--complete", "--time-zone", TZ], &file);
        let outline_text = cli(&["outline", "--complete", "--time-zone", TZ], &file);
        let render_text = cli(
            &[
                "render",
                "--verbose",
                "--complete",
                "--color=never",
                "--no-pager",
                "--width",
                "0",
                "--time-zone",
                TZ,
            ],
            &file,
        );
        let phases = transcript_ls::analysis::default_phases();
        let raw_folds = folding::raw_folds(t, a);
        let raw_syms = symbols::raw_symbols(t, a, src);
        let raw_hints = inlay_hints::raw_hints(t, src, a, Some(TZ));
        let v = view::render(t, a, src, &ViewOptions { verbose: true });
        let view_lines: Vec<&str> = v.text.split('\n').collect();
        let view_folds = folding::view_folds(&v);
        let view_syms = symbols::view_symbols(&v, a);
        let view_hints = inlay_hints::view_hints(&v, a, Some(TZ));
        let lookup = Lookup::new(t, a);
        let lenses = code_lens::lenses(
            a,
            &phases,
            &[],
            |g| a.gates.get(g).map(|g| g.line),
            |_, _| None,
            |_| None,
        );

        // No surface counts steps or writes a zero count.
        for f in raw_folds.iter().chain(&view_folds) {
            check_words("a fold label", &f.label, &file);
        }
        for s in flatten(&raw_syms).into_iter().chain(flatten(&view_syms)) {
            check_words("an outline name", &s.name, &file);
            check_words("an outline detail", &s.detail, &file);
        }
        for h in raw_hints.iter().chain(&view_hints) {
            check_words("a hint", &h.label, &file);
            check_words("a hint's tooltip", &h.tooltip, &file);
        }
        for lens in &lenses {
            check_words("a lens", &lens.title, &file);
        }
        for (what, text) in [
            ("stats", &stats_text),
            ("outline", &outline_text),
            ("render", &render_text),
        ] {
            // The lines the tool writes (`render` also shows the transcript's own text).
            for (i, line) in text.lines().enumerate() {
                let generated = what != "render"
                    || i == 1
                    || ["## ", "🤖 ", "▸ ", "(no reply", "  … "]
                        .iter()
                        .any(|p| line.starts_with(p));
                if generated {
                    check_words(what, line, &file);
                }
            }
        }
        // `stats` counts the model responses as responses, the JSON's `steps`.
        let head = stats_text.lines().nth(2).unwrap_or_default();
        assert_eq!(
            count_in(head, "response"),
            st.steps as u64,
            "{}: stats says {head:?}, JSON steps {}",
            file.display(),
            st.steps
        );
        assert_eq!(json["steps"].as_u64(), Some(st.steps as u64));
        // The view's summary lists every model the responses ran on, as `stats --json` does.
        let summary = render_text.lines().nth(1).unwrap_or_default();
        for m in json["models"].as_array().unwrap() {
            let m = m.as_str().unwrap();
            assert!(
                summary.contains(m),
                "{}: the summary {summary:?} lacks model {m}",
                file.display()
            );
            models_checked += 1;
        }

        // The outline gives each turn (the preamble too) the same detail raw and in the view.
        let details = |syms: &[Symbol]| -> Vec<String> {
            syms.iter()
                .filter(|s| matches!(s.kind, SymbolKind::Turn | SymbolKind::Preamble))
                .map(|s| s.detail.clone())
                .collect()
        };
        assert_eq!(
            details(&raw_syms),
            details(&view_syms),
            "{}: outline details raw vs view",
            file.display()
        );

        // The preamble's figure in `stats` is the outline's (its record count).
        if let Some(pre) = raw_syms.iter().find(|s| s.kind == SymbolKind::Preamble) {
            let line = stats_text
                .lines()
                .find(|l| l.trim_start().starts_with("before the first prompt"))
                .unwrap_or_default();
            assert!(
                line.ends_with(&format!(" · {}", pre.detail)),
                "{}: stats says {line:?}, the outline {:?}",
                file.display(),
                pre.detail
            );
        }

        // The file's tool calls are the main thread's, the sum of its turns'; sub-agents'
        // apart (issue 20 item 5: Copilot and Claude inline sidechains counted both on top).
        let turn_sum: u64 = a.turns.iter().map(|x| x.tool_calls as u64).sum();
        assert_eq!(
            st.tool_calls as u64,
            turn_sum,
            "{}: stats tool_calls {} vs the turns' {turn_sum} (sub-agents' {})",
            file.display(),
            st.tool_calls,
            st.subagent_tool_calls
        );
        assert_eq!(json["tool_calls"].as_u64(), Some(turn_sum));
        // Per turn: the same comments and tool calls everywhere.
        for (ti, turn) in a.turns.iter().enumerate() {
            if turn.kind == TurnKind::Preamble {
                continue;
            }
            let ts = &st.turn_list[ti];
            assert_eq!(ts.n, turn.n);
            let (comments, calls) = (ts.comments as u64, ts.tool_calls as u64);
            let jt = &json["turn_list"][ti];
            assert_eq!(jt["tool_calls"].as_u64(), Some(calls));
            assert_eq!(jt["comments"].as_u64(), Some(comments));
            let mut said: Vec<(&str, String)> = Vec::new();
            let view_hint = view_hints
                .iter()
                .find(|h| {
                    h.kind == HintKind::Turn
                        && v.lines.get(h.line).is_some_and(|l| l.turn == turn.n)
                })
                .unwrap_or_else(|| panic!("{}: turn {} has a view hint", file.display(), turn.n));
            said.push(("view hint", view_hint.label.clone()));
            said.push(("view hint tooltip", view_hint.tooltip.clone()));
            if let Some(h) = raw_hints.iter().find(|h| {
                h.kind == HintKind::Turn && Some(h.line) == turn.opener.map(|e| t.entries[e].line)
            }) {
                said.push(("raw hint tooltip", h.tooltip.clone()));
            }
            if let Some(op) = turn.opener {
                let hv = hover::entry_hover(t, a, &lookup, src, op, None, Some(TZ)).unwrap();
                let tail = hv.split("\n---\n").last().unwrap().to_string();
                said.push(("opener hover", tail));
            }
            let raw_turn_fold = raw_folds
                .iter()
                .find(|f| f.kind == FoldKind::Turn && f.start_line == turn.start_line);
            if let Some(f) = raw_turn_fold {
                said.push(("raw turn fold", f.label.clone()));
            }
            if let Some(f) = view_folds
                .iter()
                .find(|f| f.kind == FoldKind::Turn && f.start_line == view_hint.line)
            {
                said.push(("view turn fold", f.label.clone()));
            }
            let raw_sym = raw_syms
                .iter()
                .find(|s| s.kind == SymbolKind::Turn && s.start_line == turn.start_line)
                .unwrap();
            said.push(("raw outline detail", raw_sym.detail.clone()));
            // (By its heading: a turn a session divider opens starts at the divider.)
            let view_sym = view_syms
                .iter()
                .find(|s| s.kind == SymbolKind::Turn && s.selection_line == view_hint.line)
                .unwrap();
            said.push(("view outline detail", view_sym.detail.clone()));
            let stats_line = stats_text
                .lines()
                .find(|l| l.starts_with(&format!("  turn {}/", turn.n)))
                .unwrap_or_else(|| panic!("{}: stats has turn {}", file.display(), turn.n));
            said.push(("stats line", stats_line.to_string()));
            for (what, s) in &said {
                assert_eq!(
                    (count_in(s, "comment"), count_in(s, "tool call")),
                    (comments, calls),
                    "{}: turn {}: {what} says {s:?}; stats --json: {comments} comments, {calls} tool calls",
                    file.display(),
                    turn.n
                );
            }
            // The same tok/s figure on every surface that shows one (issue 20 item 9: `stats`
            // once rounded the one-decimal JSON value again, 35 where the hint says 34).
            let expect_tps = match &turn.throughput {
                transcript_ls::analysis::Throughput::Measured { tok_per_s, .. } => Some(format!(
                    "{} tok/s",
                    transcript_ls::view::text::fmt_tok_per_s(*tok_per_s)
                )),
                transcript_ls::analysis::Throughput::Estimate { tok_per_s, .. } => Some(format!(
                    "≈{} tok/s",
                    transcript_ls::view::text::fmt_tok_per_s(*tok_per_s)
                )),
                _ => None,
            };
            for (what, s) in &said {
                if !s.contains(" tok/s") || what.contains("tooltip") || what.contains("hover") {
                    continue;
                }
                let expect = expect_tps.as_deref().unwrap_or("(no figure)");
                assert!(
                    s.contains(&format!(" {expect}")),
                    "{}: turn {}: {what} says {s:?}; the turn's figure is {expect}",
                    file.display(),
                    turn.n
                );
                tps_checked += 1;
            }
            // The outline's work runs add up to the turn's tool calls; so do the run folds.
            let run_sum: u64 = raw_sym
                .children
                .iter()
                .filter(|c| c.kind == SymbolKind::WorkRun)
                .map(|c| count_in(&c.detail, "tool call"))
                .sum();
            // Each run's fold (where it has its own) says the run's tool calls.
            for run in &turn.runs {
                if let Some(f) = raw_folds.iter().find(|f| {
                    f.kind == FoldKind::WorkRun
                        && (f.start_line, f.end_line) == (run.start_line, run.end_line)
                }) {
                    assert_eq!(
                        count_in(&f.label, "tool call"),
                        run.tool_calls as u64,
                        "{}: turn {}: run fold {:?}",
                        file.display(),
                        turn.n,
                        f.label
                    );
                }
            }
            let runs_calls: u64 = turn.runs.iter().map(|r| r.tool_calls as u64).sum();
            assert_eq!(
                run_sum,
                runs_calls,
                "{}: turn {}: the outline's runs add up to {run_sum} tool calls, the runs hold {runs_calls}",
                file.display(),
                turn.n
            );
            if runs_calls == calls {
                runs_checked += 1;
            }
            // Wake-ups carry one marker everywhere.
            if turn.kind == TurnKind::Wake {
                let heading = view_lines[view_hint.line];
                let raw_hint = raw_hints
                    .iter()
                    .find(|h| Some(h.line) == turn.opener.map(|e| t.entries[e].line))
                    .map(|h| h.label.clone())
                    .unwrap_or_default();
                for (what, s) in [
                    ("view heading", heading.to_string()),
                    ("outline name", raw_sym.name.clone()),
                    ("view outline name", view_sym.name.clone()),
                    ("view hint", view_hint.label.clone()),
                    ("raw hint", raw_hint),
                    ("stats line", stats_line.to_string()),
                ] {
                    assert!(
                        s.contains(view::words::WAKE_MARK),
                        "{}: turn {}: {what} {s:?} lacks the wake-up marker",
                        file.display(),
                        turn.n
                    );
                }
                wakes_checked += 1;
            }
            // The finish time: local, the same in the hint and the JSON.
            if let Some(at) = &ts.finished_at {
                assert!(view_hint.label.contains(at.as_str()));
                assert!(at.ends_with(" am") || at.ends_with(" pm"), "{at}");
            }
            turns_checked += 1;
        }

        // Gates: one verdict word on every surface.
        for (gi, gate) in a.gates.iter().enumerate() {
            let word = view::words::verdict(gate);
            let lens = lenses
                .iter()
                .find(|l| matches!(l.action, code_lens::LensAction::NextGate { gate, .. } if gate == gi))
                .unwrap();
            let raw_gate = flatten(&raw_syms)
                .into_iter()
                .filter(|s| s.kind == SymbolKind::Gate)
                .nth(gi)
                .unwrap()
                .name
                .clone();
            let view_gate = flatten(&view_syms)
                .into_iter()
                .filter(|s| s.kind == SymbolKind::Gate)
                .nth(gi)
                .unwrap();
            let view_line = view_lines[view_gate.start_line];
            let ti = a.turns.iter().position(|t| t.n == gate.turn).unwrap();
            let k = a.turns[ti].gates.iter().position(|&g| g == gi).unwrap();
            let stats_line = stats_text
                .lines()
                .find(|l| l.starts_with(&format!("  turn {}/", gate.turn)))
                .unwrap();
            let json_word = json["turn_list"][ti]["gates"][k]["verdict_text"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            for (what, s) in [
                ("lens", lens.title.clone()),
                ("raw outline", raw_gate),
                ("view outline", view_gate.name.clone()),
                ("view line", view_line.to_string()),
                ("stats line", stats_line.to_string()),
                ("stats --json verdict_text", json_word),
            ] {
                assert!(
                    s.contains(word.as_str()),
                    "{}: gate {gi}: {what} {s:?} lacks the verdict {word:?}",
                    file.display()
                );
            }
            gates_checked += 1;
        }
    }
    eprintln!(
        "vocabulary: {turns_checked} turns, {runs_checked} with runs adding up to the turn, \
         {gates_checked} gates, {wakes_checked} wake-ups, {models_checked} models, {tps_checked} tok/s figures"
    );
    assert!(tps_checked > 50, "{tps_checked}");
    assert!(models_checked > 40, "{models_checked}");
    assert!(turns_checked > 100, "{turns_checked}");
    assert!(gates_checked >= 5, "{gates_checked}");
    assert!(wakes_checked >= 5, "{wakes_checked}");
}

/// One rule for a turn's state (issue 20 item 9): read as still being written (a session copied
/// a second ago), every surface says the same of each turn: `stats --json` `in-flight`, the
/// `stats` line, the outline detail (raw and view), the turn's hint and the `outline` CLI say
/// `in flight` exactly for the in-flight turns; an in-flight turn's answer is named `Answer so
/// far (in flight)` in both outlines and the verbose view (never `Final answer`), and the quiet
/// view holds it back behind `… working` (seed 000).
#[test]
fn an_in_flight_turn_reads_in_flight_on_every_surface() {
    let mut in_flight = 0;
    let mut answers_so_far = 0;
    for file in files() {
        let options = Options {
            time_zone: Some(TZ.to_string()),
            ..Default::default()
        };
        let Ok(l) = transcript_ls::cli::load(&file, &options, Some(false)) else {
            continue;
        };
        let (t, a, src) = (&l.transcript, &l.analysis, l.source.as_str());
        let st = stats::stats(file.display().to_string(), t, a);
        let json: serde_json::Value = serde_json::to_value(&st).unwrap();
        let stats_text = cli(&["stats", "--growing", "--time-zone", TZ], &file);
        let outline_text = cli(&["outline", "--growing", "--time-zone", TZ], &file);
        let quiet_text = cli(
            &[
                "render",
                "--growing",
                "--color=never",
                "--no-pager",
                "--width",
                "0",
            ],
            &file,
        );
        let raw_syms = symbols::raw_symbols(t, a, src);
        let raw_hints = inlay_hints::raw_hints(t, src, a, Some(TZ));
        let v = view::render(t, a, src, &ViewOptions { verbose: true });
        let view_syms = symbols::view_symbols(&v, a);
        for (ti, turn) in a.turns.iter().enumerate() {
            if turn.kind == TurnKind::Preamble {
                continue;
            }
            let fly = turn.state == transcript_ls::analysis::TurnState::InFlight;
            let says = |s: &str| s.contains(view::words::IN_FLIGHT);
            let at = format!("{}: turn {}", file.display(), turn.n);
            assert_eq!(
                json["turn_list"][ti]["state"] == "in-flight",
                fly,
                "{at}: stats --json"
            );
            let stats_line = stats_text
                .lines()
                .find(|l| l.starts_with(&format!("  turn {}/", turn.n)))
                .unwrap();
            assert_eq!(
                stats_line.ends_with("in-flight"),
                fly,
                "{at}: {stats_line:?}"
            );
            let raw_sym = raw_syms
                .iter()
                .find(|s| s.kind == SymbolKind::Turn && s.start_line == turn.start_line)
                .unwrap();
            assert_eq!(
                says(&raw_sym.detail),
                fly,
                "{at}: outline {:?}",
                raw_sym.detail
            );
            let outline_line = outline_text
                .lines()
                .find(|l| l.contains(&format!("turn {}/", turn.n)))
                .unwrap();
            assert_eq!(says(outline_line), fly, "{at}: {outline_line:?}");
            if let Some(opener) = turn.opener {
                let line = t.entries[opener].line;
                let hinted = raw_hints.iter().any(|h| h.line == line && says(&h.label));
                assert_eq!(hinted, fly, "{at}: raw hints of line {line}");
            }
            let name = view::words::answer_name(turn.state);
            let answers: Vec<&str> = flatten(&raw_sym.children)
                .into_iter()
                .filter(|s| s.kind == SymbolKind::FinalAnswer)
                .map(|s| s.name.as_str())
                .collect();
            assert_eq!(
                answers,
                turn.final_answer
                    .iter()
                    .map(|_| name.as_str())
                    .collect::<Vec<_>>(),
                "{at}: the outline's answer"
            );
            if fly {
                in_flight += 1;
                if turn.final_answer.is_some() {
                    answers_so_far += 1;
                    assert!(
                        v.text.contains("**Answer so far** (in flight)"),
                        "{at}: verbose view"
                    );
                    assert!(
                        flatten(&view_syms)
                            .iter()
                            .any(|s| s.kind == SymbolKind::FinalAnswer && s.name == name),
                        "{at}: the view outline's answer"
                    );
                }
                let tail = quiet_text.rsplit("## Turn ").next().unwrap_or("");
                assert!(tail.contains("… working"), "{at}: quiet view {tail:?}");
                assert!(
                    !tail.contains("**Answer**"),
                    "{at}: quiet view shows the answer"
                );
            }
        }
        for s in flatten(&view_syms) {
            if s.kind == SymbolKind::FinalAnswer {
                assert!(
                    s.name == "Final answer" || s.name == "Answer so far (in flight)",
                    "{}: view outline {:?}",
                    file.display(),
                    s.name
                );
            }
        }
    }
    eprintln!("in flight: {in_flight} turns, {answers_so_far} with an answer so far");
    assert!(in_flight >= 10, "{in_flight}");
    assert!(answers_so_far >= 5, "{answers_so_far}");
}
