//! [`Text`]: the text of a transcript source, held either as an owned `String` (an editor's
//! buffer, a small or unusual file) or as a read-only memory map of the file
//! ([`crate::source::mapped`], issue 12). It dereferences to `&str`, so everything that reads
//! a text (`source: &str` in formats, analysis, view and ide) takes either kind unchanged.
//!
//! A mapped text is checked as UTF-8 when it is made ([`Text::mapped`]); its pages are
//! resident only while they are read ([`Text::release`]), and [`Text::torn`] tells its owner
//! that the file was truncated under it (the text then holds zeros and must be read again).

use std::ops::{Deref, Range};
use std::sync::Arc;

use crate::source::mapped::Mapping;

/// Bytes of a mapped file checked as UTF-8 at a time by [`Text::mapped`]: 4 MiB.
pub const CHECK_WINDOW: usize = 4 << 20;

/// How often [`Text::reading_spans`] drops a mapped text's resident pages: 5 ms.
pub const DROP_EVERY: std::time::Duration = std::time::Duration::from_millis(5);

/// A source text: owned, or the valid UTF-8 prefix of a mapped file.
#[derive(Clone, Default)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    Owned(String),
    /// `map.bytes()[..len]`, checked as UTF-8.
    Mapped {
        map: Arc<Mapping>,
        len: usize,
    },
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Owned(String::new())
    }
}

impl Text {
    /// The first `len` bytes of `map` as text, if they are valid UTF-8 (checked with
    /// `simdutf8`, a window of [`CHECK_WINDOW`] bytes at a time, each window's pages released
    /// once checked); `None` otherwise (the caller decodes the file lossily instead).
    pub fn mapped(map: Arc<Mapping>, len: usize) -> Option<Text> {
        let bytes = map.bytes().get(..len)?;
        let mut at = 0;
        while at < len {
            // A window ends at a character boundary (at most 3 bytes further), so that each
            // is checked as text on its own.
            let mut end = (at + CHECK_WINDOW).min(len);
            while end < len && bytes[end] & 0xC0 == 0x80 && end - at < CHECK_WINDOW + 3 {
                end += 1;
            }
            simdutf8::basic::from_utf8(&bytes[at..end]).ok()?;
            map.release(at..end);
            at = end;
        }
        Some(Text(Repr::Mapped { map, len }))
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
        Some(Text(Repr::Mapped { map, len }))
    }

    /// The text as a string slice.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Owned(s) => s,
            // SAFETY: checked as UTF-8 when made (`mapped`, `mapped_after`). The file is not
            // ours: a truncation reads zeros past the new end (the text stays valid UTF-8 but
            // for a character cut by that end) and is flagged by `torn`; see the doc of
            // `source::mapped` for what a mapping cannot protect against.
            Repr::Mapped { map, len } => unsafe {
                std::str::from_utf8_unchecked(map.bytes().get_unchecked(..*len))
            },
        }
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
        if let Repr::Mapped { map, len } = &self.0 {
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
        let Repr::Mapped { map, len } = &self.0 else {
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
        self.release(0..self.len());
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
}
