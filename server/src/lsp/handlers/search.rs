//! `transcript/search` (issue 26; PROTOCOL.md): the hits of `index::search` over the host's
//! search index, sessions described by the session index; transcripts named by `file:` and
//! `transcript:` URIs (the view verbose when the hit is text the quiet view hides), snippet
//! match ranges in the negotiated encoding. A query that is not a string is `InvalidParams`
//! (tower-lsp-server's parameter check); a search index that could not be opened is
//! `InvalidRequest` with the reason; before it is open, an empty answer with `complete: false`.

use std::path::PathBuf;

use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};

use crate::index::search::{DocKind, SearchQuery};
use crate::lsp::ext::{self, Request as _, SearchParams};
use crate::lsp::state::{Backend, invalid, read};
use crate::lsp::to_proto;
use crate::source::position as sp;

pub(crate) fn search(b: &Backend, p: SearchParams) -> Result<Value> {
    let method = ext::Search::METHOD;
    let mut roots = Vec::new();
    for r in p.roots.unwrap_or_default() {
        let path = if r.starts_with("file:") {
            let uri: tower_lsp_server::ls_types::Uri = r
                .parse()
                .map_err(|_| invalid(format!("{method}: not a URI: {r}")))?;
            crate::lsp::from_proto::file_path(&uri)
                .ok_or_else(|| invalid(format!("{method}: not a file path: {r}")))?
        } else {
            PathBuf::from(&r)
        };
        if !path.is_absolute() {
            return Err(invalid(format!(
                "{method}: roots must be absolute paths or file: URIs, got '{r}'"
            )));
        }
        roots.push(path);
    }
    let host = &b.shared.host;
    let Some(index) = host.search_index() else {
        if let Some(why) = host.search_error() {
            return Err(Error {
                code: ErrorCode::InvalidRequest,
                message: format!("{method}: the search index is unavailable: {why}").into(),
                data: None,
            });
        }
        return Ok(json!({ "hits": [], "complete": false }));
    };
    let q = SearchQuery {
        text: p.query,
        limit: p.limit,
        roots,
    };
    let res = index
        .search(&q, &read(&host.index))
        .map_err(|e| crate::lsp::state::internal(format!("{method}: {e}")))?;
    let enc = b.shared.enc();
    let hits: Vec<Value> = res
        .hits
        .iter()
        .filter_map(|h| {
            let verbose = !matches!(h.kind, DocKind::Prompt | DocKind::Answer);
            let t = &h.snippet.text;
            let mut o = h.json_fields(|off| sp::column_len(t.get(..off).unwrap_or(""), enc));
            o.insert("uri".into(), json!(to_proto::file_uri(&h.path)?.as_str()));
            let view = to_proto::view_uri(&h.path, verbose.then_some(true))?;
            o.insert("viewUri".into(), json!(view.as_str()));
            Some(Value::Object(o))
        })
        .collect();
    Ok(json!({ "hits": hits, "complete": res.complete }))
}
