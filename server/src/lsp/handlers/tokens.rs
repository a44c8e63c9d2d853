//! `textDocument/semanticTokens/{full,full/delta,range}`: `ide::semantic_tokens` encoded in the
//! session's legend and position encoding; deltas as one prefix/suffix edit.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::ide::semantic_tokens::Token;
use crate::lsp::capabilities;
use crate::lsp::convert::Cursor;
use crate::lsp::server::lock;
use crate::lsp::server::{Backend, Ctx, invalid, read};

impl Backend {
    pub(crate) fn semantic_tokens_full_now(
        &self,
        ctx: &Ctx,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        let tokens = self.tokens_for(ctx, None);
        let data = self.encode_tokens(ctx, tokens);
        let id = self.shared.next_result_id();
        lock(&self.shared.tokens).insert(
            params.text_document.uri.as_str().to_string(),
            (id.clone(), data.clone()),
        );
        Ok(Some(SemanticTokensResult::Tokens(SemanticTokens {
            result_id: Some(id),
            data,
        })))
    }

    pub(crate) fn semantic_tokens_full_delta_now(
        &self,
        ctx: &Ctx,
        params: SemanticTokensDeltaParams,
    ) -> Result<Option<SemanticTokensFullDeltaResult>> {
        let tokens = self.tokens_for(ctx, None);
        let data = self.encode_tokens(ctx, tokens);
        let id = self.shared.next_result_id();
        let key = params.text_document.uri.as_str().to_string();
        let prev = lock(&self.shared.tokens).insert(key, (id.clone(), data.clone()));
        match prev {
            Some((prev_id, old)) if prev_id == params.previous_result_id => Ok(Some(
                SemanticTokensFullDeltaResult::TokensDelta(SemanticTokensDelta {
                    result_id: Some(id),
                    edits: token_edits(&old, &data),
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

    pub(crate) fn semantic_tokens_range_now(
        &self,
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
        let tokens = self.tokens_for(ctx, Some((r.start.line as usize, r.end.line as usize)));
        let data = self.encode_tokens(ctx, tokens);
        Ok(Some(SemanticTokensRangeResult::Tokens(SemanticTokens {
            result_id: None,
            data,
        })))
    }

    fn encode_tokens(&self, ctx: &Ctx, mut tokens: Vec<Token>) -> Vec<SemanticToken> {
        let enc = self.shared.enc();
        let legend = *read(&self.shared.legend);
        tokens.sort_by_key(|t| (t.start, t.end));
        let text = ctx.text();
        let lines = ctx.lines();
        let mut cursor = Cursor::new(text, lines, enc);
        let mut out = Vec::with_capacity(tokens.len());
        let (mut pl, mut pc) = (0u32, 0u32);
        let mut last_end = 0usize;
        for t in tokens {
            if t.start < last_end || t.end <= t.start || t.end > text.len() {
                continue;
            }
            let Some(slice) = text.get(t.start..t.end) else {
                continue;
            };
            if slice.contains('\n') {
                continue;
            }
            let p = cursor.position(t.start);
            let len = cursor.length(t.start, t.end);
            if len == 0 {
                continue;
            }
            let (ty, mods) = capabilities::encode_type(legend, t.ty, t.modifiers);
            let dl = p.line - pl;
            let ds = if dl == 0 {
                p.character - pc
            } else {
                p.character
            };
            out.push(SemanticToken {
                delta_line: dl,
                delta_start: ds,
                length: len,
                token_type: ty,
                token_modifiers_bitset: mods,
            });
            pl = p.line;
            pc = p.character;
            last_end = t.end;
        }
        out
    }

    fn tokens_for(&self, ctx: &Ctx, lines: Option<(usize, usize)>) -> Vec<Token> {
        match ctx {
            Ctx::Raw { snap, .. } => {
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
            Ctx::View { view, .. } => {
                ide::semantic_tokens::view_tokens(&view.view, &view.index.line_starts, lines)
            }
        }
    }
}

/// Diff of two token arrays as one edit (common prefix / suffix), in `u32` units.
pub(crate) fn token_edits(old: &[SemanticToken], new: &[SemanticToken]) -> Vec<SemanticTokensEdit> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    if prefix == old.len() && prefix == new.len() {
        return Vec::new();
    }
    vec![SemanticTokensEdit {
        start: (prefix * 5) as u32,
        delete_count: ((old.len() - prefix - suffix) * 5) as u32,
        data: Some(new[prefix..new.len() - suffix].to_vec()),
    }]
}
