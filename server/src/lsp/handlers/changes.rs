//! What the agent changed, in the editor (issue 22, item 2): a change lens on each turn that
//! changed files (`✎ 3 files changed · +41 −7`, raw file and view) and the session's in the
//! view's header; the command `transcript.showChanges` that names the files of a turn (or of
//! the session) with the two sides of each file's change as `transcript:` URIs; and the text of
//! those URIs.
//!
//! A side's URI (PROTOCOL.md, "Change sets"):
//! `transcript:/<changed file>?change=<turn number>|session&side=before|after&path=<session
//! file>`. As for edit diffs, the URI's path is the changed file's (the editor picks its
//! language from the extension) and `path=` comes last; the query is percent-decoded whole.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::Uri;

use crate::ide::DocAnalysis;
use crate::lsp::capabilities::VIEW_SCHEME;
use crate::lsp::from_proto::percent_decode;
use crate::lsp::handlers::diff::{Side, encode, session_path};
use crate::lsp::state::{Backend, host_error, invalid};
use crate::view::changes::FileChange;

/// Which change set a URI or a command names.
pub use crate::ide::facade::Which;

/// A parsed change-side URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeKey {
    /// The session transcript.
    pub path: PathBuf,
    pub which: Which,
    /// The changed file (absolute, as [`FileChange::path`]).
    pub file: String,
    pub side: Side,
}

/// `Some` when `uri` names a side of a change set's file (its query has `change=`): the key,
/// or an error saying what is wrong with it; `None` for every other URI.
pub fn change_key(uri: &Uri) -> Option<Result<ChangeKey>> {
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
    let mut change = None;
    let mut side = None;
    for pair in params.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("change", v)) => change = Some(v.to_string()),
            Some(("side", v)) => side = Some(v.to_string()),
            _ => {}
        }
    }
    let change = change?;
    let bad = |what: &str| {
        Some(Err(invalid(format!(
            "{what} in the change URI {} (expected transcript:/<file>?change=<turn>|session&side=before|after&path=<transcript>)",
            uri.as_str()
        ))))
    };
    let which = match change.as_str() {
        "session" => Which::Session,
        n => match n.parse::<usize>() {
            Ok(n) => Which::Turn(n),
            Err(_) => return bad("`change` must be a turn number or `session`"),
        },
    };
    let side = match side.as_deref() {
        Some("before") => Side::Before,
        Some("after") => Side::After,
        _ => return bad("`side` must be `before` or `after`"),
    };
    let Some(path) = path.filter(|p| p.starts_with('/')) else {
        return bad("no absolute `path=` (the transcript)");
    };
    let file = percent_decode(uri.path().as_str());
    Some(Ok(ChangeKey {
        path: PathBuf::from(path),
        which,
        file,
        side,
    }))
}

/// The URI of one side of `file`'s change in the change set `which` of `session`.
pub fn change_uri(session: &Path, which: Which, file: &str, side: Side) -> Option<Uri> {
    let f = file.trim_start_matches('/');
    let f = if f.is_empty() { "file" } else { f };
    let change = match which {
        Which::Turn(n) => n.to_string(),
        Which::Session => "session".to_string(),
    };
    format!(
        "{VIEW_SCHEME}:/{}?change={change}&side={}&path={}",
        encode(f, true),
        side.as_str(),
        encode(&session.to_string_lossy(), true)
    )
    .parse()
    .ok()
}

/// One file of a change set as the command answers it.
fn file_json(session: &Path, which: Which, f: &FileChange, cwd: Option<&str>) -> Value {
    let rel = cwd
        .and_then(|c| f.path.strip_prefix(c.trim_end_matches('/')))
        .and_then(|r| r.strip_prefix('/'))
        .unwrap_or(&f.path);
    json!({
        "path": f.path,
        "relativePath": rel,
        "action": f.action,
        "added": f.added,
        "removed": f.removed,
        "exact": f.exact,
        "calls": f.calls.iter().map(|c| c.call.as_str()).collect::<Vec<_>>(),
        "label": format!("{} {rel} {}", match f.action {
            crate::view::changes::FileAction::Created => "A",
            crate::view::changes::FileAction::Modified => "M",
            crate::view::changes::FileAction::Deleted => "D",
        }, f.counts()),
        "before": change_uri(session, which, &f.path, Side::Before).map(|u| u.as_str().to_string()),
        "after": change_uri(session, which, &f.path, Side::After).map(|u| u.as_str().to_string()),
    })
}

/// `transcript.showChanges { uri, turn? | session?: true | line? }`: the files the turn
/// numbered `turn` changed, or the whole session's (`session: true`), or the turn shown on
/// `line`: `{ title, turn, session, files: [{ path, relativePath, action, added, removed,
/// exact, calls, label, before, after }] }`, `before` / `after` being side URIs; `null` when
/// that turn changed no file.
pub async fn show_changes(
    b: &Backend,
    uri: &Uri,
    turn: Option<usize>,
    session: bool,
    line: Option<usize>,
) -> Result<Value> {
    let ctx = b.ctx(uri).await?;
    let which = if session {
        Which::Session
    } else if let Some(n) = turn {
        Which::Turn(n)
    } else {
        match ctx.doc.turn_at_line(line.unwrap_or(0)) {
            Some(n) => Which::Turn(n),
            None => Which::Session,
        }
    };
    let path = session_path(&ctx)?;
    let cwd = ctx.doc.cwd();
    let Some(set) = ctx.doc.change_set(which) else {
        return Ok(Value::Null);
    };
    Ok(json!({
        "title": set.title,
        "turn": match which { Which::Turn(n) => Some(n), Which::Session => None },
        "session": which == Which::Session,
        "files": set.files.iter().map(|f| file_json(&path, which, f, cwd)).collect::<Vec<_>>(),
    }))
}

/// The text of a change-side URI (from the transcript on disk, read again with the files'
/// whole texts).
pub async fn change_text(b: &Backend, key: ChangeKey) -> Result<String> {
    let host = &b.shared.host;
    let uri = crate::lsp::to_proto::file_uri(&key.path)
        .unwrap_or_else(|| "file:///".parse().expect("a valid URI"));
    let source = host
        .disk_source(&key.path)
        .await
        .map_err(|e| host_error(e, &uri))?;
    let doc = DocAnalysis::of_source(source.snapshot(&host.stamp()).await);
    let what = match key.which {
        Which::Turn(n) => format!("turn {n}"),
        Which::Session => "the session".to_string(),
    };
    let (before, after) = doc.change_sides(key.which, &key.file).ok_or_else(|| {
        invalid(format!(
            "{} did not change {} in {}",
            what,
            key.file,
            key.path.display()
        ))
    })?;
    Ok(match key.side {
        Side::Before => before,
        Side::After => after,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_uris_round_trip() {
        let session = Path::new("/p/s&1.jsonl");
        let u = change_uri(
            session,
            Which::Turn(3),
            "/home/me/app/src/my file.rs",
            Side::After,
        )
        .unwrap();
        assert_eq!(
            u.as_str(),
            "transcript:/home/me/app/src/my%20file.rs?change=3&side=after&path=/p/s%261.jsonl"
        );
        let k = change_key(&u).unwrap().unwrap();
        assert_eq!(
            k,
            ChangeKey {
                path: session.into(),
                which: Which::Turn(3),
                file: "/home/me/app/src/my file.rs".into(),
                side: Side::After,
            }
        );
        let u = change_uri(session, Which::Session, "/a.rs", Side::Before).unwrap();
        assert_eq!(change_key(&u).unwrap().unwrap().which, Which::Session);
        // As VS Code writes it: the whole query percent-encoded.
        let u: Uri = "transcript:/a.rs?change%3Dsession%26side%3Dbefore%26path%3D%2Fp%2Fs.jsonl"
            .parse()
            .unwrap();
        assert_eq!(change_key(&u).unwrap().unwrap().file, "/a.rs");
        let v: Uri = "transcript:///p/s.jsonl?verbose=1".parse().unwrap();
        assert!(change_key(&v).is_none());
        let bad: Uri = "transcript:/a.rs?change=x&side=after&path=/p/s.jsonl"
            .parse()
            .unwrap();
        let e = change_key(&bad).unwrap().unwrap_err();
        assert!(e.message.contains("`change` must be"), "{}", e.message);
    }
}
