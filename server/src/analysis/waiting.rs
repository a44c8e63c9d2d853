//! Is the session waiting for the user? (issue 23 item 10). A fact of the transcript, read from
//! its last turn only; plain data for the session index (`transcript/sessions` `waiting`).
//!
//! The rules, each from what the records say (FORMATS.md, FORMATS-2026.md, seed 000):
//! * **question**: the last turn is in flight (no completion evidence) and its last step holds
//!   an unanswered call of a tool that asks the user something and waits for the answer:
//!   Claude Code `AskUserQuestion` (input `question`, or `questions[].question` in later
//!   versions), Codex `request_user_input` (`questions[].question`), Copilot CLI `ask_user`
//!   (`question`). An answer (or a refusal) is the call's tool result, so an answered call
//!   never counts.
//! * **plan**: the same with Claude Code `ExitPlanMode` (a plan shown for approval; its
//!   `plan`'s first line is the detail).
//! * **permission**: the same with a call that waits for the user's approval before it runs:
//!   a Codex command asking for escalated permissions (`sandbox_permissions:
//!   "require_escalated"`, or `with_escalated_permissions: true`; its `justification` is the
//!   detail), or any command call while the latest turn context says every command asks
//!   (`SessionMeta::commands_need_approval`, Codex `approval_policy: "untrusted"`). Claude
//!   Code does not record its permission prompts (a pending `Bash` call looks the same while
//!   it runs), so none is reported there.
//! * **gate**: the last turn is over (not in flight) and its last dev-pipeline gate needs the
//!   user (seed 000: needs-you, or blocked with NOT-READY); detail `Build needs you — reason` /
//!   `Merge blocked — reason`. A later gate of the same turn that passed clears it.

use crate::analysis::{Analysis, TurnKind, TurnState, Verdict};
use crate::model::{BlockKind, Role, ToolUse, Transcript};

/// Why the session waits for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitingKind {
    /// The agent asked a question and waits for the answer.
    Question,
    /// The agent shows a plan and waits for its approval.
    Plan,
    /// A tool call waits for the user's permission to run.
    Permission,
    /// The last dev-pipeline gate needs the user, or is blocked.
    Gate,
}

impl WaitingKind {
    /// `question` | `plan` | `permission` | `gate`, as in the protocol.
    pub fn as_str(self) -> &'static str {
        match self {
            WaitingKind::Question => "question",
            WaitingKind::Plan => "plan",
            WaitingKind::Permission => "permission",
            WaitingKind::Gate => "gate",
        }
    }
}

/// The session waits for the user: why, what it asks (one line, at most [`DETAIL_MAX`]
/// characters; may be empty), in which turn (1-based, as the outline numbers them) and from
/// which line of the file (0-based: the call's record, or the gate's).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Waiting {
    pub kind: WaitingKind,
    pub detail: String,
    pub turn: usize,
    pub line: usize,
}

/// Longest detail kept (characters; `…` marks a cut).
pub const DETAIL_MAX: usize = 120;

/// Tools whose call asks the user a question and blocks until the answer.
const QUESTION_TOOLS: &[&str] = &["AskUserQuestion", "request_user_input", "ask_user"];

/// Command tools (Codex), for `commands_need_approval`.
const COMMAND_TOOLS: &[&str] = &[
    "exec_command",
    "shell",
    "shell_command",
    "local_shell",
    "container.exec",
    "exec",
];

/// Whether, and why, the transcript `t` (read from `source`, analysed as `a`) waits for the
/// user at its end. `None` when it does not, or when the file has no turn.
pub fn waiting(t: &Transcript, a: &Analysis, source: &str) -> Option<Waiting> {
    let turn = a.turns.iter().rfind(|x| x.kind != TurnKind::Preamble)?;
    if turn.state == TurnState::InFlight {
        let last_step = a.steps.get(*turn.steps.last()?)?;
        for pair in a.tool_pairs.iter().rev() {
            if pair.result_entry.is_some() || !last_step.entries.contains(&pair.use_entry) {
                continue;
            }
            let e = t.entries.get(pair.use_entry)?;
            if e.sidechain && !t.meta.is_subagent_file || !matches!(e.role, Role::Model) {
                continue;
            }
            let Some(BlockKind::ToolUse(u)) = e.blocks.get(pair.use_block).map(|b| &b.kind) else {
                continue;
            };
            if let Some((kind, detail)) = pending_kind(t, u, source) {
                return Some(Waiting {
                    kind,
                    detail: clip(&detail),
                    turn: turn.n,
                    line: e.line,
                });
            }
        }
        return None;
    }
    let gate = a.gates.get(*turn.gates.last()?)?;
    let detail = match &gate.verdict {
        Verdict::NeedsYou { reason } => join(&format!("{} needs you", gate.phase_name), reason),
        Verdict::Blocked { reason } => join(&format!("{} blocked", gate.phase_name), reason),
        Verdict::Done | Verdict::Tagged => return None,
    };
    Some(Waiting {
        kind: WaitingKind::Gate,
        detail: clip(&detail),
        turn: turn.n,
        line: gate.line,
    })
}

fn join(head: &str, reason: &str) -> String {
    let reason = reason.trim();
    if reason.is_empty() {
        head.to_string()
    } else {
        format!("{head} — {reason}")
    }
}

/// What an unanswered call `u` waits for, with its detail.
fn pending_kind(t: &Transcript, u: &ToolUse, source: &str) -> Option<(WaitingKind, String)> {
    let name = &*u.name;
    let input = call_input(source, u);
    let value: serde_json::Value = serde_json::from_str(&input).unwrap_or_default();
    let text = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_string);
    if QUESTION_TOOLS.contains(&name) {
        let q = text("question").or_else(|| {
            value
                .get("questions")
                .and_then(|q| q.get(0))
                .and_then(|q| q.get("question"))
                .and_then(|q| q.as_str())
                .map(str::to_string)
        });
        return Some((WaitingKind::Question, first_line(&q.unwrap_or_default())));
    }
    if name == "ExitPlanMode" {
        let plan = first_line(&text("plan").unwrap_or_default());
        let plan = plan.trim_start_matches('#').trim().to_string();
        return Some((WaitingKind::Plan, plan));
    }
    let escalated = text("sandbox_permissions").as_deref() == Some("require_escalated")
        || value.get("with_escalated_permissions").and_then(|v| v.as_bool()) == Some(true)
        // A Codex code-mode `exec` call writes its command as a script whose arguments hold
        // the same keys.
        || input.contains("\"sandbox_permissions\":\"require_escalated\"");
    if escalated {
        let why = text("justification")
            .or_else(|| script_cmd(&input))
            .unwrap_or_else(|| u.summary.clone());
        return Some((WaitingKind::Permission, first_line(&why)));
    }
    if t.meta.commands_need_approval && COMMAND_TOOLS.contains(&name) {
        let cmd = script_cmd(&input).unwrap_or_else(|| u.summary.clone());
        return Some((WaitingKind::Permission, first_line(&cmd)));
    }
    None
}

/// The command of a Codex code-mode `exec` call, whose input is a script calling
/// `tools.exec_command({cmd:"…", …})`: the first `cmd` string in it, decoded.
fn script_cmd(input: &str) -> Option<String> {
    let at = input
        .find("cmd:\"")
        .map(|i| i + 5)
        .or_else(|| input.find("\"cmd\":\"").map(|i| i + 7))?;
    let rest = &input[at..];
    let mut escaped = false;
    for (i, ch) in rest.char_indices() {
        match ch {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => {
                return Some(crate::source::json_string::decode(&rest[..i]).into_owned());
            }
            _ => escaped = false,
        }
    }
    None
}

/// The call's input as its tool reads it: the JSON object as written, or the decoded text of a
/// string input (Codex `arguments` / a custom tool's `input`).
fn call_input<'s>(source: &'s str, u: &ToolUse) -> std::borrow::Cow<'s, str> {
    let Some(raw) = source.get(u.input.clone()) else {
        return std::borrow::Cow::Borrowed("");
    };
    if u.input.start > 0 && source.as_bytes()[u.input.start - 1] == b'"' {
        crate::source::json_string::decode(raw)
    } else {
        std::borrow::Cow::Borrowed(raw)
    }
}

fn first_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

fn clip(s: &str) -> String {
    if s.chars().count() <= DETAIL_MAX {
        return s.to_string();
    }
    let mut out: String = s.chars().take(DETAIL_MAX - 1).collect();
    out.push('…');
    out
}
