//! Diagnostics of the raw `.jsonl` (DESIGN.md §3, §5, §7): every problem a reader recorded
//! (invalid JSON lines with the column of the error, unknown shapes worth a hint) and every
//! blocked gate (seed 000). A torn last line of a file that may still grow is pending, not a
//! problem (FORMATS.md §4, case 03): readers keep it out of `Transcript::problems`.

use crate::analysis::{Analysis, Verdict};
use crate::model::{Severity, Span, Transcript, UnknownRecord};

/// At most this many problems are published for one document, then one more diagnostic
/// (code `truncated`) saying how many were left out (issue 8 defect 12).
pub const MAX_DIAGNOSTICS: usize = 1000;

/// One diagnostic on the raw source.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diag {
    pub line: usize,
    /// Byte span in the source (on `line`).
    pub span: Span,
    #[serde(serialize_with = "ser_severity")]
    pub severity: Severity,
    pub message: String,
    /// `invalid-line` | `invalid-utf8` | `blocked-gate` | `reader` | `unknown-record` |
    /// `truncated`.
    pub code: &'static str,
}

fn ser_severity<S: serde::Serializer>(s: &Severity, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Information => "information",
        Severity::Hint => "hint",
    })
}

/// `unknown record type "worktree-state" (3 lines): shown in the verbose view only` (also
/// `unknown attachment "…"`, `unknown system subtype "…"`).
///
/// Another agent's record says whose it is: `Codex record type "session_meta" in a Claude
/// Code transcript (1 line): not read; shown in the verbose view only`.
pub fn unknown_message(u: &UnknownRecord, format: crate::model::Format) -> String {
    if let Some(other) = u.other_format {
        return format!(
            "{} {} \"{}\" in a {} transcript ({} line{}): not read; shown in the verbose view only",
            other.display_name(),
            u.what,
            u.name,
            format.display_name(),
            u.lines,
            if u.lines == 1 { "" } else { "s" }
        );
    }
    format!(
        "unknown {} \"{}\" ({} line{}): shown in the verbose view only",
        u.what,
        u.name,
        u.lines,
        if u.lines == 1 { "" } else { "s" }
    )
}

/// Diagnostics for the raw document, sorted by line: at most [`MAX_DIAGNOSTICS`] problems,
/// followed, when there are more, by one `truncated` diagnostic (Information) on the line of
/// the first one left out: `1234 more problems from line 1002 on are not shown (at most 1000
/// are published per document)`.
pub fn diagnostics(transcript: &Transcript, analysis: &Analysis) -> Vec<Diag> {
    let mut out: Vec<Diag> = transcript
        .problems
        .iter()
        .map(|p| Diag {
            line: p.line,
            span: p.span.clone(),
            severity: p.severity,
            message: p.message.clone(),
            code: if p.message.starts_with("invalid JSON") {
                "invalid-line"
            } else if p.message.starts_with("invalid UTF-8") {
                "invalid-utf8"
            } else {
                "reader"
            },
        })
        .collect();
    // Drift stays visible (issue 20 item 11): one Information diagnostic per kind no reader
    // knows, on its first line.
    for u in &transcript.unknown {
        out.push(Diag {
            line: u.line,
            span: u.span.clone(),
            severity: Severity::Information,
            message: unknown_message(u, transcript.format()),
            code: "unknown-record",
        });
    }
    for g in &analysis.gates {
        if let Verdict::Blocked { reason } = &g.verdict {
            let why = if reason.is_empty() {
                g.verdict_text.clone()
            } else {
                reason.clone()
            };
            out.push(Diag {
                line: g.line,
                span: g.span.clone(),
                severity: Severity::Warning,
                message: format!("gate {} ({}) blocked: {why}", g.id, g.phase_name),
                code: "blocked-gate",
            });
        }
    }
    out.sort_by_key(|d| (d.line, d.span.start));
    if out.len() > MAX_DIAGNOSTICS {
        // With those the reader did not keep (`Transcript::problems_left_out`; issue 25).
        let more = out.len() - MAX_DIAGNOSTICS + transcript.problems_left_out;
        let first = &out[MAX_DIAGNOSTICS];
        let marker = Diag {
            line: first.line,
            span: first.span.clone(),
            severity: Severity::Information,
            message: format!(
                "{more} more problem{} from line {} on {} not shown (at most {MAX_DIAGNOSTICS} \
                 are published per document)",
                if more == 1 { "" } else { "s" },
                first.line + 1,
                if more == 1 { "is" } else { "are" },
            ),
            code: "truncated",
        };
        out.truncate(MAX_DIAGNOSTICS);
        out.push(marker);
    }
    out
}
