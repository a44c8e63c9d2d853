//! [`Text`]: the text of a transcript source, held either as an owned `String` (an editor's
//! buffer, a small or unusual file) or as a read-only memory map of the file
//! ([`crate::source::mapped`], issue 12). It dereferences to `&str`, so everything that reads
//! a text (`source: &str` in formats, analysis, view and ide) takes either kind unchanged.
//!
//! A mapped text is checked as UTF-8 before any of it is read as `&str`: when it is made
//! ([`Text::mapped`]), or window by window as a build reaches each one ([`Text::mapped_lazily`]
//! and [`Text::prefix`], issue 12: a check of the whole mapping up front faulted every page in
//! once more before the build read it). Its pages are resident only while they are read
//! ([`Text::release`]), and [`Text::torn`] tells its owner that the file was truncated under
//! it (the text then holds zeros and must be read again).

use std::ops::{Deref, Range};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::source::mapped::Mapping;

/// Bytes of a mapped file checked as UTF-8 at a time by [`Text::mapped`] (and by a whole check
/// of a text mapped lazily): 4 MiB.
pub const CHECK_WINDOW: usize = 4 << 20;

/// How often [`Text::reading_spans`] drops a mapped text's resident pages: 5 ms.
pub const DROP_EVERY: std::time::Duration = std::time::Duration::from_millis(5);

/// A source text: owned, or the valid UTF-8 prefix of a mapped file.
#[derive(Clone, Default)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    Owned(String),
    /// `map.bytes()[..len]`: checked as UTF-8 when made (`check` is `None`), or as it is
    /// read (`check` says how far).
    Mapped {
        map: Arc<Mapping>,
        len: usize,
        check: Option<Arc<Check>>,
    },
}

/// How much of a mapped text made by [`Text::mapped_lazily`] is known to be UTF-8 (shared by
/// the clones of the text; any thread may check further).
#[derive(Default)]
struct Check {
    /// `bytes[..valid]` is valid UTF-8 and `valid` is a character boundary. Only grows: each
    /// check starts at the `valid` it read, so the checked ranges always join up.
    valid: AtomicUsize,
    /// The bytes at `valid` are not UTF-8 (set after `valid` took its final value): the text
    /// reads as `bytes[..valid]`, and [`Text::invalid`] tells the owner to read the file
    /// again.
    bad: AtomicBool,
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Owned(String::new())
    }
}

/// The end of a window of [`CHECK_WINDOW`] bytes from `at` in `bytes[..len]`, moved on to a
/// character boundary (at most 3 bytes further) so that each window is checked on its own.
fn window_end(bytes: &[u8], at: usize, len: usize) -> usize {
    let mut end = (at + CHECK_WINDOW).min(len);
    while end < len && bytes[end] & 0xC0 == 0x80 && end - at < CHECK_WINDOW + 3 {
        end += 1;
    }
    end
}

impl Text {
    /// The first `len` bytes of `map` as text, if they are valid UTF-8 (checked with
    /// `simdutf8`, a window of [`CHECK_WINDOW`] bytes at a time, each window's pages released
    /// once checked); `None` otherwise (the caller decodes the file lossily instead).
    pub fn mapped(map: Arc<Mapping>, len: usize) -> Option<Text> {
        let bytes = map.bytes().get(..len)?;
        let mut at = 0;
        while at < len {
            let end = window_end(bytes, at, len);
            simdutf8::basic::from_utf8(&bytes[at..end]).ok()?;
            map.release(at..end);
            at = end;
        }
        Some(Text(Repr::Mapped {
            map,
            len,
            check: None,
        }))
    }

    /// The first `len` bytes of `map` (at most its length) as a text checked as UTF-8 as it
    /// is read, not now (issue 12: the disk view's build checks each window just before its
    /// reader reads it, so the pages are faulted in once, not twice).
    ///
    /// No byte is handed out as `&str` before it is checked: [`Text::prefix`] checks up to
    /// the prefix it returns, and anything else that reads the text as `&str` (`Deref`,
    /// [`Text::as_str`]) checks the rest first. Bytes that are not UTF-8 end the text where
    /// they start: it then reads as its valid prefix and [`Text::invalid`] is true, so that
    /// its owner reads the file again (lossily, with the warnings of an invalid file).
    pub fn mapped_lazily(map: Arc<Mapping>, len: usize) -> Text {
        let len = len.min(map.len());
        Text(Repr::Mapped {
            map,
            len,
            check: Some(Arc::default()),
        })
    }

    /// `map`'s first `len` bytes, of which the first `prefix` are known to be valid UTF-8
    /// (the same file bytes as an earlier mapped text: a followed file that grew); only
    /// `prefix..len` is checked, so an append costs the appended bytes.
    pub fn mapped_after(map: Arc<Mapping>, prefix: usize, len: usize) -> Option<Text> {
        let bytes = map.bytes().get(..len)?;
        if !bytes.is_char_boundary_at(prefix) {
            return None;
        }
        simdutf8::basic::from_utf8(&bytes[prefix..]).ok()?;
        Some(Text(Repr::Mapped {
            map,
            len,
            check: None,
        }))
    }

    /// The text as a string slice. A text made by [`Text::mapped_lazily`] is checked to its
    /// end first (once; a window at a time, each window's pages released once checked), and
    /// reads as its valid prefix when bytes that are not UTF-8 were found.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Owned(s) => s,
            Repr::Mapped { map, len, check } => {
                let end = match check {
                    None => *len,
                    Some(c) => c.checked_to_end(map, *len),
                };
                // SAFETY: `map.bytes()[..end]` was checked as UTF-8: when made (`mapped`,
                // `mapped_after`: `end == len`) or by `checked_to_end` (see `Check`). The
                // file is not ours: a truncation reads zeros past the new end (the text stays
                // valid UTF-8 but for a character cut by that end) and is flagged by `torn`;
                // see the doc of `source::mapped` for what a mapping cannot protect against.
                unsafe { std::str::from_utf8_unchecked(map.bytes().get_unchecked(..end)) }
            }
        }
    }

    /// The first `end` bytes as text: `None` when `end` is past the text's bytes, not at a
    /// character boundary, or when bytes before it are not UTF-8 (a text made by
    /// [`Text::mapped_lazily`]: then [`Text::invalid`] is true). A lazily checked text checks
    /// only the bytes up to `end` it had not checked yet, so a reader that takes longer and
    /// longer prefixes checks each byte once, just before it reads it.
    pub fn prefix(&self, end: usize) -> Option<&str> {
        match &self.0 {
            Repr::Owned(s) => s.get(..end),
            Repr::Mapped { map, len, check } => {
                let bytes = map.bytes().get(..*len)?;
                let ok = match check {
                    None => end <= *len && bytes.is_char_boundary_at(end),
                    Some(c) => c.checked_to(map, *len, end),
                };
                // SAFETY: `bytes[..end]` is valid UTF-8 and `end` a character boundary: the
                // whole text was checked when made and `end` is a boundary of it, or
                // `checked_to` checked up to `end` (see `Check`).
                ok.then(|| unsafe { std::str::from_utf8_unchecked(bytes.get_unchecked(..end)) })
            }
        }
    }

    /// Length in bytes the text has when its bytes are all UTF-8, without checking them (a
    /// lazily checked text found invalid is shorter as `&str`).
    pub fn byte_len(&self) -> usize {
        match &self.0 {
            Repr::Owned(s) => s.len(),
            Repr::Mapped { len, .. } => *len,
        }
    }

    /// The text's bytes, [`Text::byte_len`] of them, not checked as UTF-8 (to find line ends
    /// ahead of the check, or the file's last bytes).
    pub fn raw_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Owned(s) => s.as_bytes(),
            Repr::Mapped { map, len, .. } => &map.bytes()[..*len],
        }
    }

    /// Bytes that are not UTF-8 were found in a text made by [`Text::mapped_lazily`] (by a
    /// reader's [`Text::prefix`] or a whole check): it reads as its valid prefix, and its
    /// owner must read the file again. Never true for other texts; does not check anything.
    pub fn invalid(&self) -> bool {
        match &self.0 {
            Repr::Mapped { check: Some(c), .. } => c.bad.load(Ordering::Acquire),
            _ => false,
        }
    }

    /// Checks the whole text (see [`Text::as_str`]): true when all of it is UTF-8.
    pub fn check_all(&self) -> bool {
        let _ = self.as_str();
        !self.invalid()
    }

    /// True for a mapped file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.0, Repr::Mapped { .. })
    }

    /// The file was truncated under a mapped text (see [`Mapping::torn`]); never for an owned
    /// text.
    pub fn torn(&self) -> bool {
        match &self.0 {
            Repr::Owned(_) => false,
            Repr::Mapped { map, .. } => map.torn(),
        }
    }

    /// Drops the resident pages of byte range `range` of a mapped text (nothing for an owned
    /// one): a reader calls it behind itself as it passes each window.
    pub fn release(&self, range: Range<usize>) {
        if let Repr::Mapped { map, len, .. } = &self.0 {
            map.release(range.start.min(*len)..range.end.min(*len));
        }
    }

    /// Runs `f`, which reads spans anywhere in the text, while a helper thread drops the
    /// resident pages of a mapped text every [`DROP_EVERY`] (an owned text: just `f`).
    ///
    /// Issue 12: the analysis and the rendering read spans of every record (text blocks,
    /// prompts, answers, tool inputs), and a fault maps 64 KiB of file around each (the
    /// kernel's fault-around, which `MADV_RANDOM` does not turn off), so one pass over the
    /// model brought the whole file back beside it. Dropping pages while they may be read is
    /// safe for a read-only file mapping: a reader whose page went away faults it in again
    /// from the page cache, unchanged. Resident file pages then stay within what `f` touches
    /// in [`DROP_EVERY`] (a few MB) at the cost of those faults.
    pub fn reading_spans<T>(&self, f: impl FnOnce() -> T) -> T {
        let Repr::Mapped { map, len, .. } = &self.0 else {
            return f();
        };
        struct Stop<'a>(&'a std::sync::atomic::AtomicBool, std::thread::Thread);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::Release);
                self.1.unpark();
            }
        }
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let dropper = s.spawn(|| {
                while !done.load(std::sync::atomic::Ordering::Acquire) {
                    std::thread::park_timeout(DROP_EVERY);
                    map.release(0..*len);
                }
            });
            // Stops the helper however `f` ends (a panic too: the scope joins it first).
            let _stop = Stop(&done, dropper.thread().clone());
            f()
        })
    }

    /// [`Text::release`] over the whole text: after a build, after an answer that read spans
    /// of it.
    pub fn release_all(&self) {
        self.release(0..self.byte_len());
    }

    /// The text as an owned string to change: a mapped text is copied (once) into a `String`.
    pub fn make_mut(&mut self) -> &mut String {
        if let Repr::Mapped { .. } = self.0 {
            self.0 = Repr::Owned(self.as_str().to_owned());
        }
        match &mut self.0 {
            Repr::Owned(s) => s,
            Repr::Mapped { .. } => unreachable!("made owned above"),
        }
    }

    /// The text as an owned `String` (a copy for a mapped text).
    pub fn into_string(self) -> String {
        match self.0 {
            Repr::Owned(s) => s,
            Repr::Mapped { .. } => self.as_str().to_owned(),
        }
    }
}

impl Check {
    /// Checks `map.bytes()[..len]` up to `end` (issue 12: the part not checked yet only):
    /// true when `bytes[..end]` is valid UTF-8 and `end` a character boundary.
    fn checked_to(&self, map: &Mapping, len: usize, end: usize) -> bool {
        let bytes = &map.bytes()[..len];
        let valid = self.valid.load(Ordering::Acquire);
        if end <= valid {
            return bytes.is_char_boundary_at(end);
        }
        if end > len || self.bad.load(Ordering::Acquire) {
            return false;
        }
        // `bytes[..valid]` is valid and `valid` a boundary: so is `bytes[..end]` when
        // `bytes[valid..end]` is (valid text never ends inside a character).
        if simdutf8::basic::from_utf8(&bytes[valid..end]).is_ok() {
            self.valid.fetch_max(end, Ordering::AcqRel);
            return true;
        }
        // Invalid bytes, or `end` inside a character: the first bad byte decides.
        self.find_bad(map, len, valid);
        end <= self.valid.load(Ordering::Acquire) && bytes.is_char_boundary_at(end)
    }

    /// Checks the whole text: the length of its valid prefix (all of it when it is UTF-8).
    fn checked_to_end(&self, map: &Mapping, len: usize) -> usize {
        let valid = self.valid.load(Ordering::Acquire);
        if valid < len && !self.bad.load(Ordering::Acquire) {
            self.find_bad(map, len, valid);
        }
        self.valid.load(Ordering::Acquire)
    }

    /// Checks `bytes[from..len]` a window at a time (each window's pages released once
    /// checked, as [`Text::mapped`] does) and records where the valid prefix ends: `len`, or
    /// the first byte that is not UTF-8 (then `bad` is set). `from` is a checked boundary.
    fn find_bad(&self, map: &Mapping, len: usize, from: usize) {
        let bytes = &map.bytes()[..len];
        let mut at = from;
        while at < len {
            let end = window_end(bytes, at, len);
            let checked = std::str::from_utf8(&bytes[at..end]);
            map.release(at..end);
            match checked {
                Ok(_) => {
                    self.valid.fetch_max(end, Ordering::AcqRel);
                    at = end;
                }
                Err(e) => {
                    // `bytes[..at + valid_up_to]` is valid: the valid prefix, final.
                    self.valid.fetch_max(at + e.valid_up_to(), Ordering::AcqRel);
                    self.bad.store(true, Ordering::Release);
                    return;
                }
            }
        }
    }
}

trait CharBoundary {
    fn is_char_boundary_at(&self, at: usize) -> bool;
}

impl CharBoundary for [u8] {
    /// `at` is the end of the bytes or not a UTF-8 continuation byte.
    fn is_char_boundary_at(&self, at: usize) -> bool {
        match self.get(at) {
            Some(&b) => b & 0xC0 != 0x80,
            None => at == self.len(),
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text(Repr::Owned(s))
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text(Repr::Owned(s.to_owned()))
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for Text {
    fn eq(&self, o: &Text) -> bool {
        self.as_str() == o.as_str()
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, o: &str) -> bool {
        self.as_str() == o
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, o: &&str) -> bool {
        self.as_str() == *o
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, o: &String) -> bool {
        self.as_str() == o
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn mapped_text_is_checked_and_reads_as_str() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.jsonl");
        std::fs::write(&p, "{\"a\":\"é\"}\n\u{1F600}").unwrap();
        let f = std::fs::File::open(&p).unwrap();
        let len = std::fs::metadata(&p).unwrap().len() as usize;
        let map = Arc::new(Mapping::new(&f, len).unwrap());
        let t = Text::mapped(map.clone(), len).unwrap();
        assert!(t.is_mapped() && !t.torn());
        assert_eq!(t, "{\"a\":\"é\"}\n\u{1F600}");
        // A prefix cutting `é`, or one cutting the emoji, is not text.
        assert!(Text::mapped(map.clone(), 7).is_none());
        assert!(Text::mapped(map.clone(), len - 1).is_none());
        // Only the bytes after a known-valid prefix are checked; the prefix must end at a
        // character boundary.
        let grown = Text::mapped_after(map.clone(), 11, len).unwrap();
        assert_eq!(grown.len(), len);
        assert!(Text::mapped_after(map.clone(), 7, len).is_none());
        // Changing a mapped text copies it into a string.
        let mut owned = t.clone();
        owned.make_mut().push('!');
        assert!(!owned.is_mapped());
        assert_eq!(owned, "{\"a\":\"é\"}\n\u{1F600}!");
        assert_eq!(t.into_string(), "{\"a\":\"é\"}\n\u{1F600}");
        let bad = dir.path().join("bad.jsonl");
        std::fs::write(&bad, b"ok\n\xff\n").unwrap();
        let f = std::fs::File::open(&bad).unwrap();
        assert!(Text::mapped(Arc::new(Mapping::new(&f, 5).unwrap()), 5).is_none());
    }
    fn map_of(dir: &std::path::Path, name: &str, bytes: &[u8]) -> Arc<Mapping> {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        Arc::new(Mapping::new(&f, bytes.len()).unwrap())
    }

    /// Issue 12: a text mapped lazily hands out only checked bytes as `&str`. Prefixes are
    /// checked as they are asked for; bytes that are not UTF-8 (here in a late window) end the
    /// text where they start, and it is flagged invalid; a prefix cutting a character is not
    /// text.
    #[test]
    fn a_lazily_mapped_text_is_checked_as_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let line = "{\"a\":\"é😀\"}\n";
        let good = line.repeat((CHECK_WINDOW * 2) / line.len() + 10);
        let mut bytes = good.clone().into_bytes();
        bytes.extend_from_slice(b"{\"b\":\"\xff\"}\n");
        bytes.extend_from_slice(line.as_bytes());
        let map = map_of(dir.path(), "late.jsonl", &bytes);
        let t = Text::mapped_lazily(map.clone(), bytes.len());
        assert!(t.is_mapped() && !t.invalid());
        assert_eq!(t.byte_len(), bytes.len());
        assert_eq!(t.raw_bytes(), &bytes[..]);
        // Prefixes at line ends read as text; one cutting `é` does not.
        assert_eq!(t.prefix(line.len()), Some(line));
        assert_eq!(t.prefix(7), None, "inside é");
        assert_eq!(t.prefix(3 * line.len()), Some(&good[..3 * line.len()]));
        assert!(t.prefix(good.len()) == Some(&good[..]));
        assert!(
            !t.invalid(),
            "nothing past the prefixes asked for was checked"
        );
        // The next line holds 0xFF: no prefix reaching it is text, and the text ends before.
        let before = good.len() + "{\"b\":\"".len();
        assert!(t.prefix(before).is_some_and(|p| p.len() == before));
        assert!(!t.invalid());
        assert_eq!(t.prefix(before + 1), None);
        assert!(t.invalid());
        assert_eq!(t.prefix(bytes.len()), None);
        assert_eq!(t.len(), before, "reads as its valid prefix");
        assert!(t.ends_with("{\"b\":\""));
        assert!(!t.check_all());
        // A clone shares what was found.
        assert!(t.clone().invalid());

        // A whole read (`Deref`) checks everything first: valid text reads whole...
        let ok = Text::mapped_lazily(map_of(dir.path(), "ok.jsonl", good.as_bytes()), good.len());
        assert!(ok == good.as_str());
        assert!(ok.check_all() && !ok.invalid());
        // The emoji of the last line ends 3 bytes before the end.
        assert_eq!(ok.prefix(good.len() - 4), None, "inside the emoji");
        assert_eq!(
            ok.prefix(good.len() - 3).map(str::len),
            Some(good.len() - 3)
        );
        // ...and a text ending inside a character reads up to it.
        let cut = &good.as_bytes()[..good.len() - 4];
        let t = Text::mapped_lazily(map_of(dir.path(), "cut.jsonl", cut), cut.len());
        assert_eq!(t.len(), good.len() - 7, "up to the cut emoji");
        assert!(t.invalid());
        // Bad bytes in the first window, found by `Deref` before any prefix was asked for.
        let t = Text::mapped_lazily(map_of(dir.path(), "first.jsonl", b"ab\xc3(cd\n"), 7);
        assert_eq!(&*t, "ab");
        assert!(t.invalid());
        assert_eq!(t.prefix(2), Some("ab"));
        assert_eq!(t.prefix(7), None);
    }
}

/// Bytes of a mapped text read (by the reader, the analysis or the rendering) between two
/// drops of its resident pages (issue 12): 4 MiB.
pub const RELEASE_STEP: usize = 4 << 20;
