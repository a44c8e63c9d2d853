//! Turn segmentation and the per-turn figures (DESIGN.md §3–4). See [`super::analyze`].

use super::body::{self, ItemKind};
use super::{
    Analysis, Duration, DurationSource, FinalAnswer, Options, Turn, TurnKind, TurnState, clock,
    final_answer, gates, links, steps, text, throughput,
};
use crate::model::{BlockKind, PromptKind, Role, Transcript, Usage, WakeKind};

/// Maximum characters of a turn title.
const TITLE_MAX: usize = 80;

/// Title of a wake-up turn.
pub fn wake_title(kind: WakeKind) -> &'static str {
    match kind {
        WakeKind::TaskNotification => "background task finished",
        WakeKind::Recovery => "recovery re-run",
        WakeKind::Continuation => "automatic continuation",
    }
}

pub(super) fn analyze(t: &Transcript, source: &str, options: &Options) -> Analysis {
    full(t, source, options).0
}

/// The analysis from the start, with its checkpoint.
pub(super) fn full(t: &Transcript, source: &str, options: &Options) -> (Analysis, Checkpoint) {
    // Never an error: a run from the start has nothing to disagree with.
    analyze_from(t, source, options, None).unwrap_or_default()
}

/// What an analysis keeps to be resumed at the start of its last turn when records are
/// appended (issue 12: an append costs what it adds). Every figure of the turns before the
/// last one is final once a later turn opened, except through the links an appended record
/// may make back to them; [`super::resume`] checks those and analyses from the start when one
/// is found.
#[derive(Debug, Clone, Default)]
pub struct Checkpoint {
    /// Entries analysed.
    entries: usize,
    /// The first entry of the last turn (`start`); the turns before it are kept on resume.
    start: usize,
    /// Request times at `start`.
    steps_at: steps::StepsAt,
    /// Unmatched tool calls at `start`.
    pairs_at: links::PairsAt,
    /// A compaction could still change at `start`.
    compaction_open: bool,
    /// Usage, advisor usage and cost of the steps before `start`.
    usage: Usage,
    advisor_usage: Usage,
    cost_usd: Option<f64>,
    /// First and last timestamp before `start` (`i64::MAX`, `i64::MIN` without one).
    time: (i64, i64),
    /// An inline sidechain record before `start` (outside a sub-agent file).
    sidechain: bool,
    /// The settings and file facts the analysis was made with.
    options: Option<Options>,
    subagent_file: bool,
    aside: bool,
    /// Turns kept from the previous analysis by the run that made this one (0: from the
    /// start).
    kept: usize,
}

impl Checkpoint {
    /// The first entry of the last turn: a resumed analysis starts there.
    pub fn start(&self) -> usize {
        self.start
    }

    /// Turns the run that made this checkpoint kept from the previous analysis (0 when it
    /// analysed from the start).
    pub fn kept_turns(&self) -> usize {
        self.kept
    }
}

/// Analyses from the start (`base` = `None`), or resumes `base` (the previous analysis of the
/// same transcript before records were appended, and its checkpoint) at the start of its last
/// turn. `Err` when an appended record reaches back before that turn.
pub(super) fn analyze_from(
    t: &Transcript,
    source: &str,
    options: &Options,
    base: Option<(Analysis, Checkpoint)>,
) -> Result<(Analysis, Checkpoint), ()> {
    let n = t.entries.len();
    let subagent_file = t.meta.is_subagent_file;
    // The file's own main thread: inherited history (a fork's replay of its parent, which may
    // follow a turn of an earlier rollout in the same file) is no turn's work, answer or
    // time (issue 20 item 1).
    let main = |i: usize| {
        let e = &t.entries[i];
        !e.abandoned && !e.inherited && (subagent_file || !e.sidechain)
    };

    // What is kept: the analysis of the entries before `from`.
    let (mut prev, cp) = base.unwrap_or_default();
    let from = cp.start;
    if from > 0 {
        let same = cp.options.as_ref().is_some_and(|o| o == options)
            && cp.subagent_file == subagent_file
            && cp.aside == t.meta.is_aside
            && cp.entries <= n
            && !cp.compaction_open
            && (subagent_file || !cp.sidechain)
            && prev.inherited.last().is_none_or(|h| h.entries.end <= from)
            && prev.turns.len() >= 2;
        if !same {
            return Err(());
        }
    }
    let kept = if from > 0 { prev.turns.len() - 1 } else { 0 };
    prev.turns.truncate(kept);
    if from == 0 {
        prev = Analysis::default();
    }
    let has_preamble_kept = prev
        .turns
        .first()
        .is_some_and(|t| t.kind == TurnKind::Preamble);
    let mut task_seen = prev.turns.iter().any(|t| t.kind == TurnKind::SubagentTask);

    // Segmentation from `from`: (kind, opener, start).
    let mut new_bounds: Vec<(TurnKind, Option<usize>, usize)> = Vec::new();
    let mut sidechain = false;
    let mut inherited_after = false;
    for (i, e) in t.entries.iter().enumerate().skip(from) {
        sidechain |= e.sidechain;
        if e.inherited {
            inherited_after = true;
        }
        if !main(i) || e.inherited {
            continue;
        }
        match e.role {
            // A sub-agent file's first prompt is the task its parent wrote (issue 9 item 8);
            // a `/btw` aside's is the person's own side question.
            Role::Prompt(_) if subagent_file && !t.meta.is_aside && !task_seen => {
                task_seen = true;
                new_bounds.push((TurnKind::SubagentTask, Some(i), i))
            }
            Role::Prompt(_) => new_bounds.push((TurnKind::Prompt, Some(i), i)),
            Role::Wake(_) => new_bounds.push((TurnKind::Wake, Some(i), i)),
            _ => {}
        }
    }
    if from > 0
        && (new_bounds.first().is_none_or(|b| b.2 != from)
            || inherited_after
            || (sidechain && !subagent_file))
    {
        return Err(());
    }
    let mut bounds: Vec<(TurnKind, Option<usize>, usize)> = prev
        .turns
        .iter()
        .map(|t| (t.kind, t.opener, t.entries.start))
        .collect();
    bounds.extend(new_bounds);
    if from == 0 {
        let first_start = bounds.first().map_or(n, |b| b.2);
        if first_start > 0 {
            bounds.insert(0, (TurnKind::Preamble, None, 0));
        }
    }
    let starts: Vec<usize> = bounds.iter().map(|b| b.2).collect();
    let has_preamble = if from > 0 {
        has_preamble_kept
    } else {
        bounds.first().is_some_and(|b| b.0 == TurnKind::Preamble)
    };
    // Turn index (into `bounds`) of an entry.
    let turn_ix = |i: usize| starts.partition_point(|&s| s <= i).saturating_sub(1);
    let number = |ix: usize| if has_preamble { ix } else { ix + 1 };
    let turn_of = |i: usize| number(turn_ix(i));
    // Where the next append resumes: the last turn's start (nothing to keep without a turn
    // opened by a record).
    let save_at = match bounds.last() {
        Some(&(kind, _, start)) if kind != TurnKind::Preamble => start,
        _ => 0,
    };

    // Steps from `from`.
    let mut steps = std::mem::take(&mut prev.steps);
    let first_step = steps.partition_point(|s| s.entries.first().is_some_and(|&f| f < from));
    steps.truncate(first_step);
    // The step of each entry: only the turns from `from` on read it, so the kept entries' part
    // stays zeroed memory, never touched (the checkpoint need not hold a table as long as the
    // file).
    let mut entry_step = steps::EntrySteps::resuming_at(from);
    let steps_at = steps::build_from(t, main, cp.steps_at, &mut steps, &mut entry_step, save_at);

    // Tool pairs from `from`.
    let mut pairs = std::mem::take(&mut prev.tool_pairs);
    let mut pairs_at = cp.pairs_at;
    links::pair_tools_from(t, from, &mut pairs, &mut pairs_at, save_at)?;
    let first_pair = pairs.partition_point(|p| p.use_entry < from);

    // Sub-agent calls: without inline sidechain records (checked above for a resumed run),
    // the calls after `from` are those of their own pairs.
    let subagent_calls = if from == 0 {
        links::subagent_calls(t, source, &pairs, &turn_of)
    } else {
        let mut calls = std::mem::take(&mut prev.subagent_calls);
        calls.truncate(calls.partition_point(|c| c.entry < from));
        calls.extend(links::calls_of_pairs(t, &pairs[first_pair..], &turn_of));
        calls
    };
    let first_call = subagent_calls.partition_point(|c| c.entry < from);

    let mut compactions = std::mem::take(&mut prev.compactions);
    compactions.truncate(compactions.partition_point(|c| c.boundary < from));
    let first_compaction = compactions.len();
    let mut compaction_turns = Vec::new();
    let compaction_open = links::compactions_from(
        t,
        from,
        &mut compactions,
        &mut compaction_turns,
        &turn_of,
        save_at,
    );

    let mut gates = std::mem::take(&mut prev.gates);
    gates.truncate(gates.partition_point(|g| g.entry < from));
    let first_gate = gates.len();
    gates::find_from(
        t,
        source,
        &options.gate_phases,
        &main,
        &turn_of,
        from,
        &mut gates,
    );
    let zone = clock::time_zone(options.time_zone.as_deref());

    // Steps by turn (turn of the step's first record), for the turns from `kept` on.
    let turns_here = bounds.len().saturating_sub(kept);
    let mut turn_steps: Vec<Vec<usize>> = vec![Vec::new(); turns_here];
    let mut turn_side_usage: Vec<Usage> = vec![Usage::default(); turns_here];
    let (mut usage, mut advisor_usage, mut cost_usd) = (cp.usage, cp.advisor_usage, cp.cost_usd);
    let mut at_save = None;
    for (si, s) in steps.iter().enumerate().skip(first_step) {
        if at_save.is_none() && s.entries.first().is_some_and(|&f| f >= save_at) {
            at_save = Some((usage, advisor_usage, cost_usd));
        }
        if let Some(c) = s.cost_usd {
            cost_usd = Some(cost_usd.map_or(c, |x| x + c));
        }
        if s.entries.first().is_some_and(|&f| t.entries[f].inherited) {
            continue;
        }
        usage = usage.add(s.usage);
        advisor_usage = advisor_usage.add(s.advisor_usage);
        let Some(&first) = s.entries.first() else {
            continue;
        };
        if bounds.is_empty() || t.entries[first].inherited {
            continue;
        }
        let ix = turn_ix(first) - kept;
        if s.sidechain {
            turn_side_usage[ix] = turn_side_usage[ix].add(s.usage);
        } else {
            turn_steps[ix].push(si);
        }
    }
    let (usage_at, advisor_at, cost_at) = at_save.unwrap_or((usage, advisor_usage, cost_usd));
    // Tool call timing by turn: (call ts, result ts) of main-thread calls.
    let mut turn_tools: Vec<Vec<(Option<i64>, Option<i64>)>> = vec![Vec::new(); turns_here];
    for p in &pairs[first_pair..] {
        if main(p.use_entry) && !bounds.is_empty() {
            turn_tools[turn_ix(p.use_entry) - kept].push((
                t.entries[p.use_entry].timestamp_ms(),
                p.result_entry.and_then(|r| t.entries[r].timestamp_ms()),
            ));
        }
    }
    // Per-turn indices of gates, sub-agent calls and compactions (from `kept` on).
    let ix_of_number = |n: usize| if has_preamble { n } else { n.saturating_sub(1) };
    let bucket = |numbers: &mut dyn Iterator<Item = (usize, usize)>| {
        let mut b: Vec<super::Indices> = vec![Default::default(); turns_here];
        for (i, n) in numbers {
            if let Some(v) = ix_of_number(n)
                .checked_sub(kept)
                .and_then(|ix| b.get_mut(ix))
            {
                v.push(i);
            }
        }
        b
    };
    let mut gate_buckets = bucket(
        &mut gates
            .iter()
            .enumerate()
            .skip(first_gate)
            .map(|(i, g)| (i, g.turn)),
    );
    let mut call_buckets = bucket(
        &mut subagent_calls
            .iter()
            .enumerate()
            .skip(first_call)
            .map(|(i, c)| (i, c.turn)),
    );
    let mut compaction_buckets = bucket(
        &mut compaction_turns
            .iter()
            .enumerate()
            .map(|(i, &n)| (first_compaction + i, n)),
    );
    let mut branches = std::mem::take(&mut prev.branches);
    branches.truncate(branches.partition_point(|b| b.entries.start < from));
    let first_branch = branches.len();
    abandoned_branches(t, source, &turn_of, from, &mut branches);
    let mut branch_buckets = bucket(
        &mut branches
            .iter()
            .enumerate()
            .skip(first_branch)
            .map(|(i, b)| (i, b.turn)),
    );
    let row_of = |e: usize| entry_step.get(e).unwrap_or(steps.len() + e);

    let mut turns: Vec<Turn> = std::mem::take(&mut prev.turns);
    turns.reserve(turns_here);
    let mut all_steering = std::mem::take(&mut prev.steering);
    all_steering.truncate(all_steering.partition_point(|&e| e < from));
    for (ix, &(kind, opener, start)) in bounds.iter().enumerate().skip(kept) {
        let end = starts.get(ix + 1).copied().unwrap_or(n);
        let later_turn = ix + 1 < bounds.len();
        let body_start = opener.map_or(start, |o| o + 1);
        let items = body::items(t, source, body_start..end, &main);
        let runs = body::runs(t, &items, &entry_step);

        // Closing records of the main thread inside the turn.
        let mut terminal_closers: Vec<usize> = Vec::new();
        let mut interruptions: Vec<usize> = Vec::new();
        let mut steering = Vec::new();
        let mut recorded: Option<u64> = None;
        let mut measured: Option<(u64, u64)> = None;
        let mut last_ts: Option<i64> = None;
        let mut first_ts: Option<i64> = None;
        // The entry `last_ts` comes from, and whether a conversation record after the opener
        // has no timestamp (Kiro CLI stamps its prompts only): then the opener's own time is
        // no end time, and the duration is unknown rather than 0 (issue 21 item 6).
        let mut last_ts_entry: Option<usize> = None;
        let mut untimed_after_opener = false;
        for i in start..end {
            let e = &t.entries[i];
            if let Some(ts) = e.timestamp_ms()
                && !e.abandoned
                && !e.inherited
            {
                first_ts.get_or_insert(ts);
                // The turn's work ends at its last conversation record: local commands, meta
                // and other bookkeeping typed after the agent settled (`/model`, `/exit` the
                // next day) do not lengthen it.
                if counts_for_duration(&e.role) && last_ts.is_none_or(|l| ts >= l) {
                    last_ts = Some(ts);
                    last_ts_entry = Some(i);
                }
            } else if Some(i) != opener
                && !e.abandoned
                && !e.inherited
                && counts_for_duration(&e.role)
            {
                untimed_after_opener = true;
            }
            if !main(i) {
                continue;
            }
            match &e.role {
                Role::TurnDuration { duration_ms } => {
                    terminal_closers.push(i);
                    recorded = Some(*duration_ms);
                }
                Role::TurnCompleted(c) => {
                    let (duration_ms, time_to_first_token_ms) =
                        (&c.duration_ms, &c.time_to_first_token_ms);
                    terminal_closers.push(i);
                    if let Some(d) = duration_ms {
                        recorded = Some(*d);
                    }
                    if let (Some(d), Some(f)) = (duration_ms, time_to_first_token_ms) {
                        measured = Some((*d, *f));
                    }
                }
                Role::Interruption => interruptions.push(i),
                Role::Steering => steering.push(i),
                _ => {}
            }
        }
        all_steering.extend_from_slice(&steering);

        let decision = if kind == TurnKind::Preamble {
            final_answer::Decision::default()
        } else {
            let narration_folds = |item: usize| {
                let e = items[item].entry;
                let step_end = entry_step.get(e).is_some_and(|s| steps[s].end_turn);
                let terminal = terminal_closers.iter().any(|&c| c > e);
                let moved = later_turn || interruptions.iter().any(|&c| c > e);
                moved && !step_end && !terminal
            };
            final_answer::decide(
                t,
                source,
                &items,
                options.final_marker,
                &row_of,
                &narration_folds,
            )
        };
        let final_answer = decision.items.last().map(|&last| {
            let le = items[last].entry;
            FinalAnswer {
                blocks: decision
                    .items
                    .iter()
                    .map(|&i| (items[i].entry, items[i].block))
                    .collect(),
                marker: decision.marker.clone().map(Box::new),
                stray_markers: decision.stray_markers.clone(),
                end_turn: entry_step.get(le).is_some_and(|s| steps[s].end_turn),
            }
        });

        // Activity: from the opener to the final answer (or the last work record).
        let is_work =
            |i: usize| main(i) && matches!(t.entries[i].role, Role::Model | Role::ToolResults);
        let activity = {
            let stop = match &final_answer {
                Some(fa) => fa.blocks.first().map_or(end, |b| b.0),
                None => (body_start..end)
                    .rev()
                    .find(|&i| is_work(i))
                    .map_or(body_start, |i| i + 1),
            };
            (body_start < stop && (body_start..stop).any(is_work)).then_some(body_start..stop)
        };

        let mut comments = 0u32;
        let mut tool_calls = 0u32;
        for (ii, it) in items.iter().enumerate() {
            match it.kind {
                ItemKind::Prose if decision.items.binary_search(&ii).is_err() => comments += 1,
                ItemKind::ToolUse { .. } => tool_calls += 1,
                _ => {}
            }
        }

        let my_steps = std::mem::take(&mut turn_steps[ix - kept]);
        let step_refs: Vec<&super::Step> = my_steps.iter().map(|&s| &steps[s]).collect();
        let turn_usage = step_refs
            .iter()
            .fold(Usage::default(), |u, s| u.add(s.usage));
        let last_step_end_turn = step_refs.last().is_some_and(|s| s.end_turn);

        let state = if kind == TurnKind::Preamble {
            TurnState::Complete
        } else {
            match &final_answer {
                Some(fa) => {
                    let last_entry = fa.blocks.last().map_or(start, |b| b.0);
                    let evidence = fa.end_turn
                        || later_turn
                        || terminal_closers
                            .iter()
                            .chain(&interruptions)
                            .any(|&c| c > last_entry);
                    if evidence || options.file_complete {
                        TurnState::Complete
                    } else {
                        TurnState::InFlight
                    }
                }
                None => {
                    let evidence = later_turn
                        || !terminal_closers.is_empty()
                        || !interruptions.is_empty()
                        || last_step_end_turn;
                    if evidence || options.file_complete {
                        TurnState::Replyless
                    } else {
                        TurnState::InFlight
                    }
                }
            }
        };

        // A duration the agent recorded beside the file (Kiro's sidecar, issue 21 item 4).
        if recorded.is_none()
            && let Some(o) = opener
            && let Ok(k) = t.meta.recorded_turns.binary_search_by_key(&o, |r| r.entry)
        {
            recorded = t.meta.recorded_turns[k].duration_ms;
        }
        let opener_ts = opener
            .and_then(|o| t.entries[o].timestamp_ms())
            .or(first_ts);
        let duration = if kind == TurnKind::Preamble {
            None
        } else if let Some(ms) = recorded {
            Some(Duration {
                ms,
                source: DurationSource::Recorded,
            })
        } else {
            match (opener_ts, last_ts) {
                _ if untimed_after_opener && last_ts_entry == opener => None,
                (Some(a), Some(b)) if b >= a => Some(Duration {
                    ms: (b - a) as u64,
                    source: DurationSource::Timestamps,
                }),
                _ => None,
            }
        };
        let throughput = if state == TurnState::InFlight {
            super::Throughput::None {
                reason: throughput::IN_FLIGHT,
            }
        } else {
            throughput::of_turn(&step_refs, measured, &turn_tools[ix - kept])
        };
        let finished_at_ms = step_refs.iter().filter_map(|s| s.end_ms).max();
        let finished_at = finished_at_ms.and_then(|ms| clock::clock_label_in(ms, &zone));

        let title = match opener {
            Some(o) => title_of(t, source, o),
            None => String::new(),
        };
        let n_turn = number(ix);
        turns.push(Turn {
            n: n_turn,
            kind,
            opener,
            entries: start..end,
            records: t.records_in(start..end),
            start_line: t.entries.get(start).map_or(0, |e| e.line),
            end_line: t
                .entries
                .get(end.saturating_sub(1))
                .map_or(0, |e| t.last_line(e.line)),
            title,
            runs: runs.into(),
            activity,
            final_answer: final_answer.map(Box::new),
            state,
            steps: my_steps.into(),
            comments,
            tool_calls,
            duration,
            throughput,
            finished_at_ms,
            finished_at,
            usage: turn_usage,
            sidechain_usage: Some(turn_side_usage[ix - kept])
                .filter(|u| *u != Usage::default())
                .map(Box::new),
            steering: steering.into(),
            gates: std::mem::take(&mut gate_buckets[ix - kept]),
            subagent_calls: std::mem::take(&mut call_buckets[ix - kept]),
            compactions: std::mem::take(&mut compaction_buckets[ix - kept]),
            branches: std::mem::take(&mut branch_buckets[ix - kept]),
            replayed: false,
        });
    }

    let turn_count = turns
        .iter()
        .filter(|t| t.kind != TurnKind::Preamble)
        .count();
    if !t.meta.recorded_usage.is_empty() {
        usage = t
            .meta
            .recorded_usage
            .iter()
            .fold(Usage::default(), |u, m| u.add(m.usage));
    }
    // The parent a replay is of: the file's, else that of the later session (a fork after
    // another rollout, issue 20 item 1) whose replay it is.
    let parent_of = |start: usize| {
        t.meta.parent_thread_id.clone().or_else(|| {
            let s = &t.meta.sessions;
            s[..s.partition_point(|s| s.entry < start)]
                .last()
                .and_then(|s| s.parent.clone())
        })
    };
    // One range per replay (issue 20: two forks in one file are two inherited histories,
    // never one range over the first fork's own turns): a run of inherited records ends where
    // the file's own work (a record that opens a turn or a model response) or another session
    // starts. Entries before `from` were scanned when the kept analysis was made.
    let mut inherited = if from > 0 {
        std::mem::take(&mut prev.inherited)
    } else {
        Vec::new()
    };
    let breaks = |a: usize, b: usize| {
        let s = &t.meta.sessions;
        s.partition_point(|x| x.entry <= a) != s.partition_point(|x| x.entry <= b)
            || t.entries[a + 1..b]
                .iter()
                .any(|e| !e.inherited && (e.role.opens_turn() || e.role == Role::Model))
    };
    for i in from..n {
        let e = &t.entries[i];
        if !e.inherited {
            continue;
        }
        let opens = usize::from(e.role.opens_turn());
        match inherited.last_mut() {
            Some(h) if !breaks(h.entries.end - 1, i) => {
                h.entries.end = i + 1;
                h.end_line = t.last_line(e.line);
                h.turns += opens;
            }
            _ => inherited.push(super::Inherited {
                entries: i..i + 1,
                start_line: e.line,
                end_line: t.last_line(e.line),
                turns: opens,
                parent: None,
            }),
        }
    }
    for h in &mut inherited {
        h.parent = parent_of(h.entries.start);
    }
    let (mut lo, mut hi) = if from > 0 {
        cp.time
    } else {
        (i64::MAX, i64::MIN)
    };
    let mut time_at = (lo, hi);
    let mut sidechain_at = cp.sidechain;
    for (i, e) in t.entries.iter().enumerate().skip(from) {
        if i == save_at {
            time_at = (lo, hi);
        }
        if i < save_at {
            sidechain_at |= e.sidechain;
        }
        if e.abandoned {
            continue;
        }
        if let Some(ms) = e.timestamp_ms() {
            lo = lo.min(ms);
            hi = hi.max(ms);
        }
    }
    if save_at >= n {
        time_at = (lo, hi);
    }
    let time_span = (lo <= hi).then(|| {
        clock::span_label_in(lo, hi, &zone).map(|label| super::TimeSpan {
            start_ms: lo,
            end_ms: hi,
            label,
        })
    });
    let checkpoint = Checkpoint {
        entries: n,
        start: save_at,
        steps_at,
        pairs_at,
        compaction_open,
        usage: usage_at,
        advisor_usage: advisor_at,
        cost_usd: cost_at,
        time: time_at,
        sidechain: sidechain_at && !subagent_file,
        options: Some(options.clone()),
        subagent_file,
        aside: t.meta.is_aside,
        kept,
    };
    // Per-turn credits the agent recorded beside the file (Kiro's sidecar).
    let turn_credits: Vec<(usize, f64)> = if t.meta.recorded_turns.is_empty() {
        Vec::new()
    } else {
        turns
            .iter()
            .filter_map(|turn| {
                let o = turn.opener?;
                let r = &t.meta.recorded_turns;
                let k = r.binary_search_by_key(&o, |r| r.entry).ok()?;
                Some((turn.n, r[k].credits?))
            })
            .collect()
    };
    let analysis = Analysis {
        time_span: time_span.flatten(),
        turn_credits,
        turns,
        cost_usd,
        steps,
        gates,
        compactions,
        subagent_calls,
        tool_pairs: pairs,
        steering: all_steering,
        usage,
        branches,
        advisor_usage,
        turn_count,
        inherited,
    };
    Ok((analysis, checkpoint))
}

/// Maximal runs of consecutive abandoned entries, with their first prompt and usage. Usage is
/// taken per response (`StepInfo::key`, component-wise maximum within a key, as for steps).
fn abandoned_branches(
    t: &Transcript,
    source: &str,
    turn_of: &impl Fn(usize) -> usize,
    from: usize,
    out: &mut Vec<super::AbandonedBranch>,
) {
    let n = t.entries.len();
    let mut i = from;
    while i < n {
        if !t.entries[i].abandoned {
            i += 1;
            continue;
        }
        let start = i;
        while i < n && t.entries[i].abandoned {
            i += 1;
        }
        let prompt = (start..i).find(|&k| t.entries[k].role.opens_turn());
        let mut per_key: std::collections::HashMap<&str, Usage> = Default::default();
        for k in start..i {
            if let Some(step) = &t.entries[k].step
                && let Some(u) = step.usage
            {
                let acc = per_key.entry(&step.key).or_default();
                *acc = acc.max(u);
            }
        }
        out.push(super::AbandonedBranch {
            entries: start..i,
            records: t.records_in(start..i),
            start_line: t.entries[start].line,
            end_line: t.last_line(t.entries[i - 1].line),
            prompt,
            title: prompt.map_or_else(String::new, |p| title_of(t, source, p)),
            usage: per_key
                .values()
                .fold(Usage::default(), |acc, u| acc.add(*u)),
            responses: (start..i)
                .filter(|&k| t.entries[k].role == Role::Model)
                .filter_map(|k| t.entries[k].step.as_ref().map(|s| &*s.key))
                .collect::<std::collections::HashSet<_>>()
                .len(),
            turn: turn_of(start),
        });
    }
}

/// Records whose timestamps bound a turn's duration when no recorded duration exists: the
/// opener, steering, model output, tool results, interruptions and the closing records.
fn counts_for_duration(role: &Role) -> bool {
    matches!(
        role,
        Role::Prompt(_)
            | Role::Wake(_)
            | Role::Steering
            | Role::Model
            | Role::ToolResults
            | Role::Interruption
            | Role::TurnDuration { .. }
            | Role::TurnCompleted { .. }
    )
}

/// Editor context blocks Claude Code puts before the typed prompt (2.0.x IDE integration) and
/// reminders: never a turn's title.
const CONTEXT_TAGS: [&str; 4] = [
    "ide_opened_file",
    "ide_selection",
    "ide_diagnostics",
    "system-reminder",
];

/// `text` with leading editor-context elements (`<ide_selection>…</ide_selection>`) removed;
/// `None` when nothing else is left.
fn strip_context(text: &str) -> Option<&str> {
    let mut rest = text.trim_start();
    while let Some(tag) = CONTEXT_TAGS.iter().find(|t| {
        rest.strip_prefix('<')
            .is_some_and(|r| r.starts_with(*t) && r[t.len()..].starts_with('>'))
    }) {
        let close = format!("</{tag}>");
        match rest.find(&close) {
            Some(at) => rest = rest[at + close.len()..].trim_start(),
            None => return None,
        }
    }
    (!rest.trim().is_empty()).then_some(rest)
}

/// Title of a turn opener: a wake's label; a prompt's first non-empty line (at most 80
/// characters, `…` when cut); a prompt-type command as `/name args`; `[image]` for a prompt of
/// images only. Only a prefix of a long prompt is decoded.
fn title_of(t: &Transcript, source: &str, opener: usize) -> String {
    let e = &t.entries[opener];
    let kind = match &e.role {
        Role::Wake(w) => return wake_title(*w).to_string(),
        Role::Prompt(k) => *k,
        _ => PromptKind::Typed,
    };
    let mut has_image = false;
    let mut fallback: Option<String> = None;
    for b in &e.blocks {
        match &b.kind {
            BlockKind::Text { text: s } => {
                let raw = source.get(s.raw.clone()).unwrap_or("");
                if text::raw_is_blank(raw) {
                    continue;
                }
                let prefix = text::decode_prefix(raw, 4096);
                if kind == PromptKind::Command
                    && let Some(c) = command_title(&prefix)
                {
                    return text::cut(&c, TITLE_MAX);
                }
                match strip_context(&prefix) {
                    Some(typed) => return text::first_line(typed, TITLE_MAX),
                    None => {
                        fallback.get_or_insert_with(|| text::first_line(&prefix, TITLE_MAX));
                    }
                }
            }
            BlockKind::Image { .. } => has_image = true,
            _ => {}
        }
    }
    if let Some(f) = fallback {
        f
    } else if has_image {
        "[image]".to_string()
    } else {
        String::new()
    }
}

/// `/name args` from a `<command-name>` / `<command-args>` wrapper.
fn command_title(s: &str) -> Option<String> {
    let tag = |name: &str| -> Option<String> {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        let a = s.find(&open)? + open.len();
        let b = s[a..].find(&close)? + a;
        Some(s[a..b].trim().to_string())
    };
    let name = tag("command-name")?;
    let args = tag("command-args").unwrap_or_default();
    let name = if name.starts_with('/') {
        name
    } else {
        format!("/{name}")
    };
    Some(if args.is_empty() {
        name
    } else {
        format!(
            "{name} {}",
            args.split_whitespace().collect::<Vec<_>>().join(" ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::strip_context;

    #[test]
    fn editor_context_is_not_a_title() {
        assert_eq!(
            strip_context("<ide_opened_file>The user opened a.rs</ide_opened_file>\nFix it"),
            Some("Fix it")
        );
        assert_eq!(
            strip_context(
                "<ide_selection>x</ide_selection> <system-reminder>y</system-reminder>Go"
            ),
            Some("Go")
        );
        assert_eq!(
            strip_context("<ide_selection>only context</ide_selection>"),
            None
        );
        assert_eq!(strip_context("<ide_selection>cut off"), None);
        assert_eq!(
            strip_context("<b>bold</b> prompt"),
            Some("<b>bold</b> prompt")
        );
    }
}
