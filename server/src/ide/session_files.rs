//! The files of one session on disk (FORMATS.md §1.1, case 20): the main transcript, its
//! sub-agent transcripts (`<session>/subagents/agent-<id>.jsonl` with `.meta.json`; the flat
//! `agent-<id>.jsonl` layout of 2.0.x next to the sessions; `<stem>.agent-<id>.jsonl`
//! siblings) and the compaction summariser runs (`agent-acompact-*`). This module reads the
//! directory and small headers of files; it never reads whole transcripts.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::analysis::SubagentCall;
use crate::model::SubagentFile;

/// The files of one session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionFiles {
    /// The main transcript (may be the file asked about, or its parent session when that was
    /// a sub-agent file).
    pub main: PathBuf,
    /// Sub-agent and compaction files, sorted by path.
    pub subagents: Vec<SubagentFile>,
}

/// Finds the session files around `path` (a main transcript or one of its sub-agent files).
/// `session_id` is the main transcript's `sessionId`, used to pick flat-layout
/// `agent-*.jsonl` files of the same session; without it no flat-layout file is listed.
/// Missing directories give an empty list, never an error.
pub fn session_files(path: &Path, session_id: Option<&str>) -> SessionFiles {
    let main = main_of(path);
    let mut subagents = Vec::new();
    let dir = main.parent().map(Path::to_path_buf).unwrap_or_default();
    let stem = main
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // 2.1.x: <dir>/<stem>/subagents/agent-<id>.jsonl
    let sub_dir = dir.join(&stem).join("subagents");
    for p in list_jsonl(&sub_dir) {
        let name = file_name(&p);
        if let Some(id) = name
            .strip_prefix("agent-")
            .and_then(|n| n.strip_suffix(".jsonl"))
        {
            subagents.push(describe(&p, id));
        }
    }
    // Siblings named <stem>.agent-<id>.jsonl (stand-ins for the subagents directory).
    let sib_prefix = format!("{stem}.agent-");
    for p in list_jsonl(&dir) {
        let name = file_name(&p);
        if let Some(id) = name
            .strip_prefix(&sib_prefix)
            .and_then(|n| n.strip_suffix(".jsonl"))
        {
            subagents.push(describe(&p, id));
        } else if let (Some(id), Some(sid)) = (
            name.strip_prefix("agent-")
                .and_then(|n| n.strip_suffix(".jsonl")),
            session_id,
        ) {
            // ≤ 2.0.x flat layout: agent files of every session share the directory.
            if p != main && first_session_id(&p).as_deref() == Some(sid) {
                subagents.push(describe(&p, id));
            }
        }
    }
    subagents.sort_by(|a, b| a.path.cmp(&b.path));
    subagents.dedup_by(|a, b| a.path == b.path);
    SessionFiles { main, subagents }
}

/// The main transcript of a sub-agent file (`<dir>/<stem>/subagents/agent-x.jsonl` ->
/// `<dir>/<stem>.jsonl`); any other path is its own main.
pub fn main_of(path: &Path) -> PathBuf {
    let parent = path.parent();
    if parent
        .and_then(Path::file_name)
        .is_some_and(|n| n == "subagents")
    {
        if let Some(session_dir) = parent.and_then(Path::parent) {
            let mut m = session_dir.as_os_str().to_owned();
            m.push(".jsonl");
            return PathBuf::from(m);
        }
    }
    path.to_path_buf()
}

/// The sub-agent file spawned by `call`: by `meta.json` `toolUseId` first, then by agent id
/// (case 20: never by order).
pub fn file_for_call<'a>(
    files: &'a [SubagentFile],
    call: &SubagentCall,
) -> Option<&'a SubagentFile> {
    files
        .iter()
        .find(|f| f.tool_use_id.as_deref() == Some(call.tool_use_id.as_str()))
        .or_else(|| {
            let id = call.agent_id.as_deref()?;
            files.iter().find(|f| f.agent_id == id)
        })
}

/// The compaction summariser files, in path order.
pub fn compaction_files(files: &[SubagentFile]) -> Vec<&SubagentFile> {
    files.iter().filter(|f| f.is_compaction).collect()
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn list_jsonl(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect();
    out.sort();
    out
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Meta {
    #[serde(default)]
    tool_use_id: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    agent_type: Option<String>,
}

fn describe(path: &Path, agent_id: &str) -> SubagentFile {
    let meta_path = path.with_extension("meta.json");
    let meta: Meta = std::fs::read(&meta_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let head = read_head(path, 4096);
    SubagentFile {
        agent_id: agent_id.to_string(),
        path: path.to_path_buf(),
        tool_use_id: meta.tool_use_id,
        description: meta.description,
        agent_type: meta.agent_type,
        is_compaction: agent_id.starts_with("acompact"),
        is_warmup: head.contains("\"content\":\"Warmup\""),
    }
}

fn read_head(path: &Path, max: usize) -> String {
    let mut buf = Vec::with_capacity(max);
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(max as u64).read_to_end(&mut buf);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

fn first_session_id(path: &Path) -> Option<String> {
    let head = read_head(path, 16 * 1024);
    let first = head.lines().next()?;
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
    }
    let probe: Probe = serde_json::from_str(first).ok()?;
    probe.session_id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_of_subagent_file() {
        assert_eq!(
            main_of(Path::new("/p/abc/subagents/agent-a1.jsonl")),
            PathBuf::from("/p/abc.jsonl")
        );
        assert_eq!(
            main_of(Path::new("/p/abc.jsonl")),
            PathBuf::from("/p/abc.jsonl")
        );
    }

    #[test]
    fn finds_nested_sibling_and_flat_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("s1.jsonl"), "{}\n").unwrap();
        std::fs::create_dir_all(d.join("s1/subagents")).unwrap();
        std::fs::write(d.join("s1/subagents/agent-a1.jsonl"), "{}\n").unwrap();
        std::fs::write(
            d.join("s1/subagents/agent-a1.meta.json"),
            r#"{"agentType":"Explore","description":"Audit auth","toolUseId":"toolu_1"}"#,
        )
        .unwrap();
        std::fs::write(d.join("s1/subagents/agent-acompact-ff.jsonl"), "{}\n").unwrap();
        std::fs::write(d.join("s1.agent-b2.jsonl"), "{}\n").unwrap();
        std::fs::write(
            d.join("agent-c3.jsonl"),
            "{\"sessionId\":\"S1\",\"message\":{\"content\":\"Warmup\"}}\n",
        )
        .unwrap();
        std::fs::write(d.join("agent-d4.jsonl"), "{\"sessionId\":\"OTHER\"}\n").unwrap();
        let got = session_files(&d.join("s1.jsonl"), Some("S1"));
        let ids: Vec<(&str, bool)> = got
            .subagents
            .iter()
            .map(|f| (f.agent_id.as_str(), f.is_compaction))
            .collect();
        assert_eq!(
            ids,
            vec![
                ("c3", false),
                ("a1", false),
                ("acompact-ff", true),
                ("b2", false)
            ]
        );
        let a1 = &got.subagents[1];
        assert_eq!(a1.tool_use_id.as_deref(), Some("toolu_1"));
        assert_eq!(a1.description.as_deref(), Some("Audit auth"));
        let from_child = session_files(&d.join("s1/subagents/agent-a1.jsonl"), None);
        assert_eq!(from_child.main, d.join("s1.jsonl"));
        assert_eq!(from_child.subagents.len(), 3);
    }
}
