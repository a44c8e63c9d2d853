//! The `transcript-ls` binary: LSP over stdio (no arguments or `--stdio`), or the command line
//! (`outline`, `render`, `stats`; see `transcript_ls::cli`).

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let code = if transcript_ls::cli::wants_lsp(&args) {
        transcript_ls::lsp::serve_stdio()
    } else {
        transcript_ls::cli::main(args)
    };
    std::process::exit(code);
}
