//! The view for a terminal (issue 11, item 6): the same text with ANSI SGR colours on its
//! highlighted spans (`transcript-ls render --color`), so a reader tells prompts, final
//! answers, narration, thinking, tool names, errors, gates and diff lines apart as in the
//! editors. Headings (`# `, `## `) are bold, on every line a wrapped one takes. Colours use the terminal's own 16-colour palette
//! (so light and dark terminal themes both apply), and every coloured span is reset at its end.

use super::{SpanKind, View};

/// SGR parameters of a span kind.
fn sgr(kind: SpanKind) -> &'static str {
    match kind {
        SpanKind::Prompt => "1;36", // bold cyan
        // Bold in the default colour, as VS Code draws it: never the green of an added diff
        // line (issue 11).
        SpanKind::FinalAnswer => "1",
        SpanKind::Narration => "",     // the terminal's default foreground
        SpanKind::Thinking => "2;3",   // dim italic
        SpanKind::ToolName => "35",    // magenta
        SpanKind::ToolError => "31",   // red
        SpanKind::Gate => "1;33",      // bold yellow
        SpanKind::Meta => "2",         // dim
        SpanKind::DiffAdded => "32",   // green
        SpanKind::DiffRemoved => "31", // red
    }
}

/// The view's text with ANSI colours. Byte-identical to `view.text` once the escape
/// sequences (`ESC [ … m`) are removed.
pub fn colored(view: &View) -> String {
    let mut out = String::with_capacity(view.text.len() + view.spans.len() * 10);
    let mut spans = view.spans.iter().peekable();
    for (i, line) in view.text.split_terminator('\n').enumerate() {
        let heading =
            super::wrap::is_heading(line) || view.heading_continuations.binary_search(&i).is_ok();
        if heading {
            out.push_str("\x1b[1m");
        }
        let mut at = 0;
        while let Some(s) = spans.next_if(|s| s.line == i) {
            let (start, end) = (s.start.max(at).min(line.len()), s.end.min(line.len()));
            let code = sgr(s.kind);
            if start >= end
                || code.is_empty()
                || !line.is_char_boundary(start)
                || !line.is_char_boundary(end)
            {
                continue;
            }
            out.push_str(&line[at..start]);
            out.push_str("\x1b[");
            out.push_str(code);
            out.push('m');
            out.push_str(&line[start..end]);
            out.push_str(if heading { "\x1b[0;1m" } else { "\x1b[0m" });
            at = end;
        }
        // Spans of earlier lines that were not reached (none in a well-formed view).
        while spans.next_if(|s| s.line < i).is_some() {}
        out.push_str(&line[at..]);
        if heading {
            out.push_str("\x1b[0m");
        }
        out.push('\n');
    }
    out
}

/// Whether `render` colours its output: `--color=always|never`, or `auto` (the default):
/// standard output is a terminal and `NO_COLOR` is unset or empty (no-color.org).
pub fn wants_color(choice: &str, stdout_is_terminal: bool, no_color: Option<&str>) -> bool {
    match choice {
        "always" => true,
        "never" => false,
        _ => stdout_is_terminal && no_color.is_none_or(str::is_empty),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::ViewSpan;

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
    fn spans_get_colours_and_headings_bold() {
        let view = View {
            text: "## Turn 1 — x\n> Fix it\nDone.\n".to_string(),
            spans: vec![
                span(1, 2, 8, SpanKind::Prompt),
                span(2, 0, 5, SpanKind::FinalAnswer),
            ],
            ..View::default()
        };
        assert_eq!(
            colored(&view),
            "\x1b[1m## Turn 1 — x\x1b[0m\n> \x1b[1;36mFix it\x1b[0m\n\x1b[1mDone.\x1b[0m\n"
        );
    }

    /// Every highlighted kind a reader must tell apart has its own style: a final answer never
    /// looks like an added diff line (issue 11), nor a prompt, nor an error.
    #[test]
    fn kinds_are_told_apart() {
        let kinds = [
            SpanKind::Prompt,
            SpanKind::FinalAnswer,
            SpanKind::ToolName,
            SpanKind::ToolError,
            SpanKind::Gate,
            SpanKind::Meta,
            SpanKind::DiffAdded,
        ];
        for (i, a) in kinds.iter().enumerate() {
            for b in &kinds[i + 1..] {
                assert_ne!(sgr(*a), sgr(*b), "{a:?} and {b:?}");
            }
        }
    }

    #[test]
    fn no_color_and_terminals() {
        assert!(wants_color("auto", true, None));
        assert!(wants_color("auto", true, Some("")));
        assert!(!wants_color("auto", true, Some("1")));
        assert!(!wants_color("auto", false, None));
        assert!(wants_color("always", false, Some("1")));
        assert!(!wants_color("never", true, None));
    }
}
