//! The exact totals of one transcript (issue 11 defect 4, issue 7 item 2): what
//! `transcript-ls stats --json` prints and the server's `transcript/stats` request answers, from
//! one function so the two never disagree. Counts are of the whole file (main thread and
//! sidechains) unless a field says otherwise; tokens count each model response once (usage
//! de-duplicated per `message.id`, cases 10 and 13); lines are 1-based.

use serde::Serialize;

use crate::analysis::{Analysis, Throughput, TurnKind, TurnState};
use crate::model::{Role, Transcript};
use crate::view::text;

/// `stats --json` for one file. Keys are stable (more may be added). Lines are 1-based.
#[derive(Debug, Serialize)]
pub struct Stats {
    pub file: String,
    /// The agent registry's id (`claude-code`, `codex`, …, `formats::agents`) or `unknown`.
    pub format: &'static str,
    /// Physical lines of the file.
    pub lines: usize,
    /// Lines holding a valid JSON record.
    pub records: usize,
    /// 1-based lines that are not valid JSON (a pending tail is not one of them).
    pub invalid_lines: Vec<usize>,
    /// True when the last line has no final newline and is not valid JSON yet.
    pub pending_tail: bool,
    /// Every model the responses ran on, in order of first use (`crate::view::models_used`;
    /// the view's summary lists the same).
    pub models: Vec<String>,
    /// Turns opened by a prompt or a wake-up (the preamble is not counted).
    pub turns: usize,
    /// Model responses in the file (main thread and sidechains): `N responses` in `stats`
    /// (the key keeps its name; `crate::view::words`).
    pub steps: usize,
    /// tool_use blocks of the main thread (not on abandoned branches, not inherited): the sum of
    /// the turns' `tool_calls`, as every surface counts them (issue 20 item 5). In a sub-agent
    /// file its own records are its main thread.
    pub tool_calls: usize,
    /// tool_use blocks of inline sub-agents (sidechain records), reported apart.
    pub subagent_tool_calls: usize,
    /// Turns with a final answer.
    pub final_answers: usize,
    /// Turns that ended with no answer (seed 000).
    pub replyless_turns: usize,
    pub gates: usize,
    pub compactions: usize,
    pub subagent_calls: usize,
    /// Tokens, each model response counted once (cases 10, 13); the format's own session
    /// totals when it records them (Copilot CLI), see `usage_by_model`.
    pub usage: UsageStats,
    /// False when the file records no token counts at all (no response carries usage and the
    /// format gives no session totals: Kiro CLI, Mistral Vibe without `meta.json`, issue 21):
    /// `usage` is then all zeros and means "not recorded", never 0 tokens. Serialized only
    /// when false.
    #[serde(skip_serializing_if = "is_true")]
    pub usage_recorded: bool,
    /// The session's usage per model as the format records it (Copilot CLI
    /// `session.shutdown.modelMetrics`); absent when it does not.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub usage_by_model: Vec<ModelUsageStats>,
    /// Branches the session left (Pi): kept, never counted in the figures above.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub abandoned_branches: Vec<BranchStats>,
    /// Tokens of advisor models consulted inside responses (Claude Code `usage.iterations`
    /// of type `advisor_message`), never part of `usage`.
    pub advisor_usage: UsageStats,
    /// The session's cost in USD as the agent recorded it (Claude Code `cost-state`; Pi: the
    /// sum of its per-response costs, abandoned branches excluded), else null. Not derived
    /// from tokens.
    pub cost_usd: Option<f64>,
    /// The session's API time in ms as the agent recorded it (`cost-state`), else null.
    pub api_duration_ms: Option<u64>,
    /// Lines of each kind no reader knows (issue 20 item 11), by name: a record type as
    /// written (`worktree-state`), `attachment/<type>`, `system/<subtype>`; `{}` when none.
    /// Each also has one Information diagnostic.
    pub unknown_records: std::collections::BTreeMap<String, usize>,
    pub turn_list: Vec<TurnStats>,
}

fn is_true(b: &bool) -> bool {
    *b
}

#[derive(Debug, Serialize)]
pub struct ModelUsageStats {
    pub model: String,
    pub requests: Option<u64>,
    pub usage: UsageStats,
}

#[derive(Debug, Serialize)]
pub struct BranchStats {
    /// 1-based lines.
    pub start_line: usize,
    pub end_line: usize,
    pub entries: usize,
    pub responses: usize,
    /// First line of its prompt, empty without one.
    pub prompt: String,
    pub output_tokens: u64,
}

#[derive(Debug, Serialize)]
pub struct UsageStats {
    pub input: u64,
    /// Output tokens; a lower bound when `output_placeholder_steps` > 0.
    pub output: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
    /// Model responses whose recorded output count is a streaming placeholder (Claude Code
    /// versions that log `stop_reason: null` with 1–25 output tokens, FORMATS.md): their true
    /// output is not in the file, so `output` undercounts. Absent from `advisor_usage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_placeholder_steps: Option<usize>,
}

#[derive(Debug, Serialize)]
pub struct TurnStats {
    pub n: usize,
    /// `prompt` | `wake` | `preamble`.
    pub kind: &'static str,
    /// First line of the prompt, at most 80 chars; the wake label; empty for the preamble.
    pub prompt: String,
    pub start_line: usize,
    pub end_line: usize,
    /// Records of the turn (`Turn::entries`): the preamble's only figure, as its outline
    /// entry and fold say (issue 11, item 4).
    pub records: usize,
    /// Main-thread model responses.
    pub steps: usize,
    /// Main-thread tool calls.
    pub tool_calls: u32,
    /// Agent prose outside the final answer (seed 000).
    pub comments: u32,
    pub final_answer: bool,
    /// `complete` | `in-flight` | `replyless`.
    pub state: &'static str,
    pub duration_ms: Option<u64>,
    /// Credits the agent metered for the turn, when it records them (Kiro CLI's sidecar);
    /// absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credits: Option<f64>,
    pub tok_per_s: Option<TokPerS>,
    /// Local 12-hour clock of the last step (`07:28 am`).
    pub finished_at: Option<String>,
    pub gates: Vec<GateStats>,
}

#[derive(Debug, Serialize)]
pub struct TokPerS {
    /// Tokens per second, rounded to 0.1.
    pub value: f64,
    /// `measured` | `estimate`.
    pub kind: &'static str,
    /// The figure as every other surface prints it ([`crate::view::text::fmt_tok_per_s`] of
    /// the unrounded value: `34`, never the rounded `value` rounded again to `35`; issue 20
    /// item 9). Not part of `stats --json`.
    #[serde(skip)]
    pub label: String,
}

#[derive(Debug, Serialize)]
pub struct GateStats {
    pub phase: String,
    /// `done` | `needs-you` | `tagged` | `blocked`.
    pub verdict: &'static str,
    /// The verdict as the agent wrote it (`PASS`, `READY-TO-MERGE`): the word the view, the
    /// outline, the lens and `stats` show (`crate::view::words::verdict`).
    pub verdict_text: String,
}

/// The figures of one transcript: `file` is the path as the caller names it (the CLI: as given
/// on its command line; the server: the absolute path).
pub fn stats(file: String, t: &Transcript, a: &Analysis) -> Stats {
    // The main thread's calls are the turns' (one count for every surface); the rest of the
    // file's own calls are the sub-agents'.
    let tool_calls: usize = a.turns.iter().map(|turn| turn.tool_calls as usize).sum();
    let all_calls = t
        .entries
        .iter()
        .filter(|e| !e.abandoned && !e.inherited)
        .flat_map(|e| &e.blocks)
        .filter(|b| matches!(b.kind, crate::model::BlockKind::ToolUse(_)))
        .count();
    let subagent_tool_calls = all_calls.saturating_sub(tool_calls);
    // History a fork, sub-agent or `/btw` aside replays from its parent counts in no total
    // (issue 9): the steps and tool calls here are this file's own.
    let own_steps = a
        .steps
        .iter()
        .filter(|s| !s.entries.first().is_some_and(|&f| t.entries[f].inherited));
    let turn_list = a
        .turns
        .iter()
        .map(|turn| TurnStats {
            n: turn.n,
            kind: turn.kind.as_str(),
            prompt: text::one_line(&turn.title, 80),
            start_line: turn.start_line + 1,
            end_line: turn.end_line + 1,
            records: turn.records,
            steps: turn.steps.len(),
            tool_calls: turn.tool_calls,
            comments: turn.comments,
            final_answer: turn.final_answer.is_some(),
            state: match turn.state {
                TurnState::Complete => "complete",
                TurnState::InFlight => "in-flight",
                TurnState::Replyless => "replyless",
            },
            duration_ms: turn.duration.map(|d| d.ms),
            credits: turn.opener.and_then(|o| {
                let r = &t.meta.recorded_turns;
                let k = r.binary_search_by_key(&o, |r| r.entry).ok()?;
                r[k].credits
            }),
            tok_per_s: match &turn.throughput {
                Throughput::Measured { tok_per_s, .. } => Some(TokPerS {
                    value: round1(*tok_per_s),
                    kind: "measured",
                    label: crate::view::text::fmt_tok_per_s(*tok_per_s),
                }),
                Throughput::Estimate { tok_per_s, .. } => Some(TokPerS {
                    value: round1(*tok_per_s),
                    kind: "estimate",
                    label: crate::view::text::fmt_tok_per_s(*tok_per_s),
                }),
                Throughput::None { .. } => None,
            },
            finished_at: turn.finished_at.clone(),
            gates: turn
                .gates
                .iter()
                .filter_map(|&g| a.gates.get(g))
                .map(|g| GateStats {
                    phase: g.phase_name.clone(),
                    verdict: g.verdict.as_str(),
                    verdict_text: crate::view::words::verdict(g),
                })
                .collect(),
        })
        .collect();
    Stats {
        file,
        format: t.format().as_str(),
        lines: t.line_count,
        records: t.records_in(0..t.entries.len())
            - t.entries
                .iter()
                .filter(|e| e.role == Role::Unparsed)
                .count(),
        invalid_lines: t
            .entries
            .iter()
            .filter(|e| e.role == Role::Unparsed)
            .map(|e| e.line + 1)
            .collect(),
        pending_tail: t.pending_tail.is_some(),
        models: crate::view::models_used(t),
        turns: a.turn_count,
        steps: own_steps.clone().count(),
        tool_calls,
        subagent_tool_calls,
        final_answers: a.turns.iter().filter(|t| t.final_answer.is_some()).count(),
        replyless_turns: a
            .turns
            .iter()
            .filter(|t| t.kind != TurnKind::Preamble && t.state == TurnState::Replyless)
            .count(),
        gates: a.gates.len(),
        compactions: a.compactions.len(),
        subagent_calls: a.subagent_calls.len(),
        usage: UsageStats {
            input: a.usage.input,
            output: a.usage.output,
            cache_creation: a.usage.cache_creation,
            cache_read: a.usage.cache_read,
            output_placeholder_steps: Some(own_steps.filter(|s| !s.output_final).count()),
        },
        usage_recorded: !t.meta.recorded_usage.is_empty()
            || t.entries
                .iter()
                .any(|e| e.step.as_ref().is_some_and(|s| s.usage.is_some())),
        usage_by_model: t
            .meta
            .recorded_usage
            .iter()
            .map(|m| ModelUsageStats {
                model: m.model.clone(),
                requests: m.requests,
                usage: UsageStats {
                    input: m.usage.input,
                    output: m.usage.output,
                    cache_creation: m.usage.cache_creation,
                    cache_read: m.usage.cache_read,
                    output_placeholder_steps: None,
                },
            })
            .collect(),
        abandoned_branches: a
            .branches
            .iter()
            .map(|b| BranchStats {
                start_line: b.start_line + 1,
                end_line: b.end_line + 1,
                entries: b.records,
                responses: b.responses,
                prompt: b.title.clone(),
                output_tokens: b.usage.output,
            })
            .collect(),
        advisor_usage: UsageStats {
            input: a.advisor_usage.input,
            output: a.advisor_usage.output,
            cache_creation: a.advisor_usage.cache_creation,
            cache_read: a.advisor_usage.cache_read,
            output_placeholder_steps: None,
        },
        cost_usd: t
            .meta
            .cost_usd
            .or(a.cost_usd.map(|c| (c * 1e6).round() / 1e6)),
        api_duration_ms: t.meta.api_duration_ms,
        unknown_records: t
            .unknown
            .iter()
            .map(|u| {
                let key = match u.what {
                    "attachment" => format!("attachment/{}", u.name),
                    "system subtype" => format!("system/{}", u.name),
                    _ => u.name.clone(),
                };
                (key, u.lines)
            })
            .collect(),
        turn_list,
    }
}

fn round1(x: f64) -> f64 {
    if x.is_finite() {
        (x * 10.0).round() / 10.0
    } else {
        0.0
    }
}
