//! How much memory the process may still take, and whether a text's records fit in it
//! (issue 25 item 8: 30 MB of 10 M `{}` lines took 1.1 GB as records, and a file whose
//! records do not fit made the allocator abort the CLI or the server; it is now refused
//! with a message first).
//!
//! The room is the smallest of: the system's `MemAvailable` (`/proc/meminfo`), what the
//! process's cgroup v2 still allows (`memory.max` − `memory.current`), and what its
//! address-space limit still allows (`ulimit -v`: `RLIMIT_AS` of `/proc/self/limits` −
//! `VmSize` of `/proc/self/status`). `None` where none of them can be read (not Linux).

/// Bytes of memory one line of a transcript costs once read, beyond its own bytes: the most
/// any surface takes per `{}` line, measured (peak RSS, release) on 10 M of them: 107 bytes
/// as a raw document over LSP, 104 as a view, 89 with `transcript-ls stats` (issue 25 items 1
/// and 8: an `Entry` of 88 bytes per line; 112 bytes and a `LINE_COST` of 128 before),
/// rounded up to a multiple of 16. Keep it in step with `model::Entry` (the test
/// `model::tests::per_record_types_stay_compact`).
pub const LINE_COST: u64 = 112;

/// Bytes of memory a `{}` line costs once read when the line before it is `{}` too: every
/// reader joins such records into the run the first one started (`model::RecordRun`, issue 25
/// item 8; the test `properties::repeated_empty_objects_are_one_entry_in_every_format`), so
/// what is left is the line's place in a line index (8 bytes) and slack.
pub const RUN_LINE_COST: u64 = 16;

/// The memory `bytes` of text holding `lines` line ends take once read, as counted here:
/// `bytes + LINE_COST × lines` (saturating).
pub fn memory_estimate(bytes: u64, lines: u64) -> u64 {
    bytes.saturating_add(LINE_COST.saturating_mul(lines))
}

/// Bytes of memory a line that may open a turn costs once read beyond [`LINE_COST`]: the
/// turn the analysis makes of it, its outline symbol as JSON (kept per turn and sent), its
/// title. Measured on 1 M one-line prompts (108 MB; issue 25 item 8): peak RSS 1,352 MB as a
/// raw document, 772 MB with `transcript-ls stats`, 602 MB as a view, about 1,140 bytes a
/// prompt beyond its bytes at most; rounded up. Without it such a file passed the check and
/// the allocator aborted the CLI (`ulimit -v 500000`: exit 134).
pub const TURN_COST: u64 = 1_280;

/// Lines shorter than this many bytes cannot open a turn: a prompt record names its type
/// and its content (`{"type":"user","message":{"content":"x"}}` is 43 bytes), so
/// [`TURN_COST`] is counted only for lines of at least this length.
pub const OPENER_MIN_BYTES: usize = 16;

/// What [`check_parts_fit`] counts in a text: its lines, the `{}` lines right after another
/// (`repeats`, [`RUN_LINE_COST`] each), and the lines of at least [`OPENER_MIN_BYTES`]
/// (`long`, which may open a turn: [`TURN_COST`] each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCounts {
    pub lines: u64,
    pub repeats: u64,
    pub long: u64,
}

impl LineCounts {
    /// The memory `bytes` of text with these lines take once read, in bytes (saturating):
    /// `bytes + LINE_COST × (lines − repeats) + RUN_LINE_COST × repeats + TURN_COST × long`.
    pub fn estimate(&self, bytes: u64) -> u64 {
        memory_estimate(bytes, self.lines - self.repeats)
            .saturating_add(RUN_LINE_COST.saturating_mul(self.repeats))
            .saturating_add(TURN_COST.saturating_mul(self.long))
    }
}

/// [`LineCounts`] of `parts` (one text cut in pieces). A line that crosses from one part
/// into the next, and a last line without its `\n`, are counted long and never a repeat.
fn count_lines(parts: &[&[u8]]) -> LineCounts {
    let mut c = LineCounts {
        lines: 0,
        repeats: 0,
        long: 0,
    };
    let is_empty_object = |l: &[u8]| l == b"{}" || l == b"{}\r";
    for (k, p) in parts.iter().enumerate() {
        let mut start = 0;
        let mut prev_empty = false;
        for end in memchr::memchr_iter(b'\n', p) {
            c.lines += 1;
            // The first line of a later part went on from the part before.
            let whole = start > 0 || k == 0;
            let here = is_empty_object(&p[start..end]);
            if here && prev_empty {
                c.repeats += 1;
            }
            if !whole || end - start >= OPENER_MIN_BYTES {
                c.long += 1;
            }
            prev_empty = here && whole;
            start = end + 1;
        }
    }
    let last = parts.iter().rev().find(|p| !p.is_empty());
    if last.is_some_and(|p| !p.ends_with(b"\n")) {
        c.lines += 1;
        c.long += 1;
    }
    c
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
pub fn mem_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// What the process's cgroup (v2) still allows, in bytes: `memory.max` − `memory.current`
/// (`None` without a limit).
pub fn cgroup_room() -> Option<u64> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cg.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
    let max: u64 = read("memory.max")?.trim().parse().ok()?;
    let current: u64 = read("memory.current")?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

/// What the address-space limit (`ulimit -v`, `RLIMIT_AS` soft limit) still allows, in
/// bytes: the limit − `VmSize` (`None` when unlimited).
pub fn address_space_room() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft: u64 = line
        .trim_start_matches("Max address space")
        .split_whitespace()
        .next()?
        .parse()
        .ok()?; // "unlimited" does not parse
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let size = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kib: u64 = size.split_whitespace().nth(1)?.parse().ok()?;
    Some(soft.saturating_sub(kib * 1024))
}

/// The memory the process may still take, in bytes (see the module's doc).
pub fn available() -> Option<u64> {
    [mem_available(), cgroup_room(), address_space_room()]
        .into_iter()
        .flatten()
        .min()
}

/// Records of a text that do not fit in memory ([`check_fits`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooManyRecords {
    /// Line ends in the text.
    pub lines: u64,
    /// What reading it would take ([`memory_estimate`]), bytes.
    pub need: u64,
    /// The part of [`available`] a text may take (two thirds), bytes.
    pub room: u64,
}

impl std::fmt::Display for TooManyRecords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "has {} lines, which would take about {} MiB of memory once read, more than the {} MiB \
             that can be taken now: not read",
            self.lines,
            self.need.div_ceil(1 << 20),
            self.room >> 20
        )
    }
}

/// Whether the records of `text` fit in two thirds of `room` bytes (the rest is for the
/// analysis, the view and everything else): `Err` says how many lines it has and what they
/// would take ([`LineCounts::estimate`]): [`LINE_COST`] a line, [`RUN_LINE_COST`] a `{}`
/// line after another (issue 25 item 8: those are one entry), and [`TURN_COST`] more for a
/// line long enough to open a turn. A text that could not exceed the room whatever its lines
/// (each line at least 2 bytes: `1\n`) is not counted through. `room` is [`available`] for callers
/// ([`check_fits_now`]); unknown room fits.
pub fn check_fits(text: &[u8], room: Option<u64>) -> Result<(), TooManyRecords> {
    check_parts_fit(&[text], room)
}

/// [`check_fits`] of the text made of `parts` one after the other (a text and what was
/// appended to it).
pub fn check_parts_fit(parts: &[&[u8]], room: Option<u64>) -> Result<(), TooManyRecords> {
    let Some(room) = room else {
        return Ok(());
    };
    let room = room / 3 * 2;
    let bytes: u64 = parts.iter().map(|p| p.len() as u64).sum();
    // At most a line every 2 bytes, a long one every `OPENER_MIN_BYTES + 1`.
    let most = LineCounts {
        lines: bytes / 2 + 1,
        repeats: 0,
        long: bytes / (OPENER_MIN_BYTES as u64 + 1) + 1,
    };
    if most.estimate(bytes) <= room {
        return Ok(());
    }
    let counts = count_lines(parts);
    let need = counts.estimate(bytes);
    if need <= room {
        Ok(())
    } else {
        Err(TooManyRecords {
            lines: counts.lines,
            need,
            room,
        })
    }
}

/// [`check_fits`] against the memory [`available`] now.
pub fn check_fits_now(text: &[u8]) -> Result<(), TooManyRecords> {
    check_fits(text, available())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_that_do_not_fit_are_counted_and_refused() {
        let text = "[]\n".repeat(1000);
        // 3,000 bytes + 112 × 1,000 lines = 115,000 bytes.
        assert_eq!(check_fits(text.as_bytes(), None), Ok(()));
        assert_eq!(check_fits(text.as_bytes(), Some(172_500)), Ok(()));
        let e = check_fits(text.as_bytes(), Some(172_000)).unwrap_err();
        assert_eq!(
            e,
            TooManyRecords {
                lines: 1000,
                need: 115_000,
                room: 114_666,
            }
        );
        assert_eq!(
            e.to_string(),
            "has 1000 lines, which would take about 1 MiB of memory once read, more than the 0 \
             MiB that can be taken now: not read"
        );
        // A last line without its `\n` counts.
        let e = check_fits(b"{}\n{}", Some(100)).unwrap_err();
        assert_eq!(e.lines, 2);
        // A text and its append count together.
        let e = check_parts_fit(&[b"{}\n{}", b"\n{}\n"], Some(100)).unwrap_err();
        assert_eq!(e.lines, 3);
        // Few long lines fit where many short ones of the same size do not.
        let long = format!("{}\n", "x".repeat(2999));
        // 3,000 bytes + 112 + 1,280 (it may open a turn) = 4,392 bytes.
        assert_eq!(check_fits(long.as_bytes(), Some(6600)), Ok(()));
    }

    /// Issue 25 item 8: a `{}` line after another is one entry with it, so it costs
    /// [`RUN_LINE_COST`]; the first of a run, any other line, and the first line of a later
    /// part (a text's append) cost [`LINE_COST`].
    #[test]
    fn empty_objects_in_a_row_cost_a_line_of_a_run() {
        let text = "{}\n".repeat(1000);
        // 3,000 bytes + 112 + 16 × 999 = 19,096 bytes.
        assert_eq!(check_fits(text.as_bytes(), Some(28_644)), Ok(()));
        let e = check_fits(text.as_bytes(), Some(28_641)).unwrap_err();
        assert_eq!((e.lines, e.need), (1000, 19_096));
        let counts = |parts: &[&[u8]]| {
            let c = count_lines(parts);
            (c.lines, c.repeats, c.long)
        };
        // A last line without its `\n` (it may still grow) is never a repeat.
        assert_eq!(counts(&[b"{}\r\n{}\r\n{} \n{}\n{}"]), (5, 1, 1));
        assert_eq!(counts(&[b"{}\n{}\n{", b"}\n{}\n"]), (4, 1, 1));
        assert_eq!(counts(&[b"{}\n{}\n", b"{}\n{}\n{}\n"]), (5, 2, 1));
    }

    /// Issue 25 item 8: a line long enough to open a turn costs [`TURN_COST`] more (1 M
    /// one-line prompts of 108 bytes passed the check at 220 MB and took 772–1,352 MB).
    #[test]
    fn lines_that_may_open_a_turn_cost_a_turn() {
        let prompt = r#"{"type":"user","message":{"role":"user","content":"x"}}"#;
        assert!(prompt.len() >= OPENER_MIN_BYTES);
        let text = format!("{prompt}\n").repeat(1000);
        let c = count_lines(&[text.as_bytes()]);
        assert_eq!((c.lines, c.repeats, c.long), (1000, 0, 1000));
        // 56,000 bytes + (112 + 1,280) × 1,000 = 1,448,000 bytes.
        assert_eq!(c.estimate(56_000), 1_448_000);
        let e = check_fits(text.as_bytes(), Some(2_000_000)).unwrap_err();
        assert_eq!((e.lines, e.need), (1000, 1_448_000));
        assert_eq!(check_fits(text.as_bytes(), Some(2_172_000)), Ok(()));
        // Lines too short to be a prompt (`{"type":"a"}`, 12 bytes) cost a line only.
        let c = count_lines(&["{\"type\":\"a\"}\n".repeat(10).as_bytes()]);
        assert_eq!((c.lines, c.long), (10, 0));
    }

    #[test]
    fn the_room_is_read_from_the_system() {
        // On Linux at least MemAvailable is there.
        if cfg!(target_os = "linux") {
            assert!(mem_available().is_some_and(|m| m > 0));
            assert!(available().is_some());
        }
    }
}
