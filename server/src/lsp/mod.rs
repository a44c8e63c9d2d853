//! The only code that knows LSP: tower-lsp-server glue, capabilities, conversions, documents,
//! file watcher, custom methods, refresh orchestration.
