//! Progress of loading a big transcript (issue 12, item 4), free of LSP types: the host
//! reports it through a [`ProgressHook`] (carried in the build's settings stamp), the
//! protocol layer turns it into work-done progress (`$/progress`) when the client supports it.
//!
//! Only loads of at least [`PROGRESS_MIN_BYTES`] new bytes report: a build that reads fewer
//! (a small file, an append to a big one) is over before a progress indicator could be seen.

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes a build must read (or a view must render from) before it reports progress: 8 MiB.
/// Documented in PROTOCOL.md (`$/progress`).
pub const PROGRESS_MIN_BYTES: usize = 8 << 20;

/// Share of the percentage the reader's pass takes: reading the records goes to 90 %, the
/// analysis that follows to 100 %.
const READ_SHARE: u64 = 90;

/// One event of a load. Events of one load share its `id` and arrive in order: `Begin`, zero
/// or more `Report`s with a non-decreasing `percent`, `End`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadProgress {
    /// A load starts: `title` names the file (`Reading session.jsonl`); `total` in bytes.
    Begin { id: u64, title: String, total: u64 },
    /// `percent` (0–100) done; `message` says what (`34 / 102 MB`, `analysing`).
    Report {
        id: u64,
        percent: u32,
        message: String,
    },
    /// The load finished: `message` sums it up (`68931 records`).
    End { id: u64, message: String },
}

/// Where load progress goes: called from blocking threads, must not block.
pub type LoadReporter = Arc<dyn Fn(LoadProgress) + Send + Sync>;

/// An optional [`LoadReporter`] (none: nothing is reported, e.g. the command line and tests).
#[derive(Clone, Default)]
pub struct ProgressHook(pub Option<LoadReporter>);

impl fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "ProgressHook(set)"
        } else {
            "ProgressHook(none)"
        })
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl ProgressHook {
    /// Starts a load of `total` bytes, reported only when `total` is at least
    /// [`PROGRESS_MIN_BYTES`] and a reporter is set.
    pub fn start(&self, verb: &str, path: Option<&Path>, total: usize) -> Load {
        let Some(r) = self.0.clone().filter(|_| total >= PROGRESS_MIN_BYTES) else {
            return Load::default();
        };
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let name = path
            .and_then(|p| p.file_name())
            .map_or_else(|| "transcript".to_string(), |n| n.to_string_lossy().into());
        r(LoadProgress::Begin {
            id,
            title: format!("{verb} {name}"),
            total: total as u64,
        });
        Load {
            inner: Some((r, id, total)),
            last: 0,
        }
    }
}

/// One load being reported (reports nothing when it was too small or no reporter is set).
/// Ends when [`Load::end`] is called or, failing that, when dropped (a panicking build).
#[derive(Default)]
pub struct Load {
    inner: Option<(LoadReporter, u64, usize)>,
    last: u32,
}

impl Load {
    /// True when this load reports.
    pub fn active(&self) -> bool {
        self.inner.is_some()
    }

    /// `done` of the total bytes read: reported every 5 % (of the reading share).
    pub fn read(&mut self, done: usize) {
        let Some((r, id, total)) = &self.inner else {
            return;
        };
        let percent = (done.min(*total) as u64 * READ_SHARE / (*total).max(1) as u64) as u32;
        if percent < self.last + 5 {
            return;
        }
        self.last = percent;
        r(LoadProgress::Report {
            id: *id,
            percent,
            message: format!("{} / {} MB", mb(done), mb(*total)),
        });
    }

    /// The reading is over; `step` (e.g. `analysing`) follows.
    pub fn step(&mut self, step: &str) {
        let Some((r, id, _)) = &self.inner else {
            return;
        };
        self.last = self.last.max(READ_SHARE as u32);
        r(LoadProgress::Report {
            id: *id,
            percent: self.last,
            message: step.to_string(),
        });
    }

    /// Ends the load with a summary.
    pub fn end(mut self, message: String) {
        if let Some((r, id, _)) = self.inner.take() {
            r(LoadProgress::End { id, message });
        }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        if let Some((r, id, _)) = self.inner.take() {
            r(LoadProgress::End {
                id,
                message: "stopped".to_string(),
            });
        }
    }
}

/// Megabytes (10^6 bytes), rounded down.
fn mb(bytes: usize) -> usize {
    bytes / 1_000_000
}

/// Splits `bytes[from..]` (a text's bytes) into pieces of about `step` bytes that end after a
/// `\n` (the last piece ends at `bytes.len()`): the offsets to feed the reader up to, in
/// order.
pub fn line_cuts(bytes: &[u8], from: usize, step: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = from;
    while bytes.len() - at > step {
        match memchr::memchr(b'\n', &bytes[at + step..]) {
            Some(n) => {
                at += step + n + 1;
                out.push(at);
            }
            None => break,
        }
    }
    if out.last() != Some(&bytes.len()) {
        out.push(bytes.len());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn cuts_end_after_a_newline_and_cover_the_text() {
        let text = b"aaaa\nbb\ncccccc\nd";
        assert_eq!(line_cuts(text, 0, 3), vec![5, 15, 16]);
        assert_eq!(line_cuts(text, 5, 3), vec![15, 16]);
        assert_eq!(line_cuts(text, 0, 100), vec![16]);
        assert_eq!(line_cuts(b"", 0, 3), vec![0]);
    }

    #[test]
    fn a_small_load_reports_nothing_a_big_one_begin_reports_end() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let hook = ProgressHook(Some(Arc::new(move |p| s.lock().unwrap().push(p))));
        let mut small = hook.start("Reading", None, PROGRESS_MIN_BYTES - 1);
        assert!(!small.active());
        small.read(10);
        small.end("done".into());
        assert!(seen.lock().unwrap().is_empty());

        let total = 100_000_000;
        let mut big = hook.start("Reading", Some(Path::new("/x/s.jsonl")), total);
        for done in (0..=total).step_by(1_000_000) {
            big.read(done);
        }
        big.step("analysing");
        big.end("3 records".into());
        let seen = seen.lock().unwrap();
        let id = match &seen[0] {
            LoadProgress::Begin { id, title, total } => {
                assert_eq!((title.as_str(), *total), ("Reading s.jsonl", 100_000_000));
                *id
            }
            other => panic!("{other:?}"),
        };
        let percents: Vec<u32> = seen
            .iter()
            .filter_map(|p| match p {
                LoadProgress::Report { percent, .. } => Some(*percent),
                _ => None,
            })
            .collect();
        assert_eq!(
            percents,
            (1..=18).map(|k| k * 5).chain([90]).collect::<Vec<u32>>()
        );
        assert_eq!(
            seen[1],
            LoadProgress::Report {
                id,
                percent: 5,
                message: "6 / 100 MB".into()
            }
        );
        assert_eq!(
            seen.last(),
            Some(&LoadProgress::End {
                id,
                message: "3 records".into()
            })
        );
    }
}
