//! Document symbols (the outline): turns with their prompt's first line; children for work
//! runs, the final answer, gates, compactions, sub-agent calls and steering prompts
//! (DESIGN.md §5). Plain data in line terms; `crate::lsp` converts to LSP.
//!
//! The raw outline ([`raw_symbols`]) is built from the analysis in raw file lines; the view
//! outline ([`view_symbols`]) from the anchors the renderer placed (`View::anchors`), so both
//! use the same names and details (`crate::view::turn_name`, `run_label`, `gate_label`, …).

use crate::analysis::{Analysis, RunKind, Turn, TurnKind, default_phases};
use crate::model::Transcript;
use crate::view::{self, AnchorKind, View};

/// Kinds of outline entry (mapped to LSP `SymbolKind`s by `crate::lsp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SymbolKind {
    Preamble,
    Turn,
    WorkRun,
    Thought,
    FinalAnswer,
    Gate,
    Compaction,
    Subagent,
    Steering,
    AbandonedBranch,
    /// The files a turn changed (issue 22): `Changes`, detail `2 files · +8 −2`.
    Changes,
    /// One of them: its path (relative to the session's directory), detail `M +2 −2`.
    ChangedFile,
    /// Where another session of the file starts (issue 20 item 3): `Session 2: 019e…`,
    /// detail `from thread 019d…` for a fork.
    Session,
}

/// One outline entry. Lines are 0-based, inclusive, in the document the outline is for (the
/// raw `.jsonl` or the view).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Symbol {
    /// `Turn 3: Fix the failing test` / `Worked · Read ×2, Edit auth.rs` / `Final answer` /
    /// `🔨 Build: PASS` / `Compaction 1` / `Sub-agent: Audit auth` / `↪ queued: add --json`.
    pub name: String,
    /// Figures shown beside the name (`4 comments · 6 tool calls · 2m 25s`).
    pub detail: String,
    pub kind: SymbolKind,
    pub start_line: usize,
    pub end_line: usize,
    /// The line to reveal when the entry is picked.
    pub selection_line: usize,
    pub children: Vec<Symbol>,
}

impl Symbol {
    fn new(name: String, detail: String, kind: SymbolKind, start: usize, end: usize) -> Symbol {
        Symbol {
            name,
            detail,
            kind,
            start_line: start,
            end_line: end.max(start),
            selection_line: start,
            children: Vec::new(),
        }
    }
}

/// The outline of the raw `.jsonl` document: one entry per turn (the preamble first when the
/// file has one), in raw file lines. Children, in line order: work runs and thoughts, the
/// final answer, gates, compactions, sub-agent calls, steering prompts (case 07). Uses the
/// default gate phase table for gate emoji; see [`raw_symbols_with_phases`].
pub fn raw_symbols(transcript: &Transcript, analysis: &Analysis, source: &str) -> Vec<Symbol> {
    raw_symbols_with_phases(transcript, analysis, source, &default_phases())
}

/// [`raw_symbols`] with the configured gate phase table (setting `gatePhases`).
pub fn raw_symbols_with_phases(
    transcript: &Transcript,
    analysis: &Analysis,
    source: &str,
    phases: &[crate::analysis::Phase],
) -> Vec<Symbol> {
    let changes = crate::view::changes::changes(transcript, analysis, source);
    analysis
        .turns
        .iter()
        .map(|turn| {
            turn_symbol(
                transcript,
                analysis,
                source,
                phases,
                turn,
                changes.turn_at(turn.n),
            )
        })
        .collect()
}

/// The outline entry of one turn of [`raw_symbols_with_phases`] (with its children). It
/// depends only on the turn, the gates, compactions, branches and sub-agent calls it names and
/// its own records, so a snapshot keeps it for a turn an append left alone (issue 12).
pub fn turn_symbol(
    transcript: &Transcript,
    analysis: &Analysis,
    source: &str,
    phases: &[crate::analysis::Phase],
    turn: &Turn,
    changes: Option<&crate::view::changes::TurnChanges>,
) -> Symbol {
    let line_of = |e: usize| transcript.entries.get(e).map(|e| e.line);
    {
        {
            let kind = if turn.kind == TurnKind::Preamble {
                SymbolKind::Preamble
            } else {
                SymbolKind::Turn
            };
            let mut sym = Symbol::new(
                view::turn_name(turn),
                turn_detail(turn),
                kind,
                turn.start_line,
                turn.end_line,
            );
            if let Some(l) = turn.opener.and_then(line_of) {
                sym.selection_line = l;
            }
            let mut children = Vec::new();
            for run in &turn.runs {
                let kind = match run.kind {
                    RunKind::Work => SymbolKind::WorkRun,
                    RunKind::Thought => SymbolKind::Thought,
                    RunKind::Prose => continue,
                };
                children.push(Symbol::new(
                    view::run_outline_name(run, transcript),
                    run_detail(run),
                    kind,
                    run.start_line,
                    run.end_line,
                ));
            }
            if let Some(fa) = &turn.final_answer {
                let lines: Vec<usize> = fa.blocks.iter().filter_map(|&(e, _)| line_of(e)).collect();
                if let (Some(&first), Some(&last)) = (lines.iter().min(), lines.iter().max()) {
                    children.push(Symbol::new(
                        view::words::answer_name(turn.state),
                        view::answer_gist(transcript, source, fa),
                        SymbolKind::FinalAnswer,
                        first,
                        transcript.last_line(last),
                    ));
                }
            }
            for &g in &turn.gates {
                if let Some(gate) = analysis.gates.get(g) {
                    children.push(Symbol::new(
                        view::gate_label(gate, phases),
                        view::gate_detail(gate),
                        SymbolKind::Gate,
                        gate.line,
                        gate.line,
                    ));
                }
            }
            for &c in &turn.compactions {
                if let Some(comp) = analysis.compactions.get(c) {
                    children.push(Symbol::new(
                        format!("Compaction {}", comp.n),
                        view::compaction_detail(comp),
                        SymbolKind::Compaction,
                        comp.start_line,
                        comp.end_line,
                    ));
                }
            }
            for &b in &turn.branches {
                if let Some(br) = analysis.branches.get(b) {
                    children.push(Symbol::new(
                        view::branch_label(br),
                        view::branch_detail(br),
                        SymbolKind::AbandonedBranch,
                        br.start_line,
                        br.end_line,
                    ));
                }
            }
            for &c in &turn.subagent_calls {
                if let Some(call) = analysis.subagent_calls.get(c) {
                    let mut s = Symbol::new(
                        view::subagent_label(call),
                        view::subagent_detail(call),
                        SymbolKind::Subagent,
                        call.start_line,
                        call.end_line,
                    );
                    if let Some(l) = line_of(call.entry) {
                        s.selection_line = l;
                    }
                    children.push(s);
                }
            }
            for &e in &turn.steering {
                if let Some(entry) = transcript.entries.get(e) {
                    children.push(Symbol::new(
                        view::steering_label(entry, source),
                        String::new(),
                        SymbolKind::Steering,
                        entry.line,
                        transcript.last_line(entry.line),
                    ));
                }
            }
            let sessions = &transcript.meta.sessions;
            let first = sessions.partition_point(|s| s.entry < turn.entries.start);
            for (i, start) in sessions
                .iter()
                .enumerate()
                .skip(first)
                .take_while(|(_, s)| s.entry < turn.entries.end)
            {
                let (name, detail) = view::session_outline(i, start);
                children.push(Symbol::new(
                    name,
                    detail,
                    SymbolKind::Session,
                    start.line,
                    start.line,
                ));
            }
            if let Some(c) = changes.filter(|c| !c.files.is_empty()) {
                children.push(changes_symbol(transcript, c));
            }
            children.sort_by_key(|s| (s.start_line, kind_order(s.kind)));
            sym.children = children;
            sym
        }
    }
}

/// The `Changes` entry of a turn in the raw outline: from its first changing call's line to
/// its last, a child per file at the line of the first call that changed it.
fn changes_symbol(t: &Transcript, c: &crate::view::changes::TurnChanges) -> Symbol {
    let line = |e: usize| t.entries.get(e).map(|e| e.line).unwrap_or(0);
    let lines: Vec<usize> = c
        .files
        .iter()
        .flat_map(|f| f.calls.iter().map(|k| line(k.entry)))
        .collect();
    let start = lines.iter().copied().min().unwrap_or(0);
    let end = lines.iter().copied().max().unwrap_or(start);
    let cwd = t.meta.cwd.as_deref();
    let mut s = Symbol::new(
        "Changes".to_string(),
        format!(
            "{} · +{} −{}",
            crate::view::text::plural(c.files.len() as u64, "file", "files"),
            c.added,
            c.removed
        ),
        SymbolKind::Changes,
        start,
        end,
    );
    for f in &c.files {
        let at = f.calls.first().map(|k| line(k.entry)).unwrap_or(start);
        let rel = cwd
            .and_then(|d| f.path.strip_prefix(d.trim_end_matches('/')))
            .and_then(|r| r.strip_prefix('/'))
            .unwrap_or(&f.path);
        let mark = match f.action {
            crate::view::changes::FileAction::Created => "A",
            crate::view::changes::FileAction::Modified => "M",
            crate::view::changes::FileAction::Deleted => "D",
        };
        s.children.push(Symbol::new(
            rel.to_string(),
            format!("{mark} {}", f.counts()),
            SymbolKind::ChangedFile,
            at,
            at,
        ));
    }
    s
}

/// The outline of the rendered view, from its anchors: the same names, details and kinds as
/// [`raw_symbols`], in view lines. Children are only those the view shows (quiet views have no
/// work runs).
pub fn view_symbols(view: &View, analysis: &Analysis) -> Vec<Symbol> {
    // Top-level symbols and the turn number each stands for.
    let mut out: Vec<(Option<usize>, Symbol)> = Vec::new();
    let mut pending: Vec<(usize, Symbol)> = Vec::new();
    for a in &view.anchors {
        let kind = match a.kind {
            AnchorKind::Preamble => SymbolKind::Preamble,
            AnchorKind::Turn => SymbolKind::Turn,
            AnchorKind::WorkRun => SymbolKind::WorkRun,
            AnchorKind::Thought => SymbolKind::Thought,
            AnchorKind::FinalAnswer => SymbolKind::FinalAnswer,
            AnchorKind::Gate => SymbolKind::Gate,
            AnchorKind::Compaction => SymbolKind::Compaction,
            AnchorKind::Subagent => SymbolKind::Subagent,
            AnchorKind::Steering => SymbolKind::Steering,
            AnchorKind::AbandonedBranch => SymbolKind::AbandonedBranch,
            AnchorKind::Changes => SymbolKind::Changes,
            AnchorKind::ChangedFile => SymbolKind::ChangedFile,
            AnchorKind::Session => SymbolKind::Session,
        };
        if matches!(a.kind, AnchorKind::Turn | AnchorKind::Preamble) {
            let preamble = a.kind == AnchorKind::Preamble;
            let turn = analysis
                .turns
                .iter()
                .find(|t| t.n == a.turn && (t.kind == TurnKind::Preamble) == preamble);
            let name = turn.map_or_else(|| format!("Turn {}", a.turn), view::turn_name);
            out.push((
                Some(a.turn),
                Symbol::new(name, a.detail.clone(), kind, a.line, a.end_line),
            ));
            continue;
        }
        let child = Symbol::new(
            a.child.clone().unwrap_or_default(),
            a.detail.clone(),
            kind,
            a.line,
            a.end_line,
        );
        match out.last_mut() {
            // A changed file goes under its turn's `Changes` entry.
            Some((Some(n), parent)) if *n == a.turn && kind == SymbolKind::ChangedFile => {
                match parent.children.last_mut() {
                    Some(c) if c.kind == SymbolKind::Changes => c.children.push(child),
                    _ => parent.children.push(child),
                }
            }
            Some((Some(n), parent)) if *n == a.turn => parent.children.push(child),
            // A session divider drawn above the heading of the turn it opens: that turn's
            // child, as in the raw outline; the turn's range starts at the divider.
            _ if kind == SymbolKind::Session => pending.push((a.turn, child)),
            _ => out.push((None, child)),
        }
    }
    for (n, child) in pending {
        match out
            .iter_mut()
            .find(|(t, s)| *t == Some(n) && s.kind == SymbolKind::Turn)
        {
            Some((_, parent)) => {
                parent.start_line = parent.start_line.min(child.start_line);
                parent.children.push(child);
            }
            None => out.push((None, child)),
        }
    }
    out.into_iter()
        .map(|(_, mut s)| {
            s.children
                .sort_by_key(|c| (c.start_line, kind_order(c.kind)));
            s
        })
        .collect()
}

/// The figures beside a turn: [`view::turn_detail`] (for the preamble, its record count).
fn turn_detail(turn: &Turn) -> String {
    view::turn_detail(turn)
}

fn run_detail(run: &crate::analysis::Run) -> String {
    match run.kind {
        RunKind::Work => {
            view::words::counts(&[(run.tool_calls.into(), view::words::TOOL_CALL)]).join("")
        }
        _ => String::new(),
    }
}

fn kind_order(k: SymbolKind) -> u8 {
    match k {
        SymbolKind::Preamble | SymbolKind::Turn | SymbolKind::Session => 0,
        SymbolKind::Compaction | SymbolKind::AbandonedBranch => 1,
        SymbolKind::Steering => 2,
        SymbolKind::Thought => 3,
        SymbolKind::WorkRun => 4,
        SymbolKind::Subagent => 5,
        SymbolKind::FinalAnswer => 6,
        SymbolKind::Gate => 7,
        SymbolKind::Changes | SymbolKind::ChangedFile => 8,
    }
}
