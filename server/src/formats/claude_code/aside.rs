//! `/btw` side questions (Claude Code 2.1.x; server/FORMATS.md "`/btw` aside files"): Claude
//! Code answers a `/btw` question in a sub-agent file `<session>/subagents/agent-aside_question-
//! <hex>.jsonl` whose records (all sidechain) first replay the parent session's messages (same
//! `message.id`, another `requestId`), then ask the question and answer it. The replay is the
//! parent's work: counted there once, it is history here ([`crate::model::Entry::inherited`]:
//! no turn, no usage, one fold), as a Codex child's replayed history is.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::model::{Format, Transcript};

/// File-name prefix of a `/btw` aside file (agent id `aside_question-<16 hex>`).
pub const ASIDE_PREFIX: &str = "agent-aside_question-";

/// True for a `/btw` aside file name (`agent-aside_question-<hex>.jsonl`).
pub fn is_aside_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(ASIDE_PREFIX) && n.ends_with(".jsonl"))
}

/// The `message.id` of every response in `t` (the part of a step key before `|requestId`).
pub fn message_ids(t: &Transcript) -> HashSet<Box<str>> {
    t.entries
        .iter()
        .filter_map(|e| e.step.as_ref())
        .map(|s| s.key.split('|').next().unwrap_or(&s.key).into())
        .collect()
}

/// Marks the replayed history of an aside transcript: every record up to the last one whose
/// `message.id` is one of the parent's (`parent_ids`) is inherited. `parent` names the parent
/// session (its `sessionId`), for the fold label. Returns the number of records marked (0 when
/// nothing is replayed; a file that is not Claude Code is left alone).
pub fn mark_replayed(t: &mut Transcript, parent_ids: &HashSet<Box<str>>, parent: &str) -> usize {
    if t.format() != Format::ClaudeCode {
        return 0;
    }
    let last = t.entries.iter().rposition(|e| {
        e.step
            .as_ref()
            .is_some_and(|s| parent_ids.contains(s.key.split('|').next().unwrap_or(&s.key)))
    });
    let Some(last) = last else {
        return 0;
    };
    for e in &mut t.revise_from(0)[..=last] {
        e.inherited = true;
    }
    t.meta.is_aside = true;
    if t.meta.parent_thread_id.is_none() {
        t.meta.parent_thread_id = Some(parent.to_string());
    }
    last + 1
}

/// The parent session file of an aside file: `<dir>/<session>/subagents/agent-aside_question-
/// *.jsonl` -> `<dir>/<session>.jsonl`.
fn parent_file(path: &Path) -> Option<PathBuf> {
    let subagents = path.parent()?;
    if subagents.file_name()? != "subagents" {
        return None;
    }
    let session = subagents.parent()?;
    let mut p = session.as_os_str().to_owned();
    p.push(".jsonl");
    Some(PathBuf::from(p))
}

/// The last parent read: (path, length, modification time) -> its message ids and session id.
type Cached = (
    PathBuf,
    u64,
    Option<SystemTime>,
    Arc<(HashSet<Box<str>>, String)>,
);
static LAST_PARENT: Mutex<Option<Cached>> = Mutex::new(None);

/// For an aside file at `path`: reads its parent session (once per length and modification
/// time; the one loader's rules and size limit) and marks the replayed records
/// ([`mark_replayed`]). Anything else, or a parent that cannot be read, leaves `t` as it is.
pub fn apply(t: &mut Transcript, path: &Path) -> usize {
    if !is_aside_file(path) || t.format() != Format::ClaudeCode {
        return 0;
    }
    let Some(parent) = parent_file(path) else {
        return 0;
    };
    let Ok(md) = crate::source::load::regular_file(&parent) else {
        return 0;
    };
    let (len, modified) = (md.len(), md.modified().ok());
    let cached = {
        let guard = crate::sync::lock(&LAST_PARENT);
        guard
            .as_ref()
            .filter(|(p, l, m, _)| *p == parent && *l == len && *m == modified)
            .map(|c| c.3.clone())
    };
    let ids = match cached {
        Some(ids) => ids,
        None => {
            let Ok(loaded) =
                crate::source::load::load(&parent, crate::source::load::MAX_FILE_BYTES)
            else {
                return 0;
            };
            let pt = crate::formats::read(&loaded.text);
            let sid = pt.meta.session_id.clone().unwrap_or_else(|| {
                parent
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
            let ids = Arc::new((message_ids(&pt), sid));
            if loaded.text.torn() {
                // Truncated while it was read (issue 12): nothing trustworthy to mark or keep.
                return 0;
            }
            *crate::sync::lock(&LAST_PARENT) = Some((parent, len, modified, ids.clone()));
            ids
        }
    };
    mark_replayed(t, &ids.0, &ids.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIR: &str = "../fixtures/rules/btw";
    const ASIDE: &str = "b7c0ffee-0000-4000-8000-000000000001/subagents/agent-aside_question-5c1de0a5b7e9f001.jsonl";

    fn read(rel: &str) -> (String, Transcript) {
        let text = std::fs::read_to_string(Path::new(DIR).join(rel)).unwrap();
        let t = crate::formats::read(&text);
        (text, t)
    }

    #[test]
    fn the_replayed_prefix_is_inherited_and_folds_as_such() {
        let (_, parent) = read("b7c0ffee-0000-4000-8000-000000000001.jsonl");
        let ids = message_ids(&parent);
        let mut want: Vec<&str> = vec!["msg_main_1", "msg_main_2"];
        let mut got: Vec<&str> = ids.iter().map(|s| &**s).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want);
        let (text, mut t) = read(ASIDE);
        assert_eq!(mark_replayed(&mut t, &ids, "b7c0ffee"), 4);
        assert_eq!(
            t.entries.iter().map(|e| e.inherited).collect::<Vec<_>>(),
            [true, true, true, true, false, false]
        );
        let a = crate::analysis::analyze(&t, &text, &Default::default());
        assert_eq!((a.turn_count, a.usage.output), (1, 30));
        let inh = a.inherited.first().unwrap();
        assert_eq!(
            crate::ide::folding::inherited_label(inh),
            "inherited from b7c0ffee (2 turns)"
        );
        // Nothing of the parent's: nothing marked.
        let (_, mut other) = read(ASIDE);
        assert_eq!(mark_replayed(&mut other, &HashSet::new(), "x"), 0);
        assert!(other.entries.iter().all(|e| !e.inherited));
    }

    #[test]
    fn aside_files_by_name_and_their_parent() {
        let p = Path::new("/p/s1/subagents/agent-aside_question-0123456789abcdef.jsonl");
        assert!(is_aside_file(p));
        assert_eq!(parent_file(p), Some(PathBuf::from("/p/s1.jsonl")));
        assert!(!is_aside_file(Path::new(
            "/p/s1/subagents/agent-a0123.jsonl"
        )));
        assert!(!is_aside_file(Path::new(
            "/p/agent-aside_question-1.meta.json"
        )));
    }
}
