//! Workspace symbols (DESIGN.md §5): the turns of every transcript under the configured roots
//! (default `~/.claude/projects`, `~/.codex/sessions`, `~/.pi/agent/sessions`,
//! `~/.copilot/session-state`), answered from the session index (`crate::index`, built once and
//! kept current file by file by the watcher), never a re-scan per query. What lies under the
//! roots is `crate::index::walk`.

use std::path::Path;

use crate::index::{SessionIndex, TurnSymbol};

/// One turn matching a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnHit<'a> {
    pub path: &'a Path,
    /// `Turn 3: Fix the failing test` (`Turn 3` when the turn has no title).
    pub name: String,
    /// The session's title (its own title, else its first prompt, else the file name).
    pub container: String,
    pub turn: &'a TurnSymbol,
}

/// Turns matching `query` (case-insensitive; every whitespace-separated word must occur in the
/// turn's name or its session's title), at most `limit`, best first: matches in the name
/// before matches that need the session title, then path and turn order.
pub fn query<'a>(index: &'a SessionIndex, query: &str, limit: usize) -> Vec<TurnHit<'a>> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let mut name_hits = Vec::new();
    let mut other_hits = Vec::new();
    for (path, entry) in index.entries() {
        if entry.symbols.is_empty() {
            continue;
        }
        let container = entry.display_title(path);
        let container_lc = container.to_lowercase();
        for turn in &entry.symbols {
            let name = if turn.title.is_empty() {
                format!("Turn {}", turn.n)
            } else {
                format!("Turn {}: {}", turn.n, turn.title)
            };
            let name_lc = name.to_lowercase();
            let hit = || TurnHit {
                path,
                name: name.clone(),
                container: container.clone(),
                turn,
            };
            if words.iter().all(|w| name_lc.contains(w.as_str())) {
                name_hits.push(hit());
            } else if words
                .iter()
                .all(|w| name_lc.contains(w.as_str()) || container_lc.contains(w.as_str()))
            {
                other_hits.push(hit());
            }
            if name_hits.len() >= limit {
                return name_hits;
            }
        }
    }
    name_hits.extend(other_hits);
    name_hits.truncate(limit);
    name_hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{SessionEntry, Tail};
    use crate::model::Format;

    fn sym(n: usize, title: &str) -> TurnSymbol {
        TurnSymbol {
            n,
            title: title.into(),
            start_line: n,
            end_line: n,
            wake: false,
        }
    }

    #[test]
    fn query_ranks_name_matches_first() {
        let mut idx = SessionIndex::new();
        idx.insert(
            "/a.jsonl".into(),
            SessionEntry {
                format: Format::ClaudeCode,
                title: Some("fix things".into()),
                title_source: None,
                first_prompt: None,
                project: None,
                session_id: None,
                subagent: false,
                parent_session: None,
                started_ms: None,
                ended_ms: None,
                turns: 2,
                last_turn_open: false,
                bytes: 0,
                modified_ms: None,
                symbols: vec![sym(1, "deploy app"), sym(2, "Fix the test")],
                tail: Tail::default(),
                changes: Vec::new(),
                waiting: None,
            },
        );
        let names = |q: &str, limit| -> Vec<String> {
            query(&idx, q, limit).into_iter().map(|h| h.name).collect()
        };
        assert_eq!(
            names("fix", 10),
            ["Turn 2: Fix the test", "Turn 1: deploy app"]
        );
        assert_eq!(names("FIX test", 10), ["Turn 2: Fix the test"]);
        assert_eq!(names("", 1).len(), 1);
        assert_eq!(query(&idx, "deploy", 5)[0].container, "fix things");
    }
}
