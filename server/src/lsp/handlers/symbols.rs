//! `textDocument/documentSymbol`: turns and their parts (`ide::symbols`), nested or flat as the
//! client supports.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::lsp::convert::{self, Encoding, LineIndex};
use crate::lsp::server::{Backend, Ctx, read};

impl Backend {
    pub(crate) fn document_symbol_now(
        &self,
        ctx: &Ctx,
        _params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let syms = match ctx {
            Ctx::Raw { snap, .. } if !snap.is_transcript() => Vec::new(),
            Ctx::Raw { snap, .. } => {
                ide::symbols::raw_symbols(&snap.transcript, &snap.analysis, &snap.text)
            }
            Ctx::View { snap, view, .. } => ide::symbols::view_symbols(&view.view, &snap.analysis),
        };
        let enc = self.shared.enc();
        let doc_syms: Vec<DocumentSymbol> = syms
            .iter()
            .map(|s| to_document_symbol(s, ctx.lines(), ctx.text(), enc))
            .collect();
        if read(&self.shared.caps).hierarchical_symbols {
            Ok(Some(DocumentSymbolResponse::Nested(doc_syms)))
        } else {
            let mut flat = Vec::new();
            flatten_symbols(&doc_syms, ctx.uri(), None, &mut flat);
            Ok(Some(DocumentSymbolResponse::Flat(flat)))
        }
    }
}

fn symbol_kind(k: ide::symbols::SymbolKind) -> SymbolKind {
    use ide::symbols::SymbolKind as K;
    match k {
        K::Preamble => SymbolKind::NAMESPACE,
        K::Turn => SymbolKind::EVENT,
        K::WorkRun => SymbolKind::FUNCTION,
        K::Thought => SymbolKind::FIELD,
        K::FinalAnswer => SymbolKind::STRING,
        K::Gate => SymbolKind::ENUM_MEMBER,
        K::Compaction => SymbolKind::PACKAGE,
        K::Subagent => SymbolKind::CLASS,
        K::Steering => SymbolKind::KEY,
        K::AbandonedBranch => SymbolKind::NULL,
    }
}

/// The range from the start of line `start` to the end of line `end` (clamped to the
/// document).
fn lines_range(lines: &LineIndex, text: &str, start: usize, end: usize, enc: Encoding) -> Range {
    let last = lines.line_count().saturating_sub(1);
    let start = start.min(last);
    let end = end.clamp(start, last);
    let end_col = convert::line_len(text, lines, end, enc).unwrap_or(0);
    Range::new(
        Position::new(start as u32, 0),
        Position::new(end as u32, end_col),
    )
}

#[allow(deprecated)]
fn to_document_symbol(
    s: &ide::symbols::Symbol,
    lines: &LineIndex,
    text: &str,
    enc: Encoding,
) -> DocumentSymbol {
    let range = lines_range(lines, text, s.start_line, s.end_line, enc);
    let sel_line = s
        .selection_line
        .clamp(range.start.line as usize, range.end.line as usize);
    let mut sel = lines_range(lines, text, sel_line, sel_line, enc);
    if sel.end > range.end {
        sel.end = range.end;
    }
    DocumentSymbol {
        name: if s.name.trim().is_empty() {
            "(untitled)".to_string()
        } else {
            s.name.clone()
        },
        detail: (!s.detail.is_empty()).then(|| s.detail.clone()),
        kind: symbol_kind(s.kind),
        tags: None,
        deprecated: None,
        range,
        selection_range: sel,
        children: Some(
            s.children
                .iter()
                .map(|c| to_document_symbol(c, lines, text, enc))
                .collect(),
        ),
    }
}

#[allow(deprecated)]
fn flatten_symbols(
    syms: &[DocumentSymbol],
    uri: &Uri,
    container: Option<&str>,
    out: &mut Vec<SymbolInformation>,
) {
    for s in syms {
        out.push(SymbolInformation {
            name: s.name.clone(),
            kind: s.kind,
            tags: None,
            deprecated: None,
            location: Location {
                uri: uri.clone(),
                range: s.range,
            },
            container_name: container.map(str::to_string),
        });
        if let Some(c) = &s.children {
            flatten_symbols(c, uri, Some(&s.name), out);
        }
    }
}
