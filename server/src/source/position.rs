//! Byte offsets <-> `(line, column)` positions in UTF-8 or UTF-16 columns (DESIGN.md §5:
//! position encoding is negotiated, UTF-8 for Neovim, UTF-16 for VS Code; LSP-NOTES.md).
//!
//! Lines come from a [`LineIndex`] (`\n`, `\r\n` and a lone `\r` end a line, as LSP 3.17
//! says; U+2028 and U+2029 do not). Columns count from the line start in
//! bytes ([`Encoding::Utf8`]) or in UTF-16 code units ([`Encoding::Utf16`]: characters above
//! U+FFFF, such as `😀`, count 2, every other character 1). A column never points into a
//! line's break: the content of a line ends before its `\n` and before a `\r` preceding it.
//!
//! Single conversions cost O(log lines + column); ASCII stretches are measured with a
//! word-at-a-time check. For many ordered offsets (semantic tokens on a 16 MB line) use a
//! [`LineCursor`], which costs O(distance moved) in total.

use super::lines::LineIndex;

/// How columns are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Columns in bytes of UTF-8 (LSP `positionEncoding: "utf-8"`).
    Utf8,
    /// Columns in UTF-16 code units (LSP `"utf-16"`, the protocol default).
    Utf16,
}

/// A 0-based line and a 0-based column (`character`) in the units of an [`Encoding`]. Same
/// shape as an LSP position; values beyond `u32::MAX` saturate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

impl Position {
    pub fn new(line: u32, character: u32) -> Position {
        Position { line, character }
    }
}

/// Why a [`Position`] has no offset in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PositionError {
    /// `line` is not a line of the text, which has `line_count` lines
    /// ([`LineIndex::line_count`]: `\n` count + 1).
    LineOutOfRange { line: u32, line_count: usize },
}

impl std::fmt::Display for PositionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PositionError::LineOutOfRange { line, line_count } => write!(
                f,
                "line {line} is out of range: the document has {line_count} lines"
            ),
        }
    }
}

impl std::error::Error for PositionError {}

/// Length of `s` in UTF-16 code units: 1 per character up to U+FFFF, 2 per character above
/// (4-byte UTF-8 sequences). `utf16_len("é😀") == 3`.
pub fn utf16_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    if bytes.is_ascii() {
        return bytes.len();
    }
    // Every byte that is not a continuation byte starts a character (1 unit); a 4-byte
    // leader (0xF0..) adds the second unit of the surrogate pair. Branch-free, so it
    // vectorises.
    bytes
        .iter()
        .map(|&b| ((b & 0xC0) != 0x80) as usize + (b >= 0xF0) as usize)
        .sum()
}

/// Length of `s` in columns of `enc`.
pub fn column_len(s: &str, enc: Encoding) -> usize {
    match enc {
        Encoding::Utf8 => s.len(),
        Encoding::Utf16 => utf16_len(s),
    }
}

/// The largest char boundary of `text` at or below `offset` (itself clamped to `text.len()`).
fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The position of byte `offset` of `text`, whose index is `index`.
///
/// Clamping (never fails): an offset inside a UTF-8 character moves back to the character's
/// first byte; an offset beyond the end moves to the end; an offset inside a line break (on the
/// `\n` after a `\r`, or after a `\r` that ends the text) moves to the end of the line's
/// content.
pub fn offset_to_position(text: &str, index: &LineIndex, offset: usize, enc: Encoding) -> Position {
    let offset = floor_char_boundary(text, offset);
    let line = index.line_of(offset, text);
    let span = index.line_span(line, text);
    let offset = offset.clamp(span.start, span.end);
    Position {
        line: saturate(line),
        character: saturate(column_len(&text[span.start..offset], enc)),
    }
}

/// The byte offset of `pos` in `text`, whose index is `index`.
///
/// A column past the end of the line's content clamps to that end (LSP: "if the character
/// value is greater than the line length it defaults back to the line length"); a column
/// inside a character (inside a surrogate pair in UTF-16, or inside a multi-byte sequence in
/// UTF-8) clamps to the character's first byte.
///
/// Errors: [`PositionError::LineOutOfRange`] when `pos.line >= index.line_count()`.
pub fn position_to_offset(
    text: &str,
    index: &LineIndex,
    pos: Position,
    enc: Encoding,
) -> Result<usize, PositionError> {
    let line = pos.line as usize;
    if line >= index.line_count() {
        return Err(PositionError::LineOutOfRange {
            line: pos.line,
            line_count: index.line_count(),
        });
    }
    let span = index.line_span(line, text);
    let content = &text[span.clone()];
    Ok(span.start + advance_columns(content, pos.character as usize, enc))
}

/// Byte length of the longest prefix of `s` that is at most `columns` columns of `enc` long
/// and ends on a char boundary (so a column inside a character stops before it).
fn advance_columns(s: &str, columns: usize, enc: Encoding) -> usize {
    let bytes = s.as_bytes();
    let n = columns.min(bytes.len());
    match enc {
        Encoding::Utf8 => floor_char_boundary(s, n),
        Encoding::Utf16 => {
            // Fast path: an ASCII prefix has one unit per byte.
            let ascii = bytes[..n].iter().position(|b| !b.is_ascii()).unwrap_or(n);
            if ascii == n {
                return n;
            }
            let mut at = ascii;
            let mut units = ascii;
            while at < bytes.len() {
                let b = bytes[at];
                let (width, len) = match b {
                    0x00..=0x7F => (1, 1),
                    0xC0..=0xDF => (1, 2),
                    0xE0..=0xEF => (1, 3),
                    _ => (2, 4),
                };
                if units + width > columns {
                    break;
                }
                units += width;
                at += len;
            }
            at
        }
    }
}

/// Converts a non-decreasing sequence of byte offsets into positions in O(distance moved) in
/// total: each call measures only the bytes between the previous offset and the new one (plus
/// a binary search when the offset is on a later line). For semantic tokens, which emit
/// thousands of ordered offsets per document, some on lines of 16 MB.
///
/// Going backwards is allowed but re-measures from the start of the offset's line.
/// Clamping is the same as [`offset_to_position`], and so are the results.
#[derive(Debug, Clone)]
pub struct LineCursor<'t> {
    text: &'t str,
    index: &'t LineIndex,
    enc: Encoding,
    /// Current line, its content start and end (bytes).
    line: usize,
    start: usize,
    end: usize,
    /// Start of the next line (or text length): offsets at or past it are on a later line.
    next: usize,
    /// Last offset measured (clamped into `start..=end`) and its column in `enc` units.
    at: usize,
    column: usize,
}

impl<'t> LineCursor<'t> {
    /// A cursor at the start of `text`.
    pub fn new(text: &'t str, index: &'t LineIndex, enc: Encoding) -> LineCursor<'t> {
        let mut cursor = LineCursor {
            text,
            index,
            enc,
            line: 0,
            start: 0,
            end: 0,
            next: 0,
            at: 0,
            column: 0,
        };
        cursor.enter_line(0);
        cursor
    }

    fn enter_line(&mut self, line: usize) {
        let span = self.index.line_span(line, self.text);
        self.line = line;
        self.start = span.start;
        self.end = span.end;
        self.next = if line + 1 < self.index.line_count() {
            self.index.line_start(line + 1, self.text)
        } else {
            // The last line: no later line to move to.
            usize::MAX
        };
        self.at = span.start;
        self.column = 0;
    }

    /// The position of byte `offset` (see [`offset_to_position`] for clamping).
    pub fn position(&mut self, offset: usize) -> Position {
        let offset = floor_char_boundary(self.text, offset);
        if offset >= self.next || offset < self.start {
            self.enter_line(self.index.line_of(offset, self.text));
        }
        let offset = offset.min(self.end);
        if offset < self.at {
            self.at = self.start;
            self.column = 0;
        }
        self.column += column_len(&self.text[self.at..offset], self.enc);
        self.at = offset;
        Position {
            line: saturate(self.line),
            character: saturate(self.column),
        }
    }

    /// The column length in `enc` units of `text[start..end]`, a stretch of one line, which is
    /// how a semantic token's `length` is measured. Does not move the cursor.
    pub fn length(&self, start: usize, end: usize) -> u32 {
        let start = floor_char_boundary(self.text, start);
        let end = floor_char_boundary(self.text, end.max(start));
        saturate(column_len(&self.text[start..end], self.enc))
    }
}

/// A line the rope does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfRange {
    pub line: u32,
    pub line_count: usize,
}

/// Char index in `rope` of `pos`; columns past the line end clamp to it; a column inside a
/// character (half of a surrogate pair, inside a UTF-8 sequence) rounds down.
pub fn rope_char(rope: &ropey::Rope, pos: Position, enc: Encoding) -> Result<usize, OutOfRange> {
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
    use Encoding::{Utf8, Utf16};

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn utf16_lengths() {
        assert_eq!(utf16_len(""), 0);
        assert_eq!(utf16_len("abc"), 3);
        assert_eq!(utf16_len("é"), 1);
        assert_eq!(utf16_len("😀"), 2);
        assert_eq!(utf16_len("a😀é中\u{2028}"), 6);
        assert_eq!("a😀é中\u{2028}".len(), 1 + 4 + 2 + 3 + 3);
    }

    #[test]
    fn emoji_and_accent_columns() {
        // bytes: a=0 😀=1..5 é=5..7 b=7 \n=8 c=9
        let text = "a😀éb\nc";
        let index = LineIndex::new(text);
        let utf16: Vec<Position> = [0, 1, 5, 7, 8, 9, 10]
            .iter()
            .map(|&o| offset_to_position(text, &index, o, Utf16))
            .collect();
        assert_eq!(
            utf16,
            vec![
                pos(0, 0),
                pos(0, 1),
                pos(0, 3),
                pos(0, 4),
                pos(0, 5),
                pos(1, 0),
                pos(1, 1)
            ]
        );
        let utf8: Vec<Position> = [0, 1, 5, 7, 8, 9, 10]
            .iter()
            .map(|&o| offset_to_position(text, &index, o, Utf8))
            .collect();
        assert_eq!(
            utf8,
            vec![
                pos(0, 0),
                pos(0, 1),
                pos(0, 5),
                pos(0, 7),
                pos(0, 8),
                pos(1, 0),
                pos(1, 1)
            ]
        );
        // Offsets inside a character clamp to its start.
        assert_eq!(offset_to_position(text, &index, 3, Utf16), pos(0, 1));
        assert_eq!(offset_to_position(text, &index, 6, Utf8), pos(0, 5));
        // Beyond the end clamps to the end.
        assert_eq!(offset_to_position(text, &index, 99, Utf16), pos(1, 1));
    }

    #[test]
    fn positions_to_offsets() {
        let text = "a😀éb\nc";
        let index = LineIndex::new(text);
        let at = |p, e| position_to_offset(text, &index, p, e).unwrap();
        assert_eq!(at(pos(0, 0), Utf16), 0);
        assert_eq!(at(pos(0, 1), Utf16), 1);
        // Inside the surrogate pair: clamps to the emoji's start.
        assert_eq!(at(pos(0, 2), Utf16), 1);
        assert_eq!(at(pos(0, 3), Utf16), 5);
        assert_eq!(at(pos(0, 4), Utf16), 7);
        assert_eq!(at(pos(0, 5), Utf16), 8);
        // Past the line end: clamps to the line end, never onto the next line.
        assert_eq!(at(pos(0, 6), Utf16), 8);
        assert_eq!(at(pos(0, u32::MAX), Utf16), 8);
        assert_eq!(at(pos(1, 7), Utf16), 10);
        // UTF-8 columns inside a character clamp to its start.
        assert_eq!(at(pos(0, 3), Utf8), 1);
        assert_eq!(at(pos(0, 5), Utf8), 5);
        assert_eq!(at(pos(0, 6), Utf8), 5);
        assert_eq!(at(pos(0, 7), Utf8), 7);
        assert_eq!(at(pos(0, 100), Utf8), 8);
    }

    #[test]
    fn line_out_of_range_is_an_error() {
        let text = "ab\ncd\n";
        let index = LineIndex::new(text);
        // Line 2 is the empty line after the final newline: it exists.
        assert_eq!(position_to_offset(text, &index, pos(2, 0), Utf16), Ok(6));
        assert_eq!(position_to_offset(text, &index, pos(2, 5), Utf8), Ok(6));
        let err = position_to_offset(text, &index, pos(3, 0), Utf16).unwrap_err();
        assert_eq!(
            err,
            PositionError::LineOutOfRange {
                line: 3,
                line_count: 3
            }
        );
        assert_eq!(
            err.to_string(),
            "line 3 is out of range: the document has 3 lines"
        );
        let empty = LineIndex::new("");
        assert_eq!(position_to_offset("", &empty, pos(0, 4), Utf8), Ok(0));
        assert!(position_to_offset("", &empty, pos(1, 0), Utf8).is_err());
    }

    #[test]
    fn crlf_and_unicode_separators() {
        // U+2028 is a character of the line (3 bytes, 1 UTF-16 unit), CRLF is a line break.
        let text = "x\u{2028}y\r\nz\r";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 3);
        // bytes: x=0 U+2028=1..4 y=4 \r=5 \n=6 z=7 \r=8 (len 9)
        assert_eq!(offset_to_position(text, &index, 4, Utf16), pos(0, 2));
        // On the "\r" of CRLF: end of content. On the "\n": clamped to the same place.
        assert_eq!(offset_to_position(text, &index, 5, Utf16), pos(0, 3));
        assert_eq!(offset_to_position(text, &index, 6, Utf16), pos(0, 3));
        assert_eq!(offset_to_position(text, &index, 7, Utf8), pos(1, 0));
        // A CR ending the text ends a line (LSP 3.17; issue 25): the last line is empty.
        assert_eq!(offset_to_position(text, &index, 8, Utf8), pos(1, 1));
        assert_eq!(offset_to_position(text, &index, 9, Utf8), pos(2, 0));
        assert_eq!(offset_to_position(text, &index, 10, Utf8), pos(2, 0));
        assert_eq!(position_to_offset(text, &index, pos(0, 9), Utf16), Ok(5));
        assert_eq!(position_to_offset(text, &index, pos(1, 9), Utf16), Ok(8));
        assert_eq!(position_to_offset(text, &index, pos(2, 9), Utf16), Ok(9));
        // A lone CR inside a line ends it as an editor shows it.
        let text = "ab\rcd\ne";
        let index = LineIndex::new(text);
        assert_eq!(offset_to_position(text, &index, 4, Utf8), pos(1, 1));
        assert_eq!(position_to_offset(text, &index, pos(1, 0), Utf8), Ok(3));
        assert_eq!(position_to_offset(text, &index, pos(2, 0), Utf8), Ok(6));
    }

    #[test]
    fn cursor_follows_increasing_offsets() {
        let text = "héllo 😀 wörld\n\nsecond 😀😀 line\r\nthird";
        let index = LineIndex::new(text);
        for enc in [Utf8, Utf16] {
            let mut cursor = LineCursor::new(text, &index, enc);
            for offset in 0..=text.len() + 1 {
                assert_eq!(
                    cursor.position(offset),
                    offset_to_position(text, &index, offset, enc),
                    "offset {offset} {enc:?}"
                );
            }
            // Going back re-measures and stays right.
            assert_eq!(cursor.position(3), offset_to_position(text, &index, 3, enc));
            assert_eq!(cursor.position(1), offset_to_position(text, &index, 1, enc));
        }
        let cursor = LineCursor::new(text, &index, Utf16);
        // "😀 w" = 2 + 1 + 1 units, 4 + 1 + 1 bytes.
        assert_eq!(cursor.length(7, 13), 4);
        assert_eq!(cursor.length(13, 7), 0);
    }

    #[test]
    fn cursor_on_a_long_line_is_linear() {
        // 4 MB line with a non-ASCII character every 64 bytes; 65 536 ordered queries. A
        // quadratic cursor would take minutes here.
        let chunk = format!("{}é", "x".repeat(62));
        let text = chunk.repeat(1 << 16);
        let index = LineIndex::new(&text);
        let mut cursor = LineCursor::new(&text, &index, Utf16);
        let mut last = pos(0, 0);
        for k in 0..(1usize << 16) {
            last = cursor.position(k * 64);
        }
        assert_eq!(last, pos(0, 63 * ((1 << 16) - 1)));
    }

    /// A tiny deterministic generator (SplitMix64), so tests need no new dependency.
    struct SplitMix(u64);

    impl SplitMix {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    const ALPHABET: &[&str] = &[
        "a", "b", " ", "{", "\"", "\\", "\n", "\r\n", "\r", "é", "中", "😀", "\u{2028}",
        "\u{2029}", "\u{85}", "\u{FFFD}", "\t",
    ];

    fn random_text(rng: &mut SplitMix) -> String {
        let n = rng.below(40);
        (0..n)
            .map(|_| ALPHABET[rng.below(ALPHABET.len())])
            .collect()
    }

    /// Reference positions computed the slow, obvious way.
    fn naive_position(text: &str, offset: usize, enc: Encoding) -> Position {
        // Breaks as LSP 3.17 counts them: `\r\n`, `\n`, and a lone `\r` (issue 25).
        let before = &text[..offset]
            .replace("\r\n", "\n\u{0}")
            .replace('\r', "\n");
        let line = before.matches('\n').count();
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line_start = line_start + usize::from(before[line_start..].starts_with('\u{0}'));
        let column = &text[line_start..offset];
        Position {
            line: line as u32,
            character: match enc {
                Utf8 => column.len() as u32,
                Utf16 => column.encode_utf16().count() as u32,
            },
        }
    }

    /// True when `offset` sits inside a line break: after the `\r` of a CRLF. Such offsets
    /// are not addressable and map to the content end.
    fn inside_line_break(text: &str, offset: usize) -> bool {
        offset > 0
            && offset < text.len()
            && text.as_bytes()[offset - 1] == b'\r'
            && text.as_bytes()[offset] == b'\n'
    }

    #[test]
    fn round_trips_at_every_char_boundary() {
        let mut rng = SplitMix(0x5EED);
        let mut checked = 0;
        for _ in 0..2000 {
            let text = random_text(&mut rng);
            let index = LineIndex::new(&text);
            for enc in [Utf8, Utf16] {
                let mut cursor = LineCursor::new(&text, &index, enc);
                for offset in (0..=text.len()).filter(|&o| text.is_char_boundary(o)) {
                    let p = offset_to_position(&text, &index, offset, enc);
                    assert_eq!(cursor.position(offset), p, "{text:?} @{offset} {enc:?}");
                    if inside_line_break(&text, offset) {
                        assert_eq!(position_to_offset(&text, &index, p, enc), Ok(offset - 1));
                        continue;
                    }
                    assert_eq!(p, naive_position(&text, offset, enc), "{text:?} @{offset}");
                    assert_eq!(
                        position_to_offset(&text, &index, p, enc),
                        Ok(offset),
                        "{text:?} @{offset} {enc:?} {p:?}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 20_000, "only {checked} offsets checked");
    }
}
