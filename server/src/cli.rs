//! `transcript-ls outline|render|stats FILE` for terminals and scripts (DESIGN.md §1).
//!
//! ```text
//! transcript-ls                        language server on stdio (also: --stdio)
//! transcript-ls outline FILE           turns and their parts, with per-turn figures
//! transcript-ls render FILE [--verbose]   the rendered view (quiet by default, seed 004)
//! transcript-ls stats FILE... [--json] counts per file; --json: one JSON object per line
//! transcript-ls changes FILE [--turn N] [--json] [--patch]   what the agent changed (issue 22)
//! transcript-ls history PATH [--json] [--root DIR]...   the sessions and turns that changed PATH
//! transcript-ls blame PATH [--json] [--root DIR]...     the lines of PATH an agent wrote
//! transcript-ls search QUERY [--json] [--limit N] [--root DIR]...   full-text search (issue 26)
//! ```
//!
//! Exit codes: 0 success, 1 a file could not be read as a transcript (missing, a directory,
//! a FIFO or device, not a transcript; invalid UTF-8 is replaced and warned about per line), 2 a usage error (unknown command or option, missing
//! argument, unknown time zone). Messages go to stderr as `transcript-ls: …`.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::analysis::{self, Analysis, TurnKind};
use crate::ide::symbols::{self, Symbol};
use crate::model::{Role, Transcript};
use crate::view::{self, ViewOptions, text, words};

/// The usage text printed by `--help`.
pub const USAGE: &str = "\
transcript-ls — read AI coding-agent transcripts (.jsonl from Claude Code, Codex, Pi,
GitHub Copilot CLI, Kiro CLI, Mistral Vibe, Gemini CLI and Antigravity CLI)

Usage:
  transcript-ls [--stdio]                   run the language server on stdin/stdout
  transcript-ls outline FILE [OPTIONS]      the turns of a transcript and their parts
  transcript-ls render FILE [OPTIONS]       the readable view of a transcript
  transcript-ls stats FILE... [OPTIONS]     counts per transcript
  transcript-ls changes FILE [OPTIONS]      the files each turn changed, with +/− counts
  transcript-ls history PATH [OPTIONS]      the sessions and turns that changed a source file,
                                            newest first (from the session index)
  transcript-ls blame PATH [OPTIONS]        the lines of a source file an agent wrote that are
                                            still there, with the session and turn
  transcript-ls search QUERY [OPTIONS]      every prompt, answer, comment, tool input and tool
                                            result of every session that matches, best first
  transcript-ls --help | --version

Options:
  --verbose            render: show work runs, thinking, tool calls and records too
  --color[=WHEN]       render: colour the output: auto (default: on a terminal, unless
                       NO_COLOR is set), always, never
  --width N            render: wrap prose to N columns (default: the terminal's width on a
                       terminal, no wrapping when piped; 0: never wrap)
  --no-pager           render: write to the terminal directly instead of through $PAGER
                       (default on a terminal: $PAGER, else `less -R`; LESS defaults to FRX)
  --json               stats: one JSON object per file, one per line; changes: one JSON
                       object with every turn's change set and the session's; history,
                       blame, search: one JSON object with the entries / ranges / hits
  --turn N             changes: only turn N
  --limit N            search: at most N hits (default 50)
  --root DIR           history, blame, search: index the sessions under DIR (repeatable) instead of
                       the default roots ~/.claude/projects, ~/.codex/sessions,
                       ~/.pi/agent/sessions, ~/.copilot/session-state, ~/.kiro/sessions/cli,
                       ~/.vibe/logs/session, ~/.gemini/tmp, ~/.gemini/antigravity-cli/brain,
                       ~/.gemini/antigravity/brain (each moved by its agent's variable:
                       $CODEX_HOME, …; the index is cached as the language server caches it)
  --patch              changes: a unified diff of the net change (`git apply` takes the
                       files whose whole text the transcript gives; paths relative to the
                       session's directory)
  --time-zone ZONE     IANA zone for finish times (default: the system zone; TZ is respected)
  --no-final-marker    ignore [[OMNISCIO_FINAL]] / [[AMC_FINAL]] final-answer markers
  --complete           read the file as finished: a torn last line is invalid, and a last
                       turn without completion evidence is not in flight
  --growing            read the file as still being written (a torn last line is pending,
                       a last turn without completion evidence is in flight)
                       Default: finished when last modified more than 2 minutes ago.

PATH is a source file (relative to the current directory or absolute).
QUERY is words (all must match; several arguments are one query), \"quoted phrases\" (quote
them for the shell too), the last word a prefix (end the query with a space for a whole
word); case and accents do not matter. The search index is kept beside the session index
cache and updated with it (a first run reads every session).
FILE may be - for standard input (read to its end; finished unless --growing).

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
    let mut err = stderr.lock();
    let result = run_inner(args, &mut stdout.lock(), &mut err, true);
    exit_code(result, &mut err)
}

/// [`main`] with explicit output streams (for tests).
pub fn run(args: Vec<OsString>, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let result = run_inner(args, out, err, false);
    exit_code(result, err)
}

/// The exit code of a run; a failure's message is written to `err`.
fn exit_code(result: Result<i32, Failure>, err: &mut dyn Write) -> i32 {
    match result {
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
    Changes,
    History,
    Blame,
    Search,
}

#[derive(Debug)]
struct Args {
    command: Command,
    files: Vec<PathBuf>,
    verbose: bool,
    json: bool,
    /// `changes --turn N`.
    turn: Option<usize>,
    /// `changes --patch`.
    patch: bool,
    /// `history` / `blame` / `search --root DIR` (repeatable).
    roots: Vec<PathBuf>,
    /// `search --limit N`.
    limit: Option<usize>,
    time_zone: Option<String>,
    /// `--color`: `auto` (default), `always`, `never`.
    color: String,
    /// `--width N`: wrap `render` to N columns (`Some(0)`: never); `None`: the terminal's
    /// width when standard output is one.
    width: Option<usize>,
    /// `--no-pager`.
    no_pager: bool,
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
    let mut turn = None;
    let mut patch = false;
    let mut roots = Vec::new();
    let mut limit = None;
    let mut time_zone = None;
    let mut final_marker = true;
    let mut complete = None;
    let mut color = "auto".to_string();
    let mut width = None;
    let mut no_pager = false;
    let mut only_files = false;
    while let Some(arg) = it.next() {
        let s = arg.to_string_lossy().into_owned();
        if only_files || !s.starts_with('-') || s == "-" {
            if command.is_none() {
                command = Some(match s.as_str() {
                    "outline" => Command::Outline,
                    "render" => Command::Render,
                    "stats" => Command::Stats,
                    "changes" => Command::Changes,
                    "history" => Command::History,
                    "blame" => Command::Blame,
                    "search" => Command::Search,
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
            "--patch" => patch = true,
            "--turn" => {
                let v = match inline {
                    Some(v) => v,
                    None => it
                        .next()
                        .map(|v| v.to_string_lossy().into_owned())
                        .ok_or_else(|| usage_error("--turn needs a turn number"))?,
                };
                turn =
                    Some(v.parse::<usize>().map_err(|_| {
                        usage_error(format!("--turn takes a turn number, not '{v}'"))
                    })?);
            }
            "--limit" => {
                let v = match inline {
                    Some(v) => v,
                    None => it
                        .next()
                        .map(|v| v.to_string_lossy().into_owned())
                        .ok_or_else(|| usage_error("--limit needs a number of hits"))?,
                };
                limit = Some(v.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(|| {
                    usage_error(format!("--limit takes a number of hits, not '{v}'"))
                })?);
            }
            "--root" => {
                let v = match inline {
                    Some(v) => OsString::from(v),
                    None => it
                        .next()
                        .ok_or_else(|| usage_error("--root needs a directory"))?,
                };
                roots.push(PathBuf::from(v));
            }
            "--no-final-marker" => final_marker = false,
            "--complete" => complete = Some(true),
            "--growing" => complete = Some(false),
            "--color" | "--colour" => {
                let v = inline.unwrap_or_else(|| "always".to_string());
                if !matches!(v.as_str(), "auto" | "always" | "never") {
                    return Err(usage_error(format!(
                        "--color takes auto, always or never, not '{v}'"
                    )));
                }
                color = v;
            }
            "--no-pager" => no_pager = true,
            "--width" => {
                let v = match inline {
                    Some(v) => v,
                    None => it
                        .next()
                        .map(|v| v.to_string_lossy().into_owned())
                        .ok_or_else(|| usage_error("--width needs a number of columns"))?,
                };
                width = Some(v.parse::<usize>().map_err(|_| {
                    usage_error(format!("--width takes a number of columns, not '{v}'"))
                })?);
            }
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
        return Err(usage_error(
            "missing command (outline, render, stats, changes, history, blame or search)",
        ));
    };
    let by_path = matches!(command, Command::History | Command::Blame);
    let what = match command {
        Command::Search => "QUERY",
        _ if by_path => "PATH",
        _ => "FILE",
    };
    if files.is_empty() {
        return Err(usage_error(format!(
            "{} needs a {what}",
            command_name(command)
        )));
    }
    if command != Command::Stats && command != Command::Search && files.len() > 1 {
        return Err(usage_error(format!(
            "{} takes one {what}",
            command_name(command)
        )));
    }
    if json && matches!(command, Command::Outline | Command::Render) {
        return Err(usage_error(
            "--json is an option of stats, changes, history, blame and search",
        ));
    }
    if !roots.is_empty() && !by_path && command != Command::Search {
        return Err(usage_error(
            "--root is an option of history, blame and search",
        ));
    }
    if limit.is_some() && command != Command::Search {
        return Err(usage_error("--limit is an option of search"));
    }
    if (turn.is_some() || patch) && command != Command::Changes {
        return Err(usage_error(format!(
            "{} is an option of changes",
            if patch { "--patch" } else { "--turn" }
        )));
    }
    if json && patch {
        return Err(usage_error("--json and --patch cannot be used together"));
    }
    if verbose && command != Command::Render {
        return Err(usage_error("--verbose is an option of render"));
    }
    if width.is_some() && command != Command::Render {
        return Err(usage_error("--width is an option of render"));
    }
    Ok(Some(Args {
        command,
        files,
        verbose,
        json,
        turn,
        patch,
        roots,
        limit,
        time_zone,
        color,
        width,
        no_pager,
        final_marker,
        complete,
    }))
}

fn command_name(c: Command) -> &'static str {
    match c {
        Command::Outline => "outline",
        Command::Render => "render",
        Command::Stats => "stats",
        Command::Changes => "changes",
        Command::History => "history",
        Command::Blame => "blame",
        Command::Search => "search",
    }
}

/// `exiting`: the process exits right after (the binary): the last file's transcript is not
/// freed, which would only cost time (issue 12: dropping a 100 MB file's model and analysis
/// was 8% of `stats`).
fn run_inner(
    args: Vec<OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    exiting: bool,
) -> Result<i32, Failure> {
    if args.len() == 1 && (args[0] == "--version" || args[0] == "-V") {
        let _ = writeln!(out, "transcript-ls {}", env!("CARGO_PKG_VERSION"));
        return Ok(0);
    }
    let Some(args) = parse(args)? else {
        let _ = out.write_all(USAGE.as_bytes());
        return Ok(0);
    };
    if matches!(args.command, Command::History | Command::Blame) {
        return run_history(&args, out, err);
    }
    if args.command == Command::Search {
        return run_search(&args, out, err);
    }
    let options = analysis::Options {
        final_marker: args.final_marker,
        time_zone: args.time_zone.clone(),
        ..Default::default()
    };
    let mut status = 0;
    for (i, path) in args.files.iter().enumerate() {
        let mut loaded = match load(path, &options, args.complete) {
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
                let tty = std::io::IsTerminal::is_terminal(&std::io::stdout());
                let color = view::ansi::wants_color(
                    &args.color,
                    tty,
                    std::env::var("NO_COLOR").ok().as_deref(),
                );
                let width = match args.width {
                    Some(0) => None,
                    Some(n) => Some(n),
                    None if tty => terminal_width(),
                    None => None,
                };
                let v = match width {
                    Some(w) => view::wrap::wrap(&v, w),
                    None => v,
                };
                let text = if color {
                    view::ansi::colored(&v)
                } else {
                    v.text
                };
                let pager = if tty && !args.no_pager && args.files.len() == 1 {
                    pager_command()
                } else {
                    None
                };
                match pager {
                    Some(cmd) => write_paged(&cmd, text.as_bytes(), out, err),
                    None => out.write_all(text.as_bytes()),
                }
            }
            Command::Stats if args.json => {
                // Counts need the model only: the text goes before the counts are made
                // (issue 12: the peak of `stats` on many tiny records).
                drop(std::mem::take(&mut loaded.source));
                let s = stats(path, &loaded);
                serde_json::to_writer(&mut *out, &s)
                    .map_err(json_io_error)
                    .and_then(|()| out.write_all(b"\n"))
            }
            Command::Stats => {
                drop(std::mem::take(&mut loaded.source));
                write_stats(out, &stats(path, &loaded))
            }
            Command::History | Command::Blame | Command::Search => {
                unreachable!("run_history, run_search")
            }
            Command::Changes => {
                let c = crate::view::changes::changes(
                    &loaded.transcript,
                    &loaded.analysis,
                    &loaded.source,
                );
                if let Some(n) = args.turn
                    && loaded.analysis.turns.iter().all(|t| t.n != n)
                {
                    let _ = writeln!(
                        err,
                        "transcript-ls: {}: no turn {n} (the turns are 1 to {})",
                        path.display(),
                        loaded.analysis.turn_count
                    );
                    status = 1;
                    continue;
                }
                if args.json {
                    write_changes_json(out, path, &loaded, &c, args.turn)
                } else if args.patch {
                    write_changes_patch(out, &loaded, &c, args.turn)
                } else {
                    write_changes(out, path, &loaded, &c, args.turn)
                }
            }
        };
        if exiting && i + 1 == args.files.len() {
            std::mem::forget(loaded);
        }
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

/// `history PATH` / `blame PATH` (issue 22 item 5): the answers of `transcript/fileHistory`
/// and `transcript/blame` over the default roots (or `--root`), one line per entry / range,
/// or one JSON object (`--json`). Exit 0 also when no session changed the file (nothing is
/// printed but a note on stderr; `--json`: empty lists); 1 when blame cannot read the file.
fn run_history(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32, Failure> {
    use crate::index::{disk, history};
    let given = &args.files[0];
    let path = std::path::absolute(given).map_err(|e| Failure {
        code: 1,
        message: format!("{}: {e}", given.display()),
    })?;
    let roots = if args.roots.is_empty() {
        disk::default_roots()
    } else {
        args.roots
            .iter()
            .map(|r| std::path::absolute(r).unwrap_or_else(|_| r.clone()))
            .collect()
    };
    let index = disk::build(&roots, true);
    let mut none = || {
        let _ = writeln!(
            err,
            "transcript-ls: no indexed session changed {} ({} sessions under {})",
            path.display(),
            index.session_count(),
            roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    let written = if args.command == Command::History {
        let list = history::file_history(&index, &path);
        if list.is_empty() && !args.json {
            none();
        }
        if args.json {
            let entries: Vec<serde_json::Value> = list
                .iter()
                .map(|e| {
                    let mut v = serde_json::to_value(e).unwrap_or_default();
                    v["label"] = e.label().into();
                    v
                })
                .collect();
            serde_json::to_writer(
                &mut *out,
                &serde_json::json!({ "path": path, "entries": entries }),
            )
            .map_err(json_io_error)
            .and_then(|()| out.write_all(b"\n"))
        } else {
            list.iter().try_for_each(|e| {
                writeln!(out, "{}  {}:{}", e.label(), e.session.display(), e.line + 1)
            })
        }
    } else {
        let touching = history::touching(&index, &path);
        let ranges = if touching.file_count() == 0 {
            if !args.json {
                none();
            }
            Vec::new()
        } else {
            history::blame(&touching, &path, None).map_err(|e| Failure {
                code: 1,
                message: e.to_string(),
            })?
        };
        if args.json {
            let ranges: Vec<serde_json::Value> = ranges
                .iter()
                .map(|r| {
                    let mut v = serde_json::to_value(r).unwrap_or_default();
                    v["label"] = r.label().into();
                    v
                })
                .collect();
            serde_json::to_writer(
                &mut *out,
                &serde_json::json!({ "path": path, "ranges": ranges }),
            )
            .map_err(json_io_error)
            .and_then(|()| out.write_all(b"\n"))
        } else {
            ranges.iter().try_for_each(|r| {
                let lines = if r.start == r.end {
                    format!("{}", r.start + 1)
                } else {
                    format!("{}-{}", r.start + 1, r.end + 1)
                };
                writeln!(out, "{}:{lines}  {}", given.display(), r.label())
            })
        }
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => Ok(0),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(Failure {
            code: 1,
            message: format!("cannot write output: {e}"),
        }),
    }
}

/// The roots of `history`, `blame` and `search`: `--root DIR`s made absolute, else the
/// default roots.
fn index_roots(args: &Args) -> Vec<PathBuf> {
    if args.roots.is_empty() {
        crate::index::disk::default_roots()
    } else {
        args.roots
            .iter()
            .map(|r| std::path::absolute(r).unwrap_or_else(|_| r.clone()))
            .collect()
    }
}

/// `search QUERY` (issue 26): the hits of `transcript/search` over the default roots (or
/// `--root`), two lines each (where, then the snippet with its matches in brackets, bold on a
/// terminal), or one JSON object (`--json`; snippet match ranges in UTF-8 bytes). The session
/// index and the search index are brought up to date first, from their caches. Exit 0 also
/// with no hit (a note on stderr); 1 when the search index cannot be opened.
fn run_search(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32, Failure> {
    use crate::index::{disk, search};
    let query = args
        .files
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let roots = index_roots(args);
    let cache = disk::cache_path(&roots);
    let mut index = cache
        .as_deref()
        .map(|c| disk::load_cache(c, &roots))
        .unwrap_or_default();
    let fail = |e: search::SearchError| Failure {
        code: 1,
        message: e.to_string(),
    };
    let s = match disk::search_dir(&roots) {
        Some(d) => search::SearchIndex::open(&d),
        None => search::SearchIndex::open_temporary(),
    }
    .map_err(fail)?;
    let changed = search::sync(&roots, &mut index, &s).map_err(fail)?;
    if changed && let Some(c) = &cache {
        let _ = disk::save_cache(c, &roots, &index);
    }
    if !s.writable() {
        s.set_complete(false);
        let _ = writeln!(
            err,
            "transcript-ls: the search index is being written by a running transcript-ls; \
             these hits are what it has indexed"
        );
    }
    let res = s
        .search(
            &search::SearchQuery {
                text: query.clone(),
                limit: args.limit,
                roots: Vec::new(),
            },
            &index,
        )
        .map_err(fail)?;
    if res.hits.is_empty() && !args.json {
        let _ = writeln!(
            err,
            "transcript-ls: nothing matches '{query}' ({} sessions under {})",
            index.session_count(),
            roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let written = if args.json {
        let hits: Vec<serde_json::Value> = res
            .hits
            .iter()
            .map(|h| {
                // Snippet match ranges in UTF-8 bytes.
                let mut o = h.json_fields(|b| b);
                o.insert("path".into(), serde_json::json!(h.path.to_string_lossy()));
                serde_json::Value::Object(o)
            })
            .collect();
        serde_json::to_writer(
            &mut *out,
            &serde_json::json!({ "query": query, "complete": res.complete, "hits": hits }),
        )
        .map_err(json_io_error)
        .and_then(|()| out.write_all(b"\n"))
    } else {
        let tty = std::io::IsTerminal::is_terminal(&std::io::stdout());
        let color = view::ansi::wants_color("auto", tty, std::env::var("NO_COLOR").ok().as_deref());
        let (on, off) = if color {
            ("\x1b[1;33m", "\x1b[0m")
        } else {
            ("[", "]")
        };
        res.hits.iter().try_for_each(|h| {
            let mut marked = String::new();
            let mut at = 0;
            for r in &h.snippet.matches {
                marked.push_str(&h.snippet.text[at..r.start]);
                marked.push_str(on);
                marked.push_str(&h.snippet.text[r.clone()]);
                marked.push_str(off);
                at = r.end;
            }
            marked.push_str(&h.snippet.text[at..]);
            writeln!(
                out,
                "{}  {}  \"{}\"  turn {}  {}  {}:{}\n    {marked}",
                crate::index::history::short_time(Some(h.session_ms)),
                h.agent,
                h.title,
                h.turn,
                h.kind.as_str(),
                h.path.display(),
                h.line + 1
            )
        })
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => Ok(0),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(Failure {
            code: 1,
            message: format!("cannot write output: {e}"),
        }),
    }
}

/// A `serde_json` error writing JSON out as an I/O error of the same kind: a reader that went
/// away stays `BrokenPipe` (quiet, exit 0; issue 25 Low list: `stats --json | head -c 10`
/// printed `Broken pipe` and exited 1).
fn json_io_error(e: serde_json::Error) -> std::io::Error {
    match e.io_error_kind() {
        Some(kind) => std::io::Error::new(kind, e),
        None => std::io::Error::other(e),
    }
}

/// The width of the terminal on standard output, in columns (`COLUMNS` when the terminal
/// does not say).
fn terminal_width() -> Option<usize> {
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(w, _)| w.0 as usize)
        .filter(|&w| w > 0)
        .or_else(|| std::env::var("COLUMNS").ok()?.trim().parse().ok())
}

/// The pager `render` writes through on a terminal: `$PAGER` (run by `sh -c`, so it may carry
/// arguments; empty or `cat` means none), else `less -R`.
fn pager_command() -> Option<String> {
    let p = match std::env::var("PAGER") {
        Ok(p) => p.trim().to_string(),
        Err(_) => "less -R".to_string(),
    };
    (!p.is_empty() && p != "cat").then_some(p)
}

/// Writes `text` through the pager `cmd` (`sh -c cmd`, its standard input a pipe, `LESS=FRX`
/// unless `LESS` is set: short output is printed without paging, colours pass through) and
/// waits for it. When the pager cannot be started, the text goes to `out` with a warning; a
/// pager that quits early (the reader pressed `q`) is not an error; one that is not found
/// (`sh` exits 127) leaves the text to `out`; one that exits non-zero otherwise leaves the
/// text to `out` too and is an error (`render` exits 1).
fn write_paged(
    cmd: &str,
    text: &[u8],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<()> {
    let mut c = std::process::Command::new("sh");
    c.arg("-c").arg(cmd).stdin(std::process::Stdio::piped());
    if std::env::var_os("LESS").is_none() {
        c.env("LESS", "FRX");
    }
    let mut child = match c.spawn() {
        Ok(child) => child,
        Err(e) => {
            let _ = writeln!(err, "transcript-ls: cannot start the pager '{cmd}': {e}");
            return out.write_all(text);
        }
    };
    if let Some(mut stdin) = child.stdin.take() {
        match stdin.write_all(text) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            r => r?,
        }
    }
    let status = child.wait()?;
    if status.code() == Some(127) {
        // `sh` could not find the pager: the text has not been shown.
        let _ = writeln!(err, "transcript-ls: the pager '{cmd}' was not found");
        return out.write_all(text);
    }
    if !status.success() {
        // A pager that failed (`PAGER=false`, a broken script) may have shown nothing: the
        // text goes to the terminal as well, and `render` exits 1 (issue 25, Low: it exited 0
        // with the transcript hidden).
        let _ = writeln!(
            err,
            "transcript-ls: the pager '{cmd}' failed ({status}); the text follows without it"
        );
        out.write_all(text)?;
        return Err(std::io::Error::other(format!(
            "the pager '{cmd}' failed ({status})"
        )));
    }
    Ok(())
}

/// A file read and analysed.
pub struct Loaded {
    /// The file's text: mapped when it is big and valid UTF-8 (`source::load::map_file`).
    pub source: crate::source::Text,
    pub transcript: Transcript,
    pub analysis: Analysis,
}

/// How long a file must have been left alone to be read as finished when neither
/// `--complete` nor `--growing` is given (the rule shared with the server).
pub use crate::source::age::SETTLED_AFTER;

/// Reads a transcript file and analyses it. `complete`: `Some(true)` reads it as finished (a
/// torn last line is an invalid line; a last turn without completion evidence is not in
/// flight), `Some(false)` as still being written (the torn line stays pending, FORMATS.md §4
/// item 2, case 03), `None` decides from the file's age ([`SETTLED_AFTER`]). The path `-`
/// reads standard input to its end (finished unless `Some(false)`). Errors are one-line
/// reasons: `no such file`, `is a directory, not a transcript file`, `is a FIFO (named pipe),
/// not a regular file: not read`, `not a transcript: 3 lines of JSON with no Claude Code,
/// Codex, Pi or Copilot CLI records`. Invalid UTF-8 is replaced, with one warning per line
/// (the one policy of `source::load`). An empty (or whitespace-only) file is an empty
/// transcript, not an error (case 03). A big file is mapped (issue 12); one truncated while it
/// was read is read again, and after 3 tries refused (`was truncated while being read (3
/// times): not read`).
pub fn load(
    path: &Path,
    options: &analysis::Options,
    complete: Option<bool>,
) -> Result<Loaded, String> {
    for _ in 0..crate::source::load::READ_ATTEMPTS {
        let loaded = load_once(path, options, complete)?;
        if !loaded.source.torn() {
            return Ok(loaded);
        }
    }
    Err(crate::source::load::LoadError::Changed.to_string())
}

fn load_once(
    path: &Path,
    options: &analysis::Options,
    complete: Option<bool>,
) -> Result<Loaded, String> {
    let (complete, source, invalid) = if path == Path::new("-") {
        // Standard input (`render -`, issue 11): read to its end, so finished by default;
        // decoded with the same lossy policy as files.
        // Bounded like a file (issue 8: no unbounded read, even of `cat /dev/zero`).
        let max = crate::source::load::MAX_FILE_BYTES;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(std::io::stdin().lock(), max + 1),
            &mut bytes,
        )
        .map_err(|e| format!("reading standard input: {e}"))?;
        if bytes.len() as u64 > max {
            return Err(format!(
                "standard input is more than the {} MiB read",
                max >> 20
            ));
        }
        let compressed = crate::source::zstd::is_zstd(&bytes);
        if compressed {
            bytes = crate::source::zstd::decompress(&bytes)?;
        }
        let (text, invalid) = crate::source::load::decode(&bytes);
        (complete.unwrap_or(true) || compressed, text.into(), invalid)
    } else {
        // The one loader: regular files only, lossy UTF-8 with a warning per bad line.
        let loaded = crate::source::load::load(path, crate::source::load::MAX_FILE_BYTES)
            .map_err(|e| e.to_string())?;
        let complete = complete.unwrap_or_else(|| {
            loaded
                .metadata
                .modified()
                .is_ok_and(|m| crate::source::age::settled_at(m, std::time::SystemTime::now()))
        });
        // A zstd-compressed rollout (`.jsonl.zst`) is an archive: read as finished.
        (complete || loaded.compressed, loaded.text, loaded.invalid)
    };
    // The same reading as the server's documents and the workspace index.
    let mut transcript = crate::formats::read_text(&source, &invalid, complete);
    // Files beside it (a `/btw` aside's parent, a sidecar): the agent registry's `beside`.
    crate::formats::agents::apply_beside(&mut transcript, path);
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
    let bad = t
        .entries
        .iter()
        .filter(|e| e.role == Role::Unparsed)
        .count() as u64;
    // Runs of bare records count whole (issue 25 item 8).
    let json = t.records_in(0..t.entries.len()) as u64 - bad;
    let bad = bad + u64::from(t.pending_tail.is_some());
    let lines = |n| text::plural(n, "line", "lines");
    let agents = crate::formats::agents::names("or");
    match (json, bad) {
        (0, n) => format!("{}, none of them JSON", lines(n)),
        (j, 0) => format!("{} of JSON with no {agents} records", lines(j)),
        (j, n) => format!(
            "{} of JSON and {} that {} not JSON, with no {agents} records",
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
    if t.problems_left_out > 0 {
        // Past `model::MAX_PROBLEMS` (issue 25 item 8: bounded memory on any input).
        writeln!(
            out,
            "⚠ {} more {} not listed (at most {} are kept per file)",
            t.problems_left_out,
            if t.problems_left_out == 1 {
                "problem is"
            } else {
                "problems are"
            },
            crate::model::MAX_PROBLEMS
        )?;
    }
    // Drift stays visible (issue 20 item 11): the kinds no reader knows, as in diagnostics.
    for u in &t.unknown {
        writeln!(
            out,
            "ℹ line {}: {}",
            u.line + 1,
            text::one_line(
                &crate::ide::diagnostics::unknown_message(u, t.format()),
                300
            )
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

pub use crate::ide::stats::{GateStats, Stats, TokPerS, TurnStats, UsageStats};

/// The figures of one loaded file (`stats --json`; the server's `transcript/stats` answers
/// the same, `crate::ide::stats`).
pub fn stats(path: &Path, l: &Loaded) -> Stats {
    crate::ide::stats::stats(path.display().to_string(), &l.transcript, &l.analysis)
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
    // The file's figures in the vocabulary's words (`crate::view::words`): a model response
    // is a response (the JSON's `steps`), a zero count is left out.
    let mut figures = vec![words::count(s.turns as u64, words::TURN)];
    figures.extend(words::counts(&[
        (s.steps as u64, words::RESPONSE),
        (s.tool_calls as u64, words::TOOL_CALL),
        (s.final_answers as u64, words::FINAL_ANSWER),
        (s.replyless_turns as u64, words::REPLYLESS_TURN),
        (s.gates as u64, words::GATE),
        (s.compactions as u64, words::COMPACTION),
        (s.subagent_calls as u64, words::SUBAGENT_CALL),
        (s.subagent_tool_calls as u64, words::SUBAGENT_TOOL_CALL),
    ]));
    writeln!(out, "  {}", figures.join(" · "))?;
    let u = &s.usage;
    if s.usage_recorded {
        writeln!(
            out,
            "  tokens {} in / {} out / {} cache read / {} cache write",
            text::fmt_tokens(u.input),
            text::fmt_tokens(u.output),
            text::fmt_tokens(u.cache_read),
            text::fmt_tokens(u.cache_creation)
        )?;
    } else {
        // Only figures the file records (issue 21 item 6): never "0 in / 0 out".
        writeln!(out, "  tokens not recorded")?;
    }
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
        // The preamble has no activity: its record count only, as the outline and fold say.
        let parts = if t.kind == "preamble" {
            vec![words::count(t.records as u64, words::RECORD)]
        } else {
            turn_parts(t)
        };
        let label = match t.kind {
            "preamble" => "before the first prompt".to_string(),
            "wake" => format!("turn {}/{}  {}", t.n, s.turns, words::wake(&t.prompt)),
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

/// The figures of a prompt or wake-up turn in `stats`: activity, duration, tokens/second,
/// finish time, state when not complete, gate verdicts.
fn turn_parts(t: &crate::ide::stats::TurnStats) -> Vec<String> {
    let mut parts = vec![words::activity(t.comments, t.tool_calls)];
    if let Some(ms) = t.duration_ms {
        parts.push(text::fmt_duration(ms));
    }
    if let Some(tps) = &t.tok_per_s {
        let approx = if tps.kind == "estimate" { "≈" } else { "" };
        parts.push(format!("{approx}{} tok/s", tps.label));
    }
    if let Some(at) = &t.finished_at {
        parts.push(at.clone());
    }
    if t.state != "complete" {
        parts.push(t.state.to_string());
    }
    for g in &t.gates {
        parts.push(format!("{}: {}", g.phase, g.verdict_text));
    }
    parts
}

/// The files of one change set, one line each: `  M src/auth.rs  +10 −2  (Edit ×2)`.
fn write_files(
    out: &mut dyn Write,
    files: &[crate::view::changes::FileChange],
    cwd: Option<&str>,
) -> std::io::Result<()> {
    use crate::view::changes::FileAction;
    for f in files {
        let mark = match f.action {
            FileAction::Created => "A",
            FileAction::Modified => "M",
            FileAction::Deleted => "D",
        };
        let mut tools: Vec<(String, usize)> = Vec::new();
        for c in &f.calls {
            match tools.iter_mut().find(|(n, _)| *n == c.name) {
                Some((_, k)) => *k += 1,
                None => tools.push((c.name.clone(), 1)),
            }
        }
        let tools: Vec<String> = tools
            .into_iter()
            .map(|(n, k)| if k > 1 { format!("{n} ×{k}") } else { n })
            .collect();
        let moved = f
            .moved_to
            .as_deref()
            .map(|m| format!(" → {}", relative_to(cwd, m)))
            .unwrap_or_default();
        let exact = if f.exact { "" } else { " · hunks only" };
        writeln!(
            out,
            "  {mark} {}{moved}  {}  ({}){exact}",
            relative_to(cwd, &f.path),
            f.counts(),
            tools.join(", ")
        )?;
    }
    Ok(())
}

/// `path` relative to `cwd` when it lies under it, else as it is.
fn relative_to(cwd: Option<&str>, path: &str) -> String {
    if let Some(c) = cwd {
        let c = c.trim_end_matches('/');
        if let Some(rest) = path.strip_prefix(c).and_then(|r| r.strip_prefix('/')) {
            return rest.to_string();
        }
    }
    path.to_string()
}

/// `changes FILE`: per turn its title and change summary, its files, the edits that were not
/// applied and its commits; then the session's net change.
fn write_changes(
    out: &mut dyn Write,
    path: &Path,
    l: &Loaded,
    c: &crate::view::changes::Changes,
    only: Option<usize>,
) -> std::io::Result<()> {
    let cwd = l.transcript.meta.cwd.as_deref();
    let turns: Vec<_> = c
        .turns
        .iter()
        .filter(|t| only.is_none_or(|n| t.n == n))
        .collect();
    if turns.is_empty() {
        return match only {
            Some(n) => writeln!(out, "Turn {n}: no file changed"),
            None => writeln!(out, "{}: no file changed", path.display()),
        };
    }
    for tc in turns {
        let turn = &l.analysis.turns[tc.turn];
        writeln!(out, "{} · {}", view::turn_name(turn), tc.title())?;
        write_files(out, &tc.files, cwd)?;
        for na in &tc.not_applied {
            let p = edit_path(l, na.entry, na.block).unwrap_or_default();
            writeln!(out, "  ✗ not applied: {} {}", na.name, relative_to(cwd, &p))?;
        }
        for na in &tc.no_result {
            let p = edit_path(l, na.entry, na.block).unwrap_or_default();
            writeln!(
                out,
                "  ? no result recorded: {} {}",
                na.name,
                relative_to(cwd, &p)
            )?;
        }
        for cm in &tc.commits {
            writeln!(out, "  ⎇ {} {} ({})", cm.hash, cm.message, cm.branch)?;
        }
    }
    if only.is_none()
        && let Some(title) = c.session_title()
    {
        writeln!(out, "Session · {title}")?;
        write_files(out, &c.session, cwd)?;
    }
    Ok(())
}

/// The first file an edit call names, made absolute.
fn edit_path(l: &Loaded, entry: usize, block: usize) -> Option<String> {
    let calls = crate::view::edits::edit_calls(&l.transcript, &l.analysis, &l.source);
    let c = calls
        .iter()
        .find(|c| c.entry == entry && c.block == block)?;
    Some(crate::view::changes::absolute(
        l.transcript.meta.cwd.as_deref(),
        &c.path,
    ))
}

/// `changes FILE --json`: `{file, cwd, turns: [{turn, n, title, files, notApplied, added,
/// removed, commits}], session: {title, files}}`.
fn write_changes_json(
    out: &mut dyn Write,
    path: &Path,
    l: &Loaded,
    c: &crate::view::changes::Changes,
    only: Option<usize>,
) -> std::io::Result<()> {
    let turns: Vec<serde_json::Value> = c
        .turns
        .iter()
        .filter(|t| only.is_none_or(|n| t.n == n))
        .map(|t| {
            let mut v = serde_json::to_value(t).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.insert("title".into(), t.title().into());
                o.insert(
                    "turnTitle".into(),
                    view::turn_name(&l.analysis.turns[t.turn]).into(),
                );
            }
            v
        })
        .collect();
    let mut v = serde_json::json!({
        "file": path.display().to_string(),
        "cwd": l.transcript.meta.cwd,
        "turns": turns,
    });
    if only.is_none() {
        v["session"] = serde_json::json!({
            "title": c.session_title(),
            "files": c.session,
        });
    }
    serde_json::to_writer(&mut *out, &v).map_err(json_io_error)?;
    out.write_all(b"\n")
}

/// `changes FILE --patch`: the net change (of the session, or of `--turn N`) as a unified
/// diff. A file whose whole text is known is a complete `git apply` patch; one known by its
/// hunks only gets its hunks with their line numbers where known, and a `#` comment line
/// where they are not (`git apply` skips such lines between patches).
fn write_changes_patch(
    out: &mut dyn Write,
    l: &Loaded,
    c: &crate::view::changes::Changes,
    only: Option<usize>,
) -> std::io::Result<()> {
    use crate::view::changes::{self, FileAction};
    let cwd = l.transcript.meta.cwd.as_deref();
    let files = match only {
        Some(n) => c.turn(n).map(|t| t.files.as_slice()).unwrap_or(&[]),
        None => c.session.as_slice(),
    };
    for f in files {
        let p = relative_to(cwd, &f.path);
        let p = p.trim_start_matches('/');
        if let (Some(b), Some(a)) = (&f.before, &f.after) {
            out.write_all(changes::unified_patch(p, f.action, b, a).as_bytes())?;
            continue;
        }
        if f.hunks.iter().any(|h| h.range.is_none()) {
            writeln!(
                out,
                "# {p}: {} without line numbers (the transcript does not hold the whole file)",
                text::plural(f.hunks.len() as u64, "hunk", "hunks")
            )?;
        }
        let a = if f.action == FileAction::Created {
            "/dev/null".to_string()
        } else {
            format!("a/{p}")
        };
        let b = if f.action == FileAction::Deleted {
            "/dev/null".to_string()
        } else {
            format!("b/{p}")
        };
        writeln!(out, "diff --git a/{p} b/{p}\n--- {a}\n+++ {b}")?;
        for h in &f.hunks {
            writeln!(out, "{}", h.header())?;
            for dl in &h.lines {
                writeln!(out, "{}{}", changes::prefix(dl.kind), dl.text)?;
            }
        }
    }
    Ok(())
}
