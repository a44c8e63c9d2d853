//! `transcript-ls outline|render|stats FILE` for terminals and scripts (DESIGN.md §1).
//!
//! ```text
//! transcript-ls                        language server on stdio (also: --stdio)
//! transcript-ls outline FILE           turns and their parts, with per-turn figures
//! transcript-ls render FILE [--verbose]   the rendered view (quiet by default, seed 004)
//! transcript-ls stats FILE... [--json] counts per file; --json: one JSON object per line
//! ```
//!
//! Exit codes: 0 success, 1 a file could not be read as a transcript (missing, a directory,
//! a FIFO or device, not a transcript; invalid UTF-8 is replaced and warned about per line), 2 a usage error (unknown command or option, missing
//! argument, unknown time zone). Messages go to stderr as `transcript-ls: …`.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::analysis::{self, Analysis, Throughput, TurnKind, TurnState};
use crate::formats;
use crate::ide::symbols::{self, Symbol};
use crate::model::{Role, Transcript};
use crate::view::{self, ViewOptions, text};

/// The usage text printed by `--help`.
pub const USAGE: &str = "\
transcript-ls — read AI coding-agent transcripts (.jsonl from Claude Code, Codex, Pi and
GitHub Copilot CLI)

Usage:
  transcript-ls [--stdio]                   run the language server on stdin/stdout
  transcript-ls outline FILE [OPTIONS]      the turns of a transcript and their parts
  transcript-ls render FILE [OPTIONS]       the readable view of a transcript
  transcript-ls stats FILE... [OPTIONS]     counts per transcript
  transcript-ls --help | --version

Options:
  --verbose            render: show work runs, thinking, tool calls and records too
  --json               stats: one JSON object per file, one per line
  --time-zone ZONE     IANA zone for finish times (default: the system zone; TZ is respected)
  --no-final-marker    ignore [[OMNISCIO_FINAL]] / [[AMC_FINAL]] final-answer markers
  --complete           read the file as finished: a torn last line is invalid, and a last
                       turn without completion evidence is not in flight
  --growing            read the file as still being written (a torn last line is pending,
                       a last turn without completion evidence is in flight)
                       Default: finished when last modified more than 2 minutes ago.

Exit status: 0 ok, 1 a file could not be read as a transcript, 2 usage error.
";

/// A failure with its exit code.
#[derive(Debug)]
struct Failure {
    code: i32,
    message: String,
}

fn usage_error(message: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        message: message.into(),
    }
}

/// True when the arguments ask for the language server: none at all, or only LSP transport
/// flags (`--stdio`, and `--clientProcessId=…` that some clients add).
pub fn wants_lsp(args: &[OsString]) -> bool {
    args.is_empty()
        || (args.iter().any(|a| a == "--stdio")
            && args.iter().all(|a| {
                let a = a.to_string_lossy();
                a == "--stdio" || a.starts_with("--clientProcessId")
            }))
}

/// Runs the command line; returns the process exit code.
pub fn main(args: Vec<OsString>) -> i32 {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    run(args, &mut stdout.lock(), &mut stderr.lock())
}

/// [`main`] with explicit output streams (for tests).
pub fn run(args: Vec<OsString>, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match run_inner(args, out, err) {
        Ok(code) => code,
        Err(f) => {
            let _ = writeln!(err, "transcript-ls: {}", f.message);
            if f.code == 2 {
                let _ = writeln!(err, "Try 'transcript-ls --help'.");
            }
            f.code
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    Outline,
    Render,
    Stats,
}

#[derive(Debug)]
struct Args {
    command: Command,
    files: Vec<PathBuf>,
    verbose: bool,
    json: bool,
    time_zone: Option<String>,
    final_marker: bool,
    /// `Some(true)` `--complete`, `Some(false)` `--growing`, `None`: from the file's age.
    complete: Option<bool>,
}

fn parse(args: Vec<OsString>) -> Result<Option<Args>, Failure> {
    let mut it = args.into_iter();
    let mut command = None;
    let mut files = Vec::new();
    let mut verbose = false;
    let mut json = false;
    let mut time_zone = None;
    let mut final_marker = true;
    let mut complete = None;
    let mut only_files = false;
    while let Some(arg) = it.next() {
        let s = arg.to_string_lossy().into_owned();
        if only_files || !s.starts_with('-') || s == "-" {
            if command.is_none() {
                command = Some(match s.as_str() {
                    "outline" => Command::Outline,
                    "render" => Command::Render,
                    "stats" => Command::Stats,
                    "help" => return Ok(None),
                    _ => return Err(usage_error(format!("unknown command '{s}'"))),
                });
            } else {
                files.push(PathBuf::from(arg));
            }
            continue;
        }
        let (name, inline) = match s.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (s.clone(), None),
        };
        match name.as_str() {
            "--" => only_files = true,
            "-h" | "--help" => return Ok(None),
            "--verbose" | "-v" => verbose = true,
            "--json" => json = true,
            "--no-final-marker" => final_marker = false,
            "--complete" => complete = Some(true),
            "--growing" => complete = Some(false),
            "--time-zone" | "--timezone" | "--tz" => {
                let v = match inline {
                    Some(v) => v,
                    None => it
                        .next()
                        .map(|v| v.to_string_lossy().into_owned())
                        .ok_or_else(|| {
                            usage_error(format!("{name} needs a value (e.g. Europe/Paris)"))
                        })?,
                };
                if jiff::tz::TimeZone::get(&v).is_err() {
                    return Err(usage_error(format!("unknown time zone '{v}'")));
                }
                time_zone = Some(v);
            }
            _ => return Err(usage_error(format!("unknown option '{s}'"))),
        }
    }
    let Some(command) = command else {
        return Err(usage_error("missing command (outline, render or stats)"));
    };
    if files.is_empty() {
        return Err(usage_error(format!(
            "{} needs a FILE",
            command_name(command)
        )));
    }
    if command != Command::Stats && files.len() > 1 {
        return Err(usage_error(format!(
            "{} takes one FILE",
            command_name(command)
        )));
    }
    if json && command != Command::Stats {
        return Err(usage_error("--json is an option of stats"));
    }
    if verbose && command != Command::Render {
        return Err(usage_error("--verbose is an option of render"));
    }
    Ok(Some(Args {
        command,
        files,
        verbose,
        json,
        time_zone,
        final_marker,
        complete,
    }))
}

fn command_name(c: Command) -> &'static str {
    match c {
        Command::Outline => "outline",
        Command::Render => "render",
        Command::Stats => "stats",
    }
}

fn run_inner(
    args: Vec<OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Failure> {
    if args.len() == 1 && (args[0] == "--version" || args[0] == "-V") {
        let _ = writeln!(out, "transcript-ls {}", env!("CARGO_PKG_VERSION"));
        return Ok(0);
    }
    let Some(args) = parse(args)? else {
        let _ = out.write_all(USAGE.as_bytes());
        return Ok(0);
    };
    let options = analysis::Options {
        final_marker: args.final_marker,
        time_zone: args.time_zone.clone(),
        ..Default::default()
    };
    let mut status = 0;
    for path in &args.files {
        let loaded = match load(path, &options, args.complete) {
            Ok(l) => l,
            Err(message) => {
                let _ = writeln!(err, "transcript-ls: {}: {message}", path.display());
                status = 1;
                continue;
            }
        };
        let written = match args.command {
            Command::Outline => write_outline(out, path, &loaded),
            Command::Render => {
                let v = view::render_with_phases(
                    &loaded.transcript,
                    &loaded.analysis,
                    &loaded.source,
                    &ViewOptions {
                        verbose: args.verbose,
                    },
                    &options.gate_phases,
                );
                out.write_all(v.text.as_bytes())
            }
            Command::Stats if args.json => {
                let s = stats(path, &loaded);
                serde_json::to_writer(&mut *out, &s)
                    .map_err(std::io::Error::other)
                    .and_then(|()| out.write_all(b"\n"))
            }
            Command::Stats => write_stats(out, &stats(path, &loaded)),
        };
        if let Err(e) = written.and_then(|()| out.flush()) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(status);
            }
            return Err(Failure {
                code: 1,
                message: format!("cannot write output: {e}"),
            });
        }
    }
    Ok(status)
}

/// A file read and analysed.
pub struct Loaded {
    pub source: String,
    pub transcript: Transcript,
    pub analysis: Analysis,
}

/// How long a file must have been left alone to be read as finished when neither
/// `--complete` nor `--growing` is given.
pub const SETTLED_AFTER: std::time::Duration = std::time::Duration::from_secs(120);

/// Reads a transcript file and analyses it. `complete`: `Some(true)` reads it as finished (a
/// torn last line is an invalid line; a last turn without completion evidence is not in
/// flight), `Some(false)` as still being written (the torn line stays pending, FORMATS.md §4
/// item 2, case 03), `None` decides from the file's age ([`SETTLED_AFTER`]). Errors are
/// one-line reasons: `no such file`, `is a directory, not a transcript file`, `is a FIFO
/// (named pipe), not a regular file: not read`, `not a transcript: 3 lines of JSON with no Claude
/// Code, Codex, Pi or Copilot CLI records`. An empty (or whitespace-only) file is an empty
/// transcript, not an
/// error (case 03).
pub fn load(
    path: &Path,
    options: &analysis::Options,
    complete: Option<bool>,
) -> Result<Loaded, String> {
    // The one loader: regular files only, lossy UTF-8 with a warning per bad line.
    let loaded = crate::source::load::load(path, crate::source::load::MAX_FILE_BYTES)
        .map_err(|e| e.to_string())?;
    let meta = &loaded.metadata;
    let complete = complete.unwrap_or_else(|| {
        meta.modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age >= SETTLED_AFTER)
    });
    // A zstd-compressed rollout (`.jsonl.zst`) is an archive: read as finished.
    let complete = complete || loaded.compressed;
    let source = loaded.text;
    let transcript = if complete {
        let mut reader = formats::Reader::new();
        reader.feed(&source);
        reader.finish(&source);
        reader.into_transcript()
    } else {
        formats::read(&source)
    };
    let mut transcript = transcript;
    transcript
        .problems
        .extend(loaded.invalid.iter().map(|b| b.problem()));
    transcript.problems.sort_by_key(|p| p.line);
    if transcript.format() == crate::model::Format::Unknown && !source.trim().is_empty() {
        return Err(format!("not a transcript: {}", unknown_reason(&transcript)));
    }
    let options = analysis::Options {
        file_complete: complete,
        ..options.clone()
    };
    let analysis = analysis::analyze(&transcript, &source, &options);
    Ok(Loaded {
        source,
        transcript,
        analysis,
    })
}

/// What a file in no known format holds: `3 lines of JSON with no Claude Code, Codex, Pi or
/// Copilot CLI records`, `12 lines, none of them JSON`.
fn unknown_reason(t: &Transcript) -> String {
    let json = t
        .entries
        .iter()
        .filter(|e| e.role != Role::Unparsed)
        .count() as u64;
    let bad = t
        .entries
        .iter()
        .filter(|e| e.role == Role::Unparsed)
        .count() as u64
        + u64::from(t.pending_tail.is_some());
    let lines = |n| text::plural(n, "line", "lines");
    match (json, bad) {
        (0, n) => format!("{}, none of them JSON", lines(n)),
        (j, 0) => format!(
            "{} of JSON with no Claude Code, Codex, Pi or Copilot CLI records",
            lines(j)
        ),
        (j, n) => format!(
            "{} of JSON and {} that {} not JSON, with no Claude Code, Codex, Pi or Copilot CLI records",
            lines(j),
            lines(n),
            if n == 1 { "is" } else { "are" }
        ),
    }
}

// ---- outline ---------------------------------------------------------------------------

fn write_outline(out: &mut dyn Write, path: &Path, l: &Loaded) -> std::io::Result<()> {
    let t = &l.transcript;
    let a = &l.analysis;
    writeln!(
        out,
        "{} — {} · {} · {}",
        path.display(),
        t.format().as_str(),
        text::plural(a.turn_count as u64, "turn", "turns"),
        text::plural(t.line_count as u64, "line", "lines")
    )?;
    let syms = symbols::raw_symbols(t, a, &l.source);
    for (sym, turn) in syms.iter().zip(&a.turns) {
        let mut figures = Vec::new();
        if turn.kind != TurnKind::Preamble {
            figures.push(format!("turn {}/{}", turn.n, a.turn_count));
        }
        if !sym.detail.is_empty() {
            figures.push(sym.detail.clone());
        }
        write_symbol(out, sym, &figures.join(" · "), 0)?;
    }
    if syms.is_empty() {
        writeln!(out, "(no turns)")?;
    }
    for p in &t.problems {
        writeln!(
            out,
            "⚠ line {}: {}",
            p.line + 1,
            text::one_line(&p.message, 300)
        )?;
    }
    if let Some(p) = &t.pending_tail {
        writeln!(
            out,
            "… line {} is still being written (no final newline yet)",
            p.line + 1
        )?;
    }
    Ok(())
}

fn write_symbol(
    out: &mut dyn Write,
    s: &Symbol,
    detail: &str,
    depth: usize,
) -> std::io::Result<()> {
    let lines = if s.start_line == s.end_line {
        format!("line {}", s.start_line + 1)
    } else {
        format!("lines {}–{}", s.start_line + 1, s.end_line + 1)
    };
    let indent = "  ".repeat(depth);
    if detail.is_empty() {
        writeln!(out, "{indent}{} · {lines}", s.name)?;
    } else {
        writeln!(out, "{indent}{} — {detail} · {lines}", s.name)?;
    }
    for c in &s.children {
        write_symbol(out, c, &c.detail, depth + 1)?;
    }
    Ok(())
}

// ---- stats -----------------------------------------------------------------------------

/// `stats --json` for one file. Keys are stable (more may be added). Lines are 1-based.
#[derive(Debug, Serialize)]
pub struct Stats {
    pub file: String,
    /// `claude-code` | `codex` | `pi` | `copilot-cli` | `unknown`.
    pub format: &'static str,
    /// Physical lines of the file.
    pub lines: usize,
    /// Lines holding a valid JSON record.
    pub records: usize,
    /// 1-based lines that are not valid JSON (a pending tail is not one of them).
    pub invalid_lines: Vec<usize>,
    /// True when the last line has no final newline and is not valid JSON yet.
    pub pending_tail: bool,
    /// Turns opened by a prompt or a wake-up (the preamble is not counted).
    pub turns: usize,
    /// Model responses in the file (main thread and sidechains).
    pub steps: usize,
    /// tool_use blocks in the file (main thread and sidechains; not on abandoned branches).
    pub tool_calls: usize,
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
    pub turn_list: Vec<TurnStats>,
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
    pub output: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
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
}

#[derive(Debug, Serialize)]
pub struct GateStats {
    pub phase: String,
    /// `done` | `needs-you` | `tagged` | `blocked`.
    pub verdict: &'static str,
}

/// The figures of one loaded file.
pub fn stats(path: &Path, l: &Loaded) -> Stats {
    let t = &l.transcript;
    let a = &l.analysis;
    let tool_calls = t
        .entries
        .iter()
        .filter(|e| !e.abandoned)
        .flat_map(|e| &e.blocks)
        .filter(|b| matches!(b.kind, crate::model::BlockKind::ToolUse(_)))
        .count();
    let turn_list = a
        .turns
        .iter()
        .map(|turn| TurnStats {
            n: turn.n,
            kind: turn.kind.as_str(),
            prompt: text::one_line(&turn.title, 80),
            start_line: turn.start_line + 1,
            end_line: turn.end_line + 1,
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
            tok_per_s: match &turn.throughput {
                Throughput::Measured { tok_per_s, .. } => Some(TokPerS {
                    value: round1(*tok_per_s),
                    kind: "measured",
                }),
                Throughput::Estimate { tok_per_s, .. } => Some(TokPerS {
                    value: round1(*tok_per_s),
                    kind: "estimate",
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
                })
                .collect(),
        })
        .collect();
    Stats {
        file: path.display().to_string(),
        format: t.format().as_str(),
        lines: t.line_count,
        records: t
            .entries
            .iter()
            .filter(|e| e.role != Role::Unparsed)
            .count(),
        invalid_lines: t
            .entries
            .iter()
            .filter(|e| e.role == Role::Unparsed)
            .map(|e| e.line + 1)
            .collect(),
        pending_tail: t.pending_tail.is_some(),
        turns: a.turn_count,
        steps: a.steps.len(),
        tool_calls,
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
        },
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
                },
            })
            .collect(),
        abandoned_branches: a
            .branches
            .iter()
            .map(|b| BranchStats {
                start_line: b.start_line + 1,
                end_line: b.end_line + 1,
                entries: b.entries.len(),
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
        },
        cost_usd: t
            .meta
            .cost_usd
            .or(a.cost_usd.map(|c| (c * 1e6).round() / 1e6)),
        api_duration_ms: t.meta.api_duration_ms,
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

fn write_stats(out: &mut dyn Write, s: &Stats) -> std::io::Result<()> {
    writeln!(out, "{}", s.file)?;
    let mut head = vec![
        s.format.to_string(),
        text::plural(s.lines as u64, "line", "lines"),
        text::plural(s.records as u64, "record", "records"),
    ];
    if !s.invalid_lines.is_empty() {
        let list: Vec<String> = s
            .invalid_lines
            .iter()
            .take(10)
            .map(|l| l.to_string())
            .collect();
        head.push(format!(
            "{} ({})",
            text::plural(
                s.invalid_lines.len() as u64,
                "invalid line",
                "invalid lines"
            ),
            list.join(", ")
        ));
    }
    if s.pending_tail {
        head.push("last line still being written".to_string());
    }
    writeln!(out, "  {}", head.join(" · "))?;
    writeln!(
        out,
        "  {} · {} · {} · {} · {} · {} · {} · {}",
        text::plural(s.turns as u64, "turn", "turns"),
        text::plural(s.steps as u64, "step", "steps"),
        text::plural(s.tool_calls as u64, "tool call", "tool calls"),
        text::plural(s.final_answers as u64, "final answer", "final answers"),
        text::plural(
            s.replyless_turns as u64,
            "replyless turn",
            "replyless turns"
        ),
        text::plural(s.gates as u64, "gate", "gates"),
        text::plural(s.compactions as u64, "compaction", "compactions"),
        text::plural(s.subagent_calls as u64, "sub-agent call", "sub-agent calls"),
    )?;
    let u = &s.usage;
    writeln!(
        out,
        "  tokens {} in / {} out / {} cache read / {} cache write",
        text::fmt_tokens(u.input),
        text::fmt_tokens(u.output),
        text::fmt_tokens(u.cache_read),
        text::fmt_tokens(u.cache_creation)
    )?;
    for m in &s.usage_by_model {
        let u = &m.usage;
        let requests = m
            .requests
            .map(|r| format!(" · {}", text::plural(r, "request", "requests")))
            .unwrap_or_default();
        writeln!(
            out,
            "    {}: {} in / {} out / {} cache read / {} cache write{requests}",
            m.model,
            text::fmt_tokens(u.input),
            text::fmt_tokens(u.output),
            text::fmt_tokens(u.cache_read),
            text::fmt_tokens(u.cache_creation)
        )?;
    }
    if let Some(c) = s.cost_usd {
        writeln!(out, "  cost ${c:.4}")?;
    }
    for b in &s.abandoned_branches {
        let prompt = if b.prompt.is_empty() {
            String::new()
        } else {
            format!(": {}", b.prompt)
        };
        writeln!(
            out,
            "  abandoned branch · {} · lines {}–{}{prompt}",
            text::plural(b.entries as u64, "entry", "entries"),
            b.start_line,
            b.end_line
        )?;
    }
    for t in &s.turn_list {
        let mut parts = vec![text::activity_label(t.comments, t.tool_calls)];
        if let Some(ms) = t.duration_ms {
            parts.push(text::fmt_duration(ms));
        }
        if let Some(tps) = &t.tok_per_s {
            let approx = if tps.kind == "estimate" { "≈" } else { "" };
            parts.push(format!("{approx}{} tok/s", text::fmt_tok_per_s(tps.value)));
        }
        if let Some(at) = &t.finished_at {
            parts.push(at.clone());
        }
        if t.state != "complete" {
            parts.push(t.state.to_string());
        }
        for g in &t.gates {
            parts.push(format!("{}: {}", g.phase, g.verdict));
        }
        let label = match t.kind {
            "preamble" => "before the first prompt".to_string(),
            "wake" => format!("turn {}/{}  ⏰ {}", t.n, s.turns, t.prompt),
            _ => format!("turn {}/{}  {}", t.n, s.turns, t.prompt),
        };
        writeln!(
            out,
            "  {label} — lines {}–{} · {}",
            t.start_line,
            t.end_line,
            parts.join(" · ")
        )?;
    }
    Ok(())
}
