//! Dev-pipeline gate lines (seed 000 "Dev-pipeline gate reports show a pipeline stepper";
//! DESIGN.md §4 Gates).

use super::text::Mapped;
use super::{Gate, Phase, Verdict};
use crate::model::{BlockKind, Role, Transcript};

/// The opening of a gate line.
const GATE_OPEN: &str = "[DEV-PIPELINE";

/// Finds the gate lines `[DEV-PIPELINE | GATE <id> | <MODE>: <VERDICT>]` in the agent prose
/// (text blocks of `Model` records) of the entries for which `main(i)` holds, skipping lines
/// inside code fences (examples). Blocks are decoded only when their raw text contains
/// `[DEV-PIPELINE`. `turn_of(entry)` gives the turn number.
pub fn find(
    t: &Transcript,
    source: &str,
    phases: &[Phase],
    main: &impl Fn(usize) -> bool,
    turn_of: &impl Fn(usize) -> usize,
) -> Vec<Gate> {
    let mut out = Vec::new();
    find_from(t, source, phases, main, turn_of, 0, &mut out);
    out
}

/// [`find`] for the entries from `from` on, pushed to `out`.
pub fn find_from(
    t: &Transcript,
    source: &str,
    phases: &[Phase],
    main: &impl Fn(usize) -> bool,
    turn_of: &impl Fn(usize) -> usize,
    from: usize,
    out: &mut Vec<Gate>,
) {
    let finder = memchr::memmem::Finder::new(GATE_OPEN.as_bytes());
    for (i, e) in t.entries.iter().enumerate().skip(from) {
        if e.role != Role::Model || !main(i) {
            continue;
        }
        for (b, block) in e.blocks.iter().enumerate() {
            let BlockKind::Text { text } = &block.kind else {
                continue;
            };
            let Some(raw) = source.get(text.raw.clone()) else {
                continue;
            };
            if finder.find(raw.as_bytes()).is_none() {
                continue;
            }
            let mapped = Mapped::new(source, text.raw.clone());
            let txt: &str = &mapped.text;
            let mut fence: Option<(char, usize)> = None;
            let mut start = 0;
            while start < txt.len() {
                let end = txt[start..].find('\n').map_or(txt.len(), |n| start + n);
                let line = &txt[start..end];
                let trimmed = line.trim_start();
                let fc = trimmed.chars().next();
                if let Some(c @ ('`' | '~')) = fc {
                    let n = trimmed.chars().take_while(|&x| x == c).count();
                    if n >= 3 {
                        fence = match fence {
                            None => Some((c, n)),
                            Some((oc, on)) if oc == c && n >= on => None,
                            f => f,
                        };
                        start = end + 1;
                        continue;
                    }
                }
                if fence.is_none() {
                    let mut from = 0;
                    while let Some(p) = line[from..].find(GATE_OPEN) {
                        let at = from + p;
                        match parse(&line[at..], phases) {
                            Some(g) => {
                                let s = start + at;
                                out.push(Gate {
                                    entry: i,
                                    block: b,
                                    line: e.line,
                                    span: mapped.source_offset(s)..mapped.source_offset(s + g.len),
                                    id: g.id,
                                    mode: g.mode,
                                    verdict_text: g.verdict_text,
                                    verdict: g.verdict,
                                    phase: g.phase,
                                    phase_name: g.phase_name,
                                    turn: turn_of(i),
                                });
                                from = at + g.len;
                            }
                            None => from = at + GATE_OPEN.len(),
                        }
                    }
                }
                start = end + 1;
            }
        }
    }
}

/// A parsed gate, relative to the text it was parsed from.
#[derive(Debug, PartialEq)]
struct Parsed {
    /// Bytes of the bracketed text, `]` included.
    len: usize,
    id: String,
    mode: String,
    verdict_text: String,
    verdict: Verdict,
    phase: Option<usize>,
    phase_name: String,
}

/// Longest bracketed gate text looked for, in bytes.
const MAX_GATE_BYTES: usize = 1024;

/// Separators between a verdict word and its reason, earliest wins.
const SEPARATORS: &[&str] = &[" — ", " – ", " - ", ": ", " (", "; ", ", ", "—", "–"];

/// Parses `s`, which starts with `[DEV-PIPELINE`, up to the closing `]` on the same line.
/// The reason of a verdict is what follows the verdict word inside the brackets (after a dash,
/// colon, parenthesis, semicolon or comma, or after a known verdict word), or else the rest of
/// the line after `]` (leading dashes and colons dropped).
fn parse(s: &str, phases: &[Phase]) -> Option<Parsed> {
    // Gate lines are short: the closing bracket is looked for in the first
    // [`MAX_GATE_BYTES`] only, so a long line of repeated openers stays linear.
    let close = memchr::memchr(b']', &s.as_bytes()[..s.len().min(MAX_GATE_BYTES)])?;
    let inside = &s[1..close];
    let mut parts = inside.splitn(3, '|').map(str::trim);
    let head = parts.next()?;
    if !head.eq_ignore_ascii_case("DEV-PIPELINE") {
        return None;
    }
    let gate = parts.next()?;
    let id = gate
        .get(..4)
        .filter(|g| g.eq_ignore_ascii_case("GATE"))
        .filter(|_| gate[4..].starts_with(char::is_whitespace))
        .map(|_| gate[4..].trim())?;
    if id.is_empty() {
        return None;
    }
    let rest = parts.next().unwrap_or("");
    let (mode, verdict_part) = match rest.find(':') {
        Some(c) => (rest[..c].trim(), rest[c + 1..].trim()),
        None => ("", rest.trim()),
    };
    let mut verdict_text = verdict_part;
    let mut reason = "";
    if let Some((at, sep)) = SEPARATORS
        .iter()
        .filter_map(|sep| verdict_part.find(sep).map(|at| (at, *sep)))
        .min_by_key(|&(at, _)| at)
    {
        verdict_text = verdict_part[..at].trim();
        reason = verdict_part[at + sep.len()..].trim();
        if sep == " (" {
            reason = reason.trim_end_matches(')').trim();
        }
    } else if let Some((first, more)) = verdict_part.split_once(char::is_whitespace)
        && known_verdict(first)
    {
        verdict_text = first;
        reason = more.trim();
    }
    if reason.is_empty() {
        // The rest of the line, up to the next gate and at most MAX_GATE_BYTES.
        let after = &s[close + 1..];
        let mut end = after.find('\n').unwrap_or(after.len()).min(MAX_GATE_BYTES);
        while !after.is_char_boundary(end) {
            end -= 1;
        }
        let after = &after[..end];
        let after = after.find(GATE_OPEN).map_or(after, |n| &after[..n]);
        reason = after
            .trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '—' | '–' | '-' | ':'))
            .trim_end();
    }
    let norm = normalize(verdict_text);
    let verdict = match norm.as_str() {
        "OK" | "PASS" | "APPROVED" => Verdict::Done,
        "READY-TO-MERGE" => Verdict::Tagged,
        "NOT-READY" => Verdict::Blocked {
            reason: reason.to_string(),
        },
        _ => Verdict::NeedsYou {
            reason: if reason.is_empty() {
                verdict_text.to_string()
            } else {
                reason.to_string()
            },
        },
    };
    let phase = phase_of(id, phases);
    let phase_name = match phase {
        Some(p) => phases[p].name.clone(),
        None => id.to_string(),
    };
    Some(Parsed {
        len: close + 1,
        id: id.to_string(),
        mode: mode.to_string(),
        verdict_text: verdict_text.to_string(),
        verdict,
        phase,
        phase_name,
    })
}

/// Upper case, spaces and underscores as hyphens (`ready to merge` → `READY-TO-MERGE`).
fn normalize(v: &str) -> String {
    v.trim()
        .chars()
        .map(|c| match c {
            ' ' | '_' => '-',
            c => c.to_ascii_uppercase(),
        })
        .collect()
}

fn known_verdict(word: &str) -> bool {
    matches!(
        normalize(word).as_str(),
        "OK" | "PASS" | "APPROVED" | "READY-TO-MERGE" | "NOT-READY"
    )
}

/// The phase a gate id lights: a number maps to the phase with that `number`; a named id
/// (`CUSTOM_STANDARDS_CHECK`) maps to the first phase without a number all of whose name
/// words appear in the upper-cased id (`STANDARDS` + `CHECK` → Standards Check, `STANDARDS` +
/// `AUDIT` → Standards Audit). Anything else is a badge (`None`).
pub fn phase_of(id: &str, phases: &[Phase]) -> Option<usize> {
    if let Ok(n) = id.trim().parse::<u32>() {
        return phases.iter().position(|p| p.number == Some(n));
    }
    let up = id.to_uppercase();
    phases.iter().position(|p| {
        p.number.is_none()
            && !p.name.trim().is_empty()
            && p.name
                .split_whitespace()
                .all(|w| up.contains(&w.to_uppercase()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::default_phases;

    fn p(s: &str) -> Parsed {
        parse(s, &default_phases()).unwrap()
    }

    #[test]
    fn verdicts_and_reasons() {
        let g = p("[DEV-PIPELINE | GATE 5 | AUTO-APPROVE: OK]");
        assert_eq!(
            (g.id.as_str(), g.mode.as_str(), g.verdict_text.as_str()),
            ("5", "AUTO-APPROVE", "OK")
        );
        assert_eq!(
            (g.verdict, g.phase, g.phase_name.as_str()),
            (Verdict::Done, Some(5), "Docs")
        );
        let g = p("[DEV-PIPELINE | GATE 6 | MERGE: NOT-READY — CI is red]");
        assert_eq!(
            g.verdict,
            Verdict::Blocked {
                reason: "CI is red".into()
            }
        );
        let g = p("[DEV-PIPELINE | GATE 6 | MERGE: NOT-READY] — 2 failing tests\nnext");
        assert_eq!(
            g.verdict,
            Verdict::Blocked {
                reason: "2 failing tests".into()
            }
        );
        let g = p("[DEV-PIPELINE | GATE 6 | MERGE: READY-TO-MERGE]");
        assert_eq!((g.verdict, g.phase), (Verdict::Tagged, Some(7)));
        let g = p("[DEV-PIPELINE | GATE 2 | REVIEW: NEEDS-INPUT: pick a database]");
        assert_eq!(
            g.verdict,
            Verdict::NeedsYou {
                reason: "pick a database".into()
            }
        );
        assert_eq!(g.verdict_text, "NEEDS-INPUT");
        let g = p("[DEV-PIPELINE | GATE CUSTOM_STANDARDS_CHECK | AUTO: PASS]");
        assert_eq!(
            (g.phase, g.phase_name.as_str()),
            (Some(2), "Standards Check")
        );
        let g = p("[DEV-PIPELINE | GATE CUSTOM_STANDARDS_AUDIT | AUTO: APPROVED]");
        assert_eq!((g.phase, g.verdict), (Some(6), Verdict::Done));
        let g = p("[DEV-PIPELINE | GATE CUSTOM_SECURITY | MANUAL: WAITING]");
        assert_eq!((g.phase, g.phase_name.as_str()), (None, "CUSTOM_SECURITY"));
        assert_eq!(
            g.verdict,
            Verdict::NeedsYou {
                reason: "WAITING".into()
            }
        );
        assert!(parse("[DEV-PIPELINE | STAGE 5 | X: OK]", &default_phases()).is_none());
        assert!(parse("[DEV-PIPELINE | GATE 5 | X: OK", &default_phases()).is_none());
    }
}
