//! Byte offsets / lines <-> LSP positions in the negotiated encoding (UTF-8 or UTF-16 code
//! units), for `String` texts (through a line index) and for the editor's rope. A position past
//! the end of its line is clamped to the line end (LSP 3.17 §Position); a line past the end of
//! the document is an error.

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, Range};

/// The position encoding agreed with the client at `initialize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    /// Columns count bytes (Neovim offers it first).
    Utf8,
    /// Columns count UTF-16 code units (the LSP default; VS Code).
    #[default]
    Utf16,
}

/// A position that names a line the document does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfRange {
    pub line: u32,
    pub line_count: usize,
}

impl std::fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {} is out of range (the document has {} lines)",
            self.line, self.line_count
        )
    }
}

/// Line starts of a text split on `\n` (U+2028 and friends are ordinary characters). A text
/// ending with `\n` has a last, empty line, as editors count it.
#[derive(Debug, Clone, Default)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    /// Builds the index with `memchr` (about 20 GB/s).
    pub fn new(text: &str) -> LineIndex {
        let mut starts = Vec::with_capacity(text.len() / 512 + 1);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    /// Number of lines (at least 1).
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// Byte offset of the start of `line`.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line).copied()
    }

    /// Byte offset of the end of `line` (before its `\n`, and before a `\r` that precedes it).
    pub fn line_end(&self, text: &str, line: usize) -> Option<usize> {
        let start = *self.starts.get(line)?;
        let mut end = self.starts.get(line + 1).map_or(self.len, |n| n - 1);
        if end > start && text.as_bytes().get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        Some(end)
    }

    /// The 0-based line holding byte `offset` (offsets past the end are on the last line).
    pub fn line_of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// Position of byte `offset` (clamped to the text and to a character boundary).
    pub fn position(&self, text: &str, offset: usize, enc: Encoding) -> Position {
        let offset = floor_boundary(text, offset.min(text.len()));
        let line = self.line_of(offset);
        let start = self.starts[line];
        Position::new(line as u32, units(&text[start..offset], enc) as u32)
    }

    /// Byte offset of `pos`; a column past the line end is clamped to the line end; a column
    /// inside a character (UTF-16 surrogate half) rounds down.
    pub fn offset(&self, text: &str, pos: Position, enc: Encoding) -> Result<usize, OutOfRange> {
        let line = pos.line as usize;
        let (Some(start), Some(end)) = (self.line_start(line), self.line_end(text, line)) else {
            return Err(OutOfRange {
                line: pos.line,
                line_count: self.line_count(),
            });
        };
        Ok(start + byte_col(&text[start..end], pos.character as usize, enc))
    }

    /// Length of `line` in encoding units (its end column).
    pub fn line_len(&self, text: &str, line: usize, enc: Encoding) -> Option<u32> {
        let start = self.line_start(line)?;
        let end = self.line_end(text, line)?;
        Some(units(&text[start..end], enc) as u32)
    }

    /// The range covering the whole of `line` (start to end of line).
    pub fn line_range(&self, text: &str, line: usize, enc: Encoding) -> Option<Range> {
        let len = self.line_len(text, line, enc)?;
        Some(Range::new(
            Position::new(line as u32, 0),
            Position::new(line as u32, len),
        ))
    }

    /// The range of bytes `span`.
    pub fn range(&self, text: &str, span: std::ops::Range<usize>, enc: Encoding) -> Range {
        Range::new(
            self.position(text, span.start, enc),
            self.position(text, span.end, enc),
        )
    }
}

/// The largest char boundary `<= i`.
pub fn floor_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Length of `s` in encoding units.
pub fn units(s: &str, enc: Encoding) -> usize {
    match enc {
        Encoding::Utf8 => s.len(),
        Encoding::Utf16 => {
            if s.is_ascii() {
                s.len()
            } else {
                s.chars().map(char::len_utf16).sum()
            }
        }
    }
}

/// Byte offset within `line` of column `col` (encoding units), clamped to the line length and
/// rounded down to a character boundary.
pub fn byte_col(line: &str, col: usize, enc: Encoding) -> usize {
    match enc {
        Encoding::Utf8 => floor_boundary(line, col.min(line.len())),
        Encoding::Utf16 => {
            let mut u = 0;
            for (i, c) in line.char_indices() {
                let n = c.len_utf16();
                if u + n > col {
                    return i;
                }
                u += n;
            }
            line.len()
        }
    }
}

/// A forward-only converter from byte offsets to positions, for sorted sequences of offsets
/// (semantic tokens): each conversion scans only the bytes since the previous one.
pub struct Cursor<'a> {
    text: &'a str,
    index: &'a LineIndex,
    enc: Encoding,
    line: usize,
    byte: usize,
    col: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str, index: &'a LineIndex, enc: Encoding) -> Cursor<'a> {
        Cursor {
            text,
            index,
            enc,
            line: 0,
            byte: 0,
            col: 0,
        }
    }

    /// Position of `offset` (must be `>=` the previous offset on the same line for the fast
    /// path; anything else falls back to a fresh scan from the line start).
    pub fn position(&mut self, offset: usize) -> Position {
        let offset = floor_boundary(self.text, offset.min(self.text.len()));
        let line = self.index.line_of(offset);
        if line != self.line || offset < self.byte {
            self.line = line;
            self.byte = self.index.line_start(line).unwrap_or(0);
            self.col = 0;
        }
        self.col += units(&self.text[self.byte..offset], self.enc);
        self.byte = offset;
        Position::new(self.line as u32, self.col as u32)
    }
}

/// Char index in `rope` of `pos`; columns past the line end clamp to it.
pub fn rope_char(rope: &Rope, pos: Position, enc: Encoding) -> Result<usize, OutOfRange> {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return Err(OutOfRange {
            line: pos.line,
            line_count: rope.len_lines(),
        });
    }
    let line_start = rope.line_to_char(line);
    let slice = rope.line(line);
    // Exclude the line break from the clamp range.
    let mut line_chars = slice.len_chars();
    if line_chars > 0 && slice.char(line_chars - 1) == '\n' {
        line_chars -= 1;
        if line_chars > 0 && slice.char(line_chars - 1) == '\r' {
            line_chars -= 1;
        }
    }
    let col = pos.character as usize;
    let within = match enc {
        Encoding::Utf8 => {
            let max = slice.char_to_byte(line_chars);
            slice.byte_to_char(col.min(max))
        }
        Encoding::Utf16 => {
            let max = slice.char_to_utf16_cu(line_chars);
            slice.utf16_cu_to_char(col.min(max))
        }
    };
    Ok(line_start + within.min(line_chars))
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
        assert_eq!(idx.position(text, x, Encoding::Utf8), Position::new(1, 7));
        assert_eq!(idx.position(text, x, Encoding::Utf16), Position::new(1, 4));
        assert_eq!(
            idx.offset(text, Position::new(1, 4), Encoding::Utf16),
            Ok(x)
        );
        assert_eq!(idx.offset(text, Position::new(1, 7), Encoding::Utf8), Ok(x));
        // Past the line end: clamped. Inside a surrogate pair: rounded down.
        assert_eq!(
            idx.offset(text, Position::new(0, 99), Encoding::Utf16),
            Ok(2)
        );
        assert_eq!(
            idx.offset(text, Position::new(1, 1), Encoding::Utf16),
            Ok(3)
        );
        assert!(
            idx.offset(text, Position::new(4, 0), Encoding::Utf16)
                .is_err()
        );
        assert_eq!(idx.line_len(text, 1, Encoding::Utf16), Some(5));
        assert_eq!(idx.line_len(text, 1, Encoding::Utf8), Some(8));
    }

    #[test]
    fn cursor_matches_index() {
        let text = "a😀b😀c\nxyz😀";
        let idx = LineIndex::new(text);
        let mut cur = Cursor::new(text, &idx, Encoding::Utf16);
        for off in [0, 1, 5, 6, 10, 11, 12, 15, 19] {
            assert_eq!(
                cur.position(off),
                idx.position(text, off, Encoding::Utf16),
                "offset {off}"
            );
        }
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
    }
}
