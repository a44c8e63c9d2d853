//! The one vocabulary every surface speaks (issue 11 item 4): the view, `transcript-ls
//! render|outline|stats`, the outline (document symbols), fold labels, inlay hints, hovers,
//! code lenses and `transcript/stats` / `stats --json` take their words from here, so the same
//! fact reads the same everywhere.
//!
//! The decisions:
//!
//! * **Nouns.** A *response* is one model response (DESIGN.md §3's step: the records of one
//!   `message.id`); a *tool call* is one `tool_use` block; a *comment* is agent prose outside
//!   the final answer (seed 000); a *record* is one JSONL line. The word "step" is not shown
//!   to people (it meant a response in `stats` and a tool call in `Worked · N steps`), except
//!   for the steps of a Codex plan (`update_plan`), which are the agent's own; the JSON field
//!   `steps` keeps its name and means responses (PROTOCOL.md).
//! * **Counts.** `1 tool call`, `2 tool calls` ([`count`]). A zero count is left out of a
//!   list of figures, never written `0 comments` (seed 000); a list left empty says what is
//!   missing (`no activity`, [`activity`]).
//! * **Work runs** (seed 003) are labelled by their tool calls: `Worked · 3 tool calls`
//!   ([`WORKED`]), `Thought` for thinking only.
//! * **Gate verdicts** (seed 000) are shown as the agent wrote them (`PASS`, `READY-TO-MERGE`,
//!   `NOT-READY`) on every surface ([`verdict`]); where the surface has room the kind follows
//!   ([`verdict_with_kind`]: `🏷 READY-TO-MERGE · branch tagged`). `stats --json` keeps the
//!   kind (`done` | `needs-you` | `tagged` | `blocked`) as `verdict` and the word as
//!   `verdict_text`.
//! * **Wake-ups** (seed 000's machine turn openers) carry [`WAKE_MARK`] before their label
//!   (`⏰ background task finished`), or [`WAKE_UP`] where no label is shown.
//! * **Times** a person reads are local, in the `timeZone` setting: a 12-hour clock for a
//!   finish time (`07:28 am`, seed 002), a date and time for a record (`12 May 2026, 07:48:05
//!   pm`), a span for a session (`crate::analysis::clock`); never a UTC ISO stamp.

/// A countable noun: its singular and plural.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Noun {
    pub one: &'static str,
    pub many: &'static str,
}

/// One model response (DESIGN.md §3 "step").
pub const RESPONSE: Noun = Noun {
    one: "response",
    many: "responses",
};
/// One `tool_use` block (a sub-agent call counts once in its parent).
pub const TOOL_CALL: Noun = Noun {
    one: "tool call",
    many: "tool calls",
};
/// Agent prose outside the final answer (seed 000).
pub const COMMENT: Noun = Noun {
    one: "comment",
    many: "comments",
};
/// A turn (opened by a prompt or a wake-up).
pub const TURN: Noun = Noun {
    one: "turn",
    many: "turns",
};
/// One JSONL record.
pub const RECORD: Noun = Noun {
    one: "record",
    many: "records",
};
/// One physical line of a file.
pub const LINE: Noun = Noun {
    one: "line",
    many: "lines",
};
/// One item of a work run as the view lists it (a tool call with its result, a thought).
pub const ITEM: Noun = Noun {
    one: "item",
    many: "items",
};
/// A turn's final answer (seed 000).
pub const FINAL_ANSWER: Noun = Noun {
    one: "final answer",
    many: "final answers",
};
/// A turn that ended with no answer (seed 000).
pub const REPLYLESS_TURN: Noun = Noun {
    one: "replyless turn",
    many: "replyless turns",
};
/// A dev-pipeline gate line (seed 000).
pub const GATE: Noun = Noun {
    one: "gate",
    many: "gates",
};
/// A compaction divider.
pub const COMPACTION: Noun = Noun {
    one: "compaction",
    many: "compactions",
};
/// A tool call a sub-agent made (inline sidechain records): counted apart from the main
/// thread's (issue 20 item 5).
pub const SUBAGENT_TOOL_CALL: Noun = Noun {
    one: "sub-agent tool call",
    many: "sub-agent tool calls",
};
/// A call that spawned a sub-agent.
pub const SUBAGENT_CALL: Noun = Noun {
    one: "sub-agent call",
    many: "sub-agent calls",
};

/// `1 tool call` / `3 tool calls` / `0 tool calls` (where zero cannot occur; a count that
/// may be zero is [`count_or_none`], a list of figures [`counts`], which leaves zeros out).
pub fn count(n: u64, noun: Noun) -> String {
    if n == 1 {
        format!("1 {}", noun.one)
    } else {
        format!("{n} {}", noun.many)
    }
}

/// A count standing alone that may be zero: `no comments`, `1 comment`, `4 comments` (seed
/// 000: never `0 comments`).
pub fn count_or_none(n: u64, noun: Noun) -> String {
    if n == 0 {
        format!("no {}", noun.many)
    } else {
        count(n, noun)
    }
}

/// The non-zero counts of a list of figures, in order (seed 000: never `0 comments`).
pub fn counts(parts: &[(u64, Noun)]) -> Vec<String> {
    parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|&(n, noun)| count(n, noun))
        .collect()
}

/// What a turn's activity holds (seed 000): `2 comments · 6 tool calls`, a zero part left
/// out, [`NO_ACTIVITY`] when both are zero. The activity fold, the turn fold, the outline's
/// turn detail, the turn hint and `stats` say it with these words.
pub fn activity(comments: u32, tool_calls: u32) -> String {
    let parts = counts(&[(comments.into(), COMMENT), (tool_calls.into(), TOOL_CALL)]);
    if parts.is_empty() {
        NO_ACTIVITY.to_string()
    } else {
        parts.join(" · ")
    }
}

/// A turn with neither comments nor tool calls.
pub const NO_ACTIVITY: &str = "no activity";

/// The last turn of a file still being written, without completion evidence
/// (`TurnState::InFlight`, seed 004): the same words in the outline detail, hints, the view's
/// answer label and `… working` line (issue 20 item 9).
pub const IN_FLIGHT: &str = "in flight";

/// The name of a turn's answer in the outline and the view: `Final answer` once the turn is
/// over, `Answer so far (in flight)` while it is in flight (seed 000: the final answer is held
/// back until the turn settles; what the agent wrote so far stays readable). One rule for the
/// raw outline, the view outline and the view's label (issue 20 item 9).
pub fn answer_name(state: crate::analysis::TurnState) -> String {
    match state {
        crate::analysis::TurnState::InFlight => format!("Answer so far ({IN_FLIGHT})"),
        _ => "Final answer".to_string(),
    }
}

/// The head of a work run's label: `Worked · 3 tool calls` (seed 003).
pub const WORKED: &str = "Worked";
/// The label of a thinking-only run (seed 003).
pub const THOUGHT: &str = "Thought";

/// A work run's label (seed 003), counting its tool calls: `Worked · 3 tool calls`; `Worked`
/// without any.
pub fn worked(tool_calls: u32) -> String {
    if tool_calls == 0 {
        WORKED.to_string()
    } else {
        format!("{WORKED} · {}", count(tool_calls.into(), TOOL_CALL))
    }
}

/// The marker before a wake-up turn's label (seed 000's machine-authored turn openers).
pub const WAKE_MARK: &str = "⏰";
/// A wake-up turn where its label is not shown (hints).
pub const WAKE_UP: &str = "⏰ wake-up";

/// A wake-up's label: `⏰ background task finished`.
pub fn wake(label: &str) -> String {
    format!("{WAKE_MARK} {label}")
}

/// A gate's verdict as the agent wrote it (`PASS`, `READY-TO-MERGE`, `NOT-READY`), on one
/// line, at most 40 characters: the same word in the view, the outline, the lens, hovers and
/// `stats`.
pub fn verdict(gate: &crate::analysis::Gate) -> String {
    super::text::one_line(&gate.verdict_text, 40)
}

/// The verdict's kind for people (seed 000): `done`, `needs you`, `branch tagged`, `blocked`.
pub fn verdict_kind(v: &crate::analysis::Verdict) -> &'static str {
    use crate::analysis::Verdict;
    match v {
        Verdict::Done => "done",
        Verdict::NeedsYou { .. } => "needs you",
        Verdict::Tagged => "branch tagged",
        Verdict::Blocked { .. } => "blocked",
    }
}

/// The verdict with its kind and reason, for the code lens: `✔ PASS`, `⚠ NEEDS-REVIEW · needs
/// you: tests missing`, `🏷 READY-TO-MERGE · branch tagged`, `⛔ NOT-READY · blocked: CI red`.
pub fn verdict_with_kind(gate: &crate::analysis::Gate) -> String {
    use crate::analysis::Verdict;
    let word = verdict(gate);
    let kind = verdict_kind(&gate.verdict);
    let reason = super::gate_detail(gate);
    let tail = if reason.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}: {reason}")
    };
    match &gate.verdict {
        Verdict::Done => format!("✔ {word}"),
        Verdict::NeedsYou { .. } => format!("⚠ {word} · {tail}"),
        Verdict::Tagged => format!("🏷 {word} · {tail}"),
        Verdict::Blocked { .. } => format!("⛔ {word} · {tail}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_leave_zeros_out_and_pluralise() {
        assert_eq!(count(1, TOOL_CALL), "1 tool call");
        assert_eq!(count(0, RESPONSE), "0 responses");
        assert_eq!(
            counts(&[(0, COMMENT), (2, TOOL_CALL), (1, GATE)]),
            vec!["2 tool calls".to_string(), "1 gate".to_string()]
        );
        assert_eq!(activity(0, 0), "no activity");
        assert_eq!(activity(1, 0), "1 comment");
        assert_eq!(activity(4, 6), "4 comments · 6 tool calls");
        assert_eq!(activity(0, 1), "1 tool call");
        assert_eq!(count_or_none(0, COMMENT), "no comments");
        assert_eq!(worked(3), "Worked · 3 tool calls");
        assert_eq!(worked(1), "Worked · 1 tool call");
        assert_eq!(worked(0), "Worked");
        assert_eq!(
            wake("background task finished"),
            "⏰ background task finished"
        );
    }
}
