//! The files of one session on disk (FORMATS.md §1.1, case 20): the main transcript, its
//! sub-agent transcripts (`<session>/subagents/agent-<id>.jsonl` with `.meta.json`; the flat
//! `agent-<id>.jsonl` layout of 2.0.x next to the sessions; `<stem>.agent-<id>.jsonl`
//! siblings) and the compaction summariser runs (`agent-acompact-*`). Discovery itself is
//! `formats::claude_code::discover_subagents`; this module adds the way back from a sub-agent
//! file to its session and the links from calls to files.

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

/// Finds the session files around `path` (a main transcript or one of its sub-agent files):
/// the main transcript and, through `formats::claude_code::discover_subagents`, its sub-agent
/// and compaction files. Missing directories give an empty list, never an error.
/// `child_threads`: the thread ids `path`'s own spawning calls name (Codex
/// `collab_agent_spawn_end.new_thread_id`), looked for in later day directories too when
/// `path` is its session's main rollout.
pub fn session_files(path: &Path, child_threads: &[&str]) -> SessionFiles {
    let main = main_of(path);
    // The ids are the spawning calls' of `path` itself (Codex: issue 9 item 4).
    let known = if main == path { child_threads } else { &[] };
    let mut subagents = Vec::new();
    for layout in crate::formats::agents::AGENTS
        .iter()
        .filter_map(|a| a.layout)
    {
        subagents.extend((layout.children)(&main, known));
    }
    SessionFiles { main, subagents }
}

/// The main transcript of a sub-agent file, by the agent registry's layouts
/// (`formats::agents::main_of`: `<dir>/<stem>/subagents/agent-x.jsonl` -> `<dir>/<stem>.jsonl`;
/// a Codex child rollout -> its parent's rollout, beside it or in an earlier day directory, by
/// thread id); any other path is its own main.
pub fn main_of(path: &Path) -> PathBuf {
    crate::formats::agents::main_of(path)
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
    fn finds_nested_files_from_the_main_file_and_from_a_child() {
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
        let got = session_files(&d.join("s1.jsonl"), &[]);
        let ids: Vec<(&str, bool)> = got
            .subagents
            .iter()
            .map(|f| (f.agent_id.as_str(), f.is_compaction))
            .collect();
        assert_eq!(ids, vec![("a1", false), ("acompact-ff", true)]);
        assert_eq!(got.subagents[0].tool_use_id.as_deref(), Some("toolu_1"));
        let from_child = session_files(&d.join("s1/subagents/agent-a1.jsonl"), &[]);
        assert_eq!(from_child.main, d.join("s1.jsonl"));
        assert_eq!(from_child.subagents, got.subagents);
    }
}
