//! `transcript-ls outline|render|stats FILE` for terminals and scripts.

use std::ffi::OsString;

/// Runs the command line; returns the process exit code.
pub fn main(args: Vec<OsString>) -> i32 {
    let _ = args;
    eprintln!("transcript-ls: not implemented yet");
    2
}
