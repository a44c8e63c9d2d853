//! OpenAI Codex CLI rollouts (FORMATS.md §2).

use crate::model::{Span, Transcript};

/// Line-reader state kept across lines of one file.
#[derive(Debug, Default)]
pub struct State {}

impl State {
    /// Reads one complete, non-blank line (`span` excludes the newline) and appends what it
    /// holds to `t`: exactly one entry per line (an `Unparsed` entry plus a problem when the
    /// line is not valid JSON). May revise roles of earlier entries (steering pairing).
    pub fn line(&mut self, source: &str, line: usize, span: Span, t: &mut Transcript) {
        super::read_unknown_line_pub(source, line, span, t);
    }
}
