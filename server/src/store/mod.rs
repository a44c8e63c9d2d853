//! The store (issue 24 item 3; rust-analyzer's `AnalysisHost` and its database): the
//! documents and the files behind them, and nothing of features nor of LSP.
//!
//! - [`host`]: the document host (`Host`): raw documents open in the editor, view documents,
//!   disk sources behind views (loaded by the one loader, least recently used dropped), the
//!   renderings served, the settings and the session index; plain edits in, `DocSnap`s out.
//! - [`document`]: one source (`Source`): its text (an editor rope, or a file read or mapped
//!   and grown by appends), its versions and edits; [`build`] makes its snapshots
//!   incrementally, [`disk`] reads and checks its file.
//! - [`live`]: the file follower (notify, appends, settling, index builds), which hands what
//!   changed to the protocol layer through its [`live::Sink`].
//! - [`progress`]: progress of big loads and index builds, plain events for the protocol layer.
//!
//! What the store builds is `crate::ide::snapshot` (a `Snapshot` per version, a `ViewSnap`
//! per rendering), read by the features through `crate::ide::DocAnalysis`.

pub mod build;
pub mod disk;
pub mod document;
pub mod host;
pub mod live;
pub mod progress;
