//! The rollout files of a Codex thread family (server/FORMATS.md "Forks and sub-agents";
//! issue 9 item 4): the sub-agent and fork rollouts a thread spawned, and the rollout of a
//! child's parent. Rollouts are `rollout-<YYYY-MM-DDThh-mm-ss>-<thread id>.jsonl` in
//! `~/.codex/sessions/YYYY/MM/DD/`; a child's first `session_meta` names its parent
//! (`parent_thread_id`, `forked_from_id`, `source.subagent.thread_spawn.parent_thread_id`).
//! Files are matched by thread id, never by time; only the rollout's own directory is
//! searched (a child spawned after midnight, in the next day's directory, is not found).

use std::fs::File;
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
    let file = File::open(path).ok()?;
    let mut reader = BufReader::new(file.take(HEAD_CAP));
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
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
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.as_path() != path && thread_id_of(p).is_some())
        .collect();
    out.sort();
    out
}

/// The child rollouts of the rollout at `path` (whose first `session_meta` names its thread
/// as parent), in path order, as [`SubagentFile`]s whose `agent_id` is the child's thread id
/// (what a spawning call's `SubagentCall::agent_id` holds). Empty for anything else.
pub fn children(path: &Path) -> Vec<SubagentFile> {
    let Some(own) = thread_id_of(path) else {
        return Vec::new();
    };
    rollouts_beside(path)
        .into_iter()
        .filter_map(|p| {
            let h = head(&p)?;
            (h.parent.as_deref() == Some(own)).then(|| SubagentFile {
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
            })
        })
        .collect()
}

/// The rollout of the parent of the child rollout at `path` (by the parent thread id in its
/// file name), if it is beside it.
pub fn parent(path: &Path) -> Option<PathBuf> {
    thread_id_of(path)?;
    let parent = head(path)?.parent?;
    rollouts_beside(path)
        .into_iter()
        .find(|p| thread_id_of(p) == Some(parent.as_str()))
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
        let kids = children(&main);
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
        assert!(children(&kid).is_empty());
    }
}
