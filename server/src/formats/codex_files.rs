//! The rollout files of a Codex thread family (server/FORMATS.md "Forks and sub-agents";
//! issue 9 item 4): the sub-agent and fork rollouts a thread spawned, and the rollout of a
//! child's parent. Rollouts are `rollout-<YYYY-MM-DDThh-mm-ss>-<thread id>.jsonl` in
//! `~/.codex/sessions/YYYY/MM/DD/`; a child's first `session_meta` names its parent
//! (`parent_thread_id`, `forked_from_id`, `source.subagent.thread_spawn.parent_thread_id`).
//! Files are matched by thread id, never by time. The search is bounded: the rollout's own
//! directory is read (first lines of its rollouts); beyond it only file names are listed, in
//! the day directories of the sessions root (`<root>/YYYY/MM/DD`) on the side where the other
//! file can be (a parent's day or earlier, a child's day or later), looking for
//! `rollout-…-<thread id>.jsonl` of a thread id already known (issue 9: a child spawned after
//! midnight lives in the next day's directory).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::model::SubagentFile;

/// Most bytes read for a rollout's first line (its `session_meta` holds ~13–18 KB of base
/// instructions).
const HEAD_CAP: u64 = 1 << 20;

/// The thread id at the end of a rollout file name (`rollout-…-<uuid>.jsonl`), if the name
/// has that shape.
pub fn thread_id_of(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".jsonl")?;
    if !stem.starts_with("rollout-") || stem.len() < "rollout-".len() + 36 {
        return None;
    }
    let id = &stem[stem.len() - 36..];
    let uuid = id.len() == 36
        && id.char_indices().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
    uuid.then_some(id)
}

/// What a rollout's first `session_meta` says about its lineage.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Head {
    pub id: Option<String>,
    pub parent: Option<String>,
    pub nickname: Option<String>,
    pub role: Option<String>,
}

/// Reads the first line of a rollout (at most 1 MiB); `None` when it is not a
/// `session_meta`.
pub fn head(path: &Path) -> Option<Head> {
    #[derive(Deserialize)]
    struct Line<'a> {
        #[serde(rename = "type", borrow)]
        ty: Option<&'a str>,
        #[serde(borrow)]
        payload: Option<&'a RawValue>,
    }
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Meta<'a> {
        id: Option<String>,
        forked_from_id: Option<String>,
        parent_thread_id: Option<String>,
        #[serde(borrow)]
        source: Option<&'a RawValue>,
    }
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Spawn {
        parent_thread_id: Option<String>,
        agent_nickname: Option<String>,
        agent_role: Option<String>,
    }
    // The one loader's rules: regular files only (a FIFO named like a rollout never blocks),
    // invalid UTF-8 replaced (issue 8).
    let (file, _) = crate::source::load::open_regular(path).ok()?;
    let mut reader = BufReader::new(file.take(HEAD_CAP));
    let mut bytes = Vec::new();
    reader.read_until(b'\n', &mut bytes).ok()?;
    let line = String::from_utf8_lossy(&bytes);
    let l: Line = serde_json::from_str(line.trim_end()).ok()?;
    if l.ty != Some("session_meta") {
        return None;
    }
    let m: Meta = serde_json::from_str(l.payload?.get()).ok()?;
    let spawn = m
        .source
        .and_then(|s| serde_json::from_str::<serde_json::Value>(s.get()).ok())
        .and_then(|v| v.get("subagent")?.get("thread_spawn").cloned())
        .and_then(|v| serde_json::from_value::<Spawn>(v).ok())
        .unwrap_or_default();
    Some(Head {
        id: m.id,
        parent: m
            .forked_from_id
            .or(m.parent_thread_id)
            .or(spawn.parent_thread_id),
        nickname: spawn.agent_nickname,
        role: spawn.agent_role,
    })
}

fn rollouts_beside(path: &Path) -> Vec<PathBuf> {
    let Some(dir) = path.parent() else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rollouts_in(dir)
        .into_iter()
        .filter(|p| p.as_path() != path)
        .collect();
    out.sort();
    out
}

/// The rollout files of one directory (regular files named like rollouts), unsorted.
fn rollouts_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| thread_id_of(p).is_some())
        .collect()
}

/// Day directories of a sessions root (`<root>/YYYY/MM/DD`, digits only), sorted by date.
/// Directory listings only; symlinks are not followed.
fn day_dirs(root: &Path) -> Vec<PathBuf> {
    fn numbered(dir: &Path, len: usize) -> Vec<PathBuf> {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = rd
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.len() == len && n.bytes().all(|b| b.is_ascii_digit()))
            })
            .map(|e| e.path())
            .collect();
        out.sort();
        out
    }
    numbered(root, 4)
        .iter()
        .flat_map(|y| numbered(y, 2))
        .flat_map(|m| numbered(&m, 2))
        .collect()
}

/// The sessions root of a rollout in a day directory (`<root>/YYYY/MM/DD/rollout-….jsonl`),
/// and that day directory; `None` for a rollout elsewhere.
fn sessions_root(path: &Path) -> Option<(PathBuf, PathBuf)> {
    let day = path.parent()?;
    let digits = |p: &Path, len: usize| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.len() == len && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let month = day.parent()?;
    let year = month.parent()?;
    (digits(day, 2) && digits(month, 2) && digits(year, 4))
        .then(|| (year.parent().map(Path::to_path_buf), day.to_path_buf()))
        .and_then(|(root, day)| Some((root?, day)))
}

/// Rollouts named with one of `ids`, in the day directories of `path`'s sessions root after
/// its own day (`later`) or before it (otherwise, nearest day first); the first file found
/// per id. File names only: nothing is opened.
fn find_by_thread_id(path: &Path, ids: &[&str], later: bool) -> Vec<PathBuf> {
    let Some((root, own_day)) = sessions_root(path) else {
        return Vec::new();
    };
    let mut days: Vec<PathBuf> = day_dirs(&root)
        .into_iter()
        .filter(|d| if later { *d > own_day } else { *d < own_day })
        .collect();
    if !later {
        days.reverse();
    }
    let mut want: Vec<&str> = ids.to_vec();
    let mut out = Vec::new();
    for d in days {
        if want.is_empty() {
            break;
        }
        let mut found = rollouts_in(&d);
        found.sort();
        for p in found {
            if let Some(i) = thread_id_of(&p).and_then(|id| want.iter().position(|w| *w == id)) {
                want.swap_remove(i);
                out.push(p);
            }
        }
    }
    out
}

fn child_file(p: PathBuf, h: Head) -> SubagentFile {
    SubagentFile {
        agent_id: h
            .id
            .or_else(|| thread_id_of(&p).map(str::to_string))
            .unwrap_or_default(),
        path: p,
        tool_use_id: None,
        description: h.nickname,
        agent_type: h.role,
        is_compaction: false,
        is_warmup: false,
    }
}

/// The child rollouts of the rollout at `path` (whose first `session_meta` names its thread
/// as parent), in path order, as [`SubagentFile`]s whose `agent_id` is the child's thread id
/// (what a spawning call's `SubagentCall::agent_id` holds). Empty for anything else.
/// Children beside it are found by their first lines; `known` thread ids (the threads its
/// spawning calls name) are also looked for by file name in later day directories.
pub fn children(path: &Path, known: &[&str]) -> Vec<SubagentFile> {
    let Some(own) = thread_id_of(path) else {
        return Vec::new();
    };
    let mut out: Vec<SubagentFile> = rollouts_beside(path)
        .into_iter()
        .filter_map(|p| {
            let h = head(&p)?;
            (h.parent.as_deref() == Some(own)).then(|| child_file(p, h))
        })
        .collect();
    let missing: Vec<&str> = known
        .iter()
        .copied()
        .filter(|id| *id != own && !out.iter().any(|f| f.agent_id == *id))
        .collect();
    if !missing.is_empty() {
        for p in find_by_thread_id(path, &missing, true) {
            if let Some(h) = head(&p)
                && h.parent.as_deref() == Some(own)
            {
                out.push(child_file(p, h));
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
    }
    out
}

/// The rollout of the parent of the child rollout at `path` (by the parent thread id in its
/// file name): beside it, else in an earlier day directory of the sessions root.
pub fn parent(path: &Path) -> Option<PathBuf> {
    thread_id_of(path)?;
    let parent = head(path)?.parent?;
    rollouts_beside(path)
        .into_iter()
        .find(|p| thread_id_of(p) == Some(parent.as_str()))
        .or_else(|| {
            find_by_thread_id(path, &[parent.as_str()], false)
                .into_iter()
                .next()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: &str = "019c8a4c-0000-7000-8000-000000000001";
    const KID: &str = "019c8a4c-0000-7000-8000-000000000002";

    #[test]
    fn children_and_parent_by_thread_id() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let main = d.join(format!("rollout-2026-08-20T11-00-00-{MAIN}.jsonl"));
        let kid = d.join(format!("rollout-2026-08-20T11-00-01-{KID}.jsonl"));
        let other =
            d.join("rollout-2026-08-20T11-00-02-019c8a4c-0000-7000-8000-000000000003.jsonl");
        std::fs::write(
            &main,
            format!("{{\"type\":\"session_meta\",\"payload\":{{\"id\":\"{MAIN}\"}}}}\n"),
        )
        .unwrap();
        std::fs::write(
            &kid,
            format!(
                "{{\"type\":\"session_meta\",\"payload\":{{\"id\":\"{KID}\",\"source\":\
                 {{\"subagent\":{{\"thread_spawn\":{{\"parent_thread_id\":\"{MAIN}\",\
                 \"agent_nickname\":\"scout\",\"agent_role\":\"explorer\"}}}}}}}}}}\n"
            ),
        )
        .unwrap();
        std::fs::write(&other, "{\"type\":\"session_meta\",\"payload\":{}}\n").unwrap();
        assert_eq!(thread_id_of(&main), Some(MAIN));
        assert_eq!(thread_id_of(Path::new("/x/agent-a1.jsonl")), None);
        let kids = children(&main, &[]);
        assert_eq!(kids.len(), 1);
        assert_eq!(
            (
                kids[0].agent_id.as_str(),
                kids[0].path.as_path(),
                kids[0].description.as_deref(),
                kids[0].agent_type.as_deref()
            ),
            (KID, kid.as_path(), Some("scout"), Some("explorer"))
        );
        assert_eq!(parent(&kid), Some(main.clone()));
        assert_eq!(parent(&main), None);
        assert!(children(&kid, &[]).is_empty());
    }

    fn write_kid(path: &Path, parent: &str, kid: &str) {
        std::fs::write(
            path,
            format!(
                "{{\"type\":\"session_meta\",\"payload\":{{\"id\":\"{kid}\",\
                 \"parent_thread_id\":\"{parent}\"}}}}\n"
            ),
        )
        .unwrap();
    }

    /// Issue 9: a child spawned after midnight lives in the next day's directory: found by
    /// the thread id its spawning call names (file names only), and its parent found back in
    /// the earlier day.
    #[test]
    fn children_and_parent_across_day_directories() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("sessions");
        let day1 = root.join("2026/08/31");
        let day2 = root.join("2026/09/01");
        let day3 = root.join("2026/09/02");
        for d in [&day1, &day2, &day3] {
            std::fs::create_dir_all(d).unwrap();
        }
        let main = day1.join(format!("rollout-2026-08-31T23-59-00-{MAIN}.jsonl"));
        std::fs::write(
            &main,
            format!("{{\"type\":\"session_meta\",\"payload\":{{\"id\":\"{MAIN}\"}}}}\n"),
        )
        .unwrap();
        let kid = day2.join(format!("rollout-2026-09-01T00-00-05-{KID}.jsonl"));
        write_kid(&kid, MAIN, KID);
        // A rollout named with the id but naming another parent is not a child.
        const OTHER: &str = "019c8a4c-0000-7000-8000-000000000003";
        let stranger = day3.join(format!("rollout-2026-09-02T10-00-00-{OTHER}.jsonl"));
        write_kid(&stranger, "019c8a4c-0000-7000-8000-00000000ffff", OTHER);

        // Without the spawning call's thread id only the own directory is searched.
        assert!(children(&main, &[]).is_empty());
        let kids = children(&main, &[KID, OTHER]);
        assert_eq!(
            kids.iter()
                .map(|k| (k.agent_id.as_str(), k.path.as_path()))
                .collect::<Vec<_>>(),
            vec![(KID, kid.as_path())]
        );
        assert_eq!(parent(&kid), Some(main.clone()));
        assert_eq!(parent(&stranger), None);
        // Outside a sessions root (no YYYY/MM/DD): its own directory only.
        let flat = dir.path().join(format!("rollout-x-{KID}.jsonl"));
        write_kid(&flat, MAIN, KID);
        assert_eq!(parent(&flat), None);
    }
}
