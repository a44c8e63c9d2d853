//! Diagnostics of the raw `.jsonl` (DESIGN.md §3, §5, §7): every problem a reader recorded
//! (invalid JSON lines with the column of the error, unknown shapes worth a hint) and every
//! blocked gate (seed 000). A torn last line of a file that may still grow is pending, not a
//! problem (FORMATS.md §4, case 03): readers keep it out of `Transcript::problems`.

use crate::analysis::{Analysis, Verdict};
use crate::model::{Severity, Span, Transcript};

/// At most this many diagnostics are published for one document.
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
    /// `invalid-line` | `blocked-gate` | `reader`.
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

/// Diagnostics for the raw document, sorted by line, at most [`MAX_DIAGNOSTICS`].
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
            } else {
                "reader"
            },
        })
        .collect();
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
    out.truncate(MAX_DIAGNOSTICS);
    out
}
