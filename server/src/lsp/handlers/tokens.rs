//! `textDocument/semanticTokens/{full,full/delta,range}`: `ide::semantic_tokens` encoded in the
//! session's legend and position encoding (`to_proto::semantic_tokens`); deltas as one
//! prefix/suffix edit. The whole-document tokens of a raw transcript are kept per turn
//! (`lsp::turn_cache`; issue 12).

use std::sync::atomic::Ordering;

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide::facade::Turns;
use crate::ide::semantic_tokens::Token;
use crate::lsp::state::{Backend, Ctx, invalid, lock, read};
use crate::lsp::to_proto;
use crate::lsp::turn_cache::TokenPiece;

/// Appends `piece` (tokens encoded from the document's start, see [`TokenPiece::data`]) to
/// `out`, whose last token is at `prev` (line, column): the piece's first token is re-based on
/// it as the protocol's relative encoding wants (a token on the same line counts its column
/// from the previous token's); returns the position of the last token now.
fn append_piece(
    out: &mut Vec<SemanticToken>,
    piece: &[SemanticToken],
    prev: (u32, u32),
    last: Option<(u32, u32)>,
) -> (u32, u32) {
    let Some((first, rest)) = piece.split_first() else {
        return prev;
    };
    let (line, col) = (first.delta_line, first.delta_start);
    let delta_line = line.saturating_sub(prev.0);
    out.push(SemanticToken {
        delta_line,
        delta_start: if delta_line == 0 {
            col.saturating_sub(prev.1)
        } else {
            col
        },
        ..*first
    });
    out.extend_from_slice(rest);
    last.unwrap_or((line, col))
}

/// The position (line, column) of the last token of `data`, tokens encoded from the
/// document's start.
fn last_position(data: &[SemanticToken]) -> Option<(u32, u32)> {
    let mut at: Option<(u32, u32)> = None;
    for t in data {
        let (l, c) = at.unwrap_or((0, 0));
        at = Some(if t.delta_line == 0 {
            (l, c + t.delta_start)
        } else {
            (l + t.delta_line, t.delta_start)
        });
    }
    at
}

/// The whole document's tokens encoded: on a raw transcript assembled from the pieces kept
/// per turn (`lsp::turn_cache`), made only for turns the snapshot did not keep (a different
/// outline entry or other lines) or when the encoding or legend changed; else encoded whole
/// (and always with `Shared::reference_answers`, the tests' reference).
fn full_data(b: &Backend, ctx: &Ctx) -> Vec<SemanticToken> {
    let reference = b.shared.reference_answers.load(Ordering::Relaxed);
    if !reference
        && let Some(turns) = ctx.doc.turns()
        && let Some(data) = per_turn(b, ctx, &turns)
    {
        return data;
    }
    encode(b, ctx, ctx.doc.tokens(None))
}

/// See [`full_data`]; `None` when the transcript has no turn.
fn per_turn(b: &Backend, ctx: &Ctx, turns: &Turns<'_>) -> Option<Vec<SemanticToken>> {
    if turns.is_empty() {
        return None;
    }
    let line_count = ctx.lines().line_count();
    let tokens_in = |from: usize, to: usize| ctx.doc.tokens(Some((from, to)));
    let doc = &ctx.id;
    let open = || b.shared.host.raw_source(doc).is_some();
    let key = (b.shared.enc(), *read(&b.shared.legend));
    b.shared
        .turn_caches
        .tokens
        .with(doc, key, turns, open, |pieces| {
            for i in 0..turns.len() {
                if pieces.get(i).is_none() {
                    let (s, e) = turns.span(i, line_count);
                    let data = encode(b, ctx, tokens_in(s, e - 1));
                    pieces.set(
                        i,
                        TokenPiece {
                            last: last_position(&data),
                            data: data.into_boxed_slice(),
                        },
                    );
                }
            }
            // Lines before the first turn, made each time (records before the first prompt).
            let mut out = match turns.start(0) {
                0 => Vec::new(),
                start => encode(b, ctx, tokens_in(0, start - 1)),
            };
            let count: usize = pieces.iter().flatten().map(|p| p.data.len()).sum();
            out.reserve(count);
            let mut prev = last_position(&out).unwrap_or((0, 0));
            for p in pieces.iter().flatten() {
                prev = append_piece(&mut out, &p.data, prev, p.last);
            }
            Some(out)
        })
}

pub(crate) fn full(
    b: &Backend,
    ctx: &Ctx,
    _params: SemanticTokensParams,
) -> Result<Option<SemanticTokensResult>> {
    let data = full_data(b, ctx);
    let id = b.shared.next_result_id();
    lock(&b.shared.turn_caches.sent_tokens).insert(ctx.id.clone(), (id.clone(), data.clone()));
    Ok(Some(SemanticTokensResult::Tokens(SemanticTokens {
        result_id: Some(id),
        data,
    })))
}

pub(crate) fn full_delta(
    b: &Backend,
    ctx: &Ctx,
    params: SemanticTokensDeltaParams,
) -> Result<Option<SemanticTokensFullDeltaResult>> {
    let data = full_data(b, ctx);
    let id = b.shared.next_result_id();
    let prev =
        lock(&b.shared.turn_caches.sent_tokens).insert(ctx.id.clone(), (id.clone(), data.clone()));
    match prev {
        Some((prev_id, old)) if prev_id == params.previous_result_id => Ok(Some(
            SemanticTokensFullDeltaResult::TokensDelta(SemanticTokensDelta {
                result_id: Some(id),
                edits: to_proto::token_edits(&old, &data),
            }),
        )),
        _ => Ok(Some(SemanticTokensFullDeltaResult::Tokens(
            SemanticTokens {
                result_id: Some(id),
                data,
            },
        ))),
    }
}

pub(crate) fn range(
    b: &Backend,
    ctx: &Ctx,
    params: SemanticTokensRangeParams,
) -> Result<Option<SemanticTokensRangeResult>> {
    let r = params.range;
    if r.start > r.end || r.start.line as usize >= ctx.lines().line_count() {
        return Err(invalid(format!(
            "range {}:{}-{}:{} is out of range (the document has {} lines)",
            r.start.line,
            r.start.character,
            r.end.line,
            r.end.character,
            ctx.lines().line_count()
        )));
    }
    let tokens = ctx
        .doc
        .tokens(Some((r.start.line as usize, r.end.line as usize)));
    Ok(Some(SemanticTokensRangeResult::Tokens(SemanticTokens {
        result_id: None,
        data: encode(b, ctx, tokens),
    })))
}

fn encode(b: &Backend, ctx: &Ctx, tokens: Vec<Token>) -> Vec<SemanticToken> {
    let legend = *read(&b.shared.legend);
    to_proto::semantic_tokens(tokens, ctx.text(), ctx.lines(), b.shared.enc(), legend)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tokens at absolute (line, column, length), encoded relative to each other from the
    /// document's start, as the protocol sends them.
    fn encoded(abs: &[(u32, u32, u32)]) -> Vec<SemanticToken> {
        let mut prev = (0, 0);
        abs.iter()
            .map(|&(line, col, length)| {
                let delta_line = line - prev.0;
                let delta_start = if delta_line == 0 { col - prev.1 } else { col };
                prev = (line, col);
                SemanticToken {
                    delta_line,
                    delta_start,
                    length,
                    token_type: line,
                    token_modifiers_bitset: col,
                }
            })
            .collect()
    }

    /// Pieces encoded on their own and re-based one after the other give the encoding of the
    /// whole, whether a piece starts on a later line or on the line where the previous one
    /// ended (its first column then counts from the previous token's).
    #[test]
    fn pieces_re_based_equal_the_whole_encoding() {
        let all = [
            (0, 2, 3),
            (0, 8, 1),
            (2, 1, 4),
            (2, 9, 2),
            (2, 14, 1),
            (5, 0, 7),
            (5, 3, 1),
        ];
        let whole = encoded(&all);
        for cut_a in 0..=all.len() {
            for cut_b in cut_a..=all.len() {
                let parts = [&all[..cut_a], &all[cut_a..cut_b], &all[cut_b..]];
                let mut out = Vec::new();
                let mut prev = (0, 0);
                for part in parts {
                    let data = encoded(part);
                    let last = last_position(&data);
                    assert_eq!(last, part.last().map(|&(l, c, _)| (l, c)));
                    prev = append_piece(&mut out, &data, prev, last);
                }
                assert_eq!(out, whole, "cut at {cut_a} and {cut_b}");
            }
        }
    }
}
