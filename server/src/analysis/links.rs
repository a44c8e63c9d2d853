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
    let mut state = PairsAt::default();
    let _ = pair_tools_from(t, 0, &mut pairs, &mut state, 0);
    pairs
}

/// The unmatched calls [`pair_tools_from`] carries over an entry (issue 12: an append re-reads
/// only its last turn).
#[derive(Debug, Clone, Default)]
pub struct PairsAt {
    /// Entry the state is at.
    entry: usize,
    /// Pairs whose call is before `entry`.
    pairs: usize,
    /// Unmatched calls before `entry` as intrusive stacks, one per key hash: `head[h]` is the
    /// latest unmatched call whose key hashes to `h`, `below[pair]` the one under it (calls of
    /// different keys share a stack only when their hashes collide).
    head: HashMap<u64, usize>,
    /// For every pair (including those after `entry`; only read below `pairs`).
    below: Vec<Option<usize>>,
    /// Results at or after `entry` that answer a call before it: `(pair, entry, block)`, in
    /// file order.
    cross: Vec<(usize, usize, usize)>,
    /// A stack was cut in its middle (a hash collision): `below` no longer tells the state at
    /// `entry`, so it cannot be resumed.
    spoilt: bool,
}

impl PairsAt {
    /// The entry this state is at.
    pub fn entry(&self) -> usize {
        self.entry
    }
}

/// The key hash of `(session id, tool_use id)`.
fn key_hash(sess: &str, id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    (sess, id).hash(&mut h);
    h.finish()
}

/// The key of pair `p`'s call.
fn call_key<'t>(t: &'t Transcript, pairs: &[ToolPair], p: usize) -> (&'t str, &'t str) {
    let ToolPair {
        use_entry,
        use_block,
        ..
    } = pairs[p];
    let e = &t.entries[use_entry];
    let id = match e.blocks.get(use_block).map(|b| &b.kind) {
        Some(BlockKind::ToolUse(u)) => &*u.id,
        _ => "",
    };
    (e.session_id().unwrap_or(""), id)
}

/// [`pair_tools`] resumed at entry `from`: `pairs` holds at least the pairs of the calls before
/// `from` and `state` the unmatched calls at `from` (as left by an earlier run saved there, or
/// empty for `from` = 0). The pairs of later calls are pushed and results from `from` on
/// matched; `state` is left at `save_at` (≥ `from`). `Err(())` when a result from `from` on
/// pairs with a call before `from` other than as the saved state says (an append that changes
/// an earlier turn), or the state cannot be resumed; `pairs` is then unusable.
#[allow(clippy::result_unit_err)]
pub fn pair_tools_from(
    t: &Transcript,
    from: usize,
    pairs: &mut Vec<ToolPair>,
    state: &mut PairsAt,
    save_at: usize,
) -> Result<(), ()> {
    if from > 0 && (state.entry != from || state.spoilt || state.pairs > pairs.len()) {
        return Err(());
    }
    if from == 0 {
        *state = PairsAt::default();
    }
    pairs.truncate(state.pairs);
    state.below.truncate(state.pairs);
    // Back to the state at `from`: the calls answered from `from` on are open again.
    let expected = std::mem::take(&mut state.cross);
    for &(p, _, _) in &expected {
        if let Some(pair) = pairs.get_mut(p) {
            pair.result_entry = None;
            pair.result_block = None;
        }
    }
    let mut head = std::mem::take(&mut state.head);
    let mut below = std::mem::take(&mut state.below);
    let mut spoilt = false;
    let mut reached = Vec::new();
    let mut saved: Option<(usize, HashMap<u64, usize>)> = None;
    let mut cross = Vec::new();
    let n = t.entries.len();
    for (i, e) in t.entries.iter().enumerate().skip(from) {
        if i == save_at {
            saved = Some((pairs.len(), head.clone()));
        }
        let sess = e.session_id().unwrap_or("");
        for (b, block) in e.blocks.iter().enumerate() {
            match &block.kind {
                BlockKind::ToolUse(u) => {
                    below.push(head.insert(key_hash(sess, &u.id), pairs.len()));
                    pairs.push(ToolPair {
                        use_entry: i,
                        use_block: b,
                        result_entry: None,
                        result_block: None,
                    });
                }
                BlockKind::ToolResult(r) => {
                    let id: &str = &r.tool_use_id;
                    let mut hit = find_call(t, pairs, &head, &below, sess, id);
                    if hit.is_none() && !sess.is_empty() {
                        hit = find_call(t, pairs, &head, &below, "", id);
                    }
                    let Some((h, above, p)) = hit else {
                        continue;
                    };
                    match above {
                        None => match below[p] {
                            Some(next) => {
                                head.insert(h, next);
                            }
                            None => {
                                head.remove(&h);
                            }
                        },
                        Some(a) => {
                            below[a] = below[p];
                            spoilt = true;
                        }
                    }
                    pairs[p].result_entry = Some(i);
                    pairs[p].result_block = Some(b);
                    let use_entry = pairs[p].use_entry;
                    if use_entry < from {
                        reached.push((p, i, b));
                    }
                    if use_entry < save_at && i >= save_at {
                        cross.push((p, i, b));
                    }
                }
                _ => {}
            }
        }
    }
    let (at_pairs, at_head) = saved.unwrap_or((pairs.len(), head));
    *state = PairsAt {
        entry: save_at.min(n).max(from),
        pairs: at_pairs,
        head: at_head,
        below,
        cross,
        spoilt,
    };
    if reached != expected {
        return Err(());
    }
    Ok(())
}

/// The nearest unmatched call with key `(sess, id)`: `(key hash, the call above it on its
/// stack when it is not the top, pair)`.
fn find_call(
    t: &Transcript,
    pairs: &[ToolPair],
    head: &HashMap<u64, usize>,
    below: &[Option<usize>],
    sess: &str,
    id: &str,
) -> Option<(u64, Option<usize>, usize)> {
    let h = key_hash(sess, id);
    let mut above = None;
    let mut at = head.get(&h).copied();
    while let Some(p) = at {
        if call_key(t, pairs, p) == (sess, id) {
            return Some((h, above, p));
        }
        above = Some(p);
        at = below[p];
    }
    None
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
///    each to the earliest such call made before the id's first record. When several calls
///    name the same agent (a resumed sub-agent), each record goes to the latest of them made
///    before it;
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
    let mut calls = calls_of_pairs(t, pairs, turn_of);
    if calls.is_empty() || t.meta.is_subagent_file {
        return calls;
    }
    attribute(t, source, &mut calls);
    calls
}

/// The sub-agent calls among `pairs`, with their result figures, before any inline sidechain
/// record is attributed to them (what [`subagent_calls`] gives when the file has no inline
/// sidechain records, or is a sub-agent file).
pub fn calls_of_pairs(
    t: &Transcript,
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
            end_line: p
                .result_entry
                .map_or(line, |r| t.last_line(t.entries[r].line).max(line)),
            duration_ms: result.as_ref().and_then(|r| r.duration_ms),
            total_tokens: result.as_ref().and_then(|r| r.total_tokens),
            tool_uses: result.as_ref().and_then(|r| r.tool_uses),
            turn: turn_of(p.use_entry),
        });
    }
    calls
}

/// Attributes the inline sidechain records to `calls` (the rules of [`subagent_calls`]).
fn attribute(t: &Transcript, source: &str, calls: &mut [SubagentCall]) {
    // Inline sidechain records by agent id, in order of first appearance.
    let mut by_agent: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut agent_order: Vec<&str> = Vec::new();
    let mut anonymous: Vec<usize> = Vec::new();
    for (i, e) in t.entries.iter().enumerate() {
        if !e.sidechain {
            continue;
        }
        match e.agent_id() {
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
    // Fallback 2: ids no result names, to calls without an id, in order. Agent ids appear in
    // increasing order of first record, so the earliest unassigned call is the only candidate.
    let named: std::collections::HashSet<&str> =
        calls.iter().filter_map(|c| c.agent_id.as_deref()).collect();
    let unnamed: Vec<usize> = (0..calls.len())
        .filter(|&c| calls[c].agent_id.is_none())
        .collect();
    let mut next_unnamed = 0;
    let mut assigned: Vec<(usize, &str)> = Vec::new();
    for &a in &agent_order {
        if named.contains(a) {
            continue;
        }
        let first = by_agent[a][0];
        if let Some(&c) = unnamed.get(next_unnamed)
            && calls[c].entry < first
        {
            assigned.push((c, a));
            next_unnamed += 1;
        }
    }
    for (c, a) in assigned {
        calls[c].agent_id = Some(a.to_string());
    }
    // Records of an agent go to the calls naming it; when several calls name the same agent
    // (a resumed sub-agent), each record goes to the latest of them made before it.
    let mut calls_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for (ci, c) in calls.iter().enumerate() {
        if let Some(a) = c.agent_id.as_deref() {
            calls_of.entry(a).or_default().push(ci);
        }
    }
    let mut owned: Vec<(usize, usize)> = Vec::new();
    for (a, cs) in &calls_of {
        let Some(records) = by_agent.get(a) else {
            continue;
        };
        let mut k = 0;
        for &r in records {
            while k + 1 < cs.len() && calls[cs[k + 1]].entry < r {
                k += 1;
            }
            owned.push((cs[k], r));
        }
    }
    for (c, r) in owned {
        calls[c].sidechain_entries.push(r);
    }
    // Fallbacks 3 and 4: anonymous sidechain records, through the DAG, else to the single open
    // call (a sweep over calls in file order).
    if !anonymous.is_empty() {
        let mut by_prompt: HashMap<String, std::collections::VecDeque<usize>> = HashMap::new();
        for (ci, c) in calls.iter().enumerate() {
            if let Some(p) = task_prompt(t, source, c.entry, c.block) {
                by_prompt
                    .entry(p.trim().to_string())
                    .or_default()
                    .push_back(ci);
            }
        }
        let mut owner: HashMap<&crate::model::RecordId, usize> = HashMap::new();
        let mut open: std::collections::BTreeSet<usize> = std::collections::BTreeSet::new();
        let mut closing: std::collections::BinaryHeap<std::cmp::Reverse<(usize, usize)>> =
            std::collections::BinaryHeap::new();
        let mut next_call = 0;
        for i in anonymous {
            while next_call < calls.len() && calls[next_call].entry < i {
                open.insert(next_call);
                if let Some(r) = calls[next_call].result_entry {
                    closing.push(std::cmp::Reverse((r, next_call)));
                }
                next_call += 1;
            }
            while let Some(&std::cmp::Reverse((r, c))) = closing.peek() {
                if r > i {
                    break;
                }
                open.remove(&c);
                closing.pop();
            }
            let e = &t.entries[i];
            let mut call = e.parent_uuid().and_then(|p| owner.get(p).copied());
            if call.is_none()
                && e.parent_uuid().is_none()
                && let Some(text) = first_text(t, source, i)
                && let Some(q) = by_prompt.get_mut(text.trim())
                && let Some(&c) = q.front()
                && calls[c].entry < i
            {
                q.pop_front();
                call = Some(c);
            }
            if call.is_none() && open.len() == 1 {
                call = open.first().copied();
            }
            if let Some(c) = call {
                calls[c].sidechain_entries.push(i);
                if let Some(u) = e.uuid() {
                    owner.insert(u, c);
                }
            }
        }
    }
    for c in calls.iter_mut() {
        c.sidechain_entries.sort_unstable();
        for &i in &c.sidechain_entries {
            let l = t.entries[i].line;
            c.start_line = c.start_line.min(l);
            c.end_line = c.end_line.max(l);
        }
    }
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
    let mut out = Vec::new();
    let mut turns = Vec::new();
    compactions_from(t, 0, &mut out, &mut turns, turn_of, 0);
    (out, turns)
}

/// [`compactions`] resumed at entry `from`, where no compaction may still take a summary or
/// merge a boundary: `out` and `turns` hold the compactions before it (their boundaries are
/// before `from`). Returns whether one still could after entry `save_at` (≥ `from`, a turn
/// opener; an append resumed there could change it).
pub fn compactions_from(
    t: &Transcript,
    from: usize,
    out: &mut Vec<Compaction>,
    turns: &mut Vec<usize>,
    turn_of: &impl Fn(usize) -> usize,
    save_at: usize,
) -> bool {
    // Index into `out` of the compaction that may still take a summary / merge a boundary.
    let mut open: Option<usize> = None;
    let mut open_at_save = false;
    let mut quiet_since_open = true;
    for (i, e) in t.entries.iter().enumerate().skip(from) {
        if i == save_at {
            // A turn opener of the main thread closes any compaction (below): only one that
            // survives it could still change.
            open_at_save = open.is_some() && (!e.role.opens_turn() || e.sidechain);
        }
        if e.abandoned {
            continue; // a compaction on a branch the session left never happened to it
        }
        match &e.role {
            Role::CompactBoundary(b) => {
                let (trigger, pre_tokens) = (&b.trigger, &b.pre_tokens);
                if let (Some(c), true) = (open, quiet_since_open) {
                    let c = &mut out[c];
                    c.end_line = c.end_line.max(t.last_line(e.line));
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
                    end_line: t.last_line(e.line),
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
                        c.end_line = c.end_line.max(t.last_line(e.line));
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
    if save_at >= t.entries.len() {
        open_at_save = open.is_some();
    }
    open_at_save
}
