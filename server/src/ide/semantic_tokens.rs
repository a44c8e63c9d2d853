//! Semantic tokens (DESIGN.md §2, §5): prompt, final answer, narration, thinking, tool name,
//! tool error, gate and meta, with modifiers incomplete / inFlight / sidechain.
//!
//! On the raw `.jsonl` a token sits on the exact characters of the text inside a JSON string
//! (the literal's raw contents, escapes included, so the token covers what the editor shows),
//! never on base64 payloads; a JSONL record is one physical line, so no token spans lines. On
//! the view the tokens are the view's highlighted spans. Tokens are produced in one sequential
//! pass, sorted and non-overlapping; `crate::lsp` converts byte offsets to the negotiated
//! position encoding.

use crate::analysis::{Analysis, TurnState};
use crate::ide::lookup::{self, Lookup};
use crate::model::{BlockKind, Role, Span, StopReason, Transcript};
use crate::view::{SpanKind, View};

/// Token types, in legend order (the `u32` a client receives is the index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TokenType {
    Prompt,
    FinalAnswer,
    Narration,
    Thinking,
    ToolName,
    ToolError,
    Gate,
    Meta,
    /// An added line of an edit's diff (view only; issue 11).
    DiffAdded,
    /// A removed line of an edit's diff (view only).
    DiffRemoved,
}

impl TokenType {
    /// All types in legend order.
    pub const ALL: [TokenType; 10] = [
        TokenType::Prompt,
        TokenType::FinalAnswer,
        TokenType::Narration,
        TokenType::Thinking,
        TokenType::ToolName,
        TokenType::ToolError,
        TokenType::Gate,
        TokenType::Meta,
        TokenType::DiffAdded,
        TokenType::DiffRemoved,
    ];

    /// The custom legend name (PROTOCOL.md).
    pub fn name(self) -> &'static str {
        match self {
            TokenType::Prompt => "prompt",
            TokenType::FinalAnswer => "finalAnswer",
            TokenType::Narration => "narration",
            TokenType::Thinking => "thinking",
            TokenType::ToolName => "toolName",
            TokenType::ToolError => "toolError",
            TokenType::Gate => "gate",
            TokenType::Meta => "meta",
            TokenType::DiffAdded => "diffAdded",
            TokenType::DiffRemoved => "diffRemoved",
        }
    }

    /// Index in the legend.
    pub fn index(self) -> u32 {
        self as u32
    }
}

/// Modifier bit: the reply has no completion evidence (seed 004), or its response was cut
/// (`max_tokens`, API error).
pub const MOD_INCOMPLETE: u32 = 1;
/// Modifier bit: the turn is still being written (seed 004 in-flight).
pub const MOD_IN_FLIGHT: u32 = 2;
/// Modifier bit: the text comes from a sidechain (sub-agent) record.
pub const MOD_SIDECHAIN: u32 = 4;

/// Modifier names, bit `i` = `MODIFIERS[i]`.
pub const MODIFIERS: [&str; 3] = ["incomplete", "inFlight", "sidechain"];

/// One token. `start..end` are byte offsets into the document text (raw source or view text),
/// on the 0-based `line`; never empty, never crossing a line end.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Token {
    pub line: usize,
    pub start: usize,
    pub end: usize,
    pub ty: TokenType,
    /// Bit set of `MOD_*`.
    pub modifiers: u32,
}

/// At most this many text strings inside one tool result array are tokenised.
const MAX_RESULT_STRINGS: usize = 64;

/// Tokens of the raw `.jsonl` source for the lines `lines` (inclusive range; `None` = all),
/// sorted by position.
pub fn raw_tokens(
    transcript: &Transcript,
    analysis: &Analysis,
    lookup: &Lookup,
    source: &str,
    lines: Option<(usize, usize)>,
) -> Vec<Token> {
    let entries = &transcript.entries;
    let (first, last) = lines.unwrap_or((0, usize::MAX));
    let start_idx = entries.partition_point(|e| e.line < first);
    let mut out = Vec::new();
    for (ei, entry) in entries.iter().enumerate().skip(start_idx) {
        if entry.line > last {
            break;
        }
        let turn = lookup.turn_of(ei).and_then(|t| analysis.turns.get(t));
        let mut mods = 0;
        if entry.sidechain {
            mods |= MOD_SIDECHAIN;
        }
        if turn.is_some_and(|t| t.state == TurnState::InFlight) {
            mods |= MOD_IN_FLIGHT;
        }
        let cut_short = entry.step.as_ref().is_some_and(|s| {
            s.api_error.is_some() || matches!(s.stop, Some(StopReason::MaxTokens))
        });
        for (bi, block) in entry.blocks.iter().enumerate() {
            let mut segs: Vec<(Span, TokenType, u32)> = Vec::new();
            match &block.kind {
                BlockKind::Text { text } => {
                    let base = match &entry.role {
                        Role::Prompt(_) | Role::Steering => Some(TokenType::Prompt),
                        Role::Model => Some(TokenType::Narration),
                        Role::Wake(_)
                        | Role::Meta
                        | Role::Context
                        | Role::LocalCommand
                        | Role::CompactSummary
                        | Role::Interruption => Some(TokenType::Meta),
                        _ => None,
                    };
                    let Some(base) = base else { continue };
                    let mut m = mods;
                    let mut raw = text.raw.clone();
                    if base == TokenType::Narration {
                        if let Some(t) = lookup.final_answer_turn(ei, bi) {
                            let turn = &analysis.turns[t];
                            if turn.state != TurnState::Complete {
                                m |= MOD_INCOMPLETE;
                            }
                            let marker = turn
                                .final_answer
                                .as_ref()
                                .and_then(|fa| fa.marker.as_ref())
                                .filter(|mk| mk.entry == ei && mk.block == bi);
                            if let Some(mk) = marker {
                                // Prose before the marker is narration; the marker line is
                                // meta; the answer starts after it (seed 000).
                                let ms = mk.span.start.clamp(raw.start, raw.end);
                                let me = mk.span.end.clamp(ms, raw.end);
                                let ans = mk.answer_start.clamp(me, raw.end);
                                segs.push((raw.start..ms, TokenType::Narration, mods));
                                segs.push((ms..me, TokenType::Meta, mods));
                                raw = ans..raw.end;
                            }
                            segs.push((raw, TokenType::FinalAnswer, m));
                        } else {
                            if cut_short {
                                m |= MOD_INCOMPLETE;
                            }
                            segs.push((raw, TokenType::Narration, m));
                        }
                    } else {
                        segs.push((raw, base, m));
                    }
                }
                BlockKind::Thinking { text, .. } => {
                    if !text.is_empty() {
                        segs.push((text.raw.clone(), TokenType::Thinking, mods));
                    }
                }
                BlockKind::ToolUse(tu) => {
                    if let Some(span) =
                        lookup::find_string_value(source, &block.span, "name", &tu.input)
                    {
                        segs.push((span, TokenType::ToolName, mods));
                    }
                }
                BlockKind::ToolResult(tr) => {
                    if tr.is_error && tr.images.is_empty() {
                        let c = &tr.content;
                        let is_string =
                            c.start > 0 && source.as_bytes().get(c.start - 1) == Some(&b'"');
                        if is_string {
                            segs.push((c.clone(), TokenType::ToolError, mods));
                        } else {
                            for s in lookup::text_strings_in(source, c, MAX_RESULT_STRINGS) {
                                segs.push((s, TokenType::ToolError, mods));
                            }
                        }
                    }
                }
                BlockKind::Image { .. } | BlockKind::Other { .. } => {}
            }
            // Gate lines cut through the prose they sit in.
            let gates: Vec<Span> = lookup
                .gates_in(ei, bi)
                .iter()
                .filter_map(|&g| analysis.gates.get(g))
                .map(|g| g.span.clone())
                .collect();
            emit_with_overlays(&mut out, entry.line, &entry.span, segs, &gates, mods);
        }
    }
    out
}

/// Pushes `segs` (in order) cut by the `gates` overlays, clamped to the line span.
fn emit_with_overlays(
    out: &mut Vec<Token>,
    line: usize,
    line_span: &Span,
    segs: Vec<(Span, TokenType, u32)>,
    gates: &[Span],
    gate_mods: u32,
) {
    let clamp = |s: &Span| s.start.max(line_span.start)..s.end.min(line_span.end);
    let mut gates: Vec<Span> = gates
        .iter()
        .map(clamp)
        .filter(|g| g.start < g.end)
        .collect();
    gates.sort_by_key(|g| g.start);
    let mut pushed_gate = vec![false; gates.len()];
    let push = |out: &mut Vec<Token>, s: Span, ty: TokenType, m: u32| {
        if s.start < s.end {
            out.push(Token {
                line,
                start: s.start,
                end: s.end,
                ty,
                modifiers: m,
            });
        }
    };
    for (span, ty, m) in segs {
        let span = clamp(&span);
        let mut at = span.start;
        for (gi, g) in gates.iter().enumerate() {
            if g.end <= at || g.start >= span.end {
                continue;
            }
            push(out, at..g.start.max(at), ty, m);
            if !pushed_gate[gi] {
                push(out, g.start.max(at)..g.end, TokenType::Gate, gate_mods);
                pushed_gate[gi] = true;
            }
            at = g.end;
        }
        push(out, at..span.end.max(at), ty, m);
    }
}

/// Tokens of the rendered view for the lines `lines` (inclusive; `None` = all). `line_starts`
/// are the byte offsets of each view line in `view.text`.
pub fn view_tokens(
    view: &View,
    line_starts: &[usize],
    lines: Option<(usize, usize)>,
) -> Vec<Token> {
    let (first, last) = lines.unwrap_or((0, usize::MAX));
    let from = view.spans.partition_point(|s| s.line < first);
    let mut out = Vec::new();
    for s in &view.spans[from..] {
        if s.line > last {
            break;
        }
        let Some(&ls) = line_starts.get(s.line) else {
            break;
        };
        let le = line_starts
            .get(s.line + 1)
            .map_or(view.text.len(), |&n| n.saturating_sub(1));
        let start = (ls + s.start).min(le);
        let end = (ls + s.end).min(le);
        if start >= end {
            continue;
        }
        let mut modifiers = 0;
        if s.incomplete {
            modifiers |= MOD_INCOMPLETE;
        }
        if s.in_flight {
            modifiers |= MOD_IN_FLIGHT;
        }
        if s.sidechain {
            modifiers |= MOD_SIDECHAIN;
        }
        out.push(Token {
            line: s.line,
            start,
            end,
            ty: span_type(s.kind),
            modifiers,
        });
    }
    out
}

/// The token type of a view span kind.
pub fn span_type(kind: SpanKind) -> TokenType {
    match kind {
        SpanKind::Prompt => TokenType::Prompt,
        SpanKind::FinalAnswer => TokenType::FinalAnswer,
        SpanKind::Narration => TokenType::Narration,
        SpanKind::Thinking => TokenType::Thinking,
        SpanKind::ToolName => TokenType::ToolName,
        SpanKind::ToolError => TokenType::ToolError,
        SpanKind::Gate => TokenType::Gate,
        SpanKind::Meta => TokenType::Meta,
        SpanKind::DiffAdded => TokenType::DiffAdded,
        SpanKind::DiffRemoved => TokenType::DiffRemoved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlays_cut_prose_around_a_gate() {
        let mut out = Vec::new();
        emit_with_overlays(
            &mut out,
            0,
            &(0..100),
            vec![(10..50, TokenType::FinalAnswer, MOD_INCOMPLETE)],
            &[20..30, 60..70],
            0,
        );
        let got: Vec<(usize, usize, TokenType, u32)> = out
            .iter()
            .map(|t| (t.start, t.end, t.ty, t.modifiers))
            .collect();
        assert_eq!(
            got,
            vec![
                (10, 20, TokenType::FinalAnswer, MOD_INCOMPLETE),
                (20, 30, TokenType::Gate, 0),
                (30, 50, TokenType::FinalAnswer, MOD_INCOMPLETE),
            ]
        );
    }

    #[test]
    fn legend_order_is_stable() {
        let names: Vec<&str> = TokenType::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            vec![
                "prompt",
                "finalAnswer",
                "narration",
                "thinking",
                "toolName",
                "toolError",
                "gate",
                "meta",
                "diffAdded",
                "diffRemoved"
            ]
        );
        assert_eq!(TokenType::Meta.index(), 7);
        assert_eq!(TokenType::DiffRemoved.index(), 9);
    }
}
