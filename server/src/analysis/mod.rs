//! Turn segmentation, run split, final-answer classification, usage dedup, throughput, gates
//! (DESIGN.md §4). Input: a [`Transcript`] and its source text. Output: an [`Analysis`] of plain
//! data in entry indices, lines and byte spans. Nothing here knows about editors.
//!
//! Indices: `entry` fields are indices into `Transcript::entries`; `(entry, block)` pairs
//! address one block of one entry; lines are 0-based physical lines.

use thin_vec::ThinVec;

use crate::model::{Span, Transcript, Usage};

pub mod body;
pub mod clock;
pub mod final_answer;
pub mod gates;
pub mod links;
pub mod steps;
pub mod text;
pub mod throughput;
mod turns;
pub mod waiting;

pub use clock::clock_label;
pub use turns::Checkpoint;

/// Options that change analysis results (from settings: `finalMarker`, `timeZone`,
/// `gatePhases`).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Honour the explicit final-answer markers `[[OMNISCIO_FINAL]]` / `[[AMC_FINAL]]`
    /// (seed 000). Default true.
    pub final_marker: bool,
    /// IANA time zone name for finish times (`Europe/Paris`), `UTC`, or `None` for the
    /// system zone (case 16).
    pub time_zone: Option<String>,
    /// The gate phase table (seed 000); default [`default_phases`].
    pub gate_phases: Vec<Phase>,
    /// True when the file is known to be complete (not growing): a torn tail is then an
    /// invalid line, and a last turn with no completion evidence is not in flight.
    pub file_complete: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            final_marker: true,
            time_zone: None,
            gate_phases: default_phases(),
            file_complete: false,
        }
    }
}

/// One phase of the dev pipeline (seed 000).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    /// `Plan`, `Red Team`, `Standards Check`, `Build`, `Elegance`, `Docs`, `Standards Audit`,
    /// `Merge`.
    pub name: String,
    /// The phase's emoji disc.
    pub emoji: String,
    /// The number a numbered gate (`GATE 3`) maps to, when the phase has one (1 Plan, 2 Red
    /// Team, 3 Build, 4 Elegance, 5 Docs, 6 Merge).
    pub number: Option<u32>,
}

/// The eight default phases of seed 000, in order, with the seed's discs (🔍 Plan · ⚔️ Red
/// Team · 🚦 Standards Check · 🔨 Build · 💎 Elegance · 📝 Docs · 🔬 Standards Audit · 🚀 Merge).
pub fn default_phases() -> Vec<Phase> {
    let p = |name: &str, emoji: &str, number: Option<u32>| Phase {
        name: name.to_string(),
        emoji: emoji.to_string(),
        number,
    };
    vec![
        p("Plan", "🔍", Some(1)),
        p("Red Team", "⚔️", Some(2)),
        p("Standards Check", "🚦", None),
        p("Build", "🔨", Some(3)),
        p("Elegance", "💎", Some(4)),
        p("Docs", "📝", Some(5)),
        p("Standards Audit", "🔬", None),
        p("Merge", "🚀", Some(6)),
    ]
}

/// Everything analysis derives from one transcript.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Turns in file order; `turns[0]` is the preamble (n = 0) when the file has anything
    /// before the first prompt.
    pub turns: Vec<Turn>,
    /// Model responses (steps) in file order, main thread and sidechains.
    pub steps: Vec<Step>,
    pub gates: Vec<Gate>,
    pub compactions: Vec<Compaction>,
    pub subagent_calls: Vec<SubagentCall>,
    /// tool_use <-> tool_result pairs, by `(sessionId, id)`, nearest preceding unmatched call
    /// first (case 23).
    pub tool_pairs: Vec<ToolPair>,
    /// Steering prompts (entry indices), each shown once (cases 07, 08).
    pub steering: Vec<usize>,
    /// Usage of the whole file, each step counted once (cases 10, 13); or, when the format
    /// records the session's usage itself (`SessionMeta::recorded_usage`, Copilot CLI), the
    /// sum of that over models (issue 10: never both).
    pub usage: Usage,
    /// Cost of the session in US dollars: the sum of the steps' recorded costs (Pi), `None`
    /// when no step records one. Abandoned branches are not included.
    pub cost_usd: Option<f64>,
    /// Branches the session left (`Entry::abandoned`), each a maximal run of consecutive
    /// abandoned entries, in file order (issue 10).
    pub branches: Vec<AbandonedBranch>,
    /// Usage of advisor models consulted inside responses (`StepInfo::advisor_usage`), each
    /// step once; never part of `usage`.
    pub advisor_usage: Usage,
    /// Number of turns of kind `Prompt` or `Wake` (the preamble is not counted).
    pub turn_count: usize,
    /// When the session ran: its first and last record timestamps (epoch ms) and their local
    /// label in `Options::time_zone` ([`clock::span_label_in`]); `None` without timestamps.
    pub time_span: Option<TimeSpan>,
    /// History a fork or sub-agent file replays from its parent (`Entry::inherited`), one
    /// per replay in file order (a file that joins two forks has two; issue 20): excluded from
    /// turns, turn numbers and token totals (issue 9 item 4).
    pub inherited: Vec<Inherited>,
    /// Credits the agent metered per turn, when it records them (Kiro CLI's sidecar,
    /// `SessionMeta::recorded_turns`): `(turn n, credits)`, in turn order; empty otherwise.
    pub turn_credits: Vec<(usize, f64)>,
}

impl Analysis {
    /// The credits recorded for the turn numbered `n`, if any.
    pub fn credits_of(&self, n: usize) -> Option<f64> {
        self.turn_credits
            .iter()
            .find(|(m, _)| *m == n)
            .map(|&(_, c)| c)
    }
}

/// When a session ran (issue 11, item 5: the view's summary).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeSpan {
    /// First and last record timestamps, epoch ms.
    pub start_ms: i64,
    pub end_ms: i64,
    /// `12 May 2026, 11:47 am – 12:02 pm`, local.
    pub label: String,
}

/// The inherited history of a fork or sub-agent file.
#[derive(Debug, Clone, PartialEq)]
pub struct Inherited {
    /// Entry index range `[start, end)` from the first to the last inherited record of one
    /// replay (it ends where the file's own work or another session starts).
    pub entries: std::ops::Range<usize>,
    /// First and last line (0-based, inclusive).
    pub start_line: usize,
    pub end_line: usize,
    /// Prompts of the parent inside it (its turns).
    pub turns: usize,
    /// `SessionMeta::parent_thread_id`.
    pub parent: Option<String>,
}

/// A step: one model response (entries sharing `StepInfo::key`).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Entry indices of the response's records, in file order.
    pub entries: Vec<usize>,
    /// Usage of the response: component-wise max over its records.
    pub usage: Usage,
    /// True when a record of the response states its usage (`StepInfo::usage`); false when
    /// the format records no token counts for it (Antigravity CLI): `usage` is then zero
    /// for want of figures, shown as "not recorded", never as 0 (issue 21 item 6).
    pub usage_recorded: bool,
    /// Advisor usage of the response (`StepInfo::advisor_usage`), max over its records.
    pub advisor_usage: Usage,
    /// True when the output count is final (not a streaming placeholder).
    pub output_final: bool,
    /// True when the step ended with `end_turn` / `stop`.
    pub end_turn: bool,
    /// Timestamp of the first and last record (epoch ms).
    pub start_ms: Option<i64>,
    pub end_ms: Option<i64>,
    /// Timestamp of the latest non-model record before the step's first record (prompt,
    /// tool result): the request time, for the estimated decode time (FORMATS.md §1.9).
    pub request_ms: Option<i64>,
    /// Measured first-token time of the step (epoch ms) when the format recorded the
    /// generation of its first model record (Codex 0.14x `item_completed.started_at_ms`).
    pub stream_start_ms: Option<i64>,
    pub tool_calls: u32,
    /// Cost in US dollars when the format records it (`StepInfo::cost_usd`; maximum over the
    /// step's records, like usage).
    pub cost_usd: Option<f64>,
    /// True for an inline sidechain (sub-agent) response. Never set in a sub-agent file, whose
    /// records are its own main thread.
    pub sidechain: bool,
}

/// What opened a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnKind {
    /// Records before the first prompt (n = 0).
    Preamble,
    /// A human prompt.
    Prompt,
    /// A machine wake-up (task notification, recovery re-run).
    Wake,
    /// The first prompt of a sub-agent file (`SessionMeta::is_subagent_file`): the task the
    /// parent agent wrote for it ("Warmup", the compaction summariser's request, a Task
    /// description), not a human prompt (issue 9 item 8).
    SubagentTask,
}

impl TurnKind {
    /// `preamble` | `prompt` | `wake` | `subagent-task`, as in `stats --json`.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnKind::Preamble => "preamble",
            TurnKind::Prompt => "prompt",
            TurnKind::Wake => "wake",
            TurnKind::SubagentTask => "subagent-task",
        }
    }
}

/// Where a turn stands (seed 004 completion evidence; seed 000 replyless turns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnState {
    /// The final answer is complete (its step ended with end_turn / stop, or the conversation
    /// moved on after it: a later turn, a turn_duration / task_complete / interruption record),
    /// or the file is known complete. Always the state of the preamble.
    Complete,
    /// Last turn of a file still being written, with no completion evidence: with or without
    /// an answer so far (a turn waiting on a tool is in flight, not replyless). No throughput
    /// is given for it.
    InFlight,
    /// The turn has no final answer (it ended on a tool call, was interrupted or cut off) and
    /// is over: a later turn, a closing record, an end_turn step, or a complete file.
    Replyless,
}

/// One turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// 1-based turn number; 0 for the preamble. Compaction never renumbers.
    pub n: usize,
    pub kind: TurnKind,
    /// The entry that opened it (prompt or wake); `None` for the preamble.
    pub opener: Option<usize>,
    /// Entry index range `[start, end)` covered by the turn, in file order (includes
    /// sidechain and meta records that fall inside).
    pub entries: std::ops::Range<usize>,
    /// Records those entries stand for: `entries.len()`, plus the records a run of bare
    /// records holds beyond its entry (`Transcript::records_in`; issue 25 item 8).
    pub records: usize,
    /// First and last line (0-based, inclusive).
    pub start_line: usize,
    pub end_line: usize,
    /// Prompt text's first non-empty line, at most 80 chars (`…` when cut); for a wake the
    /// label (`background task finished`); empty for the preamble.
    pub title: String,
    /// The turn's body cut into maximal runs of work and prose (seed 003), main thread only.
    /// A [`ThinVec`] as [`Turn::steps`]: one word in every turn (issue 25 item 8).
    pub runs: ThinVec<Run>,
    /// Entries between the opener and the final answer (seed 000 activity), as an entry index
    /// range: from the entry after the opener to the answer's first entry; without an answer,
    /// to the last model / tool-result record of the turn. `None` when that range holds no
    /// model or tool-result record (a plain answer, or a turn with no model output).
    pub activity: Option<std::ops::Range<usize>>,
    /// The turn's final answer (seed 000). Boxed: a turn without one (every one-line prompt
    /// with no reply) took its 64 bytes all the same (issue 25 item 8, memory per record).
    pub final_answer: Option<Box<FinalAnswer>>,
    pub state: TurnState,
    /// Step indices (into `Analysis::steps`) of the main thread in this turn.
    /// A [`ThinVec`]: one word in every turn, where a `Vec` took three (issue 25 item 8,
    /// memory per record: a million one-line prompts are a million turns).
    pub steps: ThinVec<usize>,
    /// Agent prose blocks (non-blank main-thread text of model records) outside the final
    /// answer (seed 000 comments).
    pub comments: u32,
    /// Tool calls of the main thread.
    pub tool_calls: u32,
    /// The last turn_duration / task_complete duration of the turn (main thread), else the
    /// latest timestamp in the turn minus the opener's (case 16). `None` for the preamble.
    pub duration: Option<Duration>,
    /// See [`throughput`].
    pub throughput: Throughput,
    /// Finish time: the latest end timestamp of the turn's main-thread steps (epoch ms) and
    /// its local 12-hour clock label (`07:28 am`, [`clock_label`]) in `Options::time_zone`.
    pub finished_at_ms: Option<i64>,
    pub finished_at: Option<String>,
    /// Usage of the turn's main-thread steps, each step once (case 10).
    pub usage: Usage,
    /// Usage of the inline sidechain (sub-agent) steps that fall in this turn, kept separable
    /// from `usage` (case 20: session totals include child usage, but separably).
    /// `None` when no sidechain step falls in the turn; boxed, as most turns have none (issue 12,
    /// memory per turn).
    pub sidechain_usage: Option<Box<Usage>>,
    /// Steering entries absorbed by this turn.
    pub steering: Indices,
    /// Indices into `Analysis::gates`.
    pub gates: Indices,
    /// Indices into `Analysis::subagent_calls`.
    pub subagent_calls: Indices,
    /// Indices into `Analysis::compactions` that fall inside this turn.
    pub compactions: Indices,
    /// Indices into `Analysis::branches` that fall inside this turn.
    pub branches: Indices,
    /// True when every record of the turn already appeared in another file of the session
    /// (resumed-session copy, case 12). Set by workspace-level code, false from `analyze`.
    pub replayed: bool,
}

/// A list of indices that is usually empty (a turn's gates, sub-agent calls, compactions,
/// branches, steering entries): one pointer, allocated on the first push, instead of a
/// three-word `Vec` (issue 12: five empty vectors made every turn 80 bytes bigger, 1M
/// one-line prompts are 1M turns). Reads as a slice; `Debug` and equality are a `Vec`'s.
#[derive(Clone, Default, PartialEq, Eq)]
// A boxed vector on purpose: one word when empty, where a `Vec` takes three.
#[allow(clippy::box_collection)]
pub struct Indices(Option<Box<Vec<usize>>>);

impl Indices {
    /// Appends `i`.
    pub fn push(&mut self, i: usize) {
        self.0.get_or_insert_with(Default::default).push(i);
    }
}

impl std::ops::Deref for Indices {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        self.0.as_deref().map_or(&[], |v| v.as_slice())
    }
}

impl From<Vec<usize>> for Indices {
    fn from(v: Vec<usize>) -> Indices {
        Indices((!v.is_empty()).then(|| Box::new(v)))
    }
}

impl<'a> IntoIterator for &'a Indices {
    type Item = &'a usize;
    type IntoIter = std::slice::Iter<'a, usize>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl PartialEq<Vec<usize>> for Indices {
    fn eq(&self, o: &Vec<usize>) -> bool {
        **self == **o
    }
}

impl std::fmt::Debug for Indices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// A turn's duration and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Duration {
    pub ms: u64,
    pub source: DurationSource,
}

/// How a duration was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationSource {
    /// `system/turn_duration.durationMs` or Codex `task_complete.duration_ms`.
    Recorded,
    /// Last record's timestamp minus the opener's.
    Timestamps,
}

/// Tokens per second of a turn (seed 002): total output tokens of its output-bearing steps
/// divided by total decode time; never an average of per-step rates.
#[derive(Debug, Clone, PartialEq)]
pub enum Throughput {
    /// Decode time measured by the format: Codex `task_complete` duration minus time to first
    /// token minus tool execution (see [`throughput`]).
    Measured {
        tok_per_s: f64,
        tokens: u64,
        decode_ms: u64,
    },
    /// Only row timestamps exist (Claude Code): decode time estimated per step as
    /// (last record − request time); shown as `≈ N tok/s`.
    Estimate {
        tok_per_s: f64,
        tokens: u64,
        decode_ms: u64,
    },
    /// No figure, and why: `output counts are streaming placeholders`, `no output-bearing
    /// steps`, `missing timestamps`, `turn in flight` (constants in [`throughput`]; static, so
    /// a turn without a figure allocates nothing: issue 12, memory per turn).
    None { reason: &'static str },
}

/// A work or prose run of a turn body (seed 003).
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub kind: RunKind,
    /// Blocks of the run in order, as `(entry, block)` pairs (tool results included in work
    /// runs). Blank text, images and unknown blocks of model records ride in the run they fall
    /// in (leading ones in the first run) without splitting it; empty thinking is a `Thought`
    /// unless it sits between two prose blocks.
    pub blocks: Vec<(usize, usize)>,
    /// First and last line (0-based, inclusive).
    pub start_line: usize,
    pub end_line: usize,
    /// Steps touched by the run and tool calls in it (for the `Worked · 3 tool calls` label).
    pub steps: u32,
    pub tool_calls: u32,
}

/// Kind of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    /// Tool calls, tool results and thinking (and the text of synthetic API-error responses);
    /// labelled `Worked · N steps`.
    Work,
    /// Thinking only; labelled `Thought`.
    Thought,
    /// Agent prose.
    Prose,
}

/// The final answer of a turn (seed 000).
#[derive(Debug, Clone, PartialEq)]
pub struct FinalAnswer {
    /// Its text blocks, as `(entry, block)` pairs.
    pub blocks: Vec<(usize, usize)>,
    /// When an explicit marker decided it: where the marker is, and the byte offset in the
    /// source where the answer starts after it. Boxed: most answers have none, and inline it
    /// made every turn 64 bytes bigger (issue 12, memory per turn).
    pub marker: Option<Box<Marker>>,
    /// Source spans of other marker lines inside the answer's blocks (a marker ignored because
    /// nothing follows it, or an earlier one superseded by the last): they did not decide the
    /// answer but are never shown either (seed 000). Empty when `Options::final_marker` is off.
    pub stray_markers: Vec<Span>,
    /// True when the step that ends it has completion evidence of its own (end_turn / stop).
    pub end_turn: bool,
}

/// An explicit final-answer marker (`[[OMNISCIO_FINAL]]`, `[[AMC_FINAL]]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// The block holding the marker.
    pub entry: usize,
    pub block: usize,
    /// Byte span of the marker line in the source (never shown in the view).
    pub span: Span,
    /// Byte offset in the source where the answer text starts: inside the first block of
    /// [`FinalAnswer::blocks`]. Usually just after the marker; when substantive prose right
    /// before the marker is kept (seed 000 "never hides your answer"), it is the start of that
    /// prose and the marker line (`span`) then lies after it: it is still never shown.
    pub answer_start: usize,
    /// Seed 000 "a repeated lead line shows once": when prose before the marker is kept and
    /// its last non-empty line is byte-for-byte the answer's first non-empty line, the source
    /// span of that earlier copy (to be shown once, i.e. hidden here).
    pub duplicate_lead: Option<Span>,
}

/// Verdict of a gate (seed 000).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// OK, PASS, APPROVED.
    Done,
    /// Anything else, with the reason that follows.
    NeedsYou { reason: String },
    /// READY-TO-MERGE.
    Tagged,
    /// NOT-READY, with its reason. Also a diagnostic.
    Blocked { reason: String },
}

impl Verdict {
    /// `done` | `needs-you` | `tagged` | `blocked`, as in `stats --json`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Done => "done",
            Verdict::NeedsYou { .. } => "needs-you",
            Verdict::Tagged => "tagged",
            Verdict::Blocked { .. } => "blocked",
        }
    }
}

/// A gate line `[DEV-PIPELINE | GATE <id> | <MODE>: <VERDICT>]` in agent prose.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    pub entry: usize,
    pub block: usize,
    pub line: usize,
    /// Byte span of the bracketed gate text in the source.
    pub span: Span,
    /// The id as written (`3`, `CUSTOM_STANDARDS_CHECK`).
    pub id: String,
    /// `<MODE>` as written.
    pub mode: String,
    /// The raw verdict word(s) as written (`PASS`, `NOT-READY`).
    pub verdict_text: String,
    pub verdict: Verdict,
    /// Index into the phase table when the gate maps onto a phase; `None` for a badge (a
    /// custom gate that is not a standards check/audit).
    pub phase: Option<usize>,
    /// Phase name or, for a badge, the custom id.
    pub phase_name: String,
    /// Turn number it belongs to.
    pub turn: usize,
}

/// A compaction divider.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// The boundary record.
    pub boundary: usize,
    /// The summary record that follows, if any.
    pub summary: Option<usize>,
    /// Lines of the compaction window: from the boundary to the summary (inclusive).
    pub start_line: usize,
    pub end_line: usize,
    pub trigger: Option<String>,
    pub pre_tokens: Option<u64>,
    /// 1-based ordinal (`Compaction 2`).
    pub n: usize,
}

/// A tool call that spawned a sub-agent (`Task` / `Agent`).
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentCall {
    /// The tool_use record and block.
    pub entry: usize,
    pub block: usize,
    pub tool_use_id: String,
    /// Agent id from the result (`toolUseResult.agentId`) or, for inline sidechains, the
    /// `agentId` of the sidechain records linked to it.
    pub agent_id: Option<String>,
    pub description: Option<String>,
    /// `input.subagent_type` of the call.
    pub agent_type: Option<String>,
    /// The result record, when it arrived.
    pub result_entry: Option<usize>,
    /// Inline sidechain records attributed to this call, by `agentId` (see the fallbacks in
    /// `links::subagent_calls`: order of first appearance only for ids no result names).
    pub sidechain_entries: Vec<usize>,
    /// Lines spanned by the call, its inline records and its result (inclusive).
    pub start_line: usize,
    pub end_line: usize,
    pub duration_ms: Option<u64>,
    pub total_tokens: Option<u64>,
    pub tool_uses: Option<u64>,
    /// Turn number it belongs to.
    pub turn: usize,
}

/// A run of consecutive records on a branch the session left (Pi in-place branching): kept
/// and shown folded as `abandoned branch · N entries`, never counted in a turn's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct AbandonedBranch {
    /// Entry index range `[start, end)`.
    pub entries: std::ops::Range<usize>,
    /// Records those entries stand for (runs of bare records counted whole; issue 25 item 8).
    pub records: usize,
    /// First and last line (0-based, inclusive).
    pub start_line: usize,
    pub end_line: usize,
    /// The first prompt on it (entry index), if any: what was asked there.
    pub prompt: Option<usize>,
    /// Its prompt's first line (at most 80 chars), empty without a prompt.
    pub title: String,
    /// Usage of its model responses, each response once (not part of any turn's or the
    /// session's usage).
    pub usage: Usage,
    /// Number of model responses on it.
    pub responses: usize,
    /// Number of the turn it falls in (0 for the preamble).
    pub turn: usize,
}

/// A tool_use and the tool_result that answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolPair {
    pub use_entry: usize,
    pub use_block: usize,
    pub result_entry: Option<usize>,
    pub result_block: Option<usize>,
}

/// Analyses a transcript. `source` is the text the transcript was read from. Never panics on
/// any model a reader can produce (spans outside `source` read as empty text).
///
/// Rules (DESIGN.md §4; details in the submodules):
/// * Records on an abandoned branch (`Entry::abandoned`) are outside every rule: they open no
///   turn, form no step, count in no figure; each run of them is one [`AbandonedBranch`].
/// * Inherited records (`Entry::inherited`) never open a turn and their steps count in no
///   total: they are summarised as [`Analysis::inherited`].
/// * Turns open at `Prompt` / `Wake` records of the main thread; sidechain records never open
///   turns, except in a sub-agent file (`meta.is_subagent_file`) where every record is
///   sidechain and the sidechain is the main thread (case 20). Records before the first
///   opener form the preamble (turn 0) when there are any.
/// * Steps: [`steps::build`]. Runs: [`body::runs`]. Final answer: [`final_answer::decide`].
///   Gates: [`gates::find`]. Throughput: [`throughput`]. Links: [`links`].
/// * State: a turn with an answer is `Complete` when the answer's step ended with end_turn,
///   a later turn exists, or a turn_duration / task_complete / interruption record follows the
///   answer; a turn without an answer is `Replyless` on the same evidence (or when its last
///   main step ended with end_turn). Without any evidence the turn (necessarily the last) is
///   `InFlight`, unless `options.file_complete`. The preamble is always `Complete`.
pub fn analyze(transcript: &Transcript, source: &str, options: &Options) -> Analysis {
    turns::analyze(transcript, source, options)
}

/// [`analyze`], with the [`Checkpoint`] that lets [`resume`] analyse records appended later
/// from the start of the last turn only.
pub fn analyze_resumable(
    transcript: &Transcript,
    source: &str,
    options: &Options,
) -> (Analysis, Checkpoint) {
    turns::full(transcript, source, options)
}

/// The analysis of `transcript` after records were appended to the one `previous` (with its
/// `checkpoint`) was made of, equal to [`analyze`] of it (issue 12: an append costs what it
/// adds). The turns before the previous last turn are kept and everything from that turn's
/// first record is analysed again, carrying over the state there (unmatched tool calls,
/// request times, running totals, numbering). `revised_from` is the lowest entry the reader
/// changed since `previous` was made ([`crate::model::Transcript::take_revised`]).
///
/// Analyses from the start instead when a kept turn could change: an entry before the last
/// turn was revised, the options or the file's kind (sub-agent file, aside) changed, a result
/// answers a call of a kept turn, a compaction of a kept turn could still take its summary,
/// inline sidechain records (outside a sub-agent file) or inherited records follow the kept
/// turns, or the last turn no longer opens where it did. [`Checkpoint::kept_turns`] tells which
/// way it went.
pub fn resume(
    previous: Analysis,
    checkpoint: Checkpoint,
    revised_from: Option<usize>,
    transcript: &Transcript,
    source: &str,
    options: &Options,
) -> (Analysis, Checkpoint) {
    if revised_from.is_some_and(|r| r < checkpoint.start()) {
        return turns::full(transcript, source, options);
    }
    match turns::analyze_from(transcript, source, options, Some((previous, checkpoint))) {
        Ok(v) => v,
        Err(()) => turns::full(transcript, source, options),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Memory per turn (issue 12): a file of one-line prompts is one turn per line, so a turn's
    /// size is a per-line cost. Its rare parts are boxed or one pointer ([`Indices`]). Before:
    /// 576 bytes (an optional final answer 120). Issue 25 item 8: the final answer boxed (64
    /// bytes inline in every turn, most one-line prompts have none) and the runs and steps
    /// thin vectors (24 → 8 bytes each): 408 → 320 bytes; then 328 with [`Turn::records`] (the
    /// records a turn's runs of bare records hold: those runs took 88 bytes per record).
    #[test]
    fn per_turn_types_stay_compact() {
        assert_eq!(size_of::<Indices>(), 8);
        assert_eq!(size_of::<Option<FinalAnswer>>(), 64);
        assert_eq!(size_of::<Option<Box<FinalAnswer>>>(), 8);
        assert_eq!(size_of::<Throughput>(), 32);
        assert_eq!(size_of::<Turn>(), 328);
    }

    #[test]
    fn indices_read_as_the_vector_they_hold() {
        let mut i = Indices::default();
        assert!(i.is_empty());
        assert_eq!(format!("{i:?}"), "[]");
        i.push(3);
        i.push(1);
        assert_eq!(i, vec![3, 1]);
        assert_eq!(&*i, &[3, 1]);
        assert_eq!(format!("{i:?}"), "[3, 1]");
        assert_eq!((&i).into_iter().copied().collect::<Vec<_>>(), vec![3, 1]);
        assert_eq!(Indices::from(vec![]), Indices::default());
        assert_eq!(Indices::from(vec![3, 1]), i);
    }
}
