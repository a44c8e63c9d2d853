//! The `transcript-ls` binary: LSP over stdio (no arguments or `--stdio`), or the command line
//! (`outline`, `render`, `stats`).

fn main() {
    std::process::exit(transcript_ls::cli::main(
        std::env::args_os().skip(1).collect(),
    ));
}
