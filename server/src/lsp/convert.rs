//! Byte offsets / lines <-> LSP positions in the negotiated encoding (UTF-8 or UTF-16 code
//! units): a thin adapter from `crate::source::position` (which does the work on `String`
//! texts through `crate::source::lines::LineIndex`) to `ls_types`, plus the conversion for the
//! editor's rope. A position past the end of its line is clamped to the line end (LSP 3.17
//! §Position); a line past the end of the document is an error.

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, Range};

pub use crate::source::lines::LineIndex;
use crate::source::position as sp;
pub use crate::source::position::{Encoding, PositionError};

fn to_lsp(p: sp::Position) -> Position {
    Position::new(p.line, p.character)
}

/// Position of byte `offset` of `text` (clamped to the text, its line and a char boundary).
pub fn position(text: &str, index: &LineIndex, offset: usize, enc: Encoding) -> Position {
    to_lsp(sp::offset_to_position(text, index, offset, enc))
}

/// Byte offset of `pos` in `text`; a column past the line end clamps to it; a line past the
/// last line is an error.
pub fn offset(
    text: &str,
    index: &LineIndex,
    pos: Position,
    enc: Encoding,
) -> Result<usize, PositionError> {
    sp::position_to_offset(text, index, sp::Position::new(pos.line, pos.character), enc)
}

/// Length of `line` in encoding units (its end column); `None` past the last line.
pub fn line_len(text: &str, index: &LineIndex, line: usize, enc: Encoding) -> Option<u32> {
    if line >= index.line_count() {
        return None;
    }
    let span = index.line_span(line, text);
    Some(sp::column_len(&text[span], enc) as u32)
}

/// The range covering the content of `line`.
pub fn line_range(text: &str, index: &LineIndex, line: usize, enc: Encoding) -> Option<Range> {
    let len = line_len(text, index, line, enc)?;
    Some(Range::new(
        Position::new(line as u32, 0),
        Position::new(line as u32, len),
    ))
}

/// The range of bytes `span` of `text`.
pub fn range(text: &str, index: &LineIndex, span: std::ops::Range<usize>, enc: Encoding) -> Range {
    Range::new(
        position(text, index, span.start, enc),
        position(text, index, span.end, enc),
    )
}

/// Length of `s` in encoding units.
pub fn units(s: &str, enc: Encoding) -> usize {
    sp::column_len(s, enc)
}

/// A forward converter for ordered offsets (semantic tokens), over
/// `crate::source::position::LineCursor`.
pub struct Cursor<'a>(sp::LineCursor<'a>);

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str, index: &'a LineIndex, enc: Encoding) -> Cursor<'a> {
        Cursor(sp::LineCursor::new(text, index, enc))
    }

    /// Position of `offset`.
    pub fn position(&mut self, offset: usize) -> Position {
        to_lsp(self.0.position(offset))
    }

    /// Length in encoding units of `start..end` (on one line).
    pub fn length(&self, start: usize, end: usize) -> u32 {
        self.0.length(start, end)
    }
}

pub use crate::source::position::OutOfRange;

/// Char index in `rope` of `pos` (see [`crate::source::position::rope_char`]).
pub fn rope_char(rope: &Rope, pos: Position, enc: Encoding) -> Result<usize, OutOfRange> {
    sp::rope_char(rope, sp::Position::new(pos.line, pos.character), enc)
}

/// A `didChange` content change as a plain edit of the document host.
pub fn edit(
    ch: tower_lsp_server::ls_types::TextDocumentContentChangeEvent,
) -> crate::ide::host::Edit {
    crate::ide::host::Edit {
        range: ch.range.map(|r| {
            (
                sp::Position::new(r.start.line, r.start.character),
                sp::Position::new(r.end.line, r.end.character),
            )
        }),
        text: ch.text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_in_both_encodings() {
        let text = "ab\n😀é\"x\n\nend";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_count(), 4);
        let x = text.find('x').unwrap();
        assert_eq!(position(text, &idx, x, Encoding::Utf8), Position::new(1, 7));
        assert_eq!(
            position(text, &idx, x, Encoding::Utf16),
            Position::new(1, 4)
        );
        assert_eq!(
            offset(text, &idx, Position::new(1, 4), Encoding::Utf16),
            Ok(x)
        );
        assert_eq!(
            offset(text, &idx, Position::new(1, 7), Encoding::Utf8),
            Ok(x)
        );
        assert_eq!(
            offset(text, &idx, Position::new(0, 99), Encoding::Utf16),
            Ok(2)
        );
        assert!(offset(text, &idx, Position::new(4, 0), Encoding::Utf16).is_err());
        assert_eq!(line_len(text, &idx, 1, Encoding::Utf16), Some(5));
        assert_eq!(line_len(text, &idx, 1, Encoding::Utf8), Some(8));
        assert_eq!(line_len(text, &idx, 4, Encoding::Utf8), None);
    }

    #[test]
    fn rope_positions() {
        let rope = Rope::from_str("ab\n😀é\nend");
        assert_eq!(
            rope_char(&rope, Position::new(1, 2), Encoding::Utf16),
            Ok(4)
        );
        assert_eq!(rope_char(&rope, Position::new(1, 4), Encoding::Utf8), Ok(4));
        assert_eq!(
            rope_char(&rope, Position::new(1, 99), Encoding::Utf16),
            Ok(5)
        );
        assert_eq!(rope_char(&rope, Position::new(2, 3), Encoding::Utf8), Ok(9));
        assert!(rope_char(&rope, Position::new(3, 0), Encoding::Utf8).is_err());
        // Inside a surrogate pair: rounds down to the emoji's start.
        assert_eq!(
            rope_char(&rope, Position::new(1, 1), Encoding::Utf16),
            Ok(3)
        );
    }
}
