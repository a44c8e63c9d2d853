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
//! Memory: 4 bytes a line (issue 25 item 8: the starts are kept as `u32` while every one
//! fits, i.e. for any text below 4 GiB; 8 bytes a line, `usize`, once one does not, which
//! `source::load::MAX_FILE_BYTES` allows for the last start of a file of exactly 4 GiB).

use std::ops::Range;

/// Start offsets of the lines of one text. All offsets are byte offsets into that text; all
/// line numbers are 0-based.
///
/// The index does not keep the text: methods that need content take it again, and it must be
/// the same text (or, after [`LineIndex::append`], the grown text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset of the first byte of each line; `starts[0] == 0`, so never empty.
    starts: Starts,
    /// Length of the indexed text in bytes.
    len: usize,
}

impl Default for LineIndex {
    /// The index of the empty text: one empty line.
    fn default() -> Self {
        LineIndex {
            starts: Starts::Narrow(vec![0]),
            len: 0,
        }
    }
}

/// The line starts of a [`LineIndex`], ascending: 4 bytes each while every start fits a
/// `u32` (a text below 4 GiB), 8 (`usize`) once one does not (issue 25 item 8: on 10 M lines
/// of `{}`, 40 MB instead of 80 MB). Equality and `Debug` are by value, whatever the storage.
#[derive(Clone)]
enum Starts {
    /// Every start is at most `u32::MAX`.
    Narrow(Vec<u32>),
    /// Some start did not fit a `u32` (a text of 4 GiB or more); never narrowed back.
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

    fn reserve(&mut self, more: usize) {
        match self {
            Starts::Narrow(v) => v.reserve(more),
            Starts::Wide(v) => v.reserve(more),
        }
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
    /// them (`formats::Reader::feed_indexing`: issue 12, the bytes scanned once). The offsets
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
        let mut last = self.starts.last().unwrap_or(0).max(from);
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
        self.starts.reserve(found.len());
        for at in found {
            self.starts.push(at);
        }
        let starts = &mut self.starts;
        push_breaks(bytes, scanned_from, bytes.len(), |at| starts.push(at));
        self.len = text.len();
    }

    /// Records the line starts found in `text[from..]` and sets the length to `text.len()`.
    fn scan_from(&mut self, text: &str, from: usize) {
        let bytes = text.as_bytes();
        self.rejoin_crlf(bytes);
        let starts = &mut self.starts;
        push_breaks(bytes, from, bytes.len(), |at| starts.push(at));
        self.len = text.len();
    }

    /// A `\r` that ended the indexed text started a line of its own; when the grown `bytes`
    /// go on with a `\n`, the two are one CRLF break, whose line starts after the `\n`.
    fn rejoin_crlf(&mut self, bytes: &[u8]) {
        let len = self.len;
        if len > 0
            && self.starts.len() > 1
            && self.starts.last() == Some(len)
            && bytes.get(len - 1) == Some(&b'\r')
            && bytes.get(len) == Some(&b'\n')
        {
            self.starts.pop();
        }
    }

    /// Number of lines as an editor counts them: the number of line breaks plus one. The empty
    /// text has 1 (empty) line; `"a\n"` has 2, the second one empty; so has `"a\rb"`.
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// Number of lines that hold at least one byte or are terminated by a break, as
    /// `model::Transcript::line_count` counts them: [`LineIndex::line_count`] minus the empty
    /// last line after a final `\n` (or of an empty text).
    pub fn record_line_count(&self) -> usize {
        let last = self.starts.len() - 1;
        if self.starts.get(last) == Some(self.len) {
            last
        } else {
            last + 1
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

    /// Byte offset of the first byte of `line`. Lines past the last clamp to the text length.
    pub fn line_start(&self, line: usize) -> usize {
        self.starts.get(line).unwrap_or(self.len)
    }

    /// Byte offset just past the line break of `line` (the start of the next line), or the
    /// text length for the last line. Lines past the last clamp to the text length.
    pub fn line_end_with_break(&self, line: usize) -> usize {
        self.starts.get(line + 1).unwrap_or(self.len)
    }

    /// Byte range of the content of `line` in `text`: without its break (`\n`, `\r\n` or a
    /// lone `\r`). For a record line without a lone `\r` this range equals
    /// `model::Entry::span` of the record on that line. Lines past the last give the empty
    /// range at the end of the text.
    ///
    /// `text` must be the indexed text; with any other text (a stale index) the range is
    /// still a valid, char-aligned range of `text`, only not a meaningful one.
    pub fn line_span(&self, line: usize, text: &str) -> Range<usize> {
        let len = floor_char_boundary(text, text.len().min(self.len));
        let start = floor_char_boundary(text, self.line_start(line).min(len));
        let mut end = match self.starts.get(line + 1) {
            Some(next) => floor_char_boundary(text, next.min(len)),
            None => len,
        };
        let bytes = text.as_bytes();
        if end > start && bytes[end - 1] == b'\n' {
            end -= 1;
        }
        if end > start && bytes[end - 1] == b'\r' {
            end -= 1;
        }
        start..end
    }

    /// The line holding byte `offset` (binary search, O(log lines)). An offset on a line break
    /// belongs to the line that break ends; offsets past the end clamp to the text length, which belongs
    /// to the last line.
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.len);
        // `starts[0] == 0 <= offset`, so the partition point is at least 1.
        self.starts.count_up_to(offset) - 1
    }
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
        assert_eq!(index.line_of(0), 0);
        assert_eq!(index.line_of(10), 0);
        assert_eq!(index, LineIndex::default());
    }

    #[test]
    fn unicode_separators_are_content() {
        // U+2028, U+2029 and U+0085 are content (DESIGN.md §7).
        let text = "a\u{2028}b\u{2029}c\u{85}d\ne";
        let index = LineIndex::new(text);
        assert_eq!(index.line_count(), 2);
        assert_eq!(index.record_line_count(), 2);
        assert_eq!(index.line_start(1), text.len() - 1);
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
        assert_eq!(index.line_start(1), 2);
        assert_eq!(index.line_start(2), 5);
        assert_eq!(index.line_of(1), 0); // the `\r` belongs to the line it ends
        assert_eq!(index.line_of(2), 1);
        assert_eq!(index.line_of(4), 1); // the `\n` of a CRLF
        assert_eq!(index.line_end_with_break(1), 5);
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
        assert_eq!(index.line_end_with_break(0), 4);
        assert_eq!(index.line_end_with_break(2), 8);
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
        let lines: Vec<usize> = (0..=text.len() + 2).map(|o| index.line_of(o)).collect();
        //                   a  b  \n \n c  d  e  \n f  end past past
        assert_eq!(lines, vec![0, 0, 0, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
        assert_eq!(index.line_start(3), 8);
        assert_eq!(index.line_start(4), 9);
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
        assert_eq!(index.line_span(1, other), 2..5);
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

    /// Issue 25 item 8: the starts of a text below 4 GiB take 4 bytes each.
    #[test]
    fn starts_are_u32_below_4_gib() {
        let text = "{}\n".repeat(1000) + "a\rb\r\nc";
        let index = LineIndex::new(&text);
        assert!(matches!(&index.starts, Starts::Narrow(v) if v.len() == 1003));
        let mut grown = LineIndex::new("{}\n");
        grown.append(&text, 3);
        assert!(matches!(grown.starts, Starts::Narrow(_)));
        assert_eq!(grown, index);
        assert!(matches!(LineIndex::default().starts, Starts::Narrow(_)));
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
        let mut index = LineIndex::default();
        for at in [10, FOUR_GIB - 1, FOUR_GIB] {
            index.starts.push(at);
        }
        index.len = FOUR_GIB;
        assert!(matches!(index.starts, Starts::Wide(_)));
        assert_eq!(index.line_count(), 4);
        assert_eq!(index.record_line_count(), 3);
        assert_eq!(index.len(), FOUR_GIB);
        assert_eq!(index.line_start(3), FOUR_GIB);
        assert_eq!(index.line_start(4), FOUR_GIB);
        assert_eq!(index.line_end_with_break(2), FOUR_GIB);
        assert_eq!(index.line_end_with_break(3), FOUR_GIB);
        assert_eq!(index.line_of(FOUR_GIB - 2), 1);
        assert_eq!(index.line_of(FOUR_GIB - 1), 2);
        assert_eq!(index.line_of(FOUR_GIB), 3);
        assert_eq!(index.line_of(usize::MAX), 3);
        // The same text one byte shorter (its last start, `u32::MAX`, fits) stays narrow.
        let mut index = LineIndex::default();
        for at in [10, FOUR_GIB - 1] {
            index.starts.push(at);
        }
        index.len = FOUR_GIB - 1;
        assert!(matches!(index.starts, Starts::Narrow(_)));
        assert_eq!(index.record_line_count(), 2);
        assert_eq!(index.line_of(FOUR_GIB - 1), 2);
        assert_eq!(index.line_of(usize::MAX), 2);
        assert_eq!(index.line_start(2), FOUR_GIB - 1);
    }
}
