//! Code shared by the benchmarks (each bench target includes it with `mod common;`).
pub mod bare;
