//! Native diffs of file edits (issue 11, item 3): the `Show diff` code lens on each
//! file-editing tool call, the command `transcript.showDiff` that names the two sides of the
//! change by `transcript:` URIs, and the text of those URIs (served by
//! `workspace/textDocumentContent` and `transcript/virtualDocument` like views).
//!
//! A side's URI (PROTOCOL.md, "Native diffs"):
//! `transcript:/<edited file>?call=<tool call id>&side=before|after&path=<session file>`.
//! The URI's path is the edited file's (so an editor picks its language from the extension);
//! `path=` comes last as for titled views. The query is percent-decoded as a whole.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::Uri;

use crate::ide::DocAnalysis;
use crate::ide::facade::EditSideError;
use crate::lsp::capabilities::VIEW_SCHEME;
use crate::lsp::from_proto::percent_decode;
use crate::lsp::state::{Backend, Ctx, host_error, invalid};
use crate::view::edits::EditCall;

/// Which side of a change a URI names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
}

impl Side {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Side::Before => "before",
            Side::After => "after",
        }
    }
}

/// A parsed side URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffKey {
    /// The session transcript.
    pub path: PathBuf,
    /// [`EditCall::call`] of the tool call.
    pub call: String,
    pub side: Side,
}

/// `Some` when `uri` names a side of a diff (its query has `call=`): the key, or an error
/// saying what is wrong with it. `None` for every other URI.
pub fn diff_key(uri: &Uri) -> Option<Result<DiffKey>> {
    if uri.scheme().as_str() != VIEW_SCHEME {
        return None;
    }
    let q = percent_decode(uri.query()?.as_str());
    let (params, path) = match q
        .match_indices("path=")
        .map(|(i, _)| i)
        .find(|&i| i == 0 || q.as_bytes()[i - 1] == b'&')
    {
        Some(i) => (&q[..i], Some(&q[i + "path=".len()..])),
        None => (&q[..], None),
    };
    let mut call = None;
    let mut side = None;
    for pair in params.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("call", v)) => call = Some(v.to_string()),
            Some(("side", v)) => side = Some(v.to_string()),
            _ => {}
        }
    }
    let call = call?;
    let bad = |what: &str| {
        Some(Err(invalid(format!(
            "{what} in the diff URI {} (expected transcript:/<file>?call=<id>&side=before|after&path=<transcript>)",
            uri.as_str()
        ))))
    };
    let side = match side.as_deref() {
        Some("before") => Side::Before,
        Some("after") => Side::After,
        _ => return bad("`side` must be `before` or `after`"),
    };
    let Some(path) = path.filter(|p| p.starts_with('/')) else {
        return bad("no absolute `path=` (the transcript)");
    };
    Some(Ok(DiffKey {
        path: PathBuf::from(path),
        call,
        side,
    }))
}

/// Percent-encodes `s` for a URI: unreserved characters stay, and `/` when `keep_slash`
/// (`to_proto::PATH_KEEPS` / `COMPONENT_KEEPS`).
pub(crate) fn encode(s: &str, keep_slash: bool) -> String {
    let keeps = if keep_slash {
        crate::lsp::to_proto::PATH_KEEPS
    } else {
        crate::lsp::to_proto::COMPONENT_KEEPS
    };
    percent_encoding::utf8_percent_encode(s, keeps).to_string()
}

/// The URI of one side of `call`'s change in the transcript `session`.
pub fn diff_uri(session: &Path, call: &EditCall, side: Side) -> Option<Uri> {
    let file = call.path.trim_start_matches('/');
    let file = if file.is_empty() { "edit" } else { file };
    format!(
        "{VIEW_SCHEME}:/{}?call={}&side={}&path={}",
        encode(file, true),
        encode(&call.call, false),
        side.as_str(),
        encode(&session.to_string_lossy(), true)
    )
    .parse()
    .ok()
}

/// The transcript file behind a document (raw `file:` or view).
pub(crate) fn session_path(ctx: &Ctx) -> Result<PathBuf> {
    ctx.doc
        .session_path()
        .map(Path::to_path_buf)
        .ok_or_else(|| invalid(format!("not a file URI: {}", ctx.uri.as_str())))
}

/// `transcript.showDiff { uri, line }`: the sides of the file edit shown on `line` (the tool
/// call's line or its diff lines in a view; the record's line in the raw file).
pub async fn show_diff(b: &Backend, uri: &Uri, line: usize) -> Result<Value> {
    let ctx = b.ctx(uri).await?;
    let Some(call) = ctx.doc.edit_at_line(line) else {
        return Ok(Value::Null);
    };
    let session = session_path(&ctx)?;
    let (Some(before), Some(after)) = (
        diff_uri(&session, call, Side::Before),
        diff_uri(&session, call, Side::After),
    ) else {
        return Err(invalid(format!(
            "cannot make diff URIs for {}",
            session.display()
        )));
    };
    Ok(json!({
        "before": before.as_str(),
        "after": after.as_str(),
        "title": call.diff_title(),
        "call": call.call,
        "path": call.path,
    }))
}

/// The text of a side URI: the change's text before or after (from the transcript on disk).
pub async fn diff_text(b: &Backend, key: DiffKey) -> Result<String> {
    let host = &b.shared.host;
    let uri = diff_uri_of_key(&key);
    let source = host
        .disk_source(&key.path)
        .await
        .map_err(|e| host_error(e, &uri))?;
    let doc = DocAnalysis::of_source(source.snapshot(&host.stamp()).await);
    let sides = doc.edit_sides(&key.call).map_err(|e| {
        invalid(match e {
            EditSideError::NoEdit => {
                format!("no file edit {} in {}", key.call, key.path.display())
            }
            EditSideError::Unreadable => format!(
                "the edit {} in {} has no readable input",
                key.call,
                key.path.display()
            ),
        })
    })?;
    Ok(match key.side {
        Side::Before => sides.before,
        Side::After => sides.after,
    })
}

/// A URI naming the transcript of `key` (for error messages).
fn diff_uri_of_key(key: &DiffKey) -> Uri {
    crate::lsp::to_proto::file_uri(&key.path)
        .unwrap_or_else(|| "file:///".parse().expect("a valid URI"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_uris_round_trip() {
        let call = EditCall {
            entry: 1,
            block: 0,
            call: "toolu_01A".into(),
            name: "Edit".into(),
            path: "/home/me/app/src/my file.rs".into(),
            added: 1,
            removed: 1,
            applied: Some(true),
        };
        let session = Path::new("/p/s&1.jsonl");
        let u = diff_uri(session, &call, Side::Before).unwrap();
        assert_eq!(
            u.as_str(),
            "transcript:/home/me/app/src/my%20file.rs?call=toolu_01A&side=before&path=/p/s%261.jsonl"
        );
        let k = diff_key(&u).unwrap().unwrap();
        assert_eq!(
            k,
            DiffKey {
                path: session.into(),
                call: "toolu_01A".into(),
                side: Side::Before
            }
        );
        // As VS Code writes it: the whole query percent-encoded.
        let u: Uri = "transcript:/a.rs?call%3D%4012.0%26side%3Dafter%26path%3D%2Fp%2Fs.jsonl"
            .parse()
            .unwrap();
        let k = diff_key(&u).unwrap().unwrap();
        assert_eq!((k.call.as_str(), k.side), ("@12.0", Side::After));
        // A view is not a diff; a diff without a side is an error.
        let v: Uri = "transcript:///p/s.jsonl?verbose=1".parse().unwrap();
        assert!(diff_key(&v).is_none());
        let bad: Uri = "transcript:/a.rs?call=x&path=/p/s.jsonl".parse().unwrap();
        let e = diff_key(&bad).unwrap().unwrap_err();
        assert!(e.message.contains("`side` must be"), "{}", e.message);
    }
}
