//! Steps: model responses grouped by `StepInfo::key` (DESIGN.md §3; FORMATS.md §1.6; case 10).

use std::collections::HashMap;

use super::Step;
use crate::model::{BlockKind, Role, StopReason, Transcript};

/// Groups the entries that carry a [`crate::model::StepInfo`] into [`Step`]s, in order of
/// first appearance. Returns the steps and, per entry, the index of its step.
///
/// * Records sharing a key form one step even when other records fall between them (parallel
///   tool results are written between the lines of one Claude response); different keys are
///   never fused.
/// * `usage` is the component-wise maximum over the group (Claude repeats a snapshot on every
///   line; Codex sets it on one record) — never the sum (case 10).
/// * `output_final` is false only when every record of the group flags its output count as a
///   streaming placeholder (FORMATS.md §1.6).
/// * `end_turn` is true when any record of the group has `StopReason::EndTurn`.
/// * Records on an abandoned branch ([`crate::model::Entry::abandoned`]) belong to no step.
/// * `request_ms` (FORMATS.md §1.9 recipe): the latest timestamp of a non-`Model` record of the
///   same thread (main thread, or the sidechain's `agentId`) before the step's first record.
///   A record that is a copy of another (`Entry::copy_of`, Codex event copies) is never a
///   request time: it is written at the same millisecond as the model's own record (issue 9).
/// * `stream_start_ms`: the measured first-token time of the step's first model record
///   (`StepInfo::stream_ms`), when the format recorded it. `end_ms` is the latest end of the
///   step's model records: a record's measured generation end when recorded, else its
///   timestamp.
/// * Steps never cross a turn (issue 9 item 7): a key seen again after a main-thread turn
///   opener starts a new step in the new turn.
pub fn build(t: &Transcript, main_thread: impl Fn(usize) -> bool) -> (Vec<Step>, EntrySteps) {
    let (mut steps, mut entry_step) = (Vec::new(), EntrySteps::default());
    build_from(
        t,
        main_thread,
        StepsAt::default(),
        &mut steps,
        &mut entry_step,
        0,
    );
    (steps, entry_step)
}

/// The request times [`build_from`] carries over an entry that opens a main-thread turn (where
/// no step is open: steps never cross a turn).
#[derive(Debug, Clone, Default)]
pub struct StepsAt {
    /// Latest non-model timestamp of the main thread before the entry.
    main_input: Option<i64>,
    /// The same per sidechain `agentId`.
    side_input: HashMap<Box<str>, i64>,
}

/// The step (index into the steps) of each entry from a first entry on; entries before it
/// read as no step's. A resumed analysis holds a table for the entries it reads, not one as
/// long as the file (issue 12: a table of every entry, zeroed per 4 MiB window of a mapped
/// 1 GB file or per append, cost 10.8 MB of `memset` each time).
#[derive(Debug, Default, Clone)]
pub struct EntrySteps {
    /// First entry of the table.
    base: usize,
    /// `steps[i]`: the step of entry `base + i`.
    steps: Vec<Option<usize>>,
}

impl EntrySteps {
    /// A table of no entries that a [`build_from`] resumes at entry `from`.
    pub fn resuming_at(from: usize) -> EntrySteps {
        EntrySteps {
            base: from,
            steps: Vec::new(),
        }
    }

    /// The step of entry `entry`: `None` for an entry of no step, before the table's first
    /// entry, or past its end.
    pub fn get(&self, entry: usize) -> Option<usize> {
        entry
            .checked_sub(self.base)
            .and_then(|i| self.steps.get(i).copied().flatten())
    }

    /// One past the last entry of the table.
    pub fn end(&self) -> usize {
        self.base + self.steps.len()
    }
}

/// [`build`] resumed at entry `entry_step.end()` (issue 12: an append re-reads only its last
/// turn): `steps` holds the steps of the entries before it, `at` the request times there, and
/// that entry is the first one or opens a main-thread turn. Steps of the later entries are
/// pushed; returns the request times before entry `save_at` (at least the resume entry; the
/// end when it is `t.entries.len()`).
pub fn build_from(
    t: &Transcript,
    main_thread: impl Fn(usize) -> bool,
    at: StepsAt,
    steps: &mut Vec<Step>,
    entry_step: &mut EntrySteps,
    save_at: usize,
) -> StepsAt {
    let n = t.entries.len();
    let from = entry_step.end().min(n);
    if from == 0 || from < entry_step.base {
        // Zeroed memory: pages of entries that are no step's are never touched (issue 12:
        // 16 bytes per line of a file of `{}` lines otherwise).
        entry_step.base = from;
        entry_step.steps = vec![None; n - from];
    } else {
        entry_step.steps.truncate(from - entry_step.base);
        entry_step.steps.resize(n - entry_step.base, None);
    }
    let first_step = steps.len();
    let mut by_key: HashMap<&str, usize> = HashMap::new();
    // Latest non-model timestamp per thread: the main thread, and each sidechain by agentId
    // (hashed only for sidechain records).
    let StepsAt {
        mut main_input,
        mut side_input,
    } = at;
    let mut saved: Option<StepsAt> = None;
    // The step of the previous keyed record: consecutive records of one response skip the
    // hash lookup.
    let mut recent: Option<(&str, usize)> = None;
    // Whether every record seen so far of a step is a placeholder (from `first_step` on).
    let mut all_placeholder: Vec<bool> = Vec::new();
    // Whether a model record of the step was seen (its first one fixes the request time).
    let mut model_seen: Vec<bool> = Vec::new();

    for (i, e) in t.entries.iter().enumerate().skip(from) {
        if i == save_at {
            saved = Some(StepsAt {
                main_input,
                side_input: side_input.clone(),
            });
        }
        if e.abandoned {
            continue; // abandoned branches are never counted (issue 10)
        }
        let thread = if main_thread(i) {
            None
        } else {
            Some(e.agent_id().unwrap_or(""))
        };
        let is_model = e.role == Role::Model;
        if thread.is_none() && e.role.opens_turn() {
            by_key.clear();
            recent = None;
        }
        if let Some(info) = &e.step {
            let key: &str = &info.key;
            let idx = match recent {
                Some((k, idx)) if k == key => idx,
                _ => *by_key.entry(key).or_insert_with(|| {
                    all_placeholder.push(true);
                    model_seen.push(false);
                    steps.push(Step {
                        entries: Vec::new(),
                        usage: Default::default(),
                        usage_recorded: false,
                        advisor_usage: Default::default(),
                        output_final: true,
                        end_turn: false,
                        start_ms: None,
                        end_ms: None,
                        request_ms: None,
                        stream_start_ms: None,
                        tool_calls: 0,
                        cost_usd: None,
                        sidechain: thread.is_some(),
                    });
                    steps.len() - 1
                }),
            };
            recent = Some((key, idx));
            let local = idx - first_step;
            let s = &mut steps[idx];
            if s.entries.is_empty() {
                s.sidechain = thread.is_some();
            }
            s.entries.push(i);
            if let Some(u) = info.usage {
                s.usage = s.usage.max(u);
                s.usage_recorded = true;
            }
            if let Some(u) = info.advisor_usage {
                s.advisor_usage = s.advisor_usage.max(u);
            }
            all_placeholder[local] &= info.output_is_placeholder;
            if let Some(c) = info.cost_usd {
                s.cost_usd = Some(s.cost_usd.map_or(c, |x| x.max(c)));
            }
            s.end_turn |= info.stop == Some(StopReason::EndTurn);
            s.tool_calls += e
                .blocks
                .iter()
                .filter(|b| matches!(b.kind, BlockKind::ToolUse(_)))
                .count() as u32;
            // Timing comes from the model's own records only: a tool output that a reader
            // grouped with the next API call must not stretch the step.
            if is_model {
                if !model_seen[local] {
                    model_seen[local] = true;
                    s.request_ms = match thread {
                        None => main_input,
                        Some(a) => side_input.get(a).copied(),
                    };
                    s.stream_start_ms = info.stream_ms.map(|(a, _)| a);
                }
                if let Some(ts) = e.timestamp_ms()
                    && s.start_ms.is_none()
                {
                    s.start_ms = Some(ts);
                }
                // A record whose generation was measured ends when it was measured to end
                // (its row is written a little later).
                if let Some(end) = info.stream_ms.map(|(_, b)| b).or(e.timestamp_ms()) {
                    s.end_ms = Some(s.end_ms.map_or(end, |m| m.max(end)));
                }
            }
            entry_step.steps[i - entry_step.base] = Some(idx);
        }
        if !is_model
            && e.copy_of().is_none()
            && let Some(ts) = e.timestamp_ms()
        {
            let slot = match thread {
                None => main_input.get_or_insert(ts),
                Some(a) => match side_input.get_mut(a) {
                    Some(slot) => slot,
                    None => side_input.entry(a.into()).or_insert(ts),
                },
            };
            *slot = (*slot).max(ts);
        }
    }
    for (s, all) in steps[first_step..].iter_mut().zip(all_placeholder) {
        s.output_final = !all;
    }
    saved.unwrap_or(StepsAt {
        main_input,
        side_input,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build resumed at a turn holds a table of the entries from there only (issue 12: it
    /// held one as long as the file, zeroed again per append and per window of a mapped file)
    /// and gives them the steps a whole build gives.
    #[test]
    fn a_resumed_table_covers_only_the_entries_it_reads() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl"
        );
        let text = std::fs::read_to_string(path).expect("demo transcript");
        let t = crate::formats::read_text(&text, &[], true);
        let n = t.entries.len();
        let main = |i: usize| !t.entries[i].sidechain;
        let (whole_steps, whole) = build(&t, main);
        assert_eq!(whole.end(), n);
        let openers: Vec<usize> = (1..n)
            .filter(|&i| main(i) && t.entries[i].role.opens_turn())
            .collect();
        assert!(openers.len() >= 2, "the demo has several turns");
        for &k in &openers {
            let kept = whole_steps.partition_point(|s| s.entries.first().is_some_and(|&f| f < k));
            let mut steps = whole_steps[..kept].to_vec();
            let mut table = EntrySteps::resuming_at(k);
            build_from(&t, main, StepsAt::default(), &mut steps, &mut table, n);
            assert_eq!((table.base, table.steps.len(), table.end()), (k, n - k, n));
            assert_eq!(steps.len(), whole_steps.len(), "resumed at {k}");
            for i in 0..k {
                assert_eq!(table.get(i), None, "entry {i} before the table");
            }
            for i in k..n {
                assert_eq!(table.get(i), whole.get(i), "entry {i}, resumed at {k}");
            }
            assert_eq!(table.get(n), None);
        }
    }
}
