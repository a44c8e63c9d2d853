//! The file-age rule (issue 11): a transcript file nobody has written to for
//! [`SETTLED_AFTER`] is read as finished, one modified more recently as still being written.
//! Agents append to a session file while they work and leave it alone once the session ends,
//! so a file's age is the only evidence of completion a reader has when the last turn carries
//! none of its own (DESIGN.md §4, completion evidence). The CLI (`--complete` / `--growing`
//! override it) and the language server (documents and views) both decide with this module.

use std::path::Path;
use std::time::{Duration, SystemTime};

/// How long a file must have been left alone (since its last modification) to be read as
/// finished: 2 minutes.
pub const SETTLED_AFTER: Duration = Duration::from_secs(120);

/// True when a file last modified at `modified` counts as finished at `now`: it was modified
/// [`SETTLED_AFTER`] or longer before `now`. A modification time in the future (clock skew)
/// counts as recent.
pub fn settled_at(modified: SystemTime, now: SystemTime) -> bool {
    now.duration_since(modified)
        .is_ok_and(|age| age >= SETTLED_AFTER)
}

/// True when the file at `path` counts as finished now ([`settled_at`] of its modification
/// time). A file that cannot be read (missing, no modification time) is not settled: it may
/// be about to appear or grow.
pub fn is_settled(path: &Path) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|m| settled_at(m, SystemTime::now()))
}

/// When the file at `path` will count as finished if nobody writes to it: its modification
/// time plus [`SETTLED_AFTER`]. `None` when it has no readable modification time.
pub fn settles_at(path: &Path) -> Option<SystemTime> {
    let m = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    m.checked_add(SETTLED_AFTER)
}

/// How a reader decides whether a file is finished: the `fileState` setting of the server,
/// `--complete` / `--growing` of the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileState {
    /// By the file's age ([`is_settled`]): the default.
    #[default]
    Auto,
    /// Always finished: a last turn without completion evidence is not in flight.
    Complete,
    /// Always still being written: a last turn without completion evidence is in flight.
    Growing,
}

impl FileState {
    /// Parses `"auto"`, `"complete"` or `"growing"`.
    pub fn parse(s: &str) -> Option<FileState> {
        match s {
            "auto" => Some(FileState::Auto),
            "complete" => Some(FileState::Complete),
            "growing" => Some(FileState::Growing),
            _ => None,
        }
    }

    /// Whether the file at `path` (none: an editor buffer without a file) is read as finished
    /// now. Without a path, `Auto` reads it as still being written.
    pub fn is_complete(self, path: Option<&Path>) -> bool {
        match self {
            FileState::Auto => path.is_some_and(is_settled),
            FileState::Complete => true,
            FileState::Growing => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_minutes_untouched_is_settled() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert!(settled_at(now - Duration::from_secs(120), now));
        assert!(settled_at(now - Duration::from_secs(3600), now));
        assert!(!settled_at(now - Duration::from_secs(119), now));
        assert!(!settled_at(now, now));
        assert!(
            !settled_at(now + Duration::from_secs(600), now),
            "future mtime"
        );
    }

    #[test]
    fn file_state_overrides_the_age() {
        let missing = Path::new("/nonexistent/transcript-ls/x.jsonl");
        assert!(!FileState::Auto.is_complete(Some(missing)));
        assert!(!FileState::Auto.is_complete(None));
        assert!(FileState::Complete.is_complete(Some(missing)));
        assert!(!FileState::Growing.is_complete(None));
        assert_eq!(FileState::parse("growing"), Some(FileState::Growing));
        assert_eq!(FileState::parse("Growing"), None);
    }

    #[test]
    fn missing_file_is_not_settled() {
        assert!(!is_settled(Path::new("/nonexistent/transcript-ls/x.jsonl")));
        assert_eq!(
            settles_at(Path::new("/nonexistent/transcript-ls/x.jsonl")),
            None
        );
    }
}
