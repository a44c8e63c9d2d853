//! Code lenses (DESIGN.md §4 gates, §5): each gate gets the eight-phase stepper with the
//! current disc lit and the verdict (seed 000), whose command goes to the next gate; each
//! sub-agent call gets `Open sub-agent: <description> (a1b2, 14 responses, 1m 25s)` opening its
//! transcript, or `sub-agent transcript not found` (case 20). Plain data; the caller maps
//! items to lines of the raw file or the view.

use std::path::PathBuf;

use crate::analysis::{Analysis, Gate, Phase};
use crate::index::session_files::file_for_call;
use crate::model::SubagentFile;
use crate::view::{text, words};

/// What clicking a lens does.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase", tag = "action")]
pub enum LensAction {
    /// Go to the next gate after gate `gate` (index into `Analysis::gates`); `next` is that
    /// gate's index, `None` for the last gate.
    NextGate { gate: usize, next: Option<usize> },
    /// Open a sub-agent transcript.
    OpenFile { path: PathBuf },
    /// Open the verbose view at turn `turn` (the quiet view hides its activity; issue 11,
    /// item 5).
    OpenVerbose { turn: usize },
    /// Open the editor's own diff of a file edit (issue 11, item 3); `call` names the tool
    /// call as [`crate::view::edits::EditCall::call`].
    ShowDiff { call: String },
    /// Open the files a turn changed (`turn`: its number) or the session changed (`None`) in
    /// the editor's multi-file diff (issue 22, item 2).
    ShowChanges { turn: Option<usize> },
    /// Nothing to do (the lens is a label).
    None,
}

/// One lens, shown above `line` (0-based).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Lens {
    pub line: usize,
    pub title: String,
    #[serde(flatten)]
    pub action: LensAction,
}

/// The stepper title of a gate: the phase discs in order with the current one lit, then the
/// verdict, e.g. `🔍 ━ ⚔️ ━ 🚦 ━ ⟦🔨 Build⟧ ┄ 💎 ┄ 📝 ┄ 🔬 ┄ 🚀 — ✔ PASS`. A custom gate that
/// maps onto no phase is a badge (as in the view): `🏷 CUSTOM_LINT — ⚠ WARN · needs you: 3 warnings`.
pub fn gate_title(gate: &Gate, phases: &[Phase]) -> String {
    let verdict = verdict_text(gate);
    match gate.phase.filter(|&p| p < phases.len()) {
        Some(cur) => {
            let mut s = String::new();
            for (i, p) in phases.iter().enumerate() {
                if i > 0 {
                    s.push_str(if i <= cur { " ━ " } else { " ┄ " });
                }
                if i == cur {
                    s.push_str(&format!("⟦{} {}⟧", p.emoji, p.name));
                } else {
                    s.push_str(&p.emoji);
                }
            }
            format!("{s} — {verdict}")
        }
        None => format!("🏷 {} — {verdict}", gate.phase_name),
    }
}

/// The verdict with its kind and reason ([`words::verdict_with_kind`]): `✔ PASS`, `⚠
/// NEEDS-REVIEW · needs you: <reason>`, `🏷 READY-TO-MERGE · branch tagged`, `⛔ NOT-READY ·
/// blocked: <reason>`; the verdict word is the one the view, outline and `stats` show.
pub fn verdict_text(gate: &Gate) -> String {
    words::verdict_with_kind(gate)
}

/// Lenses for a document. `line_of_gate(g)` and `line_of_block(entry, block)` place items on
/// the document's lines (raw or view) and return `None` for items the document does not show;
/// `steps_in(file)` counts the model responses of a sub-agent transcript when it can be read.
pub fn lenses(
    analysis: &Analysis,
    phases: &[Phase],
    files: &[SubagentFile],
    line_of_gate: impl Fn(usize) -> Option<usize>,
    line_of_block: impl Fn(usize, usize) -> Option<usize>,
    steps_in: impl Fn(&SubagentFile) -> Option<usize>,
) -> Vec<Lens> {
    let mut out = Vec::new();
    for (gi, gate) in analysis.gates.iter().enumerate() {
        let Some(line) = line_of_gate(gi) else {
            continue;
        };
        let next = (gi + 1 < analysis.gates.len()).then_some(gi + 1);
        out.push(Lens {
            line,
            title: gate_title(gate, phases),
            action: LensAction::NextGate { gate: gi, next },
        });
    }
    for call in &analysis.subagent_calls {
        let Some(line) = line_of_block(call.entry, call.block) else {
            continue;
        };
        let file = file_for_call(files, call);
        let id = call
            .agent_id
            .clone()
            .or_else(|| file.map(|f| f.agent_id.clone()));
        let mut figures = Vec::new();
        if let Some(id) = &id {
            figures.push(id.clone());
        }
        let lens = match file {
            Some(f) => {
                if let Some(n) = steps_in(f) {
                    figures.push(words::count(n as u64, words::RESPONSE));
                }
                if let Some(ms) = call.duration_ms {
                    figures.push(text::fmt_duration(ms));
                }
                let head = match &call.description {
                    Some(d) => format!("Open sub-agent: {d}"),
                    None => "Open sub-agent".to_string(),
                };
                Lens {
                    line,
                    title: if figures.is_empty() {
                        head
                    } else {
                        format!("{head} ({})", figures.join(", "))
                    },
                    action: LensAction::OpenFile {
                        path: f.path.clone(),
                    },
                }
            }
            None if !call.sidechain_entries.is_empty() => Lens {
                line,
                title: format!(
                    "Sub-agent inline in this file ({} records{})",
                    call.sidechain_entries.len(),
                    id.map(|i| format!(", {i}")).unwrap_or_default()
                ),
                action: LensAction::None,
            },
            None => Lens {
                line,
                title: match &id {
                    Some(i) => format!("sub-agent transcript not found ({i})"),
                    None => "sub-agent transcript not found".to_string(),
                },
                action: LensAction::None,
            },
        };
        out.push(lens);
    }
    out.sort_by_key(|l| l.line);
    out
}

/// In a quiet view, a lens on each turn whose activity the view hides, opening the verbose
/// view at that turn: `Show activity: 2 comments · 5 tool calls` on the turn heading, or on
/// the `(no reply — …)` line of a turn without an answer. `view` is the quiet view of
/// `analysis`'s transcript.
pub fn activity_lenses(analysis: &Analysis, view: &crate::view::View) -> Vec<Lens> {
    let lines: Vec<&str> = view.text.split('\n').collect();
    let mut out = Vec::new();
    for a in view.anchors.iter().filter(|a| a.child.is_none()) {
        let Some(turn) = analysis.turns.iter().find(|t| t.n == a.turn) else {
            continue;
        };
        if turn.kind == crate::analysis::TurnKind::Preamble || turn.comments + turn.tool_calls == 0
        {
            continue;
        }
        let no_reply = (a.line..=a.end_line.min(lines.len().saturating_sub(1)))
            .find(|&l| lines[l].starts_with("(no reply — "));
        out.push(Lens {
            line: no_reply.unwrap_or(a.line),
            title: format!(
                "Show activity: {}",
                words::activity(turn.comments, turn.tool_calls)
            ),
            action: LensAction::OpenVerbose { turn: turn.n },
        });
    }
    out
}

/// A `Show diff · +3 −1` lens above each file-editing tool call the document shows
/// (`line_of_call(entry, block)`, `None` when it is not shown), sorted by line.
pub fn edit_lenses(
    calls: &[crate::view::edits::EditCall],
    line_of_call: impl Fn(usize, usize) -> Option<usize>,
) -> Vec<Lens> {
    calls
        .iter()
        .filter_map(|c| {
            Some(Lens {
                line: line_of_call(c.entry, c.block)?,
                title: c.lens_title(),
                action: LensAction::ShowDiff {
                    call: c.call.clone(),
                },
            })
        })
        .collect()
}

/// A change lens on each turn that changed files, tried to or committed
/// ([`crate::view::changes::TurnChanges::title`]: `✎ 3 files changed · +41 −7`), on the line
/// `line_of_turn(n)` gives (`None`: not shown); and when `session_line` is given, the
/// session's (`✎ 5 files changed in 3 turns · +120 −14`) there. A turn whose edits all failed
/// gets a label (nothing to open). Issue 22, item 2.
pub fn change_lenses(
    changes: &crate::view::changes::Changes,
    line_of_turn: impl Fn(usize) -> Option<usize>,
    session_line: Option<usize>,
) -> Vec<Lens> {
    let mut out = Vec::new();
    if let (Some(line), Some(title)) = (session_line, changes.session_title()) {
        out.push(Lens {
            line,
            title,
            action: LensAction::ShowChanges { turn: None },
        });
    }
    for t in &changes.turns {
        let Some(line) = line_of_turn(t.n) else {
            continue;
        };
        out.push(Lens {
            line,
            title: t.title(),
            action: if t.files.is_empty() {
                LensAction::None
            } else {
                LensAction::ShowChanges { turn: Some(t.n) }
            },
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{Verdict, default_phases};

    fn gate(phase: Option<usize>, verdict: Verdict, text: &str) -> Gate {
        Gate {
            entry: 0,
            block: 0,
            line: 0,
            span: 0..1,
            id: "3".into(),
            mode: "AUTO-APPROVE".into(),
            verdict_text: text.into(),
            verdict,
            phase,
            phase_name: "CUSTOM_LINT".into(),
            turn: 1,
        }
    }

    #[test]
    fn stepper_lights_the_current_disc() {
        let t = gate_title(&gate(Some(3), Verdict::Done, "PASS"), &default_phases());
        assert_eq!(t, "🔍 ━ ⚔️ ━ 🚦 ━ ⟦🔨 Build⟧ ┄ 💎 ┄ 📝 ┄ 🔬 ┄ 🚀 — ✔ PASS");
        let t = gate_title(
            &gate(
                Some(7),
                Verdict::Blocked {
                    reason: "tests fail".into(),
                },
                "NOT-READY",
            ),
            &default_phases(),
        );
        assert!(
            t.ends_with("⟦🚀 Merge⟧ — ⛔ NOT-READY · blocked: tests fail"),
            "{t}"
        );
        let t = gate_title(
            &gate(
                None,
                Verdict::NeedsYou {
                    reason: String::new(),
                },
                "WARN",
            ),
            &default_phases(),
        );
        assert_eq!(t, "🏷 CUSTOM_LINT — ⚠ WARN · needs you");
    }
}
