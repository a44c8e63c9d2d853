//! Line starts of a text as an editor counts them (LSP 3.17 "Text Documents": `\n`, `\r\n`
//! and `\r` each end a line; issue 25, Low list: a lone `\r` was line content here, so the
//! lines of a raw document holding one disagreed with the editor's). U+2028, U+2029 and U+0085
//! are ordinary line content (DESIGN.md §7: U+2028 inside JSON strings is not a line break;
//! FORMATS.md §4 hazard checklist).
//!
//! A text holding `n` line breaks has `n + 1` lines, the last one possibly empty (after a
//! final break) or unterminated (a torn line of a file still being written; the formats layer
//! decides what it is). A `\r` right before a `\n` is one break with it (CRLF files); a `\r`
//! ending the text is a break of its own until an appended `\n` makes it the first half of a
//! CRLF ([`LineIndex::append`] joins them).
//!
//! Records are still split on `\n` only (`formats::Reader`): a record whose line holds a
//! lone `\r` spans two lines here, and its `model::Entry::line` is the first of them.
//!
//! Memory (issue 25 item 8; DESIGN.md §6, tiny lines cost no more per byte than realistic
//! ones): not every line start is kept, only checkpoints `(line, offset)` every
//! [`EVERY_LINES`] lines or [`EVERY_BYTES`] bytes, whichever comes first; a start between two
//! is found by a `memchr2` scan of at most [`EVERY_BYTES`] bytes from the checkpoint before
//! it, with the same break rules. 8 bytes a checkpoint (16 past 4 GiB): on 10 M lines of
//! `{}` (30 MB) 5 MB instead of 40 MB (4 bytes a line before, 8 before that).

use std::ops::Range;

/// A checkpoint is kept at least every `EVERY_LINES` lines (issue 25 item 8: on tiny lines
/// such as `{}`, 8 bytes of checkpoint per 16 lines, 0.5 byte a line instead of 4). Measured
/// on 10 M `{}` lines (30 MB): peak of a view 66 -> 34 MB, of a raw document 95 -> 63 MB;
/// `benches/read.rs` positions on those lines 0.77 -> 1.42 M round trips/s, the index built
/// at 170 -> 276 MB/s; realistic text (100 MB) unchanged (0.04 M/s, ~9 GB/s). A scan of 16
/// tiny lines is a few `memchr2` hits; more lines a checkpoint would halve a memory already
/// small beside the rest of a view.
const EVERY_LINES: usize = 16;

/// ... and at the first line start at least `EVERY_BYTES` bytes after the previous
/// checkpoint, so that finding a line start never scans more than this many bytes (a line of
/// this length or longer always starts the line after it on a checkpoint).
const EVERY_BYTES: usize = 4096;

/// Line starts of one text, kept sparsely: the exact number of lines, the start of the last
/// line, and checkpoints `(line, offset)` of some line starts ([`EVERY_LINES`],
/// [`EVERY_BYTES`]); any other start is found by scanning forward from the checkpoint before
/// it with `memchr2`, at most [`EVERY_BYTES`] bytes. All offsets are byte offsets into that
/// text; all line numbers are 0-based.
///
/// The index does not keep the text: methods that need content take it again, and it must be
/// the same text (or, after [`LineIndex::append`], the grown text).
///
/// Memory (issue 25 item 8): 8 bytes a checkpoint (16 past 4 GiB), i.e. 0.5 byte a line on
/// 10 M lines of `{}` (5 MB instead of 40 MB), and at most 8 bytes per 4 KiB otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    /// Line numbers of the checkpoints, ascending; `mark_lines[0] == 0`.
    mark_lines: Starts,
    /// Offsets of the checkpoints' line starts, ascending; `mark_offsets[0] == 0`.
    mark_offsets: Starts,
    /// Number of lines (line breaks + 1), at least 1.
    lines: usize,
    /// Byte offset of the first byte of the last line.
    last_start: usize,
    /// Length of the indexed text in bytes.
    len: usize,
}

impl Default for LineIndex {
    /// The index of the empty text: one empty line.
    fn default() -> Self {
        LineIndex {
            mark_lines: Starts::Narrow(vec![0]),
            mark_offsets: Starts::Narrow(vec![0]),
            lines: 1,
            last_start: 0,
            len: 0,
        }
    }
}

/// Ascending numbers (checkpoint lines or offsets): 4 bytes each while every one fits a
/// `u32` (a text below 4 GiB), 8 (`usize`) once one does not. Equality and `Debug` are by
/// value, whatever the storage.
#[derive(Clone)]
enum Starts {
    /// Every number is at most `u32::MAX`.
    Narrow(Vec<u32>),
    /// Some number did not fit a `u32` (a text of 4 GiB or more); never narrowed back.
    Wide(Vec<usize>),
}
impl Starts {
    fn len(&self) -> usize {
        match self {
            Starts::Narrow(v) => v.len(),
            Starts::Wide(v) => v.len(),
        }
    }

    fn get(&self, i: usize) -> Option<usize> {
        match self {
            // Lossless: `usize` is at least 32 bits on every target this builds for.
            Starts::Narrow(v) => v.get(i).map(|&s| s as usize),
            Starts::Wide(v) => v.get(i).copied(),
        }
    }

    fn last(&self) -> Option<usize> {
        self.get(self.len().checked_sub(1)?)
    }

    fn pop(&mut self) {
        match self {
            Starts::Narrow(v) => {
                v.pop();
            }
            Starts::Wide(v) => {
                v.pop();
            }
        }
    }

    /// Appends `at`, widening the storage first when it does not fit a `u32`.
    fn push(&mut self, at: usize) {
        match self {
            Starts::Narrow(v) => match u32::try_from(at) {
                Ok(at) => v.push(at),
                Err(_) => {
                    let mut wide: Vec<usize> = Vec::with_capacity(v.len() + 1);
                    wide.extend(v.iter().map(|&s| s as usize));
                    wide.push(at);
                    *self = Starts::Wide(wide);
                }
            },
            Starts::Wide(v) => v.push(at),
        }
    }

    /// How many starts are at most `offset` (the starts are ascending).
    fn count_up_to(&self, offset: usize) -> usize {
        match self {
            Starts::Narrow(v) => match u32::try_from(offset) {
                Ok(offset) => v.partition_point(|&s| s <= offset),
                // Above every `u32`, so above every start.
                Err(_) => v.len(),
            },
            Starts::Wide(v) => v.partition_point(|&s| s <= offset),
        }
    }
}

impl PartialEq for Starts {
    fn eq(&self, other: &Starts) -> bool {
        match (self, other) {
            (Starts::Narrow(a), Starts::Narrow(b)) => a == b,
            (Starts::Wide(a), Starts::Wide(b)) => a == b,
            _ => self.len() == other.len() && (0..self.len()).all(|i| self.get(i) == other.get(i)),
        }
    }
}

impl Eq for Starts {}

impl std::fmt::Debug for Starts {
    /// The starts as a list of numbers (as `Vec<usize>` printed them).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries((0..self.len()).filter_map(|i| self.get(i)))
            .finish()
    }
}

impl LineIndex {
    /// Indexes `text`: one `memchr2` scan for `\n` and `\r`, O(bytes). About 100 MB in well
    /// under 100 ms in release builds (see `benches/read.rs`).
    pub fn new(text: &str) -> LineIndex {
        let mut index = LineIndex::default();
        index.scan_from(text, 0);
        index
    }

    /// Updates the index after the text grew append-only from `old_len` bytes to `text.len()`
    /// bytes (`text[..old_len]` unchanged). Only the appended bytes are scanned, so the cost is
    /// proportional to `text.len() - old_len`; the last line of the old text (possibly a torn
    /// line) simply continues.
    ///
    /// When the call does not describe an append of the indexed text (`old_len` differs from
    /// [`LineIndex::len`], or `text` is shorter than `old_len`) the index is rebuilt from
    /// scratch instead: never wrong, only slower.
    pub fn append(&mut self, text: &str, old_len: usize) {
        if old_len != self.len || text.len() < old_len {
            *self = LineIndex::new(text);
            return;
        }
        self.scan_from(text, old_len);
    }

    /// Extends the index from [`LineIndex::len`] to all of `text`, given the offsets after
    /// the line breaks of `text[self.len()..]`, in order, as another scan of those bytes found
    /// them (`formats::Reader::feed_indexing`: issue 12, the bytes scanned once); only the
    /// checkpoints among them are kept. The offsets
    /// may stop before the end of `text` (the reader does not read a torn last line): the
    /// bytes after the last of them are scanned here. `text` must start with the indexed text.
    /// Offsets that do not follow a break of that part, or that are out of order, make it
    /// scan the bytes itself ([`LineIndex::append`]): never wrong, only slower. Debug builds
    /// also check that no break was left out.
    pub fn extend_found(&mut self, text: &str, found: Vec<usize>) {
        let from = self.len;
        let bytes = text.as_bytes();
        if text.len() < from {
            self.append(text, from);
            return;
        }
        self.rejoin_crlf(bytes);
        let mut last = self.last_start.max(from);
        let trusted = found.iter().all(|&at| {
            let ok = at > last && at <= bytes.len() && ends_a_line(bytes, at);
            last = at;
            ok
        });
        if !trusted {
            self.scan_from(text, from);
            return;
        }
        let scanned_from = found.last().copied().unwrap_or(from);
        if cfg!(debug_assertions) {
            let mut all = Vec::new();
            push_breaks(bytes, from, scanned_from, |at| all.push(at));
            assert_eq!(found, all, "a line start was left out");
        }
        for at in found {
            self.push(at);
        }
        push_breaks(bytes, scanned_from, bytes.len(), |at| self.push(at));
        self.len = text.len();
    }

    /// Records the line starts found in `text[from..]` and sets the length to `text.len()`.
    fn scan_from(&mut self, text: &str, from: usize) {
        let bytes = text.as_bytes();
        self.rejoin_crlf(bytes);
        push_breaks(bytes, from, bytes.len(), |at| self.push(at));
        self.len = text.len();
    }

    /// Records a new last line starting at `at`, as a checkpoint when [`EVERY_LINES`] lines
    /// or [`EVERY_BYTES`] bytes have passed since the last checkpoint.
    fn push(&mut self, at: usize) {
        let line = self.lines;
        self.lines += 1;
        self.last_start = at;
        let mark_line = self.mark_lines.last().unwrap_or(0);
        let mark_offset = self.mark_offsets.last().unwrap_or(0);
        if line - mark_line >= EVERY_LINES || at - mark_offset >= EVERY_BYTES {
            self.mark_lines.push(line);
            self.mark_offsets.push(at);
        }
    }

    /// A `\r` that ended the indexed text started a line of its own; when the grown `bytes`
    /// go on with a `\n`, the two are one CRLF break, whose line starts after the `\n`.
    fn rejoin_crlf(&mut self, bytes: &[u8]) {
        let len = self.len;
        if len > 0
            && self.lines > 1
            && self.last_start == len
            && bytes.get(len - 1) == Some(&b'\r')
            && bytes.get(len) == Some(&b'\n')
        {
            let line = self.lines - 1;
            if self.mark_lines.last() == Some(line) {
                self.mark_lines.pop();
                self.mark_offsets.pop();
            }
            self.lines -= 1;
            // The indexed text only: its `\r` at the end is still a break there.
            let indexed = &bytes[..len];
            self.last_start = self.scanned_start(indexed, self.lines - 1);
        }
    }

    /// The indexed part of `text` (all of it unless `text` is a stale, longer text).
    fn indexed<'t>(&self, text: &'t str) -> &'t [u8] {
        &text.as_bytes()[..text.len().min(self.len)]
    }

    /// Start of `line` in the indexed `bytes`: the text length past the last line.
    fn start_in(&self, bytes: &[u8], line: usize) -> usize {
        if line >= self.lines {
            self.len
        } else if line + 1 == self.lines {
            self.last_start
        } else {
            self.scanned_start(bytes, line)
        }
    }

    /// Start of `line` (`line < self.lines`) found from the checkpoint at or before it: at
    /// most [`EVERY_BYTES`] bytes scanned, since a start that far from its checkpoint is one.
    /// With a stale text that lacks it, the length of `bytes`.
    fn scanned_start(&self, bytes: &[u8], line: usize) -> usize {
        // `mark_lines[0] == 0 <= line`, so the count is at least 1.
        let k = self.mark_lines.count_up_to(line) - 1;
        let mark_line = self.mark_lines.get(k).unwrap_or(0);
        let mark_offset = self.mark_offsets.get(k).unwrap_or(0);
        if mark_line == line {
            return mark_offset;
        }
        let to = mark_offset.saturating_add(EVERY_BYTES);
        nth_start(bytes, mark_offset, to, line - mark_line).unwrap_or(bytes.len())
    }

    /// Start of the line after `line`, which starts at `start`: the first break after
    /// `start` when within [`EVERY_BYTES`] bytes, else a checkpoint (a line that long always
    /// has one after it).
    fn next_start(&self, bytes: &[u8], line: usize, start: usize) -> usize {
        if line + 2 >= self.lines {
            return self.start_in(bytes, line.saturating_add(1));
        }
        let to = start.saturating_add(EVERY_BYTES);
        if let Some(next) = nth_start(bytes, start, to, 1) {
            return next;
        }
        if to >= bytes.len() {
            // A stale text shorter than the indexed one.
            return bytes.len();
        }
        self.scanned_start(bytes, line + 1)
    }

    /// Number of lines as an editor counts them: the number of line breaks plus one. The empty
    /// text has 1 (empty) line; `"a\n"` has 2, the second one empty; so has `"a\rb"`.
    pub fn line_count(&self) -> usize {
        self.lines
    }

    /// Number of lines that hold at least one byte or are terminated by a break, as
    /// `model::Transcript::line_count` counts them: [`LineIndex::line_count`] minus the empty
    /// last line after a final `\n` (or of an empty text).
    pub fn record_line_count(&self) -> usize {
        if self.last_start == self.len {
            self.lines - 1
        } else {
            self.lines
        }
    }

    /// Length of the indexed text in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the indexed text is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Byte offset of the first byte of `line` in `text`, the indexed text (scanned from the
    /// checkpoint before it, at most 4 KiB). Lines past the last clamp to the text length.
    pub fn line_start(&self, line: usize, text: &str) -> usize {
        self.start_in(self.indexed(text), line)
    }

    /// Byte offset just past the line break of `line` (the start of the next line), or the
    /// text length for the last line. Lines past the last clamp to the text length. `text`
    /// is the indexed text, as for [`LineIndex::line_start`].
    pub fn line_end_with_break(&self, line: usize, text: &str) -> usize {
        self.start_in(self.indexed(text), line.saturating_add(1))
    }

    /// Byte range of the content of `line` in `text`: without its break (`\n`, `\r\n` or a
    /// lone `\r`). For a record line without a lone `\r` this range equals
    /// `model::Entry::span` of the record on that line. Lines past the last give the empty
    /// range at the end of the text.
    ///
    /// `text` must be the indexed text; with any other text (a stale index) the range is
    /// still a valid, char-aligned range of `text`, only not a meaningful one.
    pub fn line_span(&self, line: usize, text: &str) -> Range<usize> {
        let bytes = self.indexed(text);
        let raw_start = self.start_in(bytes, line);
        let raw_end = if line >= self.lines {
            self.len
        } else {
            self.next_start(bytes, line, raw_start)
        };
        let len = floor_char_boundary(text, text.len().min(self.len));
        let start = floor_char_boundary(text, raw_start.min(len));
        let mut end = floor_char_boundary(text, raw_end.min(len)).max(start);
        let bytes = text.as_bytes();
        if end > start && bytes[end - 1] == b'\n' {
            end -= 1;
        }
        if end > start && bytes[end - 1] == b'\r' {
            end -= 1;
        }
        start..end
    }

    /// The line holding byte `offset` of `text`, the indexed text (binary search of the
    /// checkpoints, O(log lines), then a scan of at most 4 KiB). An offset on a line break
    /// belongs to the line that break ends; offsets past the end clamp to the text length,
    /// which belongs to the last line.
    pub fn line_of(&self, offset: usize, text: &str) -> usize {
        let offset = offset.min(self.len);
        if offset >= self.last_start {
            return self.lines - 1;
        }
        // `mark_offsets[0] == 0 <= offset`, so the count is at least 1.
        let k = self.mark_offsets.count_up_to(offset) - 1;
        let mark_line = self.mark_lines.get(k).unwrap_or(0);
        let mark_offset = self.mark_offsets.get(k).unwrap_or(0);
        let bytes = self.indexed(text);
        // Every start between this checkpoint and the next is below `mark_offset + EVERY_BYTES`.
        let to = offset
            .min(mark_offset.saturating_add(EVERY_BYTES))
            .min(bytes.len());
        if to <= mark_offset {
            return mark_line;
        }
        (mark_line + count_breaks(bytes, mark_offset, to)).min(self.lines - 1)
    }
}

/// The start of the `n`-th line (`n >= 1`) beginning after a break in `bytes[from..to]`
/// (`to` clamped to the length), with the break rules of [`push_breaks`]; `None` when there
/// are fewer.
fn nth_start(bytes: &[u8], from: usize, to: usize, n: usize) -> Option<usize> {
    let to = to.min(bytes.len());
    if from >= to || n == 0 {
        return None;
    }
    let mut left = n;
    for i in memchr::memchr2_iter(b'\n', b'\r', &bytes[from..to]) {
        let at = from + i;
        if bytes[at] == b'\n' || bytes.get(at + 1) != Some(&b'\n') {
            left -= 1;
            if left == 0 {
                return Some(at + 1);
            }
        }
    }
    None
}

/// True when byte offset `at` (`0 < at <= bytes.len()`) of `bytes` starts a line: it follows
/// a `\n`, or a `\r` that is not followed by a `\n`.
fn ends_a_line(bytes: &[u8], at: usize) -> bool {
    match bytes[at - 1] {
        b'\n' => true,
        b'\r' => bytes.get(at) != Some(&b'\n'),
        _ => false,
    }
}

/// Gives `push` the start of every line that begins in `(from, to]` of `bytes`, in order:
/// after each `\n`, and after each `\r` not followed by a `\n` (a `\r` ending `bytes` counts).
fn push_breaks(bytes: &[u8], from: usize, to: usize, mut push: impl FnMut(usize)) {
    for i in memchr::memchr2_iter(b'\n', b'\r', &bytes[from..to]) {
        let at = from + i;
        if bytes[at] == b'\n' || bytes.get(at + 1) != Some(&b'\n') {
            push(at + 1);
        }
    }
}

/// How many lines begin in `(from, to]` of `bytes` (the starts [`push_breaks`] pushes): one per
/// `\n`, and one per `\r` not followed by a `\n` (a `\r` ending `bytes` counts), LSP 3.17's
/// line ends. For numbering lines without an index (the loader's invalid-UTF-8 lines, issue 25).
pub(crate) fn count_breaks(bytes: &[u8], from: usize, to: usize) -> usize {
    memchr::memchr2_iter(b'\n', b'\r', &bytes[from..to])
        .filter(|&i| bytes[from + i] == b'\n' || bytes.get(from + i + 1) != Some(&b'\n'))
        .count()
}

/// The largest char boundary of `text` at or below `offset` (`offset <= text.len()`).
fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str) -> Vec<&str> {
        let index = LineIndex::new(text);
        (0..index.line_count())
            .map(|l| &text[index.line_span(l, text)])
            .collect()
    }

    #[test]
    fn empty_text_has_one_empty_line() {
        let index = LineIndex::new("");
        assert_eq!(index.line_count(), 1);
        assert_eq!(index.record_line_count(), 0);
        assert_eq!(index.len(), 0);
        assert!(index.is_empty());
        assert_eq!(index.line_span(0, ""), 0..0);
        assert_eq!(index.line_of(0, ""), 0);
        assert_eq!(index.line_of(10, ""), 0);
        assert_eq!(index, LineIndex::default());
    }

    #[test]
    fn unicode_separators_are_content() {
        // U+2028, U+2029 and U+0085 are content (DESIGN.md §7).
        let text = "a\u{2028}b\u{2029}c\u{85}d\ne";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 2);
        assert_eq!(index.record_line_count(), 2);
        assert_eq!(index.line_start(1, text), text.len() - 1);
        assert_eq!(spans(text), vec!["a\u{2028}b\u{2029}c\u{85}d", "e"]);
    }

    /// Issue 25, Low list: LSP 3.17 ends a line at `\n`, `\r\n` and a lone `\r`, as editors
    /// do; before, a lone `\r` was content and every later line was one line off.
    #[test]
    fn a_lone_cr_ends_a_line() {
        let text = "a\rb\r\nc\r\rd\n\re";
        let index = LineIndex::new(text);
        assert_eq!(spans(text), vec!["a", "b", "c", "", "d", "", "e"]);
        assert_eq!(index.line_count(), 7);
        assert_eq!(index.record_line_count(), 7);
        assert_eq!(index.line_start(1, text), 2);
        assert_eq!(index.line_start(2, text), 5);
        assert_eq!(index.line_of(1, text), 0); // the `\r` belongs to the line it ends
        assert_eq!(index.line_of(2, text), 1);
        assert_eq!(index.line_of(4, text), 1); // the `\n` of a CRLF
        assert_eq!(index.line_end_with_break(1, text), 5);
        // A `\r` ending the text ends a line; an appended `\n` makes it one CRLF break.
        let mut index = LineIndex::new("a\r");
        assert_eq!(index.line_count(), 2);
        assert_eq!(index.record_line_count(), 1);
        index.append("a\r\nb", 2);
        assert_eq!(index, LineIndex::new("a\r\nb"));
        assert_eq!(index.line_count(), 2);
        let mut index = LineIndex::new("a\r");
        index.append("a\rb", 2);
        assert_eq!(index, LineIndex::new("a\rb"));
        assert_eq!(index.line_count(), 2);
        // Appended byte by byte, every prefix indexes as a fresh scan does.
        let text = "{}\r\n\r{\"a\":\"x\ry\"}\r\r\n\n\r";
        let mut index = LineIndex::default();
        for cut in 1..=text.len() {
            index.append(&text[..cut], cut - 1);
            assert_eq!(index, LineIndex::new(&text[..cut]), "cut {cut}");
        }
    }

    #[test]
    fn crlf_is_excluded_from_content() {
        let text = "ab\r\ncd\r\n";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 3);
        assert_eq!(index.record_line_count(), 2);
        assert_eq!(index.line_span(0, text), 0..2);
        assert_eq!(index.line_span(1, text), 4..6);
        assert_eq!(index.line_span(2, text), 8..8);
        assert_eq!(index.line_end_with_break(0, text), 4);
        assert_eq!(index.line_end_with_break(2, text), 8);
        // A CR at the end of the text ends the line (it may become the first half of a CRLF).
        assert_eq!(LineIndex::new("x\r").line_span(0, "x\r"), 0..1);
        // A line that is only "\r\n", then a lone "\r".
        assert_eq!(spans("\r\n\r"), vec!["", "", ""]);
    }

    #[test]
    fn last_line_without_newline_is_a_line() {
        let text = "{\"a\":1}\n{\"b\"";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 2);
        assert_eq!(index.record_line_count(), 2);
        assert_eq!(index.line_span(1, text), 8..12);
        let text = "{\"a\":1}\n";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 2);
        assert_eq!(index.record_line_count(), 1);
        assert_eq!(index.line_span(1, text), 8..8);
    }

    #[test]
    fn line_of_finds_lines_by_binary_search() {
        let text = "ab\n\ncde\nf";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 4);
        let lines: Vec<usize> = (0..=text.len() + 2)
            .map(|o| index.line_of(o, text))
            .collect();
        //                   a  b  \n \n c  d  e  \n f  end past past
        assert_eq!(lines, vec![0, 0, 0, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
        assert_eq!(index.line_start(3, text), 8);
        assert_eq!(index.line_start(4, text), 9);
        assert_eq!(index.line_span(7, text), 9..9);
    }

    #[test]
    fn append_completes_a_torn_line() {
        let first = "{\"a\":1}\n{\"b\":";
        let mut index = LineIndex::new(first);
        assert_eq!(index.line_count(), 2);
        let grown = "{\"a\":1}\n{\"b\":2}\n{\"c\"";
        index.append(grown, first.len());
        assert_eq!(index, LineIndex::new(grown));
        assert_eq!(index.line_count(), 3);
        assert_eq!(index.line_span(1, grown), 8..15);
        assert_eq!(index.line_span(2, grown), 16..20);
    }

    #[test]
    fn append_after_cr_joins_crlf() {
        let first = "ab\r";
        let mut index = LineIndex::new(first);
        let grown = "ab\r\ncd";
        index.append(grown, first.len());
        assert_eq!(index, LineIndex::new(grown));
        assert_eq!(index.line_span(0, grown), 0..2);
        assert_eq!(index.line_span(1, grown), 4..6);
    }

    #[test]
    fn append_of_many_lines() {
        let mut text = String::from("head");
        let mut index = LineIndex::new(&text);
        for round in 0..50 {
            let old = text.len();
            for i in 0..round {
                text.push_str(&format!("\nline {round}.{i} \u{2028}é"));
            }
            index.append(&text, old);
            assert_eq!(index, LineIndex::new(&text), "round {round}");
        }
        assert_eq!(index.line_count(), 1 + (0..50).sum::<usize>());
    }

    #[test]
    fn a_stale_index_gives_char_aligned_ranges() {
        let index = LineIndex::new("ab\ncd\nef");
        let other = "é中😀";
        for line in 0..4 {
            let span = index.line_span(line, other);
            assert!(other.get(span.clone()).is_some(), "{line} {span:?}");
        }
        // Which range is unspecified: the starts between checkpoints are scanned in `other`.
        assert_eq!(index.line_span(1, other), 5..5);
    }

    #[test]
    fn append_that_is_not_an_append_rebuilds() {
        let mut index = LineIndex::new("a\nb\nc");
        index.append("x\ny", 5);
        assert_eq!(index, LineIndex::new("x\ny"));
        let mut index = LineIndex::new("a\nb");
        index.append("a\nb\nc\nd", 1);
        assert_eq!(index, LineIndex::new("a\nb\nc\nd"));
        assert_eq!(index.line_count(), 4);
    }

    /// Issue 12: line starts found by another scan extend the index as a scan would; offsets
    /// that do not follow a break of the new part, or out of order, fall back to a scan.
    /// Issue 25: breaks after the last offset given (a torn line with a lone `\r`) are
    /// scanned, and a `\r` that ended the indexed text joins the `\n` that follows it.
    #[test]
    fn extend_found_takes_starts_after_breaks_only() {
        let text = "ab\ncd\r\n\nef";
        let mut i = LineIndex::new("ab\nc");
        i.extend_found(text, vec![7, 8]);
        assert_eq!(i, LineIndex::new(text));
        assert_eq!(i.line_count(), 4);
        let text = "ab\nc\rd\ne\rf";
        let mut i = LineIndex::new("ab\n");
        i.extend_found(text, vec![5, 7]);
        assert_eq!(i, LineIndex::new(text));
        assert_eq!(i.line_count(), 5);
        let mut i = LineIndex::new("ab\r");
        i.extend_found("ab\r\ncd\n", vec![4, 7]);
        assert_eq!(i, LineIndex::new("ab\r\ncd\n"));
        for wrong in [vec![8, 7], vec![6, 7, 8], vec![3, 7, 8], vec![7, 8, 99]] {
            let text = "ab\ncd\r\n\nef";
            let mut i = LineIndex::new("ab\nc");
            i.extend_found(text, wrong.clone());
            assert_eq!(i, LineIndex::new(text), "{wrong:?}");
        }
    }

    /// 2^32: one past the largest `u32`, the last line start of a 4 GiB text ending with a
    /// break (`source::load::MAX_FILE_BYTES` is exactly 4 GiB).
    const FOUR_GIB: usize = 1 << 32;

    /// Issue 25 item 8: the checkpoints of a text below 4 GiB take 4 + 4 bytes each, one
    /// per [`EVERY_LINES`] tiny lines.
    #[test]
    fn checkpoints_are_u32_below_4_gib() {
        let text = "{}\n".repeat(1000) + "a\rb\r\nc";
        let index = LineIndex::new(&text);
        // Lines 0, 16, ..., 992: 63 checkpoints for 1003 lines.
        assert!(matches!(&index.mark_lines, Starts::Narrow(v) if v.len() == 63));
        assert!(matches!(&index.mark_offsets, Starts::Narrow(v) if v.len() == 63));
        assert_eq!(index.line_count(), 1003);
        let mut grown = LineIndex::new("{}\n");
        grown.append(&text, 3);
        assert!(matches!(grown.mark_offsets, Starts::Narrow(_)));
        assert_eq!(grown, index);
        assert!(matches!(
            LineIndex::default().mark_offsets,
            Starts::Narrow(_)
        ));
        // A line of 4 KiB or more is followed by a checkpoint.
        let long = "x".repeat(EVERY_BYTES) + "\nab\ncd";
        let index = LineIndex::new(&long);
        assert_eq!(index.mark_lines, Starts::Narrow(vec![0, 1]));
        assert_eq!(index.line_start(2, &long), EVERY_BYTES + 4);
    }

    /// Issue 25 item 8: a start that does not fit a `u32` widens the storage, keeping every
    /// start; `u32::MAX` itself still fits. Equality is by value across the two storages.
    #[test]
    fn starts_widen_at_the_u32_limit() {
        let max = u32::MAX as usize;
        let mut starts = Starts::Narrow(vec![0, 10]);
        starts.push(max);
        assert!(matches!(starts, Starts::Narrow(_)));
        assert_eq!(starts.last(), Some(max));
        starts.push(FOUR_GIB);
        assert!(matches!(&starts, Starts::Wide(v) if *v == vec![0, 10, max, FOUR_GIB]));
        assert_eq!(starts.len(), 4);
        assert_eq!(starts.get(3), Some(FOUR_GIB));
        assert_eq!(starts.get(4), None);
        starts.push(FOUR_GIB + 1);
        assert_eq!(starts.last(), Some(FOUR_GIB + 1));
        starts.pop();
        starts.pop();
        assert!(matches!(starts, Starts::Wide(_)));
        assert_eq!(starts, Starts::Narrow(vec![0, 10, u32::MAX]));
        assert_ne!(starts, Starts::Narrow(vec![0, 10]));
        assert_ne!(starts, Starts::Narrow(vec![0, 10, 11]));
        assert_eq!(format!("{starts:?}"), format!("{:?}", vec![0, 10, max]));
        // Searches on both sides of the limit, in both storages.
        let narrow = Starts::Narrow(vec![0, 10, u32::MAX]);
        let wide = Starts::Wide(vec![0, 10, max, FOUR_GIB]);
        for (offset, n, w) in [
            (0, 1, 1),
            (9, 1, 1),
            (10, 2, 2),
            (max - 1, 2, 2),
            (max, 3, 3),
            (FOUR_GIB - 1, 3, 3),
            (FOUR_GIB, 3, 4),
            (usize::MAX, 3, 4),
        ] {
            assert_eq!(narrow.count_up_to(offset), n, "narrow {offset}");
            assert_eq!(wide.count_up_to(offset), w, "wide {offset}");
        }
    }

    /// A text of exactly 4 GiB ending with `\n` (as big as a file may be): its last line starts
    /// at 2^32, and every method answers as for a small text. Simulated by pushing the starts
    /// a scan would push.
    #[test]
    fn a_4_gib_text_indexes_its_last_line() {
        // Starts at least `EVERY_BYTES` apart are all checkpoints: no text needed to scan.
        let mut index = LineIndex::default();
        for at in [10_000, FOUR_GIB - 10_000, FOUR_GIB] {
            index.push(at);
        }
        index.len = FOUR_GIB;
        assert!(matches!(index.mark_offsets, Starts::Wide(_)));
        let line_of = |offset| index.line_of(offset, "");
        assert_eq!(index.line_count(), 4);
        assert_eq!(index.record_line_count(), 3);
        assert_eq!(index.len(), FOUR_GIB);
        assert_eq!(index.line_start(3, ""), FOUR_GIB);
        assert_eq!(index.line_start(4, ""), FOUR_GIB);
        assert_eq!(index.line_start(2, ""), FOUR_GIB - 10_000);
        assert_eq!(index.line_end_with_break(2, ""), FOUR_GIB);
        assert_eq!(index.line_end_with_break(3, ""), FOUR_GIB);
        assert_eq!(line_of(FOUR_GIB - 10_001), 1);
        assert_eq!(line_of(FOUR_GIB - 10_000), 2);
        assert_eq!(line_of(FOUR_GIB - 1), 2);
        assert_eq!(line_of(FOUR_GIB), 3);
        assert_eq!(line_of(usize::MAX), 3);
        // The same text one byte shorter (its last start, `u32::MAX`, fits) stays narrow.
        let mut index = LineIndex::default();
        for at in [10_000, FOUR_GIB - 1] {
            index.push(at);
        }
        index.len = FOUR_GIB - 1;
        assert!(matches!(index.mark_offsets, Starts::Narrow(_)));
        assert_eq!(index.record_line_count(), 2);
        assert_eq!(index.line_of(FOUR_GIB - 1, ""), 2);
        assert_eq!(index.line_of(usize::MAX, ""), 2);
        assert_eq!(index.line_start(2, ""), FOUR_GIB - 1);
    }

    /// The dense index this one replaced (issue 25 item 8): every line start, found by a
    /// naive byte loop with LSP 3.17's rules, and its methods as they were.
    struct Dense {
        starts: Vec<usize>,
        len: usize,
    }

    impl Dense {
        fn new(text: &str) -> Dense {
            let b = text.as_bytes();
            let mut starts = vec![0];
            for i in 0..b.len() {
                if b[i] == b'\n' || (b[i] == b'\r' && b.get(i + 1) != Some(&b'\n')) {
                    starts.push(i + 1);
                }
            }
            Dense {
                starts,
                len: text.len(),
            }
        }
        fn record_line_count(&self) -> usize {
            let last = self.starts.len() - 1;
            if self.starts[last] == self.len {
                last
            } else {
                last + 1
            }
        }
        fn line_start(&self, line: usize) -> usize {
            self.starts.get(line).copied().unwrap_or(self.len)
        }
        fn line_end_with_break(&self, line: usize) -> usize {
            self.starts.get(line + 1).copied().unwrap_or(self.len)
        }
        fn line_span(&self, line: usize, text: &str) -> Range<usize> {
            let start = self.line_start(line);
            let mut end = self.line_end_with_break(line).max(start);
            let b = text.as_bytes();
            if end > start && b[end - 1] == b'\n' {
                end -= 1;
            }
            if end > start && b[end - 1] == b'\r' {
                end -= 1;
            }
            start..end
        }
        fn line_of(&self, offset: usize) -> usize {
            let offset = offset.min(self.len);
            self.starts.partition_point(|&s| s <= offset) - 1
        }
    }

    /// A random text of `a`, `é`, `😀`, `\n`, `\r`, `\r\n`, empty lines and lines longer than
    /// [`EVERY_BYTES`] (xorshift, seeded: reproducible).
    fn random_text(seed: &mut u64) -> String {
        let mut next = move || {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed
        };
        let pieces = (next() % 400) as usize;
        let mut text = String::new();
        for _ in 0..pieces {
            match next() % 20 {
                0..=3 => text.push('a'),
                4 => text.push('é'),
                5 => text.push('😀'),
                6..=9 => text.push('\n'),
                10 | 11 => text.push('\r'),
                12 | 13 => text.push_str("\r\n"),
                14 => text.push_str("\n\n\r\r\n"),
                15 => text.push_str("{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n"),
                16 if next() % 20 == 0 => {
                    let n = EVERY_BYTES - 8 + (next() % 16) as usize;
                    text.push_str(&"é".repeat(n / 2));
                }
                _ => text.push_str("ab"),
            }
        }
        text
    }

    /// Every public answer of `index` over `text` equals the dense index's, for every line
    /// and every offset (inside a `\r\n`, at the end, past it), and so do positions in both
    /// encodings, both ways.
    fn assert_same_as_dense(index: &LineIndex, text: &str, how: &str) {
        use crate::source::position::{
            Encoding, LineCursor, Position, offset_to_position, position_to_offset,
        };
        let dense = Dense::new(text);
        let lines = dense.starts.len();
        assert_eq!(index.line_count(), lines, "{how}: line_count");
        assert_eq!(
            index.record_line_count(),
            dense.record_line_count(),
            "{how}"
        );
        assert_eq!(index.len(), text.len(), "{how}");
        assert_eq!(index.is_empty(), text.is_empty(), "{how}");
        for line in 0..lines + 3 {
            assert_eq!(
                index.line_start(line, text),
                dense.line_start(line),
                "{how}: start {line}"
            );
            assert_eq!(
                index.line_end_with_break(line, text),
                dense.line_end_with_break(line),
                "{how}: end {line}"
            );
            assert_eq!(
                index.line_span(line, text),
                dense.line_span(line, text),
                "{how}: span {line}"
            );
        }
        for enc in [Encoding::Utf8, Encoding::Utf16] {
            let mut cursor = LineCursor::new(text, index, enc);
            for offset in 0..text.len() + 3 {
                let line = dense.line_of(offset);
                assert_eq!(index.line_of(offset, text), line, "{how}: line_of {offset}");
                let pos = offset_to_position(text, index, offset, enc);
                let mut at = offset.min(text.len());
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                let span = dense.line_span(dense.line_of(at), text);
                let at = at.clamp(span.start, span.end);
                let column = match enc {
                    Encoding::Utf8 => at - span.start,
                    Encoding::Utf16 => text[span.start..at].encode_utf16().count(),
                };
                let want = Position::new(dense.line_of(at) as u32, column as u32);
                assert_eq!(pos, want, "{how}: {enc:?} position of {offset}");
                assert_eq!(
                    cursor.position(offset),
                    want,
                    "{how}: {enc:?} cursor at {offset}"
                );
                assert_eq!(
                    position_to_offset(text, index, pos, enc),
                    Ok(at),
                    "{how}: back {offset}"
                );
            }
            for line in 0..lines {
                let end = Position::new(line as u32, u32::MAX);
                let span = dense.line_span(line, text);
                assert_eq!(
                    position_to_offset(text, index, end, enc),
                    Ok(span.end),
                    "{how}"
                );
            }
        }
    }

    /// Issue 25 item 8: the sparse index (checkpoints, scans between them) answers exactly as
    /// the dense one did, built whole, by appends at random cuts (also between a `\r` and its
    /// `\n`) and by `extend_found` with the starts a reader finds.
    #[test]
    fn checkpoints_answer_as_every_start_did() {
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        for round in 0..60 {
            let text = random_text(&mut seed);
            let whole = LineIndex::new(&text);
            assert_same_as_dense(&whole, &text, &format!("round {round} whole"));
            // Random cuts on char boundaries (a `\r\n` may be cut in two).
            let mut cuts: Vec<usize> = (0..4)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    (seed as usize) % (text.len() + 1)
                })
                .filter(|&c| text.is_char_boundary(c))
                .collect();
            cuts.sort_unstable();
            cuts.push(text.len());
            let mut appended = LineIndex::default();
            let mut found = LineIndex::default();
            let mut old = 0;
            for &cut in &cuts {
                appended.append(&text[..cut], old);
                assert_eq!(
                    appended,
                    LineIndex::new(&text[..cut]),
                    "round {round} cut {cut}"
                );
                // A reader gives the starts after `old`, possibly not all of them.
                let starts: Vec<usize> = Dense::new(&text[..cut])
                    .starts
                    .into_iter()
                    .filter(|&s| s > old)
                    .collect();
                let given = starts.len() - starts.len() / 3;
                found.extend_found(&text[..cut], starts[..given].to_vec());
                assert_eq!(
                    found,
                    LineIndex::new(&text[..cut]),
                    "round {round} found {cut}"
                );
                old = cut;
            }
            assert_same_as_dense(&appended, &text, &format!("round {round} appended"));
            assert_same_as_dense(&found, &text, &format!("round {round} extend_found"));
        }
    }
}
