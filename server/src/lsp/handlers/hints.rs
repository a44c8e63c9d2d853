//! `textDocument/inlayHint`: the per-turn figures at line ends (`ide::inlay_hints`), answered
//! as JSON bytes that the transport writes as they are (`dispatch::Reply::Json`; issue
//! 12).

use std::sync::atomic::Ordering;

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::ide::facade::Turns;
use crate::lsp::handlers::json_array;
use crate::lsp::state::{Backend, Ctx, internal, invalid, read};
use crate::lsp::to_proto;
use crate::source::position::Encoding;

/// The answer to `textDocument/inlayHint` as the JSON of an `InlayHint[]` on the lines of the
/// request's range: the same JSON as the typed answer tower-lsp-server would write.
///
/// On a raw transcript, the hints of each turn whose lines lie wholly inside the range are
/// one piece of JSON kept per document (`lsp::turn_cache`): a turn the snapshot kept (same
/// outline entry, same lines) is not made nor serialised again while the encoding, the
/// `timeZone` setting and the number of turns are the same. Turns the range only partly covers are made
/// afresh for the lines it covers. With `Shared::reference_answers`, made from scratch through
/// a `Value` (the tests' reference). Errors: a range that starts past the last line or ends
/// before it starts (`InvalidParams`).
pub(crate) fn inlay_hint(b: &Backend, ctx: &Ctx, params: InlayHintParams) -> Result<Vec<u8>> {
    let r = params.range;
    if r.start > r.end || r.start.line as usize >= ctx.lines().line_count() {
        return Err(invalid(format!(
            "range starting at line {} is out of range (the document has {} lines)",
            r.start.line,
            ctx.lines().line_count()
        )));
    }
    let tz = read(&b.shared.settings).time_zone.clone();
    let enc = b.shared.enc();
    let reference = b.shared.reference_answers.load(Ordering::Relaxed);
    // Only the hints of the range are made (a screen of a 1 GB transcript, issue 12).
    let lines = (r.start.line as usize, r.end.line as usize);
    if !reference
        && let Some(turns) = ctx.doc.turns()
        && let Some(json) = per_turn(b, ctx, &turns, lines, tz.as_deref(), enc)?
    {
        return Ok(json);
    }
    let hints = ctx.doc.hints(lines.0..=lines.1, tz.as_deref());
    let answer: Vec<InlayHint> = hints
        .into_iter()
        .filter_map(|h| to_proto::inlay_hint(h, ctx.text(), ctx.lines(), enc))
        .collect();
    crate::lsp::state::answer_json(&answer, reference, "inlay hints")
}

/// The answer assembled from per-turn pieces (see [`inlay_hint`]); `None` when it cannot be
/// (the outline does not have one entry per turn, or the turns are not in line order).
fn per_turn(
    b: &Backend,
    ctx: &Ctx,
    turns: &Turns<'_>,
    (first, last): (usize, usize),
    tz: Option<&str>,
    enc: Encoding,
) -> Result<Option<Vec<u8>>> {
    let line_count = ctx.lines().line_count();
    let span = |i: usize| {
        let (start, end) = turns.span(i, line_count);
        (start, end.max(start))
    };
    let doc = &ctx.id;
    let open = || b.shared.host.raw_source(doc).is_some();
    let key = (enc, tz.map(str::to_string), turns.turn_count());
    let hints_in = |from: usize, to: usize| ctx.doc.hints(from..=to, tz);
    let whole = |i: usize| {
        let (s, e) = span(i);
        s >= first && e > s && e - 1 <= last
    };
    b.shared
        .turn_caches
        .hints
        .with(doc, key, turns, open, |pieces| {
            // Pieces to make: runs of turns wholly in the range without one, each run made at
            // once (`raw_hints_in` goes over every turn and response) and cut by turn.
            let mut i = 0;
            while i < turns.len() {
                if !(whole(i) && pieces.get(i).is_none()) {
                    i += 1;
                    continue;
                }
                let mut j = i;
                while j + 1 < turns.len() && whole(j + 1) && pieces.get(j + 1).is_none() {
                    j += 1;
                }
                let hints = hints_in(span(i).0, span(j).1 - 1);
                let mut hints = hints.into_iter().peekable();
                for k in i..=j {
                    let end = span(k).1;
                    let mut json = Vec::new();
                    while let Some(h) = hints.next_if(|h| h.line < end) {
                        push_hint(&mut json, h, ctx, enc)?;
                    }
                    pieces.set(k, json.into_boxed_slice());
                }
                i = j + 1;
            }
            // The answer in line order: lines before the first turn, then each turn the range
            // touches, whole from its piece or the part of it in the range made afresh.
            let mut parts: Vec<std::borrow::Cow<'_, [u8]>> = Vec::new();
            let fresh = |from: usize, to: usize| -> Result<Vec<u8>> {
                let mut json = Vec::new();
                for h in hints_in(from, to) {
                    push_hint(&mut json, h, ctx, enc)?;
                }
                Ok(json)
            };
            let first_turn = if turns.is_empty() {
                line_count
            } else {
                turns.start(0)
            };
            if first < first_turn {
                parts.push(fresh(first, last.min(first_turn - 1))?.into());
            }
            let from_turn = turns.turn_of_line(first).unwrap_or(0);
            for (k, piece) in pieces.iter().enumerate().skip(from_turn) {
                let (s, e) = span(k);
                if s > last {
                    break;
                }
                if e <= first || e <= s {
                    continue;
                }
                match piece {
                    Some(p) if whole(k) => parts.push(p[..].into()),
                    _ => parts.push(fresh(s.max(first), last.min(e - 1))?.into()),
                }
            }
            Ok(Some(json_array(parts.iter().map(|p| &p[..]))))
        })
}

/// Appends the JSON of hint `h` to `json` (a comma first unless it is empty); a hint past the
/// last line is left out.
fn push_hint(
    json: &mut Vec<u8>,
    h: ide::inlay_hints::Hint,
    ctx: &Ctx,
    enc: Encoding,
) -> Result<()> {
    let Some(hint) = to_proto::inlay_hint(h, ctx.text(), ctx.lines(), enc) else {
        return Ok(());
    };
    if !json.is_empty() {
        json.push(b',');
    }
    serde_json::to_writer(&mut *json, &hint)
        .map_err(|e| internal(format!("inlay hint as JSON: {e}")))
}
