//! Every conversion from the ide's plain data (byte offsets, line numbers, `ide::*` structs) to
//! LSP types, in one place (issue 8; rust-analyzer's `to_proto.rs`). Positions are in the
//! negotiated encoding (UTF-8 or UTF-16 code units); a position past the end of its line is
//! clamped to the line end (LSP 3.17 §Position).

use serde_json::{Value, json};
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::ide::DocAnalysis;
use crate::ide::facade::Place;
use crate::ide::folding::{Fold, FoldKind};
use crate::ide::semantic_tokens::Token;
use crate::lsp::capabilities;
use crate::lsp::config::TokenLegend;
use crate::lsp::ext::Command as Cmd;
pub use crate::source::lines::LineIndex;
use crate::source::position as sp;
pub use crate::source::position::Encoding;
use crate::store::host::DocId;
use crate::store::live::Level;

fn to_lsp(p: sp::Position) -> Position {
    Position::new(p.line, p.character)
}

/// Position of byte `offset` of `text` (clamped to the text, its line and a char boundary).
pub fn position(text: &str, index: &LineIndex, offset: usize, enc: Encoding) -> Position {
    to_lsp(sp::offset_to_position(text, index, offset, enc))
}

/// Length of `line` in encoding units (its end column); `None` past the last line.
pub fn line_len(text: &str, index: &LineIndex, line: usize, enc: Encoding) -> Option<u32> {
    if line >= index.line_count() {
        return None;
    }
    let span = index.line_span(line, text);
    Some(sp::column_len(&text[span], enc) as u32)
}

/// The range covering the content of `line`.
pub fn line_range(text: &str, index: &LineIndex, line: usize, enc: Encoding) -> Option<Range> {
    let len = line_len(text, index, line, enc)?;
    Some(Range::new(
        Position::new(line as u32, 0),
        Position::new(line as u32, len),
    ))
}

/// The range of bytes `span` of `text`.
pub fn range(text: &str, index: &LineIndex, span: std::ops::Range<usize>, enc: Encoding) -> Range {
    Range::new(
        position(text, index, span.start, enc),
        position(text, index, span.end, enc),
    )
}

/// The range from the start of line `start` to the end of line `end` (clamped to the
/// document).
pub fn lines_range(
    lines: &LineIndex,
    text: &str,
    start: usize,
    end: usize,
    enc: Encoding,
) -> Range {
    let last = lines.line_count().saturating_sub(1);
    let start = start.min(last);
    let end = end.clamp(start, last);
    let end_col = line_len(text, lines, end, enc).unwrap_or(0);
    Range::new(
        Position::new(start as u32, 0),
        Position::new(end as u32, end_col),
    )
}

/// Length of `s` in encoding units.
pub fn units(s: &str, enc: Encoding) -> usize {
    sp::column_len(s, enc)
}

/// The `file:` URI of a path (`None` for a relative path).
pub fn file_uri(path: &std::path::Path) -> Option<Uri> {
    if !path.is_absolute() {
        return Uri::from_file_path(path);
    }
    format!("file://{}", encoded_path(path)).parse().ok()
}

/// What a URI path keeps as it is (RFC 3986 unreserved characters and `/`); every other byte
/// is `%XX` (uppercase hex).
pub(crate) const PATH_KEEPS: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// What a URI query value keeps as it is (RFC 3986 unreserved characters only).
pub(crate) const COMPONENT_KEEPS: &percent_encoding::AsciiSet = &PATH_KEEPS.add(b'/');

/// An absolute path's bytes percent-encoded for a URI's path ([`PATH_KEEPS`]): a file name
/// that is not UTF-8 keeps its bytes (`caf%E9.jsonl`; issue 25, Low list: such files were left
/// out of the index, `Uri::from_file_path` refusing them), read back by `from_proto::file_path`.
fn encoded_path(path: &std::path::Path) -> String {
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
    #[cfg(not(unix))]
    let bytes = path.to_string_lossy().replace('\\', "/").into_bytes();
    percent_encoding::percent_encode(&bytes, PATH_KEEPS).to_string()
}

/// The `transcript:` URI of a file's view; `verbose` adds `?verbose=1` / `?verbose=0`.
pub fn view_uri(path: &std::path::Path, verbose: Option<bool>) -> Option<Uri> {
    let mut s = format!("{}://{}", capabilities::VIEW_SCHEME, encoded_path(path));
    match verbose {
        Some(true) => s.push_str("?verbose=1"),
        Some(false) => s.push_str("?verbose=0"),
        None => {}
    }
    s.parse().ok()
}

/// The URI of a host document id (the client's own spelling, parsed back).
pub fn doc_uri(doc: &DocId) -> Option<Uri> {
    doc.as_str().parse().ok()
}

/// The message type of a log level.
pub fn message_type(level: Level) -> MessageType {
    match level {
        Level::Error => MessageType::ERROR,
        Level::Warning => MessageType::WARNING,
        Level::Info => MessageType::INFO,
        Level::Log => MessageType::LOG,
    }
}

/// A folding range; its end clamped to `last` (the document's last line).
pub fn folding_range(f: Fold, last: usize) -> FoldingRange {
    FoldingRange {
        start_line: f.start_line as u32,
        start_character: None,
        end_line: f.end_line.min(last) as u32,
        end_character: None,
        kind: Some(fold_kind(f.kind)),
        collapsed_text: Some(f.label),
    }
}

fn fold_kind(k: FoldKind) -> FoldingRangeKind {
    match k {
        FoldKind::Activity | FoldKind::Thought => FoldingRangeKind::Comment,
        // Inherited history reads like imports: clients that collapse imports by default
        // (VS Code `editor.foldingImportsByDefault`) start with it collapsed.
        FoldKind::Inherited => FoldingRangeKind::Imports,
        _ => FoldingRangeKind::Region,
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
        K::Changes => SymbolKind::OBJECT,
        K::ChangedFile => SymbolKind::FILE,
        K::Session => SymbolKind::MODULE,
    }
}

/// A document symbol (and its children) of the document `text`.
#[allow(deprecated)]
pub fn document_symbol(
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
                .map(|c| document_symbol(c, lines, text, enc))
                .collect(),
        ),
    }
}

/// Nested document symbols as a flat list (for clients without hierarchical symbols).
#[allow(deprecated)]
pub fn flatten_symbols(
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

/// A workspace symbol: one turn of an indexed session (`None` when its path is not absolute).
#[allow(deprecated)]
pub fn workspace_symbol(t: ide::workspace_symbols::TurnHit<'_>) -> Option<SymbolInformation> {
    let uri = file_uri(t.path)?;
    let pos = Position::new(t.turn.start_line as u32, 0);
    Some(SymbolInformation {
        name: t.name,
        kind: SymbolKind::EVENT,
        tags: None,
        deprecated: None,
        location: Location {
            uri,
            range: Range::new(pos, pos),
        },
        container_name: Some(t.container),
    })
}

/// A diagnostic of the raw text.
pub fn diagnostic(
    d: ide::diagnostics::Diag,
    text: &str,
    lines: &LineIndex,
    enc: Encoding,
) -> Diagnostic {
    Diagnostic {
        range: range(text, lines, d.span.clone(), enc),
        severity: Some(match d.severity {
            crate::model::Severity::Error => DiagnosticSeverity::ERROR,
            crate::model::Severity::Warning => DiagnosticSeverity::WARNING,
            crate::model::Severity::Information => DiagnosticSeverity::INFORMATION,
            crate::model::Severity::Hint => DiagnosticSeverity::HINT,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        source: Some("transcript-ls".to_string()),
        message: d.message,
        ..Diagnostic::default()
    }
}

/// An inlay hint at the start (raw turn hints, issue 7) or the end of its line; `None` past
/// the last line.
pub fn inlay_hint(
    h: ide::inlay_hints::Hint,
    text: &str,
    lines: &LineIndex,
    enc: Encoding,
) -> Option<InlayHint> {
    let start = h.position == ide::inlay_hints::HintPosition::LineStart;
    let col = if start {
        0
    } else {
        line_len(text, lines, h.line, enc)?
    };
    Some(InlayHint {
        position: Position::new(h.line as u32, col),
        label: InlayHintLabel::String(h.label),
        kind: None,
        text_edits: None,
        tooltip: Some(InlayHintTooltip::MarkupContent(MarkupContent {
            kind: MarkupKind::Markdown,
            value: h.tooltip,
        })),
        padding_left: Some(!start),
        padding_right: Some(start),
        data: None,
    })
}

/// Hover contents on `range`: Markdown, or the same text as plain text for clients without
/// Markdown.
pub fn hover(markdown: String, range: Option<Range>, markdown_ok: bool) -> Hover {
    let kind = if markdown_ok {
        MarkupKind::Markdown
    } else {
        MarkupKind::PlainText
    };
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind,
            value: markdown,
        }),
        range,
    }
}

/// Encodes tokens (byte spans of `text`) as LSP relative tokens in `legend`; tokens that
/// overlap an earlier one, span a line break or are empty are left out.
pub fn semantic_tokens(
    mut tokens: Vec<Token>,
    text: &str,
    lines: &LineIndex,
    enc: Encoding,
    legend: TokenLegend,
) -> Vec<SemanticToken> {
    tokens.sort_by_key(|t| (t.start, t.end));
    let mut cursor = sp::LineCursor::new(text, lines, enc);
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

/// Diff of two token arrays as one edit (common prefix / suffix), in `u32` units.
pub fn token_edits(old: &[SemanticToken], new: &[SemanticToken]) -> Vec<SemanticTokensEdit> {
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

/// A code lens on document `uri` (`doc` gives the gate lines for `transcript.nextGate`).
pub fn code_lens(l: ide::code_lens::Lens, uri: &Uri, doc: &DocAnalysis) -> CodeLens {
    use ide::code_lens::LensAction;
    let pos = Position::new(l.line as u32, 0);
    let command = match &l.action {
        LensAction::NextGate { gate, .. } => Command {
            title: l.title.clone(),
            command: Cmd::NextGate.name().to_string(),
            arguments: Some(vec![json!({
                "uri": uri.as_str(),
                "line": doc.gate_line(*gate).unwrap_or(l.line),
                "reveal": true,
            })]),
        },
        LensAction::OpenFile { path } => Command {
            title: l.title.clone(),
            command: Cmd::OpenView.name().to_string(),
            arguments: file_uri(path).map(|u| vec![json!({ "uri": u.as_str(), "reveal": true })]),
        },
        LensAction::OpenVerbose { turn } => Command {
            title: l.title.clone(),
            command: Cmd::OpenView.name().to_string(),
            arguments: Some(vec![json!({
                "uri": uri.as_str(),
                "verbose": true,
                "turn": turn,
                "reveal": true,
            })]),
        },
        LensAction::ShowDiff { .. } => Command {
            title: l.title.clone(),
            command: Cmd::ShowDiff.name().to_string(),
            arguments: Some(vec![json!({ "uri": uri.as_str(), "line": l.line })]),
        },
        LensAction::ShowChanges { turn } => Command {
            title: l.title.clone(),
            command: Cmd::ShowChanges.name().to_string(),
            arguments: Some(vec![match turn {
                Some(n) => json!({ "uri": uri.as_str(), "turn": n }),
                None => json!({ "uri": uri.as_str(), "session": true }),
            }]),
        },
        LensAction::None => Command {
            title: l.title.clone(),
            command: String::new(),
            arguments: None,
        },
    };
    CodeLens {
        range: Range::new(pos, pos),
        command: Some(command),
        data: None,
    }
}

/// The location of a place in document `uri` (`doc` is the document the place is in).
pub fn location(uri: &Uri, doc: &DocAnalysis, p: &Place<'_>, enc: Encoding) -> Option<Location> {
    match p {
        Place::File(path) => Some(Location {
            uri: file_uri(path)?,
            range: Range::default(),
        }),
        Place::Span(span) => Some(Location {
            uri: uri.clone(),
            range: range(doc.text(), doc.lines(), span.clone(), enc),
        }),
        Place::Line(l) => Some(Location {
            uri: uri.clone(),
            range: line_range(doc.text(), doc.lines(), *l, enc)?,
        }),
        Place::Raw {
            path,
            text,
            lines,
            span,
        } => Some(Location {
            uri: file_uri(path)?,
            range: range(text, lines, span.clone(), enc),
        }),
    }
}

/// One session of `transcript/sessions` (PROTOCOL.md): the index's fields with `path`,
/// `parent` and `children` as `file:` URIs (`uri`, `parent`, `children`). `None` when the
/// session's path cannot be named by a URI.
pub fn session(s: &crate::index::SessionInfo) -> Option<Value> {
    let uri = |p: &std::path::Path| file_uri(p).map(|u| u.as_str().to_string());
    let mut v = serde_json::to_value(s).ok()?;
    let o = v.as_object_mut()?;
    o.insert("uri".into(), json!(uri(&s.path)?));
    o.insert("parent".into(), json!(s.parent.as_deref().and_then(uri)));
    o.insert(
        "children".into(),
        json!(s.children.iter().filter_map(|c| uri(c)).collect::<Vec<_>>()),
    );
    Some(v)
}

/// One entry of `transcript/fileHistory` (PROTOCOL.md): the transcript as a `file:` URI and
/// the turn's figures; `None` when the transcript cannot be named by a URI.
pub fn history_entry(e: &crate::index::history::HistoryEntry) -> Option<Value> {
    Some(json!({
        "uri": file_uri(&e.session)?.as_str(),
        "agent": e.agent,
        "sessionTitle": e.session_title,
        "turn": e.turn,
        "turnTitle": e.turn_title,
        "time": e.time,
        "action": e.action,
        "added": e.added,
        "removed": e.removed,
        "line": e.line,
        "label": e.label(),
    }))
}

/// One range of `transcript/blame` (PROTOCOL.md): whole lines `start..=end` of the text whose
/// lines are `lines`, from the first line's start to the last line's end in `enc`.
pub fn blame_range(
    r: &crate::index::history::BlameRange,
    lines: &[&str],
    enc: Encoding,
) -> Option<Value> {
    let last = lines.get(r.end)?;
    let last = last.strip_suffix('\r').unwrap_or(last);
    let range = Range {
        start: Position::new(r.start as u32, 0),
        end: Position::new(r.end as u32, sp::column_len(last, enc) as u32),
    };
    Some(json!({
        "range": range,
        "uri": file_uri(&r.session)?.as_str(),
        "agent": r.agent,
        "sessionTitle": r.session_title,
        "turn": r.turn,
        "turnTitle": r.turn_title,
        "time": r.time,
        "prompt": r.prompt,
        "line": r.line,
        "label": r.label(),
    }))
}

/// The result of `transcript.listSessionFiles`: the main file, then each sub-agent or
/// compaction file, as `{ uri, kind, … }`.
pub fn session_files(files: &crate::index::session_files::SessionFiles) -> Value {
    let mut out = Vec::new();
    if let Some(u) = file_uri(&files.main) {
        out.push(json!({ "uri": u.as_str(), "kind": "main" }));
    }
    for f in &files.subagents {
        let Some(u) = file_uri(&f.path) else {
            continue;
        };
        out.push(json!({
            "uri": u.as_str(),
            "kind": if f.is_compaction { "compaction" } else { "subagent" },
            "agentId": f.agent_id,
            "toolUseId": f.tool_use_id,
            "description": f.description,
            "agentType": f.agent_type,
            "warmup": f.is_warmup,
        }));
    }
    Value::Array(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(l: u32, s: u32) -> SemanticToken {
        SemanticToken {
            delta_line: l,
            delta_start: s,
            length: 1,
            token_type: 0,
            token_modifiers_bitset: 0,
        }
    }

    #[test]
    fn token_edits_are_prefix_suffix_diffs() {
        let old = vec![tok(0, 1), tok(1, 2), tok(1, 3)];
        let new = vec![tok(0, 1), tok(1, 2), tok(2, 0), tok(1, 3)];
        let e = token_edits(&old, &new);
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].start, e[0].delete_count), (10, 0));
        assert_eq!(e[0].data.as_deref(), Some(&[tok(2, 0)][..]));
        assert!(token_edits(&old, &old).is_empty());
        let e = token_edits(&old, &[]);
        assert_eq!((e[0].start, e[0].delete_count), (0, 15));
    }

    #[test]
    fn positions_in_both_encodings() {
        let text = "ab\n😀é\"x\n\nend";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_count(), 4);
        let x = text.find('x').unwrap();
        assert_eq!(position(text, &idx, x, Encoding::Utf8), Position::new(1, 7));
        assert_eq!(
            position(text, &idx, x, Encoding::Utf16),
            Position::new(1, 4)
        );
        assert_eq!(line_len(text, &idx, 1, Encoding::Utf16), Some(5));
        assert_eq!(line_len(text, &idx, 1, Encoding::Utf8), Some(8));
        assert_eq!(line_len(text, &idx, 4, Encoding::Utf8), None);
    }
}
