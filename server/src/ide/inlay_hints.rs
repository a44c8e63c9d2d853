//! Inlay hints (DESIGN.md §5, §5b): per turn, on the view's turn heading, `turn 3/12 · 4 comments
//! · 6 tool calls · 2m 25s · ≈41 tok/s · 07:28 am`, with a tooltip saying how each figure was
//! computed (seed 002 for tok/s and the finish time). On the raw `.jsonl`, where a JSON line runs
//! far past the window, the turn hint sits at the *start* of the turn's opening line, where it
//! is visible: `▸ Turn 3/12 · Fix the failing test` (issue 7), its tooltip giving the figures;
//! the first words of each final answer at the start of its first line, and per model response,
//! at the start of the last row of its `message.id` group, its usage (case 10: never on every
//! row, never summed; issue 23 item 8: at the line start, not thousands of columns to the
//! right). Plain data; positions are line starts or line ends.

use crate::analysis::{Analysis, DurationSource, Throughput, Turn, TurnKind, TurnState};
use crate::model::{Transcript, Usage};
use crate::view::{View, text, words};

/// What a hint describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum HintKind {
    /// Per-turn figures.
    Turn,
    /// The first words of a turn's final answer (raw file, issue 23 item 8).
    Answer,
    /// Usage of one model response.
    Usage,
}

impl HintKind {
    /// Order of hints on one line: the turn's, then the answer's, then the usage.
    fn rank(self) -> u8 {
        match self {
            HintKind::Turn => 0,
            HintKind::Answer => 1,
            HintKind::Usage => 2,
        }
    }
}

/// Where on its line a hint is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum HintPosition {
    /// Before the first character (raw turn hints).
    LineStart,
    /// After the last character.
    LineEnd,
}

/// One hint, shown at the start or end of `line` (0-based).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Hint {
    pub line: usize,
    pub position: HintPosition,
    pub kind: HintKind,
    pub label: String,
    /// Markdown: how each figure was computed.
    pub tooltip: String,
}

/// The turn hint label in DESIGN.md §5's shape: `turn 3/12 · 4 comments · 6 tool calls ·
/// 2m 25s · ≈41 tok/s · 07:28 am`: the turn's activity in the words of the activity fold
/// ([`words::activity`]: a zero count left out, `no activity` when both are zero), duration,
/// tok/s and finish time formatted as the view formats them, each left out when unknown
/// (never a wrong figure, seed 002), then `in flight` / `no reply` when so. A wake-up turn is
/// `turn 4/12 ⏰ wake-up`.
pub fn turn_label(turn: &Turn, total: usize) -> String {
    let mut parts = vec![match turn.kind {
        TurnKind::Preamble => "before the first prompt".to_string(),
        TurnKind::Wake => format!("turn {}/{} {}", turn.n, total, words::WAKE_UP),
        TurnKind::Prompt => format!("turn {}/{}", turn.n, total),
        TurnKind::SubagentTask => format!("turn {}/{} (sub-agent task)", turn.n, total),
    }];
    parts.push(words::activity(turn.comments, turn.tool_calls));
    if let Some(d) = &turn.duration {
        parts.push(text::fmt_duration(d.ms));
    }
    match &turn.throughput {
        Throughput::Measured { tok_per_s, .. } => {
            parts.push(format!("{} tok/s", text::fmt_tok_per_s(*tok_per_s)))
        }
        Throughput::Estimate { tok_per_s, .. } => {
            parts.push(format!("≈{} tok/s", text::fmt_tok_per_s(*tok_per_s)))
        }
        Throughput::None { .. } => {}
    }
    if let Some(t) = &turn.finished_at {
        parts.push(t.clone());
    }
    match turn.state {
        TurnState::InFlight => parts.push(words::IN_FLIGHT.to_string()),
        TurnState::Replyless => parts.push("no reply".to_string()),
        TurnState::Complete => {}
    }
    parts.join(" · ")
}

/// The raw file's turn hint (issue 7): `▸ Turn 3/12 · Fix the failing test`, `▸ Turn 4/12 ·
/// ⏰ background task finished` (a wake-up's marker, [`words::wake`]); just `▸ Turn 3/12`
/// when the turn has no title (`▸ Turn 4/12 · ⏰ wake-up`); ` · in flight` at the end while
/// the agent is still working on it.
pub fn raw_turn_label(turn: &Turn, total: usize) -> String {
    let mut s = format!("▸ Turn {}/{}", turn.n, total);
    if turn.kind == TurnKind::Wake {
        s.push_str(" · ");
        s.push_str(&if turn.title.is_empty() {
            words::WAKE_UP.to_string()
        } else {
            words::wake(&turn.title)
        });
    } else if !turn.title.is_empty() {
        s.push_str(" · ");
        s.push_str(&turn.title);
    }
    if turn.state == TurnState::InFlight {
        s.push_str(" · ");
        s.push_str(words::IN_FLIGHT);
    }
    s
}

/// `label` with the turn's recorded credits after its figures (`… · 12s · 0.25 credits`),
/// when the agent records them ([`Analysis::credits_of`], Kiro CLI); `label` unchanged
/// otherwise. The credits go before `in flight` / `no reply`.
pub fn with_credits(label: String, analysis: &Analysis, turn: &Turn) -> String {
    let Some(c) = analysis.credits_of(turn.n) else {
        return label;
    };
    let credits = format!("{} credits", fmt_credits(c));
    for tail in [" · in flight", " · no reply"] {
        if let Some(head) = label.strip_suffix(tail) {
            return format!("{head} · {credits}{tail}");
        }
    }
    format!("{label} · {credits}")
}

/// The tooltip line of a turn's recorded credits (empty when none).
pub fn credits_tooltip(analysis: &Analysis, turn: &Turn) -> String {
    analysis.credits_of(turn.n).map_or_else(String::new, |c| {
        format!(
            "- **{} credits**: metered by the agent for this turn (Kiro's sidecar \
             `metering_usage`).\n",
            fmt_credits(c)
        )
    })
}

/// Credits with at most 3 decimals, trailing zeros dropped: `0.25`, `1`, `0.333`.
fn fmt_credits(c: f64) -> String {
    let s = format!("{c:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Markdown tooltip explaining each figure of [`turn_label`].
pub fn turn_tooltip(turn: &Turn, total: usize, time_zone: Option<&str>) -> String {
    let mut s = String::new();
    match turn.kind {
        TurnKind::Preamble => s.push_str("**Preamble**: records before the first prompt.\n\n"),
        TurnKind::Wake => s.push_str(&format!(
            "**Turn {} of {}**, opened by a machine wake-up (background task or recovery), \
             not a human prompt.\n\n",
            turn.n, total
        )),
        TurnKind::Prompt => s.push_str(&format!(
            "**Turn {} of {}** (turns open at real human prompts or machine wake-ups; \
             compaction never renumbers).\n\n",
            turn.n, total
        )),
        TurnKind::SubagentTask => s.push_str(&format!(
            "**Turn {} of {}**, opened by the task the parent agent gave this sub-agent, \
             not a human prompt.\n\n",
            turn.n, total
        )),
    }
    s.push_str(&format!(
        "- **{}**: agent prose outside the final answer.\n",
        words::count_or_none(turn.comments.into(), words::COMMENT)
    ));
    s.push_str(&format!(
        "- **{}**: tool calls of the main thread (sub-agent calls count once).\n",
        words::count_or_none(turn.tool_calls.into(), words::TOOL_CALL)
    ));
    match &turn.duration {
        Some(d) => {
            let how = match d.source {
                DurationSource::Recorded => {
                    "recorded by the agent (`system/turn_duration` / `task_complete.duration_ms` / \
                     Kiro's `turn_duration`)"
                }
                DurationSource::Timestamps => "last agent record's timestamp minus the prompt's",
            };
            s.push_str(&format!(
                "- **{}** ({} ms): {how}.\n",
                text::fmt_duration(d.ms),
                d.ms
            ));
        }
        None => s.push_str("- duration: unknown (no timestamps).\n"),
    }
    match &turn.throughput {
        Throughput::Measured {
            tok_per_s,
            tokens,
            decode_ms,
        } => s.push_str(&format!(
            "- **{} tok/s**: {} output tokens / {:.1} s measured decode time (duration \
             minus time to first token, tool execution excluded), summed over the turn's \
             output-bearing responses; never an average of per-response rates.\n",
            text::fmt_tok_per_s(*tok_per_s),
            tokens,
            *decode_ms as f64 / 1000.0
        )),
        Throughput::Estimate {
            tok_per_s,
            tokens,
            decode_ms,
        } => s.push_str(&format!(
            "- **≈{} tok/s** (estimate): {} output tokens / {:.1} s decode time, summed \
             over the turn's output-bearing responses. Only row timestamps exist, so each response's \
             decode time is its last record minus its request time (the prompt or the last \
             tool result); it includes time to first token, so the true rate is higher.\n",
            text::fmt_tok_per_s(*tok_per_s),
            tokens,
            *decode_ms as f64 / 1000.0
        )),
        Throughput::None { reason } => s.push_str(&format!(
            "- no tok/s figure: {reason} (none rather than a wrong one).\n"
        )),
    }
    if let Some(t) = &turn.finished_at {
        let zone = time_zone.unwrap_or("the system time zone");
        let at = turn
            .finished_at_ms
            .and_then(|ms| crate::analysis::clock::date_time_label(ms, time_zone))
            .map(|ts| format!(" ({ts})"))
            .unwrap_or_default();
        s.push_str(&format!(
            "- **{t}**: the last response's timestamp{at}, as a 12-hour clock in {zone}.\n"
        ));
    }
    match turn.state {
        TurnState::InFlight => s.push_str(
            "- **in flight**: the last turn of a file still being written, with no completion \
             evidence yet.\n",
        ),
        TurnState::Replyless => s.push_str(
            "- **no reply**: the turn ended on a tool call or was cut off; it has no final \
             answer.\n",
        ),
        TurnState::Complete => {}
    }
    if turn.usage != Usage::default() {
        s.push_str(&format!(
            "- tokens: {} (each response counted once: the maximum of its repeated usage \
             rows, never their sum).\n",
            usage_label(&turn.usage, true)
        ));
    } else if !turn.steps.is_empty() {
        // Only figures the file records (issue 21 item 6: Kiro CLI, Mistral Vibe).
        s.push_str("- tokens: not recorded in the file.\n");
    }
    s
}

/// `in 3 · cache write 1.2k · cache read 8k · out 540` (output as `out ?` when it is a
/// streaming placeholder). Counts keep one decimal up to 100k (`21.4k`): a response's usage is
/// read number by number, unlike the rounded totals of the view.
pub fn usage_label(u: &Usage, output_final: bool) -> String {
    let mut parts = vec![format!("in {}", tokens(u.input))];
    if u.cache_creation > 0 {
        parts.push(format!("cache write {}", tokens(u.cache_creation)));
    }
    if u.cache_read > 0 {
        parts.push(format!("cache read {}", tokens(u.cache_read)));
    }
    if output_final {
        parts.push(format!("out {}", tokens(u.output)));
    } else {
        parts.push("out ?".to_string());
    }
    parts.join(" · ")
}

/// `950`, `1.2k`, `17.2k`, `155k`, `1.5M`.
fn tokens(n: u64) -> String {
    let s = if n < 1000 {
        return n.to_string();
    } else if n < 100_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else if n < 1_000_000 {
        format!("{}k", (n as f64 / 1000.0).round() as u64)
    } else {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    };
    s.replace(".0k", "k").replace(".0M", "M")
}

/// Hints of the raw `.jsonl`, each at the *start* of its line, where the eye is (issue 23 item
/// 8: on long JSON lines a hint at the line end sat thousands of columns to the right): a turn
/// hint ([`raw_turn_label`]) on each opener line, its tooltip the figures ([`turn_label`]) and
/// how they were computed; an answer hint ([`raw_answer_label`]) on the first line of each final
/// answer; a usage hint on the last row of each model response.
pub fn raw_hints(
    transcript: &Transcript,
    source: &str,
    analysis: &Analysis,
    time_zone: Option<&str>,
) -> Vec<Hint> {
    raw_hints_in(transcript, source, analysis, time_zone, 0..=usize::MAX)
}

/// The raw file's answer hint (issue 23 item 8): `✔ Answer · Fixed. Two problems combined…`,
/// the answer's first words as the outline's detail gives them ([`crate::view::answer_gist`],
/// at most 60 characters); `… Answer so far` while the turn is in flight; just `✔ Answer` when
/// the answer has no words to show.
pub fn raw_answer_label(turn: &Turn, gist: &str) -> String {
    let head = if turn.state == TurnState::InFlight {
        "… Answer so far"
    } else {
        "✔ Answer"
    };
    if gist.is_empty() {
        head.to_string()
    } else {
        format!("{head} · {gist}")
    }
}

/// [`raw_hints`] on `lines` only (0-based, inclusive): labels and tooltips are made only for
/// the hints there, so a request for one screen of a big transcript costs what the screen
/// shows (issue 12, item 4), not the whole file.
pub fn raw_hints_in(
    transcript: &Transcript,
    source: &str,
    analysis: &Analysis,
    time_zone: Option<&str>,
    lines: std::ops::RangeInclusive<usize>,
) -> Vec<Hint> {
    let mut out = Vec::new();
    let total = analysis.turn_count;
    for turn in &analysis.turns {
        let Some(fa) = &turn.final_answer else {
            continue;
        };
        let Some(first) = fa.blocks.first().and_then(|b| transcript.entries.get(b.0)) else {
            continue;
        };
        if !lines.contains(&first.line) {
            continue;
        }
        out.push(Hint {
            line: first.line,
            position: HintPosition::LineStart,
            kind: HintKind::Answer,
            label: raw_answer_label(turn, &crate::view::answer_gist(transcript, source, fa)),
            tooltip: format!(
                "The final answer of turn {} of {} (seed 000: the unbroken trailing run of the \
                 agent's prose), its first words. The whole text is in the JSON on this line \
                 and the next ones of the answer; the view (Open Transcript View) shows it in \
                 full.",
                turn.n, total
            ),
        });
    }
    for turn in &analysis.turns {
        let Some(opener) = turn.opener.and_then(|e| transcript.entries.get(e)) else {
            continue;
        };
        if !lines.contains(&opener.line) {
            continue;
        }
        out.push(Hint {
            line: opener.line,
            position: HintPosition::LineStart,
            kind: HintKind::Turn,
            label: raw_turn_label(turn, total),
            tooltip: format!(
                "`{}`\n\n{}{}",
                with_credits(turn_label(turn, total), analysis, turn),
                turn_tooltip(turn, total, time_zone),
                credits_tooltip(analysis, turn)
            ),
        });
    }
    for step in &analysis.steps {
        if step.usage == Usage::default() {
            continue;
        }
        let Some(last) = step.entries.last().and_then(|&e| transcript.entries.get(e)) else {
            continue;
        };
        if !lines.contains(&last.line) {
            continue;
        }
        let rows = step.entries.len();
        let mut tooltip = format!(
            "Usage of this model response ({}), taken once: the component-wise maximum of \
             the usage its rows repeat, never their sum.\n\n- input: {}\n- cache \
             write: {}\n- cache read: {}\n- output: {}",
            text::plural(rows as u64, "row", "rows"),
            step.usage.input,
            step.usage.cache_creation,
            step.usage.cache_read,
            step.usage.output
        );
        if !step.output_final {
            tooltip.push_str(
                " (a streaming placeholder written by this Claude Code version, not the final \
                 count)",
            );
        }
        out.push(Hint {
            line: last.line,
            position: HintPosition::LineStart,
            kind: HintKind::Usage,
            label: usage_label(&step.usage, step.output_final),
            tooltip,
        });
    }
    out.sort_by_key(|h| (h.line, h.kind.rank()));
    out
}

/// Hints of the view: the turn hint on each turn heading (the view's anchors without a child).
pub fn view_hints(view: &View, analysis: &Analysis, time_zone: Option<&str>) -> Vec<Hint> {
    view_hints_in(view, analysis, time_zone, 0..=usize::MAX)
}

/// [`view_hints`] on view `lines` only (0-based, inclusive; see [`raw_hints_in`]).
pub fn view_hints_in(
    view: &View,
    analysis: &Analysis,
    time_zone: Option<&str>,
    lines: std::ops::RangeInclusive<usize>,
) -> Vec<Hint> {
    let total = analysis.turn_count;
    let mut out = Vec::new();
    for a in view
        .anchors
        .iter()
        .filter(|a| a.child.is_none() && lines.contains(&a.line))
    {
        let Some(turn) = analysis.turns.iter().find(|t| t.n == a.turn) else {
            continue;
        };
        if turn.kind == TurnKind::Preamble {
            continue;
        }
        out.push(Hint {
            line: a.line,
            position: HintPosition::LineEnd,
            kind: HintKind::Turn,
            label: with_credits(turn_label(turn, total), analysis, turn),
            tooltip: format!(
                "{}{}",
                turn_tooltip(turn, total, time_zone),
                credits_tooltip(analysis, turn)
            ),
        });
    }
    out.sort_by_key(|h| h.line);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 12: hints made for a range are exactly the whole document's hints on that range.
    #[test]
    fn hints_of_a_range_are_the_whole_documents_on_that_range() {
        let text = crate::testing::synth_claude_transcript(1_500_000, 11);
        let t = crate::formats::read(&text);
        let a = crate::analysis::analyze(&t, &text, &crate::analysis::Options::default());
        let all = raw_hints(&t, &text, &a, Some("UTC"));
        assert!(all.len() >= 10, "{} hints", all.len());
        let view = crate::view::render(&t, &a, &text, &crate::view::ViewOptions::default());
        let all_view = view_hints(&view, &a, Some("UTC"));
        assert!(all_view.len() >= 3, "{} view hints", all_view.len());
        for (lo, hi) in [
            (0, 0),
            (0, 40),
            (17, 230),
            (all[7].line, all[7].line),
            (5, 1 << 30),
        ] {
            let want: Vec<&Hint> = all.iter().filter(|h| (lo..=hi).contains(&h.line)).collect();
            let got = raw_hints_in(&t, &text, &a, Some("UTC"), lo..=hi);
            assert_eq!(got.iter().collect::<Vec<_>>(), want, "raw {lo}..={hi}");
            let want: Vec<&Hint> = all_view
                .iter()
                .filter(|h| (lo..=hi).contains(&h.line))
                .collect();
            let got = view_hints_in(&view, &a, Some("UTC"), lo..=hi);
            assert_eq!(got.iter().collect::<Vec<_>>(), want, "view {lo}..={hi}");
        }
    }

    #[test]
    fn token_counts() {
        let got: Vec<String> = [950, 1000, 1234, 17_200, 99_960, 155_000, 1_500_000]
            .iter()
            .map(|&n| tokens(n))
            .collect();
        assert_eq!(got, ["950", "1k", "1.2k", "17.2k", "100k", "155k", "1.5M"]);
    }

    #[test]
    fn usage_labels() {
        let u = Usage {
            input: 8,
            output: 660,
            cache_creation: 1500,
            cache_read: 17200,
            reasoning: 0,
        };
        assert_eq!(
            usage_label(&u, true),
            "in 8 · cache write 1.5k · cache read 17.2k · out 660"
        );
        assert_eq!(
            usage_label(&u, false),
            "in 8 · cache write 1.5k · cache read 17.2k · out ?"
        );
    }
}
