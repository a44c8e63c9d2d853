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
    let n = t.entries.len();
    let subagent_file = t.meta.is_subagent_file;
    let main = |i: usize| !t.entries[i].abandoned && (subagent_file || !t.entries[i].sidechain);

    let (steps, entry_step) = steps::build(t, main);

    // Segmentation: (kind, opener, start).
    let mut bounds: Vec<(TurnKind, Option<usize>, usize)> = Vec::new();
    for (i, e) in t.entries.iter().enumerate() {
        if !main(i) || e.inherited {
            continue;
        }
        match e.role {
            // A sub-agent file's first prompt is the task its parent wrote (issue 9 item 8);
            // a `/btw` aside's is the person's own side question.
            Role::Prompt(_)
                if subagent_file
                    && !t.meta.is_aside
                    && !bounds.iter().any(|b| b.0 == TurnKind::SubagentTask) =>
            {
                bounds.push((TurnKind::SubagentTask, Some(i), i))
            }
            Role::Prompt(_) => bounds.push((TurnKind::Prompt, Some(i), i)),
            Role::Wake(_) => bounds.push((TurnKind::Wake, Some(i), i)),
            _ => {}
        }
    }
    let first_start = bounds.first().map_or(n, |b| b.2);
    if first_start > 0 {
        bounds.insert(0, (TurnKind::Preamble, None, 0));
    }
    let starts: Vec<usize> = bounds.iter().map(|b| b.2).collect();
    let has_preamble = bounds.first().is_some_and(|b| b.0 == TurnKind::Preamble);
    // Turn index (into `bounds`) of an entry.
    let turn_ix = |i: usize| starts.partition_point(|&s| s <= i).saturating_sub(1);
    let number = |ix: usize| if has_preamble { ix } else { ix + 1 };
    let turn_of = |i: usize| number(turn_ix(i));

    let pairs = links::pair_tools(t);
    let subagent_calls = links::subagent_calls(t, source, &pairs, &turn_of);
    let (compactions, compaction_turns) = links::compactions(t, &turn_of);
    let gates = gates::find(t, source, &options.gate_phases, &main, &turn_of);
    let zone = clock::time_zone(options.time_zone.as_deref());

    // Steps by turn (turn of the step's first record).
    let mut turn_steps: Vec<Vec<usize>> = vec![Vec::new(); bounds.len()];
    let mut turn_side_usage: Vec<Usage> = vec![Usage::default(); bounds.len()];
    let mut usage = Usage::default();
    let mut advisor_usage = Usage::default();
    for (si, s) in steps.iter().enumerate() {
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
        let ix = turn_ix(first);
        if s.sidechain {
            turn_side_usage[ix] = turn_side_usage[ix].add(s.usage);
        } else {
            turn_steps[ix].push(si);
        }
    }
    // Tool call timing by turn: (call ts, result ts) of main-thread calls.
    let mut turn_tools: Vec<Vec<(Option<i64>, Option<i64>)>> = vec![Vec::new(); bounds.len()];
    for p in &pairs {
        if main(p.use_entry) && !bounds.is_empty() {
            turn_tools[turn_ix(p.use_entry)].push((
                t.entries[p.use_entry].timestamp_ms(),
                p.result_entry.and_then(|r| t.entries[r].timestamp_ms()),
            ));
        }
    }
    // Per-turn indices of gates, sub-agent calls and compactions.
    let ix_of_number = |n: usize| if has_preamble { n } else { n.saturating_sub(1) };
    let bucket = |numbers: &mut dyn Iterator<Item = usize>| {
        let mut b: Vec<Vec<usize>> = vec![Vec::new(); bounds.len()];
        for (i, n) in numbers.enumerate() {
            if let Some(v) = b.get_mut(ix_of_number(n)) {
                v.push(i);
            }
        }
        b
    };
    let mut gate_buckets = bucket(&mut gates.iter().map(|g| g.turn));
    let mut call_buckets = bucket(&mut subagent_calls.iter().map(|c| c.turn));
    let mut compaction_buckets = bucket(&mut compaction_turns.iter().copied());
    let branches = abandoned_branches(t, source, &turn_of);
    let mut branch_buckets = bucket(&mut branches.iter().map(|b| b.turn));
    let row_of = |e: usize| {
        entry_step
            .get(e)
            .copied()
            .flatten()
            .unwrap_or(steps.len() + e)
    };

    let mut turns: Vec<Turn> = Vec::with_capacity(bounds.len());
    let mut all_steering = Vec::new();
    for (ix, &(kind, opener, start)) in bounds.iter().enumerate() {
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
        for i in start..end {
            let e = &t.entries[i];
            if let Some(ts) = e.timestamp_ms()
                && !e.abandoned
            {
                first_ts.get_or_insert(ts);
                // The turn's work ends at its last conversation record: local commands, meta
                // and other bookkeeping typed after the agent settled (`/model`, `/exit` the
                // next day) do not lengthen it.
                if counts_for_duration(&e.role) {
                    last_ts = Some(last_ts.map_or(ts, |l: i64| l.max(ts)));
                }
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
                let step_end = entry_step
                    .get(e)
                    .copied()
                    .flatten()
                    .is_some_and(|s| steps[s].end_turn);
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
                marker: decision.marker.clone(),
                stray_markers: decision.stray_markers.clone(),
                end_turn: entry_step
                    .get(le)
                    .copied()
                    .flatten()
                    .is_some_and(|s| steps[s].end_turn),
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

        let my_steps = std::mem::take(&mut turn_steps[ix]);
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
                (Some(a), Some(b)) if b >= a => Some(Duration {
                    ms: (b - a) as u64,
                    source: DurationSource::Timestamps,
                }),
                _ => None,
            }
        };
        let throughput = if state == TurnState::InFlight {
            super::Throughput::None {
                reason: throughput::IN_FLIGHT.to_string(),
            }
        } else {
            throughput::of_turn(&step_refs, measured, &turn_tools[ix])
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
            start_line: t.entries.get(start).map_or(0, |e| e.line),
            end_line: t.entries.get(end.saturating_sub(1)).map_or(0, |e| e.line),
            title,
            runs,
            activity,
            final_answer,
            state,
            steps: my_steps,
            comments,
            tool_calls,
            duration,
            throughput,
            finished_at_ms,
            finished_at,
            usage: turn_usage,
            sidechain_usage: turn_side_usage[ix],
            steering,
            gates: std::mem::take(&mut gate_buckets[ix]),
            subagent_calls: std::mem::take(&mut call_buckets[ix]),
            compactions: std::mem::take(&mut compaction_buckets[ix]),
            branches: std::mem::take(&mut branch_buckets[ix]),
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
    let cost_usd = steps.iter().filter_map(|s| s.cost_usd).reduce(|a, b| a + b);
    let inherited = {
        let first = t.entries.iter().position(|e| e.inherited);
        let last = t.entries.iter().rposition(|e| e.inherited);
        match (first, last) {
            (Some(a), Some(b)) => Some(super::Inherited {
                entries: a..b + 1,
                start_line: t.entries[a].line,
                end_line: t.entries[b].line,
                turns: t.entries[a..=b]
                    .iter()
                    .filter(|e| e.inherited && e.role.opens_turn())
                    .count(),
                parent: t.meta.parent_thread_id.clone(),
            }),
            _ => None,
        }
    };
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for e in t.entries.iter().filter(|e| !e.abandoned) {
        if let Some(ms) = e.timestamp_ms() {
            lo = lo.min(ms);
            hi = hi.max(ms);
        }
    }
    let time_span = (lo <= hi).then(|| {
        clock::span_label_in(lo, hi, &zone).map(|label| super::TimeSpan {
            start_ms: lo,
            end_ms: hi,
            label,
        })
    });
    Analysis {
        time_span: time_span.flatten(),
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
    }
}

/// Maximal runs of consecutive abandoned entries, with their first prompt and usage. Usage is
/// taken per response (`StepInfo::key`, component-wise maximum within a key, as for steps).
fn abandoned_branches(
    t: &Transcript,
    source: &str,
    turn_of: &impl Fn(usize) -> usize,
) -> Vec<super::AbandonedBranch> {
    let mut out = Vec::new();
    let n = t.entries.len();
    let mut i = 0;
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
            start_line: t.entries[start].line,
            end_line: t.entries[i - 1].line,
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
    out
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
