//! Finding the sub-agent transcripts of a session on disk (FORMATS.md §1.1, case 20).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use super::raw::{Message, Obj, S};
use crate::model::SubagentFile;
use crate::source::load;

/// Most bytes read from a candidate file's first line, or from a `meta.json`.
const READ_CAP: u64 = 16 * 1024 * 1024;

/// A "Warmup" file holds at most this many records (2.0.x writes 2: prompt and reply).
const WARMUP_MAX_RECORDS: usize = 4;

/// How many leading lines of the session file are searched for its `sessionId`.
const SESSION_ID_LINES: usize = 16;

/// The main transcript of a 2.1.x sub-agent file (`<dir>/<stem>/subagents/agent-x.jsonl` ->
/// `<dir>/<stem>.jsonl`), from its path alone; `None` for any other path.
pub fn main_of(path: &Path) -> Option<PathBuf> {
    let parent = path.parent()?;
    if parent.file_name()? != "subagents" {
        return None;
    }
    let mut m = parent.parent()?.as_os_str().to_owned();
    m.push(".jsonl");
    Some(PathBuf::from(m))
}

/// Finds the sub-agent files of the session stored at `session_file`
/// (`<dir>/<stem>.jsonl`), sorted by path:
///
/// * `<dir>/<stem>/subagents/agent-<id>.jsonl` (2.1.x) with `agent-<id>.meta.json`
///   (`toolUseId`, `description`, `agentType`) when present;
/// * the flat 2.0.x layout `<dir>/agent-<id>.jsonl` whose first record's `sessionId` is the
///   session's (the file stem, or the first `sessionId` in the session file); only the first
///   line of each candidate is read;
/// * the stand-in naming of the cases `<dir>/<stem>.agent-<id>.jsonl` with
///   `<dir>/<stem>.agent-<id>.meta.json` (case 20).
///
/// `agent-acompact-*` files are marked `is_compaction`; files whose first prompt is exactly
/// `Warmup` and that hold at most 4 records are marked `is_warmup` (2.0.x noise). Unreadable
/// directories or files are skipped; this never panics.
pub fn discover_subagents(session_file: &Path) -> Vec<SubagentFile> {
    let (Some(dir), Some(stem)) = (
        session_file.parent(),
        session_file.file_stem().and_then(|s| s.to_str()),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();

    let sub = dir.join(stem).join("subagents");
    for (path, name) in list_dir(&sub) {
        if let Some(id) = name
            .strip_prefix("agent-")
            .and_then(|n| n.strip_suffix(".jsonl"))
        {
            let first = first_record(&path);
            let meta = sub.join(format!("agent-{id}.meta.json"));
            out.push(subagent(id, path, first.as_ref(), &meta));
        }
    }

    let stand_in = format!("{stem}.agent-");
    let mut session_ids: Option<Vec<String>> = None;
    for (path, name) in list_dir(dir) {
        if path == session_file {
            continue;
        }
        if let Some(id) = name
            .strip_prefix(&stand_in)
            .and_then(|n| n.strip_suffix(".jsonl"))
        {
            let first = first_record(&path);
            let meta = dir.join(format!("{stem}.agent-{id}.meta.json"));
            out.push(subagent(id, path, first.as_ref(), &meta));
        } else if let Some(id) = name
            .strip_prefix("agent-")
            .and_then(|n| n.strip_suffix(".jsonl"))
        {
            let ids = session_ids.get_or_insert_with(|| session_ids_of(session_file, stem));
            let Some(first) = first_record(&path) else {
                continue;
            };
            if first
                .session_id
                .as_deref()
                .is_some_and(|s| ids.iter().any(|i| i == s))
            {
                let meta = dir.join(format!("agent-{id}.meta.json"));
                out.push(subagent(id, path, Some(&first), &meta));
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup_by(|a, b| a.path == b.path);
    out
}

/// Regular files of `dir` with UTF-8 names: `(path, name)`. Empty when unreadable.
fn list_dir(dir: &Path) -> Vec<(PathBuf, String)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            Some((e.path(), name))
        })
        .collect()
}

/// What the first record of a candidate file says.
struct First {
    session_id: Option<String>,
    /// The first record is a user prompt that reads exactly `Warmup`.
    warmup_prompt: bool,
}

fn first_record(path: &Path) -> Option<First> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Head<'a> {
        #[serde(borrow, default)]
        session_id: S<'a>,
        #[serde(rename = "type", borrow, default)]
        ty: S<'a>,
        #[serde(borrow, default)]
        message: Obj<Message<'a>>,
    }
    let (file, _) = load::open_regular(path).ok()?;
    let mut reader = BufReader::new(file.take(READ_CAP));
    let mut bytes = Vec::new();
    reader.read_until(b'\n', &mut bytes).ok()?;
    // Invalid UTF-8 is replaced, as by every loader (issue 8 defect 11).
    let line = String::from_utf8_lossy(&bytes);
    let head: Head = serde_json::from_str(line.trim_end()).ok()?;
    let warmup_prompt = head.ty.get() == Some("user")
        && head
            .message
            .0
            .as_ref()
            .is_some_and(|m| m.content.is_literal("Warmup"));
    Some(First {
        session_id: head.session_id.get().map(str::to_string),
        warmup_prompt,
    })
}

/// The session ids a flat-layout agent file may name: the session file's stem and the first
/// `sessionId` among its leading lines.
fn session_ids_of(session_file: &Path, stem: &str) -> Vec<String> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Sid<'a> {
        #[serde(borrow, default)]
        session_id: S<'a>,
    }
    let mut ids = vec![stem.to_string()];
    if let Ok((file, _)) = load::open_regular(session_file) {
        let reader = BufReader::new(file.take(READ_CAP));
        for line in reader.split(b'\n').take(SESSION_ID_LINES) {
            let Ok(line) = line else { break };
            let line = String::from_utf8_lossy(&line);
            if let Ok(Sid {
                session_id: S(Some(id)),
            }) = serde_json::from_str::<Sid>(&line)
            {
                if id != stem {
                    ids.push(id.into_owned());
                }
                break;
            }
        }
    }
    ids
}

fn subagent(id: &str, path: PathBuf, first: Option<&First>, meta: &Path) -> SubagentFile {
    #[derive(serde::Deserialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Meta<'a> {
        #[serde(borrow, default)]
        tool_use_id: S<'a>,
        #[serde(borrow, default)]
        description: S<'a>,
        #[serde(borrow, default)]
        agent_type: S<'a>,
    }
    let meta_text = load::load(meta, READ_CAP).ok().map(|l| l.text);
    let m: Meta = meta_text
        .as_deref()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    let owned = |s: &S| s.get().map(str::to_string);
    let is_warmup =
        first.is_some_and(|f| f.warmup_prompt) && count_records(&path) <= WARMUP_MAX_RECORDS;
    SubagentFile {
        agent_id: id.to_string(),
        tool_use_id: owned(&m.tool_use_id),
        description: owned(&m.description),
        agent_type: owned(&m.agent_type),
        is_compaction: id.starts_with("acompact-"),
        is_warmup,
        path,
    }
}

/// Non-blank lines of the file, counting at most `WARMUP_MAX_RECORDS + 1`.
fn count_records(path: &Path) -> usize {
    let Ok((file, _)) = load::open_regular(path) else {
        return usize::MAX;
    };
    let reader = BufReader::new(file.take(READ_CAP));
    let mut n = 0;
    for line in reader.split(b'\n') {
        let Ok(line) = line else { break };
        if line.iter().any(|c| !c.is_ascii_whitespace()) {
            n += 1;
            if n > WARMUP_MAX_RECORDS {
                break;
            }
        }
    }
    n
}
