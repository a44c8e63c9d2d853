//! Hover (DESIGN.md §2, §5): the record under the cursor rendered as Markdown; a tool call
//! with its input and its result (and a result with its call); the full payload of anything
//! the view shortened, capped to [`HOVER_CAP`] bytes with an explicit `… N KB more` marker;
//! on a turn's opener line, how the turn's figures were computed. Base64 is never shown.

use crate::analysis::{Analysis, TurnState};
use crate::ide::inlay_hints::{turn_tooltip, usage_label};
use crate::ide::lookup::{self, Lookup};
use crate::model::{Block, BlockKind, Role, Span, Transcript};

/// Hover text is capped to this many bytes of payload (each shortened part says how much was
/// left out).
pub const HOVER_CAP: usize = 64 * 1024;

use crate::view::text::{self, fmt_bytes as format_bytes};

/// Cuts `s` to at most `cap` bytes on a character boundary, adding `… N KB more`.
pub fn cap_text(s: &str, cap: usize) -> String {
    if s.len() <= cap {
        return s.to_string();
    }
    let mut cut = cap;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}\n… {} more", &s[..cut], format_bytes(s.len() - cut))
}

/// A fenced code block whose fence is longer than any backtick run inside `body`.
pub fn fenced(lang: &str, body: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!("{fence}{lang}\n{}\n{fence}\n", body.trim_end_matches('\n'))
}

/// The part of a turn's hover that says what it changed (issue 22, items 2 and 6): its change
/// summary, each file (`` `M` `src/calc.rs` +2 −2 ``, paths relative to `cwd`), the edits not
/// applied or without a result, and each commit it made (`⎇ commit 1a2b3c4 on main: message`).
pub fn changes_markdown(c: &crate::view::changes::TurnChanges, cwd: Option<&str>) -> String {
    use crate::view::changes::FileAction;
    let rel = |p: &str| -> String {
        cwd.and_then(|d| p.strip_prefix(d.trim_end_matches('/')))
            .and_then(|r| r.strip_prefix('/'))
            .unwrap_or(p)
            .to_string()
    };
    let mut out = format!("---\n\n**{}**\n\n", c.title());
    for f in &c.files {
        let mark = match f.action {
            FileAction::Created => "A",
            FileAction::Modified => "M",
            FileAction::Deleted => "D",
        };
        out.push_str(&format!("* `{mark}` `{}` {}\n", rel(&f.path), f.counts()));
    }
    if !c.not_applied.is_empty() || !c.no_result.is_empty() {
        out.push_str(&format!(
            "* not counted: {} not applied, {} without a result\n",
            c.not_applied.len(),
            c.no_result.len()
        ));
    }
    for k in &c.commits {
        out.push_str(&format!(
            "* ⎇ commit `{}` on {}: {}\n",
            k.hash, k.branch, k.message
        ));
    }
    out
}

/// Hover Markdown for the entry `entry`, focused on `block` when given. `None` when the entry
/// does not exist.
pub fn entry_hover(
    transcript: &Transcript,
    analysis: &Analysis,
    lookup: &Lookup,
    source: &str,
    entry: usize,
    block: Option<usize>,
    time_zone: Option<&str>,
) -> Option<String> {
    let e = transcript.entries.get(entry)?;
    let mut out = String::new();
    let mut head = vec![format!("**{}**", role_name(&e.role))];
    head.push(format!("`{}`", e.record_type));
    // Local, like the hints' finish times (issue 11, item 4).
    if let Some(ts) = e
        .timestamp_ms()
        .and_then(|ms| crate::analysis::clock::date_time_label(ms, time_zone))
    {
        head.push(ts);
    }
    if let Some(t) = lookup.turn_of(entry).and_then(|t| analysis.turns.get(t)) {
        head.push(if t.n == 0 {
            "preamble".to_string()
        } else {
            format!("turn {}", t.n)
        });
    }
    if e.sidechain {
        head.push(match e.agent_id() {
            Some(a) => format!("sidechain {a}"),
            None => "sidechain".to_string(),
        });
    }
    if e.abandoned {
        head.push("on an abandoned branch (not counted)".to_string());
    }
    match transcript.run_at(e.line) {
        // A run of bare records is one entry (issue 25 item 8).
        Some(run) => head.push(format!(
            "{} records alike, lines {}–{}",
            run.records,
            run.line + 1,
            run.last_line + 1
        )),
        None => head.push(format!("line {}", e.line + 1)),
    }
    out.push_str(&head.join(" · "));
    out.push_str("\n\n");
    if let Some(step) = &e.step {
        // A model response (`crate::view::words`: "step" is not shown to people).
        let mut s = format!("response `{}`", step.key);
        if let Some(m) = &step.model {
            s.push_str(&format!(" · {m}"));
        }
        if let Some(effort) = &step.effort {
            s.push_str(&format!(" · effort {effort}"));
        }
        if let Some(u) = &step.usage {
            s.push_str(&format!(
                " · {}",
                usage_label(u, !step.output_is_placeholder)
            ));
        }
        if let Some(c) = step.cost_usd {
            s.push_str(&format!(" · ${c:.4}"));
        }
        if step.declares_final {
            s.push_str(" · declared as the final answer");
        }
        if let Some(u) = &step.advisor_usage {
            s.push_str(&format!(" · advisor {}", usage_label(u, true)));
        }
        if let Some(err) = &step.api_error {
            s.push_str(&format!(" · API error: {err}"));
        }
        out.push_str(&s);
        out.push_str("\n\n");
    }
    let mut budget = HOVER_CAP;
    let blocks: Vec<(usize, &Block)> = match block {
        Some(b) => e.blocks.get(b).map(|x| vec![(b, x)]).unwrap_or_default(),
        None => e.blocks.iter().enumerate().collect(),
    };
    for (bi, b) in blocks {
        let part = render_block(transcript, analysis, lookup, source, entry, bi, b, budget);
        budget = budget.saturating_sub(part.len());
        out.push_str(&part);
        out.push('\n');
    }
    for p in transcript.problems.iter().filter(|p| p.line == e.line) {
        out.push_str(&format!("⚠ {}\n\n", p.message));
    }
    if let Some(t) = lookup.turn_of(entry).and_then(|t| analysis.turns.get(t))
        && t.opener == Some(entry)
    {
        out.push_str("---\n\n");
        out.push_str(&turn_tooltip(t, analysis.turn_count, time_zone));
        out.push_str(&crate::ide::inlay_hints::credits_tooltip(analysis, t));
        out.push_str(&turn_model_and_session(transcript, analysis, t));
    }
    Some(out)
}

/// For a turn opener's hover: the model and effort the turn's first response ran with (Codex
/// `turn_context` / `thread_settings_applied`, Claude Code `effort`), and the session's cost
/// and API time as the agent recorded them (`cost-state`), each line only when known.
fn turn_model_and_session(
    transcript: &Transcript,
    analysis: &Analysis,
    turn: &crate::analysis::Turn,
) -> String {
    let mut s = String::new();
    let step = turn
        .steps
        .iter()
        .filter_map(|&i| analysis.steps.get(i))
        .filter_map(|st| st.entries.first())
        .filter_map(|&e| transcript.entries.get(e)?.step.as_ref())
        .find(|info| info.model.is_some() || info.effort.is_some());
    if let Some(info) = step {
        let mut parts = Vec::new();
        if let Some(m) = &info.model {
            parts.push(m.to_string());
        }
        if let Some(e) = &info.effort {
            parts.push(format!("effort {e}"));
        }
        s.push_str(&format!("- **Model**: {}\n", parts.join(" · ")));
    }
    let m = &transcript.meta;
    if m.cost_usd.is_some() || m.api_duration_ms.is_some() {
        let mut parts = Vec::new();
        if let Some(c) = m.cost_usd {
            parts.push(format!("cost ${c:.4}"));
        }
        if let Some(ms) = m.api_duration_ms {
            parts.push(format!("API time {}", crate::view::text::fmt_duration(ms)));
        }
        s.push_str(&format!(
            "- **Session** (as the agent recorded it): {}\n",
            parts.join(" · ")
        ));
    }
    s
}

fn role_name(role: &Role) -> &'static str {
    match role {
        Role::Prompt(_) => "Prompt",
        Role::Wake(_) => "Wake-up",
        Role::Steering => "Steering prompt",
        Role::Model => "Model",
        Role::ToolResults => "Tool results",
        Role::Interruption => "Interruption",
        Role::LocalCommand => "Local command",
        Role::Context => "Context",
        Role::CompactBoundary { .. } => "Compaction boundary",
        Role::CompactSummary => "Compaction summary",
        Role::TurnDuration { .. } => "Turn duration",
        Role::TurnStarted { .. } => "Turn started",
        Role::TurnCompleted { .. } => "Turn completed",
        Role::Meta => "Meta",
        Role::Other => "Other record",
        Role::Unparsed => "Invalid line",
    }
}

#[allow(clippy::too_many_arguments)]
fn render_block(
    transcript: &Transcript,
    analysis: &Analysis,
    lookup: &Lookup,
    source: &str,
    entry: usize,
    bi: usize,
    b: &Block,
    budget: usize,
) -> String {
    match &b.kind {
        BlockKind::Text { text } => {
            let label = match lookup.final_answer_turn(entry, bi) {
                Some(t) => format!(
                    "**{}**\n\n",
                    crate::view::words::answer_name(
                        analysis
                            .turns
                            .get(t)
                            .map_or(TurnState::Complete, |t| t.state)
                    )
                ),
                None => String::new(),
            };
            format!("{label}{}\n", cap_text(&text.decode(source), budget))
        }
        BlockKind::Thinking { text, encrypted } => {
            if text.is_empty() {
                if *encrypted {
                    "*💭 thinking (encrypted)*\n".to_string()
                } else {
                    "*💭 thinking (not stored)*\n".to_string()
                }
            } else {
                let body = cap_text(&text.decode(source), budget);
                format!("*💭 thinking*\n\n{}", quote(&body))
            }
        }
        BlockKind::ToolUse(tu) => {
            let mut s = format!("**🔧 {}**", tu.name);
            if !tu.summary.is_empty() {
                s.push_str(&format!(" `{}`", tu.summary.replace('`', "'")));
            }
            s.push_str(&format!(" · id `{}`\n\n", tu.id));
            if let Some(others) = other_turns_on_file(transcript, analysis, lookup, entry, tu) {
                s.push_str(&others);
            }
            let half = budget / 2;
            s.push_str("Input:\n\n");
            s.push_str(&fenced("json", &pretty_json(source, &tu.input, half)));
            if let Some(p) = lookup
                .pair_of_use(entry, bi)
                .and_then(|p| analysis.tool_pairs.get(p))
            {
                if let (Some(re), Some(rb)) = (p.result_entry, p.result_block) {
                    if let Some(BlockKind::ToolResult(tr)) = transcript
                        .entries
                        .get(re)
                        .and_then(|e| e.blocks.get(rb))
                        .map(|b| &b.kind)
                    {
                        let line = transcript.entries[re].line + 1;
                        s.push_str(&format!(
                            "\nResult (line {line}{}):\n\n",
                            if tr.is_error { ", error" } else { "" }
                        ));
                        s.push_str(&fenced("", &result_text(source, tr, half)));
                    }
                } else {
                    s.push_str("\n*no result yet*\n");
                }
            }
            s
        }
        BlockKind::ToolResult(tr) => {
            let mut s = String::new();
            let call = lookup
                .pair_of_result(entry, bi)
                .and_then(|p| analysis.tool_pairs.get(p))
                .and_then(|p| {
                    let e = transcript.entries.get(p.use_entry)?;
                    match &e.blocks.get(p.use_block)?.kind {
                        BlockKind::ToolUse(tu) => Some((e.line, tu)),
                        _ => None,
                    }
                });
            match call {
                Some((line, tu)) => {
                    s.push_str(&format!(
                        "**Result of 🔧 {}**{} · call on line {} · id `{}`\n\n",
                        tu.name,
                        if tr.is_error { " (error)" } else { "" },
                        line + 1,
                        tr.tool_use_id
                    ));
                    if !tu.summary.is_empty() {
                        s.push_str(&format!("Call: `{}`\n\n", tu.summary.replace('`', "'")));
                    }
                }
                None => s.push_str(&format!(
                    "**Tool result**{} · id `{}` (call not found)\n\n",
                    if tr.is_error { " (error)" } else { "" },
                    tr.tool_use_id
                )),
            }
            if let Some(sa) = &tr.subagent {
                let mut f = Vec::new();
                if let Some(a) = &sa.agent_id {
                    f.push(format!("agent {a}"));
                }
                if let Some(ms) = sa.duration_ms {
                    f.push(text::fmt_duration(ms));
                }
                if let Some(t) = sa.total_tokens {
                    f.push(format!("{t} tokens"));
                }
                if let Some(n) = sa.tool_uses {
                    f.push(format!("{n} tool uses"));
                }
                s.push_str(&format!("Sub-agent: {}\n\n", f.join(" · ")));
            }
            s.push_str(&fenced("", &result_text(source, tr, budget)));
            s
        }
        BlockKind::Image {
            media_type,
            data_len,
        } => format!("{}\n", text::image_placeholder(media_type, *data_len)),
        BlockKind::Other { block_type } => {
            // Its value, as the format wrote it (a string as quoted text, anything else as
            // JSON), e.g. Copilot's `transformedContent`: the prompt as the model saw it.
            let mut s = format!("*block of type `{block_type}`*\n\n");
            let raw = source.get(b.span.clone()).unwrap_or("");
            if raw.len() >= 2 && raw.starts_with('"') && raw.ends_with('"') {
                let text = crate::source::json_string::decode(&raw[1..raw.len() - 1]);
                let cut: String = text.chars().take(budget.min(4096)).collect();
                s.push_str(&quote(&cut));
            } else if block_type.starts_with("context:") {
                // A section of a string's raw contents (Antigravity CLI's
                // `<ADDITIONAL_METADATA>` …, issue 21 item 3): decoded as text.
                let text = crate::source::json_string::decode(raw);
                let cut: String = text.chars().take(budget.min(4096)).collect();
                s.push_str(&quote(&cut));
            } else if !raw.is_empty() {
                s.push_str(&fenced(
                    "json",
                    &pretty_json(source, &b.span, budget.min(4096)),
                ));
            }
            s
        }
    }
}

fn quote(s: &str) -> String {
    s.lines().map(|l| format!("> {l}\n")).collect()
}

/// The tool input as pretty JSON (a Codex `arguments` string holding JSON is decoded first),
/// capped.
fn pretty_json(source: &str, span: &Span, cap: usize) -> String {
    let Some(raw) = source.get(span.clone()) else {
        return String::new();
    };
    if raw.len() > 4 * cap.max(1024) {
        return cap_text(raw, cap);
    }
    let is_string = span.start > 0 && source.as_bytes().get(span.start - 1) == Some(&b'"');
    let text = if is_string {
        crate::source::json_string::decode(raw).into_owned()
    } else {
        raw.to_string()
    };
    let pretty = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or(text);
    cap_text(&pretty, cap)
}

/// A tool result's content as text: a string literal decoded; an array's text strings decoded
/// and joined, images as placeholders; capped.
fn result_text(source: &str, tr: &crate::model::ToolResult, cap: usize) -> String {
    let c = &tr.content;
    let is_string = c.start > 0 && source.as_bytes().get(c.start - 1) == Some(&b'"');
    let limit = 4 * cap.max(1024);
    let mut omitted = 0;
    let mut s = if is_string {
        match source.get(c.clone()) {
            Some(raw) if raw.len() <= limit => crate::source::json_string::decode(raw).into_owned(),
            Some(raw) => {
                let mut cut = limit;
                while !raw.is_char_boundary(cut) {
                    cut -= 1;
                }
                omitted = raw.len() - cut;
                crate::source::json_string::decode(&raw[..cut]).into_owned()
            }
            None => String::new(),
        }
    } else {
        let parts: Vec<String> = lookup::text_strings_in(source, c, 256)
            .iter()
            .filter_map(|sp| source.get(sp.clone()))
            .map(|raw| crate::source::json_string::decode(raw).into_owned())
            .collect();
        parts.join("\n")
    };
    for (mt, len) in &tr.images {
        s.push_str(&format!("\n{}", text::image_placeholder(mt, *len)));
    }
    cap_text_more(&s, cap, omitted)
}

/// [`cap_text`], counting `extra` bytes already left out before `s`.
fn cap_text_more(s: &str, cap: usize, extra: usize) -> String {
    if s.len() <= cap {
        if extra == 0 {
            return s.to_string();
        }
        return format!("{s}\n… {} more", format_bytes(extra));
    }
    let mut cut = cap;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}\n… {} more",
        &s[..cut],
        format_bytes(s.len() - cut + extra)
    )
}

/// Tools whose key argument is a file path (Claude Code, Pi).
fn is_file_tool(name: &str) -> bool {
    matches!(
        name,
        "Read" | "Edit" | "MultiEdit" | "Write" | "NotebookEdit" | "read" | "edit" | "write"
    )
}

/// For a call on a file (`Read`, `Edit`, `Write`, …): the other turns whose calls touched the
/// same path, `Other turns on this file: turn 2 (Read), turn 5 (Edit ×2)` (issue 11, item 2);
/// `None` for other calls or when no other turn did. Main-thread turns, in order.
fn other_turns_on_file(
    transcript: &Transcript,
    analysis: &Analysis,
    lookup: &Lookup,
    entry: usize,
    tu: &crate::model::ToolUse,
) -> Option<String> {
    if !is_file_tool(&tu.name) || tu.summary.is_empty() {
        return None;
    }
    let here = lookup.turn_of(entry);
    // turn index -> [(tool, count)] in first-use order.
    let mut by_turn: std::collections::BTreeMap<usize, Vec<(String, usize)>> = Default::default();
    for (ei, e) in transcript.entries.iter().enumerate() {
        for b in &e.blocks {
            let BlockKind::ToolUse(u) = &b.kind else {
                continue;
            };
            if !is_file_tool(&u.name) || u.summary != tu.summary {
                continue;
            }
            let Some(t) = lookup.turn_of(ei) else {
                continue;
            };
            if Some(t) == here {
                continue;
            }
            let tools = by_turn.entry(t).or_default();
            match tools.iter_mut().find(|(n, _)| *n == *u.name) {
                Some((_, c)) => *c += 1,
                None => tools.push((u.name.to_string(), 1)),
            }
        }
    }
    let parts: Vec<String> = by_turn
        .iter()
        .filter_map(|(t, tools)| {
            let turn = analysis.turns.get(*t)?;
            let what: Vec<String> = tools
                .iter()
                .map(|(n, c)| {
                    if *c > 1 {
                        format!("{n} ×{c}")
                    } else {
                        n.clone()
                    }
                })
                .collect();
            Some(if turn.n == 0 {
                format!("before the first prompt ({})", what.join(", "))
            } else {
                format!("turn {} ({})", turn.n, what.join(", "))
            })
        })
        .collect();
    (!parts.is_empty()).then(|| format!("Other turns on this file: {}\n\n", parts.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opener_hover_gives_model_effort_and_session_cost() {
        let src = include_str!("../../../fixtures/rules/claude-2-1-2xx-records.jsonl");
        let t = crate::formats::read(src);
        let a = crate::analysis::analyze(&t, src, &Default::default());
        let lookup = Lookup::new(&t, &a);
        let h = entry_hover(&t, &a, &lookup, src, 2, None, Some("UTC")).unwrap();
        assert!(
            h.contains("- **Model**: claude-opus-4-7 · effort xhigh\n"),
            "{h}"
        );
        assert!(
            h.contains("- **Session** (as the agent recorded it): cost $0.0456 · API time 9s\n"),
            "{h}"
        );
    }

    #[test]
    fn a_file_call_lists_the_other_turns_on_its_file() {
        let src = include_str!("../../../fixtures/rules/edits.jsonl");
        let t = crate::formats::read(src);
        let a = crate::analysis::analyze(&t, src, &Default::default());
        let lookup = Lookup::new(&t, &a);
        let call = |name: &str, path: &str| {
            t.entries
                .iter()
                .position(|e| {
                    e.blocks.iter().any(|b| {
                        matches!(&b.kind, BlockKind::ToolUse(u) if &*u.name == name && u.summary.ends_with(path))
                    })
                })
                .unwrap()
        };
        let hover = |e: usize| entry_hover(&t, &a, &lookup, src, e, Some(0), Some("UTC")).unwrap();
        let h = hover(call("MultiEdit", "accounts.rs"));
        assert!(
            h.contains("Other turns on this file: turn 1 (Edit)\n"),
            "{h}"
        );
        let h = hover(call("Edit", "accounts.rs"));
        assert!(
            h.contains("Other turns on this file: turn 2 (MultiEdit)\n"),
            "{h}"
        );
        // CHANGELOG.md is touched in turn 2 only.
        let h = hover(call("Write", "CHANGELOG.md"));
        assert!(!h.contains("Other turns"), "{h}");
    }

    #[test]
    fn caps_and_fences() {
        assert_eq!(cap_text("héllo", 2), "h\n… 5 B more");
        assert_eq!(fenced("", "a ```b``` c"), "````\na ```b``` c\n````\n");
    }
}
