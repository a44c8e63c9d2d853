//! Read-only memory maps of transcript files (issue 12: a file behind a view, the command line
//! or the index is not copied into a heap string; its pages are the kernel's page cache, in
//! this process only while they are read).
//!
//! A [`Mapping`] is `len` bytes of a regular file mapped `PROT_READ`, `MAP_PRIVATE`. Two things
//! set it apart from a plain `memmap2::Mmap`:
//!
//! - **Truncation does not kill the process.** A file truncated while it is mapped raises
//!   `SIGBUS` on any access to a page wholly past its new end. A process-wide `SIGBUS` handler
//!   (installed once, on the first mapping) looks the faulting address up in a fixed table of
//!   live mappings: inside one, it maps an anonymous zero page over the faulting page (the
//!   access is retried and reads zeros) and marks that mapping *torn* ([`Mapping::torn`]);
//!   anywhere else it hands the signal to the handler that was there before (Rust's own
//!   stack-overflow handler, or the default action: the process dies as it would have). The
//!   owner of a torn mapping reads the file again (`source::load`, `store::document`). This is
//!   the practice of systemd's journal and EFL's `eina_mmap`; the table is lock-free so the
//!   handler only does async-signal-safe work (atomic loads, `mmap`, `sigaction`).
//! - **Resident pages are given back** ([`Mapping::release`], `madvise(MADV_DONTNEED)`): a
//!   reader that has passed a window drops its pages from this process (the page cache keeps
//!   them; touching them again faults them back in from it, unchanged). The bytes of a
//!   read-only file mapping are never lost by this.
//!
//! What a mapping cannot protect against: a file rewritten *in place* (same inode, bytes
//! changed without truncation) shows the new bytes through the mapping. Transcripts are
//! appended to, not rewritten; a rewrite that truncates first is caught as above, and the
//! watcher's tail check (`store::document`) re-reads a file whose known last bytes changed.

use std::fs::File;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Live mappings the `SIGBUS` handler knows of. A mapping made while all are taken is refused
/// ([`Mapping::new`] fails) and the caller reads the file into memory instead.
pub const SLOTS: usize = 256;

/// One entry of the table: a seqlock (odd `seq` while it is being written) over the mapping's
/// address range; `len == 0` is a free slot.
struct Slot {
    seq: AtomicUsize,
    start: AtomicUsize,
    len: AtomicUsize,
    torn: AtomicBool,
    /// Claimed by a live mapping (set by `register` with a compare-exchange).
    taken: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    seq: AtomicUsize::new(0),
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    torn: AtomicBool::new(false),
    taken: AtomicBool::new(false),
};

static TABLE: [Slot; SLOTS] = [FREE; SLOTS];

fn register(start: usize, len: usize) -> Option<usize> {
    let i = TABLE.iter().position(|s| {
        s.taken
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    })?;
    let s = &TABLE[i];
    s.seq.fetch_add(1, Ordering::AcqRel);
    s.start.store(start, Ordering::Release);
    s.len.store(len, Ordering::Release);
    s.torn.store(false, Ordering::Release);
    s.seq.fetch_add(1, Ordering::AcqRel);
    Some(i)
}

fn unregister(i: usize) {
    let s = &TABLE[i];
    s.seq.fetch_add(1, Ordering::AcqRel);
    s.len.store(0, Ordering::Release);
    s.start.store(0, Ordering::Release);
    s.seq.fetch_add(1, Ordering::AcqRel);
    s.taken.store(false, Ordering::Release);
}

/// The slot of the live mapping holding `addr`, read consistently (async-signal-safe).
fn slot_of(addr: usize) -> Option<&'static Slot> {
    TABLE.iter().find(|s| {
        let before = s.seq.load(Ordering::Acquire);
        if before % 2 == 1 {
            return false;
        }
        let (start, len) = (
            s.start.load(Ordering::Acquire),
            s.len.load(Ordering::Acquire),
        );
        let after = s.seq.load(Ordering::Acquire);
        before == after && len > 0 && addr >= start && addr - start < len
    })
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 { n as usize } else { 4096 }
}

#[cfg(unix)]
mod handler {
    use super::*;
    use std::sync::OnceLock;

    /// The `SIGBUS` action found when ours was installed, to hand other faults to.
    struct Previous(libc::sigaction);
    // SAFETY: a plain C struct of integers and function addresses, written once before the
    // handler can run and only read after.
    unsafe impl Sync for Previous {}
    unsafe impl Send for Previous {}

    static PREVIOUS: OnceLock<Previous> = OnceLock::new();
    static PAGE: AtomicUsize = AtomicUsize::new(0);

    /// Installs the handler once; false if `sigaction` refused (mappings are then refused too).
    pub fn install() -> bool {
        static INSTALLED: OnceLock<bool> = OnceLock::new();
        *INSTALLED.get_or_init(|| {
            PAGE.store(page_size(), Ordering::Release);
            // SAFETY: `sigaction` with a zeroed struct filled as the manual says; the old
            // action is stored before the new one can run (the store happens-before the
            // second `sigaction` call).
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) != 0 {
                    return false;
                }
                let _ = PREVIOUS.set(Previous(old));
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_sigbus as *const () as usize;
                new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut new.sa_mask);
                libc::sigaction(libc::SIGBUS, &new, std::ptr::null_mut()) == 0
            }
        })
    }

    /// The handler. Only async-signal-safe work: atomic loads and stores, `mmap`, `sigaction`.
    extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
        let addr = unsafe { (*info).si_addr() } as usize;
        if let Some(slot) = slot_of(addr) {
            let page = PAGE.load(Ordering::Acquire);
            let at = addr & !(page - 1);
            // SAFETY: `at` is a page inside a live read-only mapping of ours (the slot is
            // registered for as long as the mapping exists, and the faulting access proves it
            // is in use); a private anonymous page replaces it, read-only like the rest.
            let p = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                slot.torn.store(true, Ordering::Release);
                return;
            }
        }
        // Not ours (or the zero page could not be mapped): what would have happened anyway.
        // SAFETY: calling the previous handler with the arguments we got, or restoring the
        // default action so that the retried access ends the process with SIGBUS.
        unsafe {
            match PREVIOUS.get() {
                Some(Previous(old))
                    if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN =>
                {
                    if old.sa_flags & libc::SA_SIGINFO != 0 {
                        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                            std::mem::transmute(old.sa_sigaction);
                        f(sig, info, ctx);
                    } else {
                        let f: extern "C" fn(libc::c_int) = std::mem::transmute(old.sa_sigaction);
                        f(sig);
                    }
                }
                _ => {
                    let mut dfl: libc::sigaction = std::mem::zeroed();
                    dfl.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
                }
            }
        }
    }
}

/// `len` bytes of a regular file, mapped read-only, known to the `SIGBUS` handler (see the
/// module doc). Dropping it unmaps it.
pub struct Mapping {
    map: memmap2::Mmap,
    slot: usize,
}

impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapping")
            .field("len", &self.map.len())
            .field("torn", &self.torn())
            .finish()
    }
}

impl Mapping {
    /// Maps the first `len` bytes of `file` (`len` > 0, at most the file's length when it is
    /// called). Errors: the handler could not be installed, all [`SLOTS`] are taken, or
    /// `mmap` failed (`Unsupported` off Unix); the caller reads the file instead.
    pub fn new(file: &File, len: usize) -> std::io::Result<Mapping> {
        #[cfg(unix)]
        {
            if len == 0 {
                return Err(std::io::Error::other("an empty file is not mapped"));
            }
            if !handler::install() {
                return Err(std::io::Error::other("no SIGBUS handler"));
            }
            // SAFETY: a read-only private mapping; what a concurrent truncation or rewrite of
            // the file does to it is the subject of the module doc (SIGBUS handled, torn flag).
            let map = unsafe { memmap2::MmapOptions::new().len(len).map(file)? };
            let Some(slot) = register(map.as_ptr() as usize, map.len()) else {
                return Err(std::io::Error::other("too many files mapped"));
            };
            Ok(Mapping { map, slot })
        }
        #[cfg(not(unix))]
        {
            let _ = (file, len);
            Err(std::io::ErrorKind::Unsupported.into())
        }
    }

    /// The mapped bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Never true: empty files are not mapped.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The file was truncated under the mapping and a page past its new end was touched: that
    /// page reads as zeros now, and the bytes are not the file's any more.
    pub fn torn(&self) -> bool {
        TABLE[self.slot].torn.load(Ordering::Acquire)
    }

    /// Drops the pages of `range` (bytes; widened to whole pages) from this process's memory
    /// (`MADV_DONTNEED`); the next access reads them from the page cache again.
    pub fn release(&self, range: Range<usize>) {
        let end = range.end.min(self.map.len());
        if range.start >= end {
            return;
        }
        #[cfg(unix)]
        // SAFETY: DONTNEED on a read-only file mapping drops nothing but resident copies of
        // the file's pages (re-read on the next access); no reference can observe a change.
        let _ = unsafe {
            self.map.unchecked_advise_range(
                memmap2::UncheckedAdvice::DontNeed,
                range.start,
                end - range.start,
            )
        };
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Forgotten by the handler first; `map` is unmapped after this.
        unregister(self.slot);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;

    /// Resident kB of the mapping starting at `start` (`/proc/self/smaps`): this mapping's
    /// own pages, whatever other tests map meanwhile.
    fn resident_kb(start: *const u8) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let head = format!("{:x}-", start as usize);
        let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&head));
        assert!(lines.next().is_some(), "mapping in smaps");
        lines
            .find_map(|l| l.strip_prefix("Rss:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    /// Issue 12: a file truncated while mapped does not kill the process. Touching a page past
    /// the new end reads zeros and marks the mapping torn; the page holding the new end reads
    /// the kept bytes, then zeros; other mappings stay intact.
    #[test]
    fn a_truncated_file_reads_zeros_and_is_torn() {
        let page = page_size();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let bytes: Vec<u8> = (0..3 * page).map(|i| b'a' + (i % 26) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let other_path = dir.path().join("o.jsonl");
        std::fs::write(&other_path, &bytes).unwrap();
        let f = File::open(&path).unwrap();
        let m = Mapping::new(&f, bytes.len()).unwrap();
        let other = Mapping::new(&File::open(&other_path).unwrap(), bytes.len()).unwrap();
        assert_eq!(m.bytes(), &bytes[..]);
        assert!(!m.torn());

        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(100)
            .unwrap();
        // SAFETY: reads inside the mapping; volatile so each is a real access.
        let at = |i: usize| unsafe { std::ptr::read_volatile(m.bytes().as_ptr().add(i)) };
        assert_eq!(at(50), bytes[50], "kept bytes");
        assert_eq!(
            at(200),
            0,
            "past the end in the last page: zeros, no signal"
        );
        assert!(!m.torn());
        assert_eq!(at(2 * page + 7), 0, "a page past the end: SIGBUS handled");
        assert!(m.torn());
        assert_eq!(at(page), 0);
        assert!(!other.torn());
        assert_eq!(other.bytes(), &bytes[..]);

        // Rewritten longer: the zero pages stay zeros, the flag stays set.
        let mut w = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        w.write_all(&bytes[100..]).unwrap();
        assert_eq!(at(2 * page + 7), 0);
        assert!(m.torn());
        drop(m);
        // The slot is free again and a fresh mapping of the same file is whole.
        let again = Mapping::new(&File::open(&path).unwrap(), bytes.len()).unwrap();
        assert!(!again.torn());
        assert_eq!(&again.bytes()[2 * page..], &bytes[2 * page..]);
    }

    /// Released pages leave this process's memory and read the same bytes again.
    #[test]
    fn released_pages_read_back_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let bytes: Vec<u8> = (0..(8 << 20)).map(|i| b'a' + (i % 23) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let m = Mapping::new(&File::open(&path).unwrap(), bytes.len()).unwrap();
        let at = m.bytes().as_ptr();
        let sum: u64 = m.bytes().iter().map(|&b| u64::from(b)).sum();
        assert_eq!(resident_kb(at), 8 << 10, "all touched");
        m.release(0..(4 << 20));
        assert_eq!(resident_kb(at), 4 << 10, "the first 4 MiB dropped");
        m.release(0..m.len());
        assert_eq!(resident_kb(at), 0);
        assert_eq!(sum, bytes.iter().map(|&b| u64::from(b)).sum::<u64>());
        assert_eq!(m.bytes(), &bytes[..]);
    }
}
