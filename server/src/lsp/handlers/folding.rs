//! `textDocument/foldingRange`: turn, activity, thought and gate folds of the raw document or
//! the view (`ide::folding`), limited to the client's `rangeLimit`, answered as JSON bytes
//! that the transport writes as they are (`dispatch::Reply::Json`; issue 12).

use std::sync::atomic::Ordering;

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide::facade::Turns;
use crate::ide::folding::Fold;
use crate::lsp::handlers::json_array;
use crate::lsp::state::{Backend, Ctx, internal, read};
use crate::lsp::to_proto;
use crate::lsp::turn_cache::FoldPiece;

/// The answer to `textDocument/foldingRange` as the JSON of a `FoldingRange[]`: the same JSON
/// as the typed answer tower-lsp-server would write.
///
/// On a raw transcript the answer is assembled from one piece of JSON per turn (the folds
/// that start within its lines, [`FoldPiece`]), kept per document (`lsp::turn_cache`): a
/// turn the snapshot kept (same outline entry, same lines) is not folded nor serialised again,
/// so an append costs the turns it changed plus copying the bytes (issue 12: 57 ms per request
/// on a 1 GB transcript in Neovim); asked again of the same snapshot, the last answer is
/// copied. A turn in which a fold of the whole document starts
/// (a compaction window, a sub-agent span, an abandoned branch, inherited history) is made
/// afresh together with those folds; when the client's `rangeLimit` is exceeded the whole
/// answer is made afresh. With `Shared::reference_answers`, made from scratch through a
/// `Value` (the tests' reference).
pub(crate) fn folding_range(
    b: &Backend,
    ctx: &Ctx,
    _params: FoldingRangeParams,
) -> Result<Vec<u8>> {
    let limit = read(&b.shared.caps)
        .folding_range_limit
        .unwrap_or(usize::MAX);
    let last = ctx.lines().line_count().saturating_sub(1);
    let reference = b.shared.reference_answers.load(Ordering::Relaxed);
    if !reference
        && let Some(turns) = ctx.doc.turns()
        && let Some(json) = per_turn(b, ctx, &turns, limit, last)?
    {
        return Ok(json);
    }
    let folds = ctx.doc.folds(limit);
    let answer: Vec<FoldingRange> = folds
        .into_iter()
        .filter(|f| f.start_line < last)
        .map(|f| to_proto::folding_range(f, last))
        .collect();
    crate::lsp::state::answer_json(&answer, reference, "folding ranges")
}

/// The answer assembled from per-turn pieces (see [`folding_range`]); `None` when it cannot
/// be (the turns are not in line order, a turn's folds start outside its lines, or more folds
/// than `limit`): the caller makes it whole.
fn per_turn(
    b: &Backend,
    ctx: &Ctx,
    turns: &Turns<'_>,
    limit: usize,
    last: usize,
) -> Result<Option<Vec<u8>>> {
    let doc = &ctx.id;
    let open = || b.shared.host.raw_source(doc).is_some();
    b.shared
        .turn_caches
        .folds
        .with(doc, limit, turns, open, |pieces| {
            // Asked again of the same snapshot (Neovim asks after every change it makes, and on
            // every screen of a big file): the last answer as it was.
            if let Some(json) = pieces.answer(&ctx.doc) {
                return Ok(Some(json.to_vec()));
            }
            // The folds of the whole document, by the turn whose lines they start in.
            let (before_first, mut extra) = turns.document_folds();
            let head = piece(before_first, last)?;
            let mut count = head.count;
            // Lines where the next turn starts: a turn's folds must start before it.
            let mut ok = head
                .max_start
                .is_none_or(|s| turns.is_empty() || s < turns.start(0));
            for i in 0..turns.len() {
                let (start, next) = turns.span(i, usize::MAX);
                let p = match pieces.take(i) {
                    Some(p) if !extra.contains_key(&i) && p.exact && p.max_end <= last => p,
                    _ => piece(turns.folds(i, extra.remove(&i).unwrap_or_default()), last)?,
                };
                ok &=
                    p.min_start.is_none_or(|s| s >= start) && p.max_start.is_none_or(|s| s < next);
                count += p.count;
                pieces.set(i, p);
            }
            if !ok || count > limit {
                return Ok(None);
            }
            let rest = pieces.iter().map(|p| p.map_or(&[][..], |p| &p.json[..]));
            let out = json_array(std::iter::once(&head.json[..]).chain(rest));
            pieces.set_answer(&ctx.doc, out.clone());
            Ok(Some(out))
        })
}

fn piece(folds: Vec<Fold>, last: usize) -> Result<FoldPiece> {
    let min_start = folds.iter().map(|f| f.start_line).min();
    let max_start = folds.iter().map(|f| f.start_line).max();
    let max_end = folds.iter().map(|f| f.end_line).max().unwrap_or(0);
    let mut json = Vec::new();
    let mut count = 0;
    for f in folds.into_iter().filter(|f| f.start_line < last) {
        if count > 0 {
            json.push(b',');
        }
        serde_json::to_writer(&mut json, &to_proto::folding_range(f, last))
            .map_err(|e| internal(format!("folding range as JSON: {e}")))?;
        count += 1;
    }
    Ok(FoldPiece {
        json: json.into_boxed_slice(),
        count,
        min_start,
        max_start,
        max_end,
        exact: max_end <= last,
    })
}
