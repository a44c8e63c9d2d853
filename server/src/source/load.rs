//! The one loader of transcript files: bytes on disk to text, used by the command line, the
//! server's disk sources (the files behind views), the workspace index and sub-agent step
//! counts (issue 8 defects 4 and 11).
//!
//! - Only regular files are read (a symlink to one is fine): a FIFO, a device (`/dev/zero`),
//!   a socket or a directory is refused from its metadata, before it is opened, so no read
//!   can block on a pipe or run until memory is gone. Reads stop at the length the metadata
//!   gave (a file that grows meanwhile is read further on its next change) and at
//!   [`MAX_FILE_BYTES`].
//! - Invalid UTF-8 is replaced by U+FFFD (lossy) and reported once per line as a warning
//!   ([`InvalidUtf8`]): one bad byte never refuses a whole file, and no line is lost.
//! - A file is read in windows of [`WINDOW`] bytes into one buffer ([`read_checked`], issue
//!   12): each window is checked as UTF-8 while it is fresh in the cache (valid text becomes a
//!   `String` without a second pass), and a file that shrinks while it is read (truncated, or
//!   truncated and rewritten) is read again rather than returned as a mix of two contents.
//! - A whole file of [`MAP_FROM_BYTES`] or more is mapped rather than read ([`map_file`], issue
//!   12): valid UTF-8 (checked with `simdutf8`) becomes a mapped [`Text`] without a copy; a
//!   zstd file, invalid UTF-8 or a refused mapping falls back to the read above (same text,
//!   same warnings). A file truncated while mapped is mapped again, like a read. A disk view's
//!   file is mapped without the check ([`map_file_lazily`]): its build checks each window as it
//!   reads it, and reads the file again as above when it finds invalid UTF-8.

use std::fs::{File, Metadata};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use crate::source::mapped::Mapping;
use crate::source::text::Text;

/// Largest file read: 4 GiB. Bigger files are refused with [`LoadError::TooBig`].
pub const MAX_FILE_BYTES: u64 = 4 << 30;

/// Why a file cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    NotFound,
    PermissionDenied,
    Directory,
    /// Not a regular file: what it is (`a FIFO (named pipe)`, `a character device`, …).
    NotRegular(&'static str),
    /// Larger than [`MAX_FILE_BYTES`]: its length in bytes.
    TooBig(u64),
    /// A zstd-compressed file that cannot be decompressed (`corrupt zstd data: …`,
    /// `decompresses to more than the N MiB a compressed transcript may take in memory …`).
    Compressed(String),
    /// Any other I/O error, as the OS words it.
    Io(String),
    /// The file shrank while it was read, at every one of [`READ_ATTEMPTS`] reads.
    Changed,
    /// Its records would not fit in the memory the process may still take (issue 25 item 8;
    /// [`crate::source::room::check_fits`]).
    TooManyRecords(crate::source::room::TooManyRecords),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::NotFound => write!(f, "no such file"),
            LoadError::PermissionDenied => write!(f, "permission denied"),
            LoadError::Directory => write!(f, "is a directory, not a transcript file"),
            LoadError::NotRegular(what) => {
                write!(f, "is {what}, not a regular file: not read")
            }
            LoadError::TooBig(n) => write!(
                f,
                "is {} MiB, more than the {} MiB read",
                n >> 20,
                MAX_FILE_BYTES >> 20
            ),
            LoadError::Compressed(e) | LoadError::Io(e) => write!(f, "{e}"),
            LoadError::Changed => write!(
                f,
                "was truncated while being read ({READ_ATTEMPTS} times): not read"
            ),
            LoadError::TooManyRecords(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for LoadError {}

impl From<std::io::Error> for LoadError {
    fn from(e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::NotFound => LoadError::NotFound,
            std::io::ErrorKind::PermissionDenied => LoadError::PermissionDenied,
            _ => LoadError::Io(e.to_string()),
        }
    }
}

impl From<LoadError> for std::io::Error {
    fn from(e: LoadError) -> Self {
        let kind = match e {
            LoadError::NotFound => std::io::ErrorKind::NotFound,
            LoadError::PermissionDenied => std::io::ErrorKind::PermissionDenied,
            _ => std::io::ErrorKind::InvalidInput,
        };
        std::io::Error::new(kind, e.to_string())
    }
}

/// What a non-regular file is, in words.
fn kind_of(md: &Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = md.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    let _ = md;
    "not a regular file"
}

/// The metadata of `path` (following symlinks) if it is a regular file no bigger than
/// [`MAX_FILE_BYTES`]. Never opens the file.
pub fn regular_file(path: &Path) -> Result<Metadata, LoadError> {
    let md = std::fs::metadata(path)?;
    if md.is_dir() {
        return Err(LoadError::Directory);
    }
    if !md.is_file() {
        return Err(LoadError::NotRegular(kind_of(&md)));
    }
    if md.len() > MAX_FILE_BYTES {
        return Err(LoadError::TooBig(md.len()));
    }
    Ok(md)
}

/// Opens a regular file without blocking even if it was swapped for a FIFO after the check,
/// and checks the opened file again. For readers that stream a file (sub-agent discovery).
pub fn open_regular(path: &Path) -> Result<(File, Metadata), LoadError> {
    regular_file(path)?;
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let f = opts.open(path)?;
    let md = f.metadata()?;
    if !md.is_file() {
        return Err(LoadError::NotRegular(kind_of(&md)));
    }
    Ok((f, md))
}

/// Reads bytes `from..` of a regular file, up to its length at open time and at most `max`
/// bytes. Returns the bytes and the metadata. See [`read_checked`].
pub fn read_bytes(path: &Path, from: u64, max: u64) -> Result<(Vec<u8>, Metadata), LoadError> {
    let r = read_checked(path, from, max)?;
    Ok((r.bytes, r.metadata))
}

/// Size of the windows a file is read in: 8 MiB.
pub const WINDOW: usize = 8 << 20;

/// Reads of a file that shrinks while it is read, before [`LoadError::Changed`].
pub const READ_ATTEMPTS: usize = 3;

/// Bytes read from a file by [`read_checked`].
#[derive(Debug)]
pub struct ReadBytes {
    pub bytes: Vec<u8>,
    pub metadata: Metadata,
    /// `Some(n)`: `bytes[..n]` is valid UTF-8 and `bytes[n..]` the start of one sequence cut
    /// by the end of the read (at most 3 bytes; empty for a whole valid text). `None`: the
    /// bytes hold invalid UTF-8 (decode them lossily).
    pub utf8: Option<usize>,
}

impl ReadBytes {
    /// The valid UTF-8 text of a read whose bytes are all valid (no cut sequence at the end),
    /// without checking them again; the bytes back otherwise.
    pub fn into_text(self) -> Result<String, Vec<u8>> {
        if self.utf8 == Some(self.bytes.len()) {
            // SAFETY: `read_checked` checked every byte of `bytes` as UTF-8, window by window,
            // each window starting at a character boundary (see `Utf8Check`).
            Ok(unsafe { String::from_utf8_unchecked(self.bytes) })
        } else {
            Err(self.bytes)
        }
    }
}

/// Reads bytes `from..` of a regular file (up to its length at open time, at most `max` bytes)
/// in windows of [`WINDOW`] bytes into one buffer, checking each window as
/// UTF-8 as it arrives. A file that ends before the length its metadata gave, or whose length
/// is below the bytes read once the read is done, was truncated meanwhile: it is read again,
/// up to [`READ_ATTEMPTS`] times, then refused with [`LoadError::Changed`]. A file that grows
/// meanwhile is read up to its length at open time (the rest is read on its next change).
/// A file replaced by another (renamed over) while it is read is read whole as it was. What
/// this cannot see: a file rewritten in place to the same or a greater length during the
/// read; disk sources find that on their next change (`store::document`, tail check).
pub fn read_checked(path: &Path, from: u64, max: u64) -> Result<ReadBytes, LoadError> {
    read_windows(path, from, max, WINDOW, &mut |_| {})
}

/// [`read_checked`] with the window size and a call after each window (given the bytes read so
/// far): tests change the file between windows.
pub fn read_windows(
    path: &Path,
    from: u64,
    max: u64,
    window: usize,
    between: &mut dyn FnMut(usize),
) -> Result<ReadBytes, LoadError> {
    let window = window.max(1) as u64;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let (mut f, md) = open_regular(path)?;
        let want = md.len().saturating_sub(from).min(max);
        if from > 0 {
            f.seek(SeekFrom::Start(from))?;
        }
        let mut bytes = Vec::with_capacity(want as usize);
        let mut check = Utf8Check::default();
        while (bytes.len() as u64) < want {
            let n = window.min(want - bytes.len() as u64);
            if (&mut f).take(n).read_to_end(&mut bytes)? == 0 {
                break;
            }
            check.window(&bytes);
            between(bytes.len());
        }
        let now = f.metadata()?.len();
        let read = bytes.len() as u64;
        if read == want && now >= from + read {
            return Ok(ReadBytes {
                utf8: check.valid(&bytes),
                bytes,
                metadata: md,
            });
        }
        if attempt >= READ_ATTEMPTS {
            return Err(LoadError::Changed);
        }
    }
}

/// UTF-8 check of a buffer growing a window at a time: each call checks the bytes from the end
/// of the valid prefix on, so every byte is checked once (plus at most 3 bytes of a sequence
/// cut by a window's end) and every check starts at a character boundary.
#[derive(Debug, Default)]
struct Utf8Check {
    /// `bytes[..valid]` is valid UTF-8.
    valid: usize,
    /// Invalid bytes were found.
    invalid: bool,
}

impl Utf8Check {
    fn window(&mut self, bytes: &[u8]) {
        if self.invalid {
            return;
        }
        match std::str::from_utf8(&bytes[self.valid..]) {
            Ok(_) => self.valid = bytes.len(),
            // A sequence cut by the end of the window: the next window completes it.
            Err(e) if e.error_len().is_none() => self.valid += e.valid_up_to(),
            Err(_) => self.invalid = true,
        }
    }

    fn valid(&self, bytes: &[u8]) -> Option<usize> {
        (!self.invalid).then_some(self.valid.min(bytes.len()))
    }
}

/// A line where invalid UTF-8 was replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidUtf8 {
    /// 0-based line.
    pub line: usize,
    /// Byte offset in the decoded text of the first U+FFFD put on that line.
    pub at: usize,
    /// Invalid bytes replaced on that line.
    pub bytes: usize,
}

/// Decodes `bytes` lossily and appends them to `text` (the decoded bytes continue its last
/// line), recording in `invalid` one [`InvalidUtf8`] per line (0-based in the whole text)
/// holding replaced bytes.
pub fn decode_into(bytes: &[u8], text: &mut String, invalid: &mut Vec<InvalidUtf8>) {
    // Line of the end of `text`, counted only once invalid bytes are met (valid appends
    // cost nothing more than the copy).
    let mut line: Option<(usize, usize)> = None; // (line, up to byte)
    // Valid UTF-8, the usual case: one validation (word-at-a-time on ASCII) and one copy,
    // instead of walking `utf8_chunks` (issue 12: that walk was 12% of `stats` on 100 MB).
    if let Ok(valid) = std::str::from_utf8(bytes) {
        text.push_str(valid);
        return;
    }
    text.reserve(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        let bad = chunk.invalid();
        if bad.is_empty() {
            continue;
        }
        let (mut n, from) = line.unwrap_or((0, 0));
        // Lines as an editor counts them (LSP 3.17: a lone `\r` ends one too; issue 25).
        n += crate::source::lines::count_breaks(text.as_bytes(), from, text.len());
        line = Some((n, text.len()));
        match invalid.last_mut() {
            Some(last) if last.line == n => last.bytes += bad.len(),
            _ => invalid.push(InvalidUtf8 {
                line: n,
                at: text.len(),
                bytes: bad.len(),
            }),
        }
        text.push('\u{fffd}');
    }
}

/// Decodes `bytes` lossily: the text, and one [`InvalidUtf8`] per line holding invalid bytes.
pub fn decode(bytes: &[u8]) -> (String, Vec<InvalidUtf8>) {
    let mut text = String::new();
    let mut invalid = Vec::new();
    decode_into(bytes, &mut text, &mut invalid);
    (text, invalid)
}

/// Decodes `bytes` lossily like [`decode`], taking ownership: valid UTF-8 becomes the text
/// without a copy (issue 12: the copy doubled the peak memory of reading a file).
pub fn decode_owned(bytes: Vec<u8>) -> (String, Vec<InvalidUtf8>) {
    match String::from_utf8(bytes) {
        Ok(text) => (text, Vec::new()),
        Err(e) => decode(e.as_bytes()),
    }
}

/// Files from this size on (bytes) are mapped rather than read by [`load`] and by disk
/// sources: 1 MiB. Below it a read costs less than a mapping's system calls.
pub const MAP_FROM_BYTES: u64 = 1 << 20;

/// A whole file mapped as text by [`map_file`].
#[derive(Debug)]
pub struct MappedFile {
    /// The file's bytes up to the last whole character, checked as UTF-8.
    pub text: Text,
    /// The start of one character cut by the end of the file (at most 3 bytes; empty when the
    /// file ends at a character boundary), not in `text`.
    pub rest: Vec<u8>,
    pub metadata: Metadata,
}

/// Maps a whole regular file of at least `min_len` bytes (at most `max` bytes of it) as text.
/// `Ok(None)` when it is not mapped and the caller reads it instead ([`read_checked`]): it is
/// smaller than `min_len` or empty, zstd-compressed, holds invalid UTF-8 (anywhere, or a cut
/// character at the end unless `cut_end`), or the mapping was refused (see
/// [`Mapping::new`]). `cut_end`: a character cut by the end of the file (one being written)
/// is left out of the text and returned as [`MappedFile::rest`]. A file that shrinks while it
/// is checked (the mapping is torn, or the file ends before the mapped length) is mapped
/// again, up to [`READ_ATTEMPTS`] times, then refused with [`LoadError::Changed`]; errors are
/// otherwise those of [`open_regular`].
pub fn map_file(
    path: &Path,
    max: u64,
    min_len: u64,
    cut_end: bool,
) -> Result<Option<MappedFile>, LoadError> {
    map_file_checking(path, max, min_len, cut_end, false)
}

/// [`map_file`] without checking the text as UTF-8 now: it is checked as it is read
/// ([`Text::mapped_lazily`]; issue 12: the disk view's build checks each window as it
/// reaches it). So invalid UTF-8 does not give `Ok(None)` here: the text then reads as its
/// valid prefix with [`Text::invalid`] set, and the caller reads the file again with
/// [`read_checked`] (the lossy decoding and its warnings).
pub fn map_file_lazily(
    path: &Path,
    max: u64,
    min_len: u64,
    cut_end: bool,
) -> Result<Option<MappedFile>, LoadError> {
    map_file_checking(path, max, min_len, cut_end, true)
}

fn map_file_checking(
    path: &Path,
    max: u64,
    min_len: u64,
    cut_end: bool,
    lazily: bool,
) -> Result<Option<MappedFile>, LoadError> {
    for _ in 0..READ_ATTEMPTS {
        let (f, md) = open_regular(path)?;
        let len = md.len().min(max);
        if len < min_len.max(1) || usize::try_from(len).is_err() {
            return Ok(None);
        }
        let Ok(map) = Mapping::new(&f, len as usize) else {
            return Ok(None);
        };
        let map = Arc::new(map);
        let bytes = map.bytes();
        let cut = if cut_end {
            complete_utf8_len(bytes)
        } else {
            bytes.len()
        };
        let text = (!crate::source::zstd::is_zstd(bytes))
            .then(|| {
                if lazily {
                    Some(Text::mapped_lazily(map.clone(), cut))
                } else {
                    Text::mapped(map.clone(), cut)
                }
            })
            .flatten();
        let now = f.metadata()?.len();
        if map.torn() || now < len {
            continue;
        }
        return Ok(text.map(|text| MappedFile {
            rest: bytes[cut..].to_vec(),
            text,
            metadata: md,
        }));
    }
    Err(LoadError::Changed)
}

/// Length of `bytes` without an incomplete UTF-8 sequence at the very end (at most 3 bytes,
/// kept for the next read of a growing file). Invalid sequences elsewhere are left to the
/// lossy decoding.
///
/// Only the last three bytes are looked at (issue 12: a whole check here was a second pass of
/// UTF-8 validation over every file read; the decoding checks the rest): valid text never ends
/// inside a sequence, so it keeps its whole length.
pub fn complete_utf8_len(bytes: &[u8]) -> usize {
    for back in 1..=3.min(bytes.len()) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 != 0x80 {
            // A lead byte: is its sequence complete?
            let need = if b >= 0xF0 {
                4
            } else if b >= 0xE0 {
                3
            } else if b >= 0xC0 {
                2
            } else {
                1
            };
            if need > back {
                return bytes.len() - back;
            }
            break;
        }
    }
    bytes.len()
}

/// A whole regular file, decoded.
#[derive(Debug)]
pub struct Loaded {
    /// Mapped when the file is big and valid UTF-8 ([`map_file`]); check [`Text::torn`] after
    /// reading it (a file truncated meanwhile: load it again).
    pub text: Text,
    pub invalid: Vec<InvalidUtf8>,
    pub metadata: Metadata,
    /// The file was zstd-compressed (a `.jsonl.zst` archive, read as finished; issue 9).
    pub compressed: bool,
}

/// Reads and decodes a whole regular file (at most `max` bytes); a zstd-compressed file is
/// decompressed first (`source::zstd`, the text taking at most `max` and at most 1 GiB of
/// memory as `zstd::memory_estimate` counts it, else [`LoadError::Compressed`]). A file of [`MAP_FROM_BYTES`] or more
/// that is valid UTF-8 is mapped ([`map_file`]). A text whose records would not fit in the
/// memory the process may still take is [`LoadError::TooManyRecords`]
/// ([`crate::source::room::check_fits`]).
pub fn load(path: &Path, max: u64) -> Result<Loaded, LoadError> {
    load_mapping_from(path, max, MAP_FROM_BYTES)
}

/// [`load`], mapping files from `map_from` bytes on (tests map small files).
pub fn load_mapping_from(path: &Path, max: u64, map_from: u64) -> Result<Loaded, LoadError> {
    if let Some(m) = map_file(path, max, map_from, false)? {
        crate::source::room::check_fits_now(m.text.raw_bytes())
            .map_err(LoadError::TooManyRecords)?;
        return Ok(Loaded {
            text: m.text,
            invalid: Vec::new(),
            metadata: m.metadata,
            compressed: false,
        });
    }
    let read = read_checked(path, 0, max)?;
    let metadata = read.metadata.clone();
    let compressed = crate::source::zstd::is_zstd(&read.bytes);
    let (text, invalid) = if compressed {
        // The memory the text will take is bounded by what the caller reads of a plain file
        // (the index: 256 MiB), and never more than 1 GiB (issue 25 item 1).
        let budget = max.min(crate::source::zstd::MAX_DECOMPRESSED);
        let bytes = crate::source::zstd::decompress_within(&read.bytes, budget)
            .map_err(LoadError::Compressed)?;
        crate::source::room::check_fits_now(&bytes).map_err(LoadError::TooManyRecords)?;
        decode_owned(bytes)
    } else {
        // Records that would not fit are refused before they are read (issue 25 item 8).
        crate::source::room::check_fits_now(&read.bytes).map_err(LoadError::TooManyRecords)?;
        // Checked while it was read: valid text is not checked again.
        match read.into_text() {
            Ok(text) => (text, Vec::new()),
            Err(bytes) => decode_owned(bytes),
        }
    };
    Ok(Loaded {
        text: text.into(),
        invalid,
        metadata,
        compressed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossy_with_one_entry_per_line() {
        let (t, bad) = decode(b"ok\na\xffb\xfe\nfine\n\xc3\n");
        assert_eq!(t, "ok\na\u{fffd}b\u{fffd}\nfine\n\u{fffd}\n");
        assert_eq!(
            bad,
            vec![
                InvalidUtf8 {
                    line: 1,
                    at: 4,
                    bytes: 2
                },
                InvalidUtf8 {
                    line: 3,
                    at: 17,
                    bytes: 1
                },
            ]
        );
        assert_eq!(
            crate::model::Problem::invalid_utf8(&bad[0]).message,
            "invalid UTF-8: 2 bytes replaced by U+FFFD"
        );
        // Appending continues the line count of the text so far.
        let mut text = t.clone();
        let mut more = Vec::new();
        decode_into(b"x\xff\n", &mut text, &mut more);
        assert_eq!(more[0].line, 4);
        // Valid input appends as is; owned input decodes the same way as borrowed.
        decode_into("é\n".as_bytes(), &mut text, &mut more);
        assert!(text.ends_with("x\u{fffd}\né\n") && more.len() == 1);
        assert_eq!(
            decode_owned(b"ok\na\xffb\xfe\nfine\n\xc3\n".to_vec()),
            (t, bad)
        );
        assert_eq!(decode_owned("é\n".into()), ("é\n".to_string(), vec![]));
    }

    /// Issue 12: a file read in windows reads what one read of it gives, whatever the window
    /// (1 byte, cutting every character; 7 bytes; a window longer than the file): characters
    /// of 2–4 bytes cut by a window's end, CRLF line ends, a line longer than the window. The
    /// check made while reading tells valid text (taken as is, not checked again) from text
    /// with invalid bytes anywhere, whose lossy decoding is the one of a whole read.
    #[test]
    fn windows_read_what_one_read_gives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.jsonl");
        let long = format!("{{\"text\":\"{}\"}}\r\n", "é😀€a".repeat(40));
        let valid = format!("{{\"a\":\"é\"}}\r\n{long}{{\"b\":\"😀\"}}\n");
        let invalid_late = {
            let mut b = valid.clone().into_bytes();
            b.extend_from_slice(b"{\"c\":\"\xff\xe2\x82\"}\n");
            b
        };
        let cut_at_end = {
            let mut b = valid.clone().into_bytes();
            b.extend_from_slice(&"😀".as_bytes()[..3]);
            b
        };
        for (bytes, utf8) in [
            (valid.clone().into_bytes(), Some(valid.len())),
            (invalid_late.clone(), None),
            (cut_at_end.clone(), Some(valid.len())),
            (Vec::new(), Some(0)),
        ] {
            std::fs::write(&path, &bytes).unwrap();
            for window in [1, 7, 64, 1 << 20] {
                let mut windows = 0;
                let r = read_windows(&path, 0, u64::MAX, window, &mut |_| windows += 1).unwrap();
                assert_eq!(r.bytes, bytes, "window {window}");
                assert_eq!(r.utf8, utf8, "window {window}");
                assert_eq!(windows, bytes.len().div_ceil(window), "window {window}");
            }
            let loaded = load(&path, u64::MAX).unwrap();
            assert_eq!((loaded.text.into_string(), loaded.invalid), decode(&bytes));
        }
        // From an offset (the appended bytes of a followed file), and at most `max` bytes.
        std::fs::write(&path, &valid).unwrap();
        let r = read_windows(&path, 3, 4, 2, &mut |_| {}).unwrap();
        assert_eq!(r.bytes, valid.as_bytes()[3..7]);
        assert_eq!(r.utf8, Some(3), "`é` cut by `max` at the end");
    }

    /// Issue 12: a file truncated (and rewritten shorter) between two windows is read again,
    /// never returned as the first window of one content and the rest of another; a file that
    /// keeps shrinking is refused with a clear error; a file that grows while it is read is
    /// read up to its length at open time.
    #[test]
    fn a_file_changed_between_windows_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let old = "{\"old\":1}\n".repeat(10);
        let new = "{\"new\":2}\n".repeat(3);
        std::fs::write(&path, &old).unwrap();
        let mut calls = 0;
        let r = read_windows(&path, 0, u64::MAX, 16, &mut |_| {
            calls += 1;
            if calls == 1 {
                std::fs::write(&path, &new).unwrap();
            }
        })
        .unwrap();
        assert_eq!(r.bytes, new.as_bytes(), "read again, whole");
        assert_eq!(r.metadata.len(), new.len() as u64);

        // Shrinks at every read: an error, after READ_ATTEMPTS reads.
        std::fs::write(&path, &old).unwrap();
        let mut reads = 0;
        let err = read_windows(&path, 0, u64::MAX, 16, &mut |done| {
            if done == 16 {
                reads += 1;
                let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                let len = f.metadata().unwrap().len();
                f.set_len(len - 1).unwrap();
            }
        })
        .unwrap_err();
        assert_eq!(err, LoadError::Changed);
        assert_eq!(reads, READ_ATTEMPTS);
        assert_eq!(
            err.to_string(),
            "was truncated while being read (3 times): not read"
        );

        // Grows while it is read: the length at open time, in one read.
        std::fs::write(&path, &old).unwrap();
        let mut reads = 0;
        let r = read_windows(&path, 0, u64::MAX, 16, &mut |done| {
            if done == 16 {
                reads += 1;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .unwrap();
                std::io::Write::write_all(&mut f, b"{\"more\":3}\n").unwrap();
            }
        })
        .unwrap();
        assert_eq!(r.bytes, old.as_bytes());
        assert_eq!(reads, 1);
    }

    /// Issue 12: a mapped file gives the text a read gives. Valid UTF-8 is mapped (a character
    /// cut at the end left out only when asked); invalid bytes, a cut character otherwise, a
    /// zstd file, an empty file or one below the size asked are not mapped, and `load` reads
    /// them with the same text and warnings as before.
    #[cfg(unix)]
    #[test]
    fn mapped_files_read_as_read_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        let valid = "{\"a\":\"é😀\"}\r\n".repeat(50);
        let mut cut = valid.clone().into_bytes();
        cut.extend_from_slice(&"😀".as_bytes()[..3]);
        let mut invalid = valid.clone().into_bytes();
        invalid.extend_from_slice(b"{\"b\":\"\xff\"}\n");
        let zstd = crate::source::zstd::tests::SMALL.to_vec();
        for (bytes, mapped, mapped_cut) in [
            (valid.clone().into_bytes(), true, true),
            (cut.clone(), false, true),
            (invalid.clone(), false, false),
            (zstd, false, false),
            (Vec::new(), false, false),
        ] {
            std::fs::write(&path, &bytes).unwrap();
            let m = map_file(&path, u64::MAX, 1, false).unwrap();
            assert_eq!(m.is_some(), mapped, "{:?}", String::from_utf8_lossy(&bytes));
            let m = map_file(&path, u64::MAX, 1, true).unwrap();
            assert_eq!(m.is_some(), mapped_cut);
            if let Some(m) = m {
                let keep = complete_utf8_len(&bytes);
                assert_eq!(m.text.as_bytes(), &bytes[..keep]);
                assert_eq!(m.rest, &bytes[keep..]);
                assert_eq!(m.metadata.len(), bytes.len() as u64);
            }
            let read = load_mapping_from(&path, u64::MAX, u64::MAX).unwrap();
            let loaded = load_mapping_from(&path, u64::MAX, 1).unwrap();
            assert_eq!(loaded.text.is_mapped(), mapped);
            assert_eq!(loaded.text, read.text);
            assert_eq!(loaded.invalid, read.invalid);
            assert_eq!(loaded.compressed, read.compressed);
        }
        std::fs::write(&path, &valid).unwrap();
        assert!(
            map_file(&path, u64::MAX, valid.len() as u64 + 1, false)
                .unwrap()
                .is_none()
        );
        let m = map_file(&path, 10, 1, true).unwrap().unwrap();
        assert_eq!(m.text, "{\"a\":\"é", "at most `max` bytes");
        assert!(load(&path, u64::MAX).unwrap().text.len() == valid.len());
    }

    #[cfg(unix)]
    #[test]
    fn refuses_fifos_and_devices_without_opening_them() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.jsonl");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(
            load(&fifo, u64::MAX).unwrap_err().to_string(),
            "is a FIFO (named pipe), not a regular file: not read"
        );
        assert_eq!(
            load(Path::new("/dev/zero"), u64::MAX).unwrap_err(),
            LoadError::NotRegular("a character device")
        );
        assert_eq!(
            load(dir.path(), u64::MAX).unwrap_err(),
            LoadError::Directory
        );
    }
}
