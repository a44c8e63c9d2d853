//! A source's file on disk: identity and read position ([`DiskState`]: size, modification
//! time, sampled fingerprint, a torn last line), reading a file whole, mapped or from an
//! offset, and what the one loader finds in the bytes of a file an editor has open
//! ([`DiskCheck`]: invalid UTF-8 per line, brought up to date by reading only what grew).

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use crate::source::load::{self, InvalidUtf8, complete_utf8_len};
use crate::source::{LineIndex, Text};

/// File identity and read position of a disk source.
#[derive(Debug, Clone, Default)]
pub(super) struct DiskState {
    /// File bytes consumed (including `partial`).
    pub(super) len: u64,
    /// Trailing bytes of an incomplete UTF-8 sequence, not in the text yet.
    pub(super) partial: Vec<u8>,
    /// (device, inode) on Unix.
    pub(super) id: Option<(u64, u64)>,
    /// The last bytes read, to detect a file replaced by a longer one.
    pub(super) tail: Vec<u8>,
    /// The file is gone; the text is empty.
    pub(super) missing: bool,
    /// Lines where invalid UTF-8 was replaced by U+FFFD (one warning each).
    pub(super) invalid: Vec<InvalidUtf8>,
    /// Files from this size on are mapped ([`load::MAP_FROM_BYTES`]; tests map small files).
    pub(super) map_from: u64,
    /// Hashes of windows of the bytes read (`Fingerprint`): a file grown whose earlier bytes
    /// no longer hash the same was rewritten, not appended to (issue 25 item 2).
    pub(super) samples: Fingerprint,
    /// The file's modification and change times when it was last read: a file of the same
    /// length and inode with other times was rewritten in place (issue 25 item 2).
    pub(super) stamp: Option<Stamp>,
    /// The file is zstd-compressed (a `.jsonl.zst` rollout, issue 25 item 11): the text is
    /// its decompressed content, `len` and `tail` are of the compressed bytes, and any change
    /// reads it whole again (its bytes never append to the text).
    pub(super) compressed: bool,
}

/// A file's (modification, status change) times, in nanoseconds since the epoch (Unix);
/// the modification time alone elsewhere.
pub(super) type Stamp = (i128, i128);

pub(super) fn stamp_of(md: &std::fs::Metadata) -> Option<Stamp> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((
            i128::from(md.mtime()) * 1_000_000_000 + i128::from(md.mtime_nsec()),
            i128::from(md.ctime()) * 1_000_000_000 + i128::from(md.ctime_nsec()),
        ))
    }
    #[cfg(not(unix))]
    {
        let m = md.modified().ok()?;
        let ns = m.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos() as i128;
        Some((ns, 0))
    }
}

/// (offset, length, hash) of windows of a file's bytes as read: the first
/// [`SAMPLE_BYTES`], [`SAMPLES`] − 1 more spread evenly over the rest, and the last
/// [`SAMPLE_BYTES`]. An append checks them again (a few dozen KiB read, whatever the file's
/// size) besides the bytes before the old end.
pub(super) type Fingerprint = Vec<(u64, usize, u64)>;

/// Bytes per fingerprint window.
pub(super) const SAMPLE_BYTES: usize = 4096;
/// Evenly spread fingerprint windows (besides the last one).
pub(super) const SAMPLES: u64 = 16;

pub(super) fn hash_bytes(b: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    b.hash(&mut h);
    h.finish()
}

/// Files up to this size (4 MiB) are fingerprinted whole: one window, every byte checked
/// again at each append (a rewrite anywhere in them is seen).
pub(super) const WHOLE_CHECK_BYTES: u64 = 4 << 20;

/// The fingerprint of `bytes` (a file's first `bytes.len()` bytes): one window over all of
/// them up to [`WHOLE_CHECK_BYTES`], else spread windows.
pub(super) fn fingerprint(bytes: &[u8]) -> Fingerprint {
    let len = bytes.len() as u64;
    if len <= WHOLE_CHECK_BYTES {
        return vec![(0, bytes.len(), hash_bytes(bytes))];
    }
    let mut offsets: Vec<u64> = (0..SAMPLES).map(|i| len * i / SAMPLES).collect();
    offsets.push(len.saturating_sub(SAMPLE_BYTES as u64));
    offsets.dedup();
    offsets
        .into_iter()
        .map(|o| {
            let w = &bytes[o as usize..(o as usize + SAMPLE_BYTES).min(bytes.len())];
            (o, w.len(), hash_bytes(w))
        })
        .collect()
}

/// True when `bytes` (a file's bytes from its start) hold every window of `samples`.
pub(super) fn fingerprint_matches_bytes(bytes: &[u8], samples: &Fingerprint) -> bool {
    samples.iter().all(|&(o, n, h)| {
        usize::try_from(o)
            .ok()
            .and_then(|o| bytes.get(o..o.checked_add(n)?))
            .is_some_and(|w| hash_bytes(w) == h)
    })
}

/// True when the file at `path` still holds the bytes `samples` were taken of (an error
/// reading it counts as a change).
pub(super) fn fingerprint_matches(path: &Path, samples: &Fingerprint) -> bool {
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut buf = vec![0u8; SAMPLE_BYTES];
    samples
        .iter()
        .all(|&(o, n, h)| read_exact_at(&f, &mut buf[..n], o).is_ok() && hash_bytes(&buf[..n]) == h)
}

#[cfg(unix)]
pub(super) fn read_exact_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, at)
}

#[cfg(not(unix))]
pub(super) fn read_exact_at(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek};
    let mut f = f;
    f.seek(std::io::SeekFrom::Start(at))?;
    f.read_exact(buf)
}

/// What the one loader found in the bytes on disk of a file an editor has open: one entry
/// per line holding invalid UTF-8. Kept per source and brought up to date by
/// [`DiskCheck::refresh`]: nothing is read while the file's size, modification time and
/// identity are unchanged; a grown file is read from where the check stopped; anything else
/// is read again whole.
#[derive(Debug, Default)]
pub struct DiskCheck {
    /// Bytes checked (including `partial`).
    pub(super) len: u64,
    pub(super) modified: Option<std::time::SystemTime>,
    pub(super) id: Option<(u64, u64)>,
    /// The last bytes checked, to tell a grown file from a replaced one.
    pub(super) tail: Vec<u8>,
    /// Trailing bytes of an incomplete UTF-8 sequence, checked with the next read.
    pub(super) partial: Vec<u8>,
    /// Line ends in the checked bytes before `partial`, as an editor counts them (LSP 3.17:
    /// `\n`, `\r\n`, a lone `\r`; issue 25); a `\r` ending them counts until a `\n` follows.
    pub(super) newlines: usize,
    /// The checked bytes before `partial` end with a `\r` (counted in `newlines`).
    pub(super) cr_end: bool,
    /// Lines holding invalid bytes (0-based in the file).
    pub(super) invalid: Vec<InvalidUtf8>,
    /// Checked at least once.
    pub(super) checked: bool,
}

impl DiskCheck {
    /// The invalid-UTF-8 lines of the file at `path` as it is now (empty when it cannot be
    /// read: the editor's buffer is all there is then). `at` offsets are in the file's decoded
    /// text; [`on_buffer`] places them on an editor's text.
    pub fn refresh(&mut self, path: &Path) -> Vec<InvalidUtf8> {
        let Ok(md) = load::regular_file(path) else {
            *self = DiskCheck::default();
            return Vec::new();
        };
        let (len, modified, id) = (md.len(), md.modified().ok(), file_id(&md));
        if self.checked && len == self.len && modified == self.modified && id == self.id {
            return self.invalid.clone();
        }
        let grown = self.checked && id == self.id && len > self.len;
        if grown {
            let from = self.len - self.tail.len() as u64;
            if let Ok((bytes, _)) = load::read_bytes(path, from, len - from)
                && bytes.len() >= self.tail.len()
                && bytes[..self.tail.len()] == self.tail[..]
            {
                let fresh = &bytes[self.tail.len()..];
                let mut chunk = std::mem::take(&mut self.partial);
                chunk.extend_from_slice(fresh);
                self.check(&chunk);
                self.len = len;
                self.modified = modified;
                self.tail = tail_of(&bytes, 64);
                return self.invalid.clone();
            }
        }
        *self = DiskCheck::default();
        if self.check_whole(path).is_err() {
            *self = DiskCheck::default();
            return Vec::new();
        }
        self.invalid.clone()
    }

    /// Checks the whole file a piece at a time (issue 12: reading it whole held a second
    /// copy of a 100 MB document while its text was in memory). A file of
    /// [`load::MAP_FROM_BYTES`] or more is mapped and checked a window of
    /// [`crate::source::text::CHECK_WINDOW`] bytes at a time, each window's pages dropped once
    /// checked (issue 12: copying a 1 GB file a piece at a time was 3 % of opening it, and the
    /// mapping never holds more than a window); a file truncated meanwhile is an error, as a
    /// failed read is.
    fn check_whole(&mut self, path: &Path) -> std::io::Result<()> {
        self.check_whole_with(
            path,
            load::MAP_FROM_BYTES,
            crate::source::text::CHECK_WINDOW,
        )
    }

    /// [`DiskCheck::check_whole`], mapping files of `map_from` bytes or more, checked
    /// `window` bytes at a time.
    fn check_whole_with(
        &mut self,
        path: &Path,
        map_from: u64,
        window: usize,
    ) -> std::io::Result<()> {
        const PIECE: usize = 1 << 20;
        let (f, md) = load::open_regular(path)?;
        let len = md.len().min(load::MAX_FILE_BYTES);
        let map = if len >= map_from {
            usize::try_from(len)
                .ok()
                .and_then(|n| crate::source::mapped::Mapping::new(&f, n).ok())
        } else {
            None
        };
        if let Some(map) = map {
            let bytes = map.bytes();
            for at in (0..bytes.len()).step_by(window) {
                let end = (at + window).min(bytes.len());
                self.take(&bytes[at..end]);
                map.release(at..end);
            }
            if map.torn() {
                return Err(std::io::Error::other(
                    "the file was truncated while checked",
                ));
            }
        } else {
            let mut f = f.take(len);
            let mut piece = vec![0u8; PIECE];
            loop {
                let n = match f.read(&mut piece) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                self.take(&piece[..n]);
            }
        }
        self.modified = md.modified().ok();
        self.id = file_id(&md);
        self.checked = true;
        Ok(())
    }

    /// Checks the next `bytes` of the file read from its start (after an incomplete
    /// sequence kept from the previous ones), and keeps its length and tail.
    fn take(&mut self, bytes: &[u8]) {
        let n = bytes.len();
        if self.partial.is_empty() {
            self.check(bytes);
        } else {
            let mut joined = std::mem::take(&mut self.partial);
            joined.extend_from_slice(bytes);
            self.check(&joined);
        }
        self.len += n as u64;
        let mut tail = std::mem::take(&mut self.tail);
        tail.extend_from_slice(&bytes[n.saturating_sub(64)..]);
        self.tail = tail_of(&tail, 64);
    }

    /// Checks `bytes` (continuing the checked ones), keeping an incomplete sequence at the end
    /// for the next read.
    fn check(&mut self, bytes: &[u8]) {
        // One UTF-8 check of a valid piece (the usual case; it was checked twice, issue 12),
        // with `simdutf8` (several times faster than `std`'s on long text).
        let valid = simdutf8::basic::from_utf8(bytes).is_ok();
        let cut = if valid {
            bytes.len()
        } else {
            complete_utf8_len(bytes)
        };
        let (done, rest) = bytes.split_at(cut);
        // A `\r` that ended the bytes checked before was counted as a line end; a `\n` after
        // it makes the two one (`\r\n`).
        let before = self.newlines - usize::from(self.cr_end && done.first() == Some(&b'\n'));
        if !valid && std::str::from_utf8(done).is_err() {
            let mut scratch = String::new();
            let mut found = Vec::new();
            load::decode_into(done, &mut scratch, &mut found);
            for mut f in found {
                f.line += before;
                match self.invalid.last_mut() {
                    Some(last) if last.line == f.line => last.bytes += f.bytes,
                    _ => self.invalid.push(f),
                }
            }
        }
        self.newlines = before + crate::source::lines::count_breaks(done, 0, done.len());
        if let Some(&last) = done.last() {
            self.cr_end = last == b'\r';
        }
        self.partial = rest.to_vec();
    }
}

/// Places invalid-UTF-8 lines found on disk on an editor's `text`: each on its line (lines the
/// buffer does not have are left out), at the line's first U+FFFD when the editor put one
/// there, else at the line's start.
pub fn on_buffer(on_disk: &[InvalidUtf8], text: &str, lines: &LineIndex) -> Vec<InvalidUtf8> {
    on_disk
        .iter()
        .filter(|i| i.line < lines.line_count())
        .map(|i| {
            let span = lines.line_span(i.line, text);
            let at = text[span.clone()]
                .find('\u{fffd}')
                .map_or(span.start, |o| span.start + o);
            InvalidUtf8 {
                line: i.line,
                at,
                bytes: i.bytes,
            }
        })
        .collect()
}

#[cfg(unix)]
pub(super) fn file_id(md: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((md.dev(), md.ino()))
}

#[cfg(not(unix))]
pub(super) fn file_id(_md: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

pub(super) fn tail_of(bytes: &[u8], n: usize) -> Vec<u8> {
    bytes[bytes.len().saturating_sub(n)..].to_vec()
}

/// `Err` (`InvalidData`, the file's lines and what they would take) when the records of
/// `text` would not fit in the memory the process may still take (issue 25 item 8).
pub(super) fn too_many_records(text: &[u8]) -> std::io::Result<()> {
    crate::source::room::check_fits_now(text)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))
}

/// Reads the file at `path` as a disk source's text: mapped when it is `map_from` bytes or
/// more, and then checked as UTF-8 as the build reads it (issue 12; bytes that are not UTF-8
/// make the text [`Text::invalid`], and the source reads the file again with
/// [`read_whole_lossily`]), else read and decoded lossily.
pub(super) fn read_whole(path: &Path, map_from: u64) -> std::io::Result<(Text, DiskState)> {
    if let Some(m) = load::map_file_lazily(path, load::MAX_FILE_BYTES, map_from, true)?
        // A zstd file is decompressed, never mapped as text.
        && !crate::source::zstd::is_zstd(m.text.raw_bytes())
    {
        // Bytes, not text: the text is not checked yet.
        let bytes = m.text.raw_bytes();
        too_many_records(bytes)?;
        let mut tail = bytes[bytes.len().saturating_sub(64)..].to_vec();
        tail.extend_from_slice(&m.rest);
        let samples = fingerprint(bytes);
        return Ok((
            m.text.clone(),
            DiskState {
                len: (m.text.byte_len() + m.rest.len()) as u64,
                tail: tail_of(&tail, 64),
                partial: m.rest,
                id: file_id(&m.metadata),
                missing: false,
                invalid: Vec::new(),
                map_from,
                samples,
                stamp: stamp_of(&m.metadata),
                compressed: false,
            },
        ));
    }
    let read = load::read_checked(path, 0, load::MAX_FILE_BYTES)?;
    let md = read.metadata.clone();
    let checked = read.utf8;
    let mut bytes = read.bytes;
    let len = bytes.len() as u64;
    let tail = tail_of(&bytes, 64);
    let samples = fingerprint(&bytes);
    if crate::source::zstd::is_zstd(&bytes) {
        // Decompressed as the CLI and the index read it (`source::load::load`): one reader
        // for every surface (issue 25 item 11). A corrupt or too large one is an error.
        let budget = load::MAX_FILE_BYTES.min(crate::source::zstd::MAX_DECOMPRESSED);
        let plain = crate::source::zstd::decompress_within(&bytes, budget)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        too_many_records(&plain)?;
        let (text, invalid) = load::decode_owned(plain);
        return Ok((
            text.into(),
            DiskState {
                len,
                partial: Vec::new(),
                id: file_id(&md),
                tail,
                missing: false,
                invalid,
                map_from,
                samples,
                stamp: stamp_of(&md),
                compressed: true,
            },
        ));
    }
    too_many_records(&bytes)?;
    // The bytes become the text without a copy when they are valid UTF-8 (issue 12: bytes and
    // text were both held, twice the file, while a view of it was read), and without a second
    // check: the read checked them window by window.
    let cut = checked.unwrap_or_else(|| complete_utf8_len(&bytes));
    let partial = bytes.split_off(cut);
    let (text, invalid) = match checked {
        // SAFETY: `read_checked` found `bytes[..cut]` valid UTF-8.
        Some(_) => (unsafe { String::from_utf8_unchecked(bytes) }, Vec::new()),
        None => load::decode_owned(bytes),
    };
    Ok((
        text.into(),
        DiskState {
            len,
            partial,
            id: file_id(&md),
            tail,
            missing: false,
            invalid,
            map_from,
            samples,
            stamp: stamp_of(&md),
            compressed: false,
        },
    ))
}

/// A new mapping of the file at `path` grown by `appended` bytes after the mapped text `old`
/// (a followed file): `None` when the file cannot be mapped again or its bytes after `old` are
/// not `appended` (changed meanwhile), and the caller appends to an owned copy instead.
pub(super) fn map_grown(path: &Path, old: &Text, appended: &[u8]) -> Option<Text> {
    let (f, _) = load::open_regular(path).ok()?;
    let len = old.len() + appended.len();
    let map = Arc::new(crate::source::mapped::Mapping::new(&f, len).ok()?);
    let fresh = map.bytes().get(old.len()..len)?;
    if fresh != appended || map.torn() {
        return None;
    }
    Text::mapped_after(map, old.len(), len)
}

/// [`read_whole`] without a mapping: the whole file read and decoded lossily (invalid UTF-8
/// replaced by U+FFFD and one warning per line), for a mapped text found
/// [`Text::invalid`]. The state keeps `map_from` for later reads of the file.
pub(super) fn read_whole_lossily(path: &Path, map_from: u64) -> std::io::Result<(Text, DiskState)> {
    let (text, mut disk) = read_whole(path, u64::MAX)?;
    disk.map_from = map_from;
    Ok((text, disk))
}

pub(super) fn read_from(path: &Path, from: u64, to: u64) -> std::io::Result<Vec<u8>> {
    Ok(load::read_bytes(path, from, to - from)?.0)
}

#[cfg(test)]
mod disk_check_tests {
    use super::*;

    /// The check reads a big file a piece at a time and finds what decoding it whole finds:
    /// invalid bytes and a character split across the 1 MiB pieces, lines counted across
    /// pieces (issue 12: it used to read the whole file at once).
    #[test]
    fn a_file_checked_in_pieces_reports_what_a_whole_decode_reports() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut bytes = Vec::new();
        let line = b"{\"type\":\"user\",\"message\":{\"content\":\"abc\"}}\n";
        while bytes.len() < (1 << 20) - 7 {
            bytes.extend_from_slice(line);
        }
        bytes.truncate((1 << 20) - 7);
        bytes.extend_from_slice(b"\n\xff\xfeab\xe2\x82"); // two bad bytes; `€` cut at 1 MiB
        assert_eq!(bytes.len(), 1 << 20);
        bytes.extend_from_slice(b"\xac ok\n");
        bytes.extend_from_slice(&bytes.clone()[..(1 << 20) - 7]);
        bytes.extend_from_slice(b"end \xc3\n");
        std::fs::write(&path, &bytes).unwrap();
        let (_, whole) = load::decode(&bytes);
        let lines = |v: &[InvalidUtf8]| v.iter().map(|i| (i.line, i.bytes)).collect::<Vec<_>>();
        let mut check = DiskCheck::default();
        let got = check.refresh(&path);
        assert_eq!(lines(&got), lines(&whole));
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(check.len, bytes.len() as u64);
        assert_eq!(check.tail, bytes[bytes.len() - 64..]);
        // Unchanged: the same answer.
        assert_eq!(lines(&check.refresh(&path)), lines(&whole));
        // Read in 1 MiB pieces, or mapped and checked 1 MiB or 7 bytes at a time (the `€`
        // then cut by a window): the same findings, length, tail and line count.
        for (map_from, window) in [(u64::MAX, 0), (1, 1 << 20), (1, 7)] {
            let mut other = DiskCheck::default();
            other.check_whole_with(&path, map_from, window).unwrap();
            assert_eq!(lines(&other.invalid), lines(&whole), "{map_from} {window}");
            assert_eq!(
                (other.len, &other.tail, other.newlines, &other.partial),
                (check.len, &check.tail, check.newlines, &check.partial)
            );
        }
    }

    /// Issue 25: the lines of the invalid bytes are the editor's (LSP 3.17: `\n`, `\r\n` and a
    /// lone `\r` each end a line), however the file is cut into pieces, a `\r\n` cut in two
    /// included; the whole-file decode numbers them the same. Before, both counted `\n` only
    /// (`[(1, 1), (2, 1), (3, 1)]`).
    #[test]
    fn invalid_bytes_are_on_the_editors_lines_with_lone_carriage_returns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cr.jsonl");
        // Lines: `a`, `b`, `c?x`, ``, `d`, `?`, ``, `z?` (a last invalid byte with no line end
        // after it waits as a cut character, as before).
        let bytes = b"a\rb\r\nc\xffx\r\rd\n\xfe\r\n\rz\xfa\n";
        std::fs::write(&path, bytes).unwrap();
        let lines = |v: &[InvalidUtf8]| v.iter().map(|i| (i.line, i.bytes)).collect::<Vec<_>>();
        let want = vec![(2, 1), (5, 1), (7, 1)];
        assert_eq!(lines(&load::decode(bytes).1), want);
        assert_eq!(lines(&DiskCheck::default().refresh(&path)), want);
        for window in [1, 2, 3, 5] {
            let mut other = DiskCheck::default();
            other.check_whole_with(&path, 1, window).unwrap();
            assert_eq!(lines(&other.invalid), want, "window {window}");
            assert_eq!(other.newlines, 8, "window {window}");
        }
    }
}
