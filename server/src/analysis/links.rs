//! Links between records: tool_use ↔ tool_result pairs (case 23), sub-agent calls and their
//! records (cases 18, 20; DESIGN.md §3), compaction dividers.

use std::collections::HashMap;

use super::{Compaction, SubagentCall, ToolPair};
use crate::model::{BlockKind, Role, Transcript};

/// Pairs every tool_use block with the tool_result that answers it, keyed by
/// `(sessionId, tool_use_id)`: a result takes the nearest preceding unmatched call with the
/// same key (case 23). A result whose session has no such call falls back to a call recorded
/// without a session id. Returns one [`ToolPair`] per tool_use, in file order; results that
/// answer no call are not listed.
pub fn pair_tools(t: &Transcript) -> Vec<ToolPair> {
    let mut pairs = Vec::new();
    let mut open: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (i, e) in t.entries.iter().enumerate() {
        let sess = e.session_id.as_deref().unwrap_or("");
        for (b, block) in e.blocks.iter().enumerate() {
            match &block.kind {
                BlockKind::ToolUse(u) => {
                    open.entry((sess, &u.id)).or_default().push(pairs.len());
                    pairs.push(ToolPair {
                        use_entry: i,
                        use_block: b,
                        result_entry: None,
                        result_block: None,
                    });
                }
                BlockKind::ToolResult(r) => {
                    let mut found = open.get_mut(&(sess, &*r.tool_use_id)).and_then(Vec::pop);
                    if found.is_none() && !sess.is_empty() {
                        found = open.get_mut(&("", &*r.tool_use_id)).and_then(Vec::pop);
                    }
                    if let Some(p) = found {
                        pairs[p].result_entry = Some(i);
                        pairs[p].result_block = Some(b);
                    }
                }
                _ => {}
            }
        }
    }
    pairs
}

/// The sub-agent calls (tool_use blocks with `subagent` set: `Task` / `Agent`) with their
/// result figures and inline sidechain records.
///
/// Attribution of inline sidechain records (not done in a sub-agent file, where every record
/// is the sub-agent's own):
/// 1. by `agentId`: the records whose `agent_id` equals the agent id named by the call's result
///    (`toolUseResult.agentId`), never by position (case 18);
/// 2. last resort, for calls whose result names no agent (still running, or an older format):
///    agent ids that no result names are given to those calls in order of first appearance,
///    each to the earliest such call made before the id's first record;
/// 3. sidechain records without any `agentId` (1.0.x inline sidechains) are attributed through
///    the DAG: a sidechain root (`parentUuid: null`) whose prompt text equals a call's
///    `input.prompt` belongs to that call (the first call with that prompt not yet matched), and
///    every record whose `parentUuid` names an attributed record belongs to the same call;
/// 4. an anonymous record the DAG does not place goes to the only sub-agent call open at that
///    point (called, result not yet arrived), if exactly one is.
pub fn subagent_calls(
    t: &Transcript,
    source: &str,
    pairs: &[ToolPair],
    turn_of: &impl Fn(usize) -> usize,
) -> Vec<SubagentCall> {
    let mut calls = Vec::new();
    for p in pairs {
        let Some(BlockKind::ToolUse(u)) = t.entries[p.use_entry]
            .blocks
            .get(p.use_block)
            .map(|b| &b.kind)
        else {
            continue;
        };
        let Some(spawn) = &u.subagent else {
            continue;
        };
        let result = match (p.result_entry, p.result_block) {
            (Some(e), Some(b)) => match t.entries[e].blocks.get(b).map(|b| &b.kind) {
                Some(BlockKind::ToolResult(r)) => r.subagent.clone(),
                _ => None,
            },
            _ => None,
        };
        let line = t.entries[p.use_entry].line;
        calls.push(SubagentCall {
            entry: p.use_entry,
            block: p.use_block,
            tool_use_id: u.id.to_string(),
            agent_id: result.as_ref().and_then(|r| r.agent_id.clone()),
            description: spawn.description.clone(),
            agent_type: spawn.agent_type.clone(),
            result_entry: p.result_entry,
            sidechain_entries: Vec::new(),
            start_line: line,
            end_line: p.result_entry.map_or(line, |r| t.entries[r].line.max(line)),
            duration_ms: result.as_ref().and_then(|r| r.duration_ms),
            total_tokens: result.as_ref().and_then(|r| r.total_tokens),
            tool_uses: result.as_ref().and_then(|r| r.tool_uses),
            turn: turn_of(p.use_entry),
        });
    }
    if calls.is_empty() || t.meta.is_subagent_file {
        return calls;
    }

    // Inline sidechain records by agent id, in order of first appearance.
    let mut by_agent: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut agent_order: Vec<&str> = Vec::new();
    let mut anonymous: Vec<usize> = Vec::new();
    for (i, e) in t.entries.iter().enumerate() {
        if !e.sidechain {
            continue;
        }
        match e.agent_id.as_deref() {
            Some(a) => {
                let v = by_agent.entry(a).or_default();
                if v.is_empty() {
                    agent_order.push(a);
                }
                v.push(i);
            }
            None => anonymous.push(i),
        }
    }
    // Fallback 2: ids no result names, to calls without an id, in order.
    let named: Vec<String> = calls.iter().filter_map(|c| c.agent_id.clone()).collect();
    for a in agent_order {
        if named.iter().any(|n| n == a) {
            continue;
        }
        let first = by_agent[a][0];
        if let Some(c) = calls
            .iter_mut()
            .find(|c| c.agent_id.is_none() && c.entry < first)
        {
            c.agent_id = Some(a.to_string());
        }
    }
    for c in &mut calls {
        if let Some(v) = c.agent_id.as_deref().and_then(|a| by_agent.get(a)) {
            c.sidechain_entries = v.clone();
        }
    }
    // Fallbacks 3 and 4: anonymous sidechain records, through the DAG, else to the single open
    // call.
    if !anonymous.is_empty() {
        let prompts: Vec<Option<String>> = calls
            .iter()
            .map(|c| task_prompt(t, source, c.entry, c.block))
            .collect();
        let mut root_taken = vec![false; calls.len()];
        let mut owner: HashMap<&str, usize> = HashMap::new();
        for i in anonymous {
            let e = &t.entries[i];
            let mut call = e.parent_uuid.as_deref().and_then(|p| owner.get(p).copied());
            if call.is_none() && e.parent_uuid.is_none() {
                let text = first_text(t, source, i);
                call = (0..calls.len()).find(|&c| {
                    !root_taken[c]
                        && calls[c].entry < i
                        && text.is_some()
                        && prompts[c].as_deref().map(str::trim) == text.as_deref().map(str::trim)
                });
                if let Some(c) = call {
                    root_taken[c] = true;
                }
            }
            if call.is_none() {
                let mut open = (0..calls.len())
                    .filter(|&c| calls[c].entry < i && calls[c].result_entry.is_none_or(|r| r > i));
                if let (Some(c), None) = (open.next(), open.next()) {
                    call = Some(c);
                }
            }
            if let Some(c) = call {
                calls[c].sidechain_entries.push(i);
                if let Some(u) = e.uuid.as_deref() {
                    owner.insert(u, c);
                }
            }
        }
    }
    for c in &mut calls {
        c.sidechain_entries.sort_unstable();
        for &i in &c.sidechain_entries {
            let l = t.entries[i].line;
            c.start_line = c.start_line.min(l);
            c.end_line = c.end_line.max(l);
        }
    }
    calls
}

/// `input.prompt` of a sub-agent call (parsed from the call's input JSON; calls are few).
fn task_prompt(t: &Transcript, source: &str, entry: usize, block: usize) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Input<'a> {
        #[serde(borrow, default)]
        prompt: Option<std::borrow::Cow<'a, str>>,
    }
    let BlockKind::ToolUse(u) = &t.entries[entry].blocks.get(block)?.kind else {
        return None;
    };
    let raw = source.get(u.input.clone())?;
    let input: Input = serde_json::from_str(raw).ok()?;
    input.prompt.map(|p| p.into_owned())
}

/// Decoded text of the first text block of an entry.
fn first_text(t: &Transcript, source: &str, entry: usize) -> Option<String> {
    t.entries[entry].blocks.iter().find_map(|b| match &b.kind {
        BlockKind::Text { text } => source
            .get(text.raw.clone())
            .map(|raw| crate::source::json_string::decode(raw).into_owned()),
        _ => None,
    })
}

/// Compaction dividers: each compact boundary and the compaction summary that follows it
/// (before the next boundary or turn opener). A boundary that follows another one with only
/// meta / context records between (Codex writes `compacted` and `context_compacted` for one
/// compaction) extends it instead of starting a new one.
pub fn compactions(
    t: &Transcript,
    turn_of: &impl Fn(usize) -> usize,
) -> (Vec<Compaction>, Vec<usize>) {
    let mut out: Vec<Compaction> = Vec::new();
    let mut turns = Vec::new();
    // Index into `out` of the compaction that may still take a summary / merge a boundary.
    let mut open: Option<usize> = None;
    let mut quiet_since_open = true;
    for (i, e) in t.entries.iter().enumerate() {
        match &e.role {
            Role::CompactBoundary {
                trigger,
                pre_tokens,
            } => {
                if let (Some(c), true) = (open, quiet_since_open) {
                    let c = &mut out[c];
                    c.end_line = c.end_line.max(e.line);
                    if c.trigger.is_none() {
                        c.trigger = trigger.as_deref().map(str::to_string);
                    }
                    if c.pre_tokens.is_none() {
                        c.pre_tokens = *pre_tokens;
                    }
                    continue;
                }
                open = Some(out.len());
                quiet_since_open = true;
                turns.push(turn_of(i));
                out.push(Compaction {
                    boundary: i,
                    summary: None,
                    start_line: e.line,
                    end_line: e.line,
                    trigger: trigger.as_deref().map(str::to_string),
                    pre_tokens: *pre_tokens,
                    n: out.len() + 1,
                });
            }
            Role::CompactSummary => {
                if let Some(c) = open {
                    let c = &mut out[c];
                    if c.summary.is_none() {
                        c.summary = Some(i);
                        c.end_line = c.end_line.max(e.line);
                    }
                }
                quiet_since_open = false;
            }
            Role::Meta | Role::Context | Role::Other => {}
            r => {
                quiet_since_open = false;
                if r.opens_turn() && !e.sidechain {
                    open = None;
                }
            }
        }
    }
    (out, turns)
}
