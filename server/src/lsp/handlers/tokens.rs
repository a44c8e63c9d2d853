//! `textDocument/semanticTokens/{full,full/delta,range}`: `ide::semantic_tokens` encoded in the
//! session's legend and position encoding (`to_proto::semantic_tokens`); deltas as one
//! prefix/suffix edit.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::ide::host::DocSnap;
use crate::ide::semantic_tokens::Token;
use crate::lsp::state::{Backend, Ctx, invalid, lock, read};
use crate::lsp::to_proto;

pub(crate) fn full(
    b: &Backend,
    ctx: &Ctx,
    params: SemanticTokensParams,
) -> Result<Option<SemanticTokensResult>> {
    let data = encode(b, ctx, tokens_for(ctx, None));
    let id = b.shared.next_result_id();
    lock(&b.shared.tokens).insert(
        params.text_document.uri.as_str().to_string(),
        (id.clone(), data.clone()),
    );
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
    let data = encode(b, ctx, tokens_for(ctx, None));
    let id = b.shared.next_result_id();
    let key = params.text_document.uri.as_str().to_string();
    let prev = lock(&b.shared.tokens).insert(key, (id.clone(), data.clone()));
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
    let tokens = tokens_for(ctx, Some((r.start.line as usize, r.end.line as usize)));
    Ok(Some(SemanticTokensRangeResult::Tokens(SemanticTokens {
        result_id: None,
        data: encode(b, ctx, tokens),
    })))
}

fn encode(b: &Backend, ctx: &Ctx, tokens: Vec<Token>) -> Vec<SemanticToken> {
    let legend = *read(&b.shared.legend);
    to_proto::semantic_tokens(tokens, ctx.text(), ctx.lines(), b.shared.enc(), legend)
}

fn tokens_for(ctx: &Ctx, lines: Option<(usize, usize)>) -> Vec<Token> {
    match &ctx.doc {
        DocSnap::Raw { snap } => {
            if !snap.is_transcript() {
                return Vec::new();
            }
            ide::semantic_tokens::raw_tokens(
                &snap.transcript,
                &snap.analysis,
                &snap.lookup,
                &snap.text,
                lines,
            )
        }
        DocSnap::View { view, .. } => {
            ide::semantic_tokens::view_tokens(&view.view, &view.index.line_starts, lines)
        }
    }
}
