//! The view wrapped to a terminal's width (issue 11, item 6): `transcript-ls render` on a
//! terminal, or with `--width N`. Prose lines longer than the width are broken at spaces, each
//! continuation indented like the line it continues (its leading spaces, a `> ` quote marker
//! kept, a `- ` list marker as spaces); highlighted spans follow the text they cover, so the
//! result colours as the original does ([`super::ansi::colored`]).
//!
//! Left as they are: lines that fit, lines of fenced code blocks (```` ``` ````), lines under a
//! tool call (its output preview or diff: [`RegionKind::LongToolOutput`]) whose columns matter,
//! and a word longer than the width (a URL, a path), which goes on a line of its own whole.
//! Widths are display columns (East Asian wide characters and emoji count 2).

use unicode_width::UnicodeWidthChar;

use super::{RegionKind, View, ViewSpan};

/// The narrowest width that is honoured; a smaller one is raised to it.
pub const MIN_WIDTH: usize = 20;

/// Display width of a string, in terminal columns.
pub fn display_width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// The view with its prose wrapped to `width` columns (at least [`MIN_WIDTH`]). Only `text`,
/// `spans` and `heading_continuations` (the lines a long heading continues on, drawn bold
/// like it) are filled: the result is for output, its lines no longer match the source map.
pub fn wrap(view: &View, width: usize) -> View {
    let width = width.max(MIN_WIDTH);
    let mut keep = vec![false; view.lines.len().max(view.text.lines().count())];
    for r in &view.regions {
        if r.kind == RegionKind::LongToolOutput {
            for k in keep.iter_mut().take(r.end_line + 1).skip(r.start_line + 1) {
                *k = true;
            }
        }
    }
    let mut out = View::default();
    out.text.reserve(view.text.len() + view.text.len() / 16);
    let mut spans = view.spans.iter().peekable();
    let mut fenced = false;
    let mut out_line = 0usize;
    for (i, line) in view.text.split_terminator('\n').enumerate() {
        let mut own: Vec<&ViewSpan> = Vec::new();
        while spans.next_if(|s| s.line < i).is_some() {}
        while let Some(s) = spans.next_if(|s| s.line == i) {
            own.push(s);
        }
        let fence = line.trim_start().starts_with("```");
        let as_is = fenced
            || fence
            || keep.get(i).copied().unwrap_or(false)
            || display_width(line) <= width;
        if fence {
            fenced = !fenced;
        }
        let segments = if as_is {
            vec![(0, line.len())]
        } else {
            break_points(line, width)
        };
        let cont = continuation(line);
        let heading = is_heading(line);
        for (k, &(s, e)) in segments.iter().enumerate() {
            if heading && k > 0 {
                out.heading_continuations.push(out_line);
            }
            let prefix = if k == 0 { "" } else { cont.as_str() };
            let shift = prefix.len();
            out.text.push_str(prefix);
            out.text.push_str(&line[s..e]);
            out.text.push('\n');
            for sp in &own {
                let (a, b) = (sp.start.max(s), sp.end.min(e));
                if a < b {
                    out.spans.push(ViewSpan {
                        line: out_line,
                        start: a - s + shift,
                        end: b - s + shift,
                        ..(*sp).clone()
                    });
                }
            }
            out_line += 1;
        }
    }
    out
}

/// Whether a view line is a heading (`# ` title, `## ` turn heading), drawn bold.
pub fn is_heading(line: &str) -> bool {
    line.starts_with("# ") || line.starts_with("## ")
}

/// The prefix of a continuation line: the line's leading spaces, then `> ` again after a
/// quote marker, or spaces as wide as a list or heading marker (`- `, `* `, `• `, `# `, `## `).
fn continuation(line: &str) -> String {
    let trimmed = line.trim_start_matches(' ');
    let mut p = " ".repeat(line.len() - trimmed.len());
    if let Some(marker) = ["## ", "# "].iter().find(|m| line.starts_with(**m)) {
        p.push_str(&" ".repeat(marker.len()));
    } else if trimmed.starts_with("> ") {
        p.push_str("> ");
    } else if trimmed.starts_with("- ") || trimmed.starts_with("* ") || trimmed.starts_with("• ")
    {
        p.push_str("  ");
    }
    p
}

/// Byte ranges of the pieces of `line` (each at most `width` columns with its continuation
/// prefix, unless one word is longer), the spaces at the breaks left out.
fn break_points(line: &str, width: usize) -> Vec<(usize, usize)> {
    let indent = display_width(&continuation(line));
    let mut out = Vec::new();
    let mut start = 0usize;
    // Where the first piece's text starts (breaks inside its leading indent or marker are
    // not wanted).
    let body = line.len() - line.trim_start_matches(' ').len();
    loop {
        let avail = if out.is_empty() {
            width
        } else {
            width.saturating_sub(indent).max(MIN_WIDTH / 2)
        };
        let rest = &line[start..];
        if display_width(rest) <= avail {
            out.push((start, line.len()));
            break;
        }
        // The last space at which the piece still fits.
        let mut cols = 0usize;
        let mut cut = None;
        let mut over = None;
        for (j, c) in rest.char_indices() {
            if c == ' ' && (!out.is_empty() || start + j > body) {
                cut = Some(j);
            }
            cols += c.width().unwrap_or(0);
            if cols > avail {
                over = Some(j);
                break;
            }
        }
        let Some(_) = over else {
            out.push((start, line.len()));
            break;
        };
        let cut = match cut {
            Some(c) if c > 0 => c,
            // One word longer than the width: whole, up to the next space.
            _ => match rest.find(' ') {
                Some(sp) if sp > 0 => sp,
                _ => {
                    out.push((start, line.len()));
                    break;
                }
            },
        };
        out.push((start, start + cut));
        // Skip the spaces at the break.
        let mut next = start + cut;
        while line.as_bytes().get(next) == Some(&b' ') {
            next += 1;
        }
        if next >= line.len() {
            break;
        }
        start = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::{Region, SpanKind};

    fn span(line: usize, start: usize, end: usize, kind: SpanKind) -> ViewSpan {
        ViewSpan {
            line,
            start,
            end,
            kind,
            in_flight: false,
            incomplete: false,
            sidechain: false,
        }
    }

    #[test]
    fn prose_breaks_at_spaces_and_spans_follow() {
        let text = "The quick brown fox jumps over the lazy dog and runs far away.\n";
        let view = View {
            text: text.into(),
            spans: vec![span(0, 0, text.len() - 1, SpanKind::FinalAnswer)],
            ..View::default()
        };
        let w = wrap(&view, 24);
        assert_eq!(
            w.text,
            "The quick brown fox\njumps over the lazy dog\nand runs far away.\n"
        );
        let got: Vec<(usize, usize, usize)> =
            w.spans.iter().map(|s| (s.line, s.start, s.end)).collect();
        assert_eq!(got, [(0, 0, 19), (1, 0, 23), (2, 0, 18)]);
        assert!(w.text.lines().all(|l| display_width(l) <= 24));
    }

    #[test]
    fn continuations_keep_indent_quote_and_list_markers() {
        let view = View {
            text: "> one two three four five six seven eight nine ten\n  - alpha beta gamma delta epsilon zeta eta theta\n".into(),
            ..View::default()
        };
        assert_eq!(
            wrap(&view, 24).text,
            "> one two three four\n> five six seven eight\n> nine ten\n  - alpha beta gamma\n    delta epsilon zeta\n    eta theta\n"
        );
    }

    #[test]
    fn code_tool_output_and_long_words_stay_whole() {
        let long = "x".repeat(30);
        let view = View {
            text: format!(
                "```\nlet a = some_function(argument_one, argument_two);\n```\n⚙ Bash  ls\n    output line that is long enough to be wrapped\nsee {long} here\n"
            ),
            regions: vec![Region {
                kind: RegionKind::LongToolOutput,
                start_line: 3,
                end_line: 4,
                label: "output".into(),
            }],
            ..View::default()
        };
        let w = wrap(&view, 24);
        assert_eq!(
            w.text,
            format!(
                "```\nlet a = some_function(argument_one, argument_two);\n```\n⚙ Bash  ls\n    output line that is long enough to be wrapped\nsee\n{long}\nhere\n"
            )
        );
    }

    /// A wrapped heading stays bold on every line it takes (issue 11: its continuation was
    /// drawn plain).
    #[test]
    fn a_wrapped_heading_is_bold_on_every_line() {
        let view = View {
            text: "# Fix the failing test in the parser module\n## Turn 4 — ⏰ background task finished\nplain\n".into(),
            ..View::default()
        };
        let w = wrap(&view, 24);
        assert_eq!(
            w.text,
            "# Fix the failing test\n  in the parser module\n## Turn 4 — ⏰\n   background task\n   finished\nplain\n"
        );
        let colored = super::super::ansi::colored(&w);
        let lines: Vec<&str> = colored.lines().collect();
        for l in &lines[..5] {
            assert!(l.starts_with("\x1b[1m") && l.ends_with("\x1b[0m"), "{l:?}");
        }
        assert_eq!(lines[5], "plain");
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let view = View {
            text: "漢字 漢字 漢字 漢字 漢字 漢字 漢字\n".into(),
            ..View::default()
        };
        let w = wrap(&view, 20);
        assert_eq!(w.text, "漢字 漢字 漢字 漢字\n漢字 漢字 漢字\n");
    }
}
