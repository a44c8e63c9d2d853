//! The source layer (DESIGN.md §1): bytes on disk or in the editor -> lines with byte spans
//! ([`lines::LineIndex`], incremental on append), byte offsets <-> UTF-8 / UTF-16 positions
//! ([`position`]), and JSON string literals: decoding and decoded <-> raw offset mapping
//! ([`json_string`]); the one loader of files ([`load`]: regular files only, lossy UTF-8 with
//! a warning per line); the file-age rule that tells a finished file from one still being
//! written ([`age`]). Everything here works in byte offsets into one text and knows nothing
//! of formats or editors. A file's text is owned or memory-mapped ([`text::Text`],
//! [`mapped`]: issue 12).

pub mod age;
pub mod json_string;
pub mod lines;
pub mod load;
pub mod mapped;
pub mod position;
pub mod room;
pub mod text;
pub mod zstd;

pub use lines::LineIndex;
pub use position::{Encoding, LineCursor, Position, PositionError};
pub use text::Text;
