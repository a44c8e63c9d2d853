//! Conversions from LSP types to the ide's plain data (rust-analyzer's `from_proto.rs`): a
//! position to a byte offset, a content change to a plain [`Edit`], a URI to the host's
//! document id ([`DocId`]) and reference ([`DocRef`]; a `transcript:` URI to its [`ViewKey`]).

use std::path::PathBuf;

use tower_lsp_server::ls_types::{Position, TextDocumentContentChangeEvent, Uri};

use crate::ide::snapshot::ViewKey;
use crate::lsp::capabilities::VIEW_SCHEME;
use crate::source::lines::LineIndex;
use crate::source::position::{self as sp, Encoding, PositionError};
use crate::store::document::Edit;
use crate::store::host::{DocId, DocRef};

/// The plain position of an LSP position.
pub fn position(p: Position) -> sp::Position {
    sp::Position::new(p.line, p.character)
}

/// Byte offset of `pos` in `text`; a column past the line end clamps to it; a line past the
/// last line is an error.
pub fn offset(
    text: &str,
    index: &LineIndex,
    pos: Position,
    enc: Encoding,
) -> Result<usize, PositionError> {
    sp::position_to_offset(text, index, position(pos), enc)
}

/// A `didChange` content change as a plain edit of the document host.
pub fn edit(ch: TextDocumentContentChangeEvent) -> Edit {
    Edit {
        range: ch.range.map(|r| (position(r.start), position(r.end))),
        text: ch.text,
    }
}

/// Whether `uri` names a view (`transcript:` scheme).
pub fn is_view(uri: &Uri) -> bool {
    uri.scheme().as_str() == VIEW_SCHEME
}

/// The host's id of the document `uri` (its URI as the client spelled it; issue 24 item 3).
pub fn doc_id(uri: &Uri) -> DocId {
    DocId::new(uri.as_str())
}

/// The host's reference to the document `uri`: a view for a `transcript:` URI (`verbose`
/// defaults to `default_verbose`), else a raw document. Errors: a `transcript:` URI that names
/// no absolute path (the message says so).
pub fn doc_ref(uri: &Uri, default_verbose: bool) -> Result<DocRef, String> {
    if is_view(uri) {
        Ok(DocRef::View {
            doc: doc_id(uri),
            key: view_key(uri, default_verbose)?,
        })
    } else {
        Ok(DocRef::Raw(doc_id(uri)))
    }
}

/// Parses a `transcript:` URI into its view key (`verbose` defaults to the setting). The query
/// may be percent-encoded as a whole (`?verbose%3D1`, as VS Code sends it) or plain
/// (`?verbose=1`, as `to_proto::view_uri` writes it).
pub fn view_key(uri: &Uri, default_verbose: bool) -> Result<ViewKey, String> {
    let mut path = path_from_bytes(percent_decode_bytes(uri.path().as_str()));
    let mut verbose = default_verbose;
    if let Some(q) = uri.query() {
        // The query is decoded as a whole (VS Code's `Uri.toString()` encodes `=` and `&`
        // too). `path=` must come last: everything after it is the file, `&` included.
        let qb = percent_decode_bytes(q.as_str());
        let at = memchr::memmem::find_iter(&qb, b"path=").find(|&i| i == 0 || qb[i - 1] == b'&');
        let params = match at {
            Some(i) => {
                // `transcript:/<title>?path=<file>`: the URI path is only a name for the
                // editor's tab (issue 7). Its bytes as written (a name that is not UTF-8).
                path = path_from_bytes(qb[i + "path=".len()..].to_vec());
                String::from_utf8_lossy(&qb[..i]).into_owned()
            }
            None => String::from_utf8_lossy(&qb).into_owned(),
        };
        for pair in params.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, "1"));
            if k == "verbose" {
                verbose = matches!(v, "1" | "true" | "yes");
            }
            if k == "change" {
                // One side of a change set's file (`transcript.showChanges`): text only.
                return Err(format!(
                    "{} is one side of a change set's diff: it has text only, no transcript features",
                    uri.as_str()
                ));
            }
            if k == "call" {
                // One side of a file edit's diff (`transcript.showDiff`): text only.
                return Err(format!(
                    "{} is one side of a file edit's diff: it has text only, no transcript features",
                    uri.as_str()
                ));
            }
        }
    }
    if !path.is_absolute() {
        return Err(format!(
            "a transcript: URI must name an absolute path: {}",
            uri.as_str()
        ));
    }
    Ok(ViewKey { path, verbose })
}

/// True when a `transcript:` URI asks for the view's Markdown form (`markdown=1` in its
/// query, plain or percent-encoded as a whole; issue 23 item 6). The query part after `path=`
/// is the file, not read here.
pub fn is_markdown_form(uri: &Uri) -> bool {
    let Some(q) = uri.query() else {
        return false;
    };
    let qb = percent_decode_bytes(q.as_str());
    let q = String::from_utf8_lossy(&qb);
    let params = match q
        .find("path=")
        .filter(|&i| i == 0 || q.as_bytes()[i - 1] == b'&')
    {
        Some(i) => &q[..i],
        None => &q[..],
    };
    params
        .split('&')
        .any(|p| matches!(p, "markdown" | "markdown=1" | "markdown=true"))
}

/// The local path of a `file:` URI, its `%XX` escapes decoded as bytes: a file name that is
/// not UTF-8 (`caf%E9.jsonl`) names that very file (issue 25, Low list: `Uri::to_file_path`
/// decodes lossily, and such files were left out). `None` for an empty or relative path.
pub fn file_path(uri: &Uri) -> Option<PathBuf> {
    let path = path_from_bytes(percent_decode_bytes(uri.path().as_str()));
    path.is_absolute().then_some(path)
}

/// A path from its bytes (as written on Unix; lossily elsewhere).
fn path_from_bytes(bytes: Vec<u8>) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        PathBuf::from(std::ffi::OsString::from_vec(bytes))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// Decodes `%XX` escapes (UTF-8, invalid sequences as U+FFFD); a malformed escape is kept as
/// written.
pub(crate) fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// Decodes `%XX` escapes into bytes; a malformed escape is kept as written.
fn percent_decode_bytes(s: &str) -> Vec<u8> {
    percent_encoding::percent_decode_str(s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::to_proto::view_uri;
    use std::path::Path;

    #[test]
    fn offsets_in_both_encodings() {
        let text = "ab\n😀é\"x\n\nend";
        let idx = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(
            offset(text, &idx, Position::new(1, 4), Encoding::Utf16),
            Ok(x)
        );
        assert_eq!(
            offset(text, &idx, Position::new(1, 7), Encoding::Utf8),
            Ok(x)
        );
        assert_eq!(
            offset(text, &idx, Position::new(0, 99), Encoding::Utf16),
            Ok(2)
        );
        assert!(offset(text, &idx, Position::new(4, 0), Encoding::Utf16).is_err());
    }

    #[test]
    fn view_uris_round_trip() {
        let uri = view_uri(Path::new("/tmp/a b/s.jsonl"), Some(true)).unwrap();
        assert_eq!(uri.as_str(), "transcript:///tmp/a%20b/s.jsonl?verbose=1");
        let key = view_key(&uri, false).unwrap();
        assert_eq!(key.path, PathBuf::from("/tmp/a b/s.jsonl"));
        assert!(key.verbose);
        let plain: Uri = "transcript:///x/y.jsonl".parse().unwrap();
        assert!(!view_key(&plain, false).unwrap().verbose);
        assert!(view_key(&plain, true).unwrap().verbose);
        // VS Code percent-encodes the query's `=` and `&` (issue 11, defect 1).
        let md: Uri = "transcript:/T?verbose%3D1%26markdown%3D1%26path%3D/x/y.jsonl"
            .parse()
            .unwrap();
        assert!(is_markdown_form(&md));
        assert_eq!(view_key(&md, false).unwrap().path, Path::new("/x/y.jsonl"));
        assert!(!is_markdown_form(
            &"transcript:/T?path=/x/markdown=1.jsonl".parse().unwrap()
        ));
        assert!(!is_markdown_form(&plain));
        let encoded: Uri = "transcript:///x/y.jsonl?verbose%3D1".parse().unwrap();
        assert!(view_key(&encoded, false).unwrap().verbose);
        let encoded: Uri = "transcript:///x/y.jsonl?a%3Db%26verbose%3D0"
            .parse()
            .unwrap();
        assert!(!view_key(&encoded, true).unwrap().verbose);
        let rel: Uri = "transcript:relative.jsonl".parse().unwrap();
        assert!(view_key(&rel, false).is_err());
        // Titled form: the tab shows the title, the query names the file.
        let titled: Uri =
            "transcript:/Fix%20the%20login%20bug?verbose=1&path=%2Ftmp%2Fa%20b%2Fs.jsonl"
                .parse()
                .unwrap();
        let key = view_key(&titled, false).unwrap();
        assert_eq!(key.path, PathBuf::from("/tmp/a b/s.jsonl"));
        assert!(key.verbose);
        assert_eq!(percent_decode("%E2%96%B8%zz%aé%"), "▸%zz%aé%");
        // As VS Code writes it: `=` encoded as well, a `?` in the title encoded in the path.
        let vs: Uri =
            "transcript:/GET%20%E2%88%95a%3Fb?verbose%3D0%26path%3D%2Ftmp%2Fx%26y%3D1.jsonl"
                .parse()
                .unwrap();
        let key = view_key(&vs, true).unwrap();
        assert_eq!(key.path, PathBuf::from("/tmp/x&y=1.jsonl"));
        assert!(!key.verbose);
    }
}
