//! What the client can do (read once at `initialize`) and what the server offers.

use serde_json::{Value, json};
use tower_lsp_server::ls_types::*;

use crate::ide::semantic_tokens::{MODIFIERS, TokenType};
use crate::lsp::config::TokenLegend;
use crate::lsp::ext::Command;
use crate::source::position::Encoding;

/// The URI scheme of rendered views.
pub const VIEW_SCHEME: &str = "transcript";

/// The client's capabilities that change what the server sends.
#[derive(Debug, Clone)]
pub struct ClientCaps {
    pub encoding: Encoding,
    pub semantic_tokens_refresh: bool,
    pub inlay_hint_refresh: bool,
    pub code_lens_refresh: bool,
    /// `workspace.textDocumentContent` announced (LSP 3.18): the client handles
    /// `workspace/textDocumentContent/refresh`.
    pub text_document_content: bool,
    pub work_done_progress: bool,
    pub show_document: bool,
    pub hierarchical_symbols: bool,
    /// `textDocument.foldingRange.rangeLimit`.
    pub folding_range_limit: Option<usize>,
    pub folding_collapsed_text: bool,
    pub hover_markdown: bool,
    pub inlay_hint_markdown_tooltip: bool,
}

impl Default for ClientCaps {
    fn default() -> Self {
        ClientCaps {
            encoding: Encoding::Utf16,
            semantic_tokens_refresh: false,
            inlay_hint_refresh: false,
            code_lens_refresh: false,
            text_document_content: false,
            work_done_progress: false,
            show_document: false,
            hierarchical_symbols: false,
            folding_range_limit: None,
            folding_collapsed_text: false,
            hover_markdown: true,
            inlay_hint_markdown_tooltip: false,
        }
    }
}

impl ClientCaps {
    /// Reads the typed capabilities plus the raw JSON of `initialize` params (for LSP 3.18
    /// fields the typed structs do not have).
    pub fn from_params(caps: &ClientCapabilities, raw: Option<&Value>) -> ClientCaps {
        let offers_utf8 = caps
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref())
            .is_some_and(|v| v.contains(&PositionEncodingKind::UTF8));
        let ws = caps.workspace.as_ref();
        let td = caps.text_document.as_ref();
        let raw_caps = raw.and_then(|r| r.get("capabilities"));
        ClientCaps {
            encoding: if offers_utf8 {
                Encoding::Utf8
            } else {
                Encoding::Utf16
            },
            semantic_tokens_refresh: ws
                .and_then(|w| w.semantic_tokens.as_ref())
                .and_then(|s| s.refresh_support)
                .unwrap_or(false),
            inlay_hint_refresh: ws
                .and_then(|w| w.inlay_hint.as_ref())
                .and_then(|s| s.refresh_support)
                .unwrap_or(false),
            code_lens_refresh: ws
                .and_then(|w| w.code_lens.as_ref())
                .and_then(|s| s.refresh_support)
                .unwrap_or(false),
            text_document_content: raw_caps
                .and_then(|c| c.pointer("/workspace/textDocumentContent"))
                .is_some_and(|v| v.is_object()),
            work_done_progress: caps
                .window
                .as_ref()
                .and_then(|w| w.work_done_progress)
                .unwrap_or(false),
            show_document: caps
                .window
                .as_ref()
                .and_then(|w| w.show_document.as_ref())
                .is_some_and(|s| s.support),
            hierarchical_symbols: td
                .and_then(|t| t.document_symbol.as_ref())
                .and_then(|d| d.hierarchical_document_symbol_support)
                .unwrap_or(false),
            folding_range_limit: td
                .and_then(|t| t.folding_range.as_ref())
                .and_then(|f| f.range_limit)
                .map(|n| n as usize),
            folding_collapsed_text: td
                .and_then(|t| t.folding_range.as_ref())
                .and_then(|f| f.folding_range.as_ref())
                .and_then(|f| f.collapsed_text)
                .unwrap_or(false),
            hover_markdown: td
                .and_then(|t| t.hover.as_ref())
                .and_then(|h| h.content_format.as_ref())
                .is_none_or(|f| f.contains(&MarkupKind::Markdown)),
            inlay_hint_markdown_tooltip: td.and_then(|t| t.inlay_hint.as_ref()).is_some(),
        }
    }
}

/// Standard type names used by the `standard` legend, in legend order.
pub const STANDARD_TYPES: [&str; 6] = [
    "keyword", "string", "comment", "function", "regexp", "macro",
];
/// Standard modifier names used by the `standard` legend (bit order).
pub const STANDARD_MODIFIERS: [&str; 4] =
    ["deprecated", "modification", "readonly", "documentation"];

/// The legend for the chosen option.
pub fn legend(choice: TokenLegend) -> SemanticTokensLegend {
    match choice {
        TokenLegend::Custom => SemanticTokensLegend {
            token_types: TokenType::ALL
                .iter()
                .map(|t| SemanticTokenType::new(t.name()))
                .collect(),
            token_modifiers: MODIFIERS
                .iter()
                .map(|m| SemanticTokenModifier::new(m))
                .collect(),
        },
        TokenLegend::Standard => SemanticTokensLegend {
            token_types: STANDARD_TYPES
                .iter()
                .map(|t| SemanticTokenType::new(t))
                .collect(),
            token_modifiers: STANDARD_MODIFIERS
                .iter()
                .map(|m| SemanticTokenModifier::new(m))
                .collect(),
        },
    }
}

/// Maps a token to `(type index, modifier bits)` in the chosen legend. In the standard legend:
/// prompt -> keyword, finalAnswer -> string, narration / meta -> comment, thinking -> comment +
/// documentation, toolName -> function, toolError -> regexp, gate -> macro, diffAdded ->
/// string + modification, diffRemoved -> comment + deprecated (struck through where clients
/// style deprecated); incomplete -> deprecated, inFlight -> modification, sidechain -> readonly.
pub fn encode_type(choice: TokenLegend, ty: TokenType, mods: u32) -> (u32, u32) {
    match choice {
        TokenLegend::Custom => (ty.index(), mods),
        TokenLegend::Standard => {
            let t = match ty {
                TokenType::Prompt => 0,
                TokenType::FinalAnswer => 1,
                TokenType::Narration | TokenType::Meta | TokenType::Thinking => 2,
                TokenType::ToolName => 3,
                TokenType::ToolError => 4,
                TokenType::Gate => 5,
                TokenType::DiffAdded => 1,
                TokenType::DiffRemoved => 2,
            };
            let mut m = mods & 0b111;
            match ty {
                TokenType::Thinking => m |= 0b1000,
                TokenType::DiffAdded => m |= 0b10,
                TokenType::DiffRemoved => m |= 0b1,
                _ => {}
            }
            (t, m)
        }
    }
}

/// The server capabilities for the negotiated encoding and legend.
pub fn server_capabilities(enc: Encoding, choice: TokenLegend) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(match enc {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
        }),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                will_save: None,
                will_save_wait_until: None,
                save: None,
            },
        )),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                work_done_progress_options: WorkDoneProgressOptions::default(),
                legend: legend(choice),
                range: Some(true),
                full: Some(SemanticTokensFullOptions::Delta { delta: Some(true) }),
            },
        )),
        inlay_hint_provider: Some(OneOf::Left(true)),
        code_lens_provider: Some(CodeLensOptions {
            resolve_provider: Some(false),
        }),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        // Workspace folders are roots of the session index (issue 7).
        workspace: Some(WorkspaceServerCapabilities {
            workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                supported: Some(true),
                change_notifications: Some(OneOf::Left(true)),
            }),
            file_operations: None,
        }),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: Command::ALL.iter().map(|c| c.name().to_string()).collect(),
            work_done_progress_options: WorkDoneProgressOptions::default(),
        }),
        experimental: Some(json!({
            "textDocumentContent": { "schemes": [VIEW_SCHEME] },
            "transcriptVirtualDocument": true,
        })),
        ..ServerCapabilities::default()
    }
}

/// Adds the LSP 3.18 `workspace.textDocumentContent` capability to a serialized
/// `InitializeResult` (ls-types 0.0.6 has no field for it).
pub fn patch_initialize_result(result: &mut Value) {
    let Some(caps) = result
        .get_mut("capabilities")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let ws = caps.entry("workspace").or_insert_with(|| json!({}));
    if let Some(ws) = ws.as_object_mut() {
        ws.insert(
            "textDocumentContent".to_string(),
            json!({ "schemes": [VIEW_SCHEME] }),
        );
    }
}
