//! `transcript/fileHistory` and `transcript/blame` (issue 22 items 3 and 4; PROTOCOL.md "File
//! history and agent blame"): the plain answers of `index::history` over the host's session
//! index, with transcripts named by `file:` URIs and blame ranges as LSP ranges (whole lines,
//! in the negotiated encoding). A path that is neither absolute nor a `file:` URI is
//! `InvalidParams`; a file no session changed gives empty lists.

use std::path::PathBuf;

use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::Uri;

use crate::index::history;
use crate::lsp::ext::{self, BlameParams, FileHistoryParams, Request as _};
use crate::lsp::state::{Backend, invalid, read};
use crate::lsp::to_proto;

/// The source file a request names: an absolute `path`, else a `file:` `uri`.
fn target(method: &str, path: Option<String>, uri: Option<Uri>) -> Result<PathBuf> {
    match (path, uri) {
        (Some(p), _) => {
            let p = PathBuf::from(p);
            if p.is_absolute() {
                Ok(p)
            } else {
                Err(invalid(format!(
                    "{method}: path must be absolute, got '{}'",
                    p.display()
                )))
            }
        }
        (None, Some(u)) if u.scheme().as_str() == "file" => crate::lsp::from_proto::file_path(&u)
            .ok_or_else(|| invalid(format!("{method}: not a file path: {}", u.as_str()))),
        (None, Some(u)) => Err(invalid(format!(
            "{method} needs a file: URI, got {}:",
            u.scheme().as_str()
        ))),
        (None, None) => Err(invalid(format!(
            "{method} needs a path (absolute) or a uri (file:)"
        ))),
    }
}

pub(crate) fn file_history(b: &Backend, p: FileHistoryParams) -> Result<Value> {
    let path = target(ext::FileHistory::METHOD, p.path, p.uri)?;
    let list = history::file_history(&read(&b.shared.host.index), &path);
    Ok(json!({
        "path": path.to_string_lossy(),
        "entries": list.iter().filter_map(to_proto::history_entry).collect::<Vec<_>>(),
    }))
}

pub(crate) fn blame(b: &Backend, p: BlameParams) -> Result<Value> {
    let method = ext::Blame::METHOD;
    let path = target(method, p.path, p.uri)?;
    // Only the entries that list the file, so that the index is not held while the sessions
    // are read again.
    let touching = history::touching(&read(&b.shared.host.index), &path);
    if touching.file_count() == 0 {
        return Ok(json!({ "path": path.to_string_lossy(), "ranges": [] }));
    }
    let text = match p.text {
        Some(t) => t,
        None => std::fs::read(&path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| invalid(format!("{method}: cannot read {}: {e}", path.display())))?,
    };
    let ranges = history::blame(&touching, &path, Some(&text))
        .map_err(|e| invalid(format!("{method}: {e}")))?;
    let lines: Vec<&str> = text.lines().collect();
    let enc = b.shared.enc();
    Ok(json!({
        "path": path.to_string_lossy(),
        "ranges": ranges
            .iter()
            .filter_map(|r| to_proto::blame_range(r, &lines, enc))
            .collect::<Vec<_>>(),
    }))
}
