//! Bytes on disk or in the editor -> lines with byte spans; incremental append; UTF-8/UTF-16
//! position maps; JSON string literal decoding and offset mapping.

pub mod json_string;
