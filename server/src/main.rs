//! The `transcript-ls` binary: LSP over stdio (no arguments or `--stdio`), or the command line
//! (`outline`, `render`, `stats`; see `transcript_ls::cli`).

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if transcript_ls::cli::wants_lsp(&args) {
        if let Err(e) = transcript_ls::lsp::serve_stdio() {
            eprintln!("transcript-ls: language server: {e}");
            std::process::exit(1);
        }
        return;
    }
    std::process::exit(transcript_ls::cli::main(args));
}
