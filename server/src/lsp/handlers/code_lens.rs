//! `textDocument/codeLens`: per-turn and per-gate lenses (`ide::code_lens`) with their commands
//! (`to_proto::code_lens`).

use std::sync::atomic::Ordering;

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::lsp::state::{Backend, Ctx, internal, read};
use crate::lsp::to_proto;

/// The answer to `textDocument/codeLens` as the JSON of a `CodeLens[]`: the same JSON as the
/// typed answer tower-lsp-server would write, each lens converted and serialised in turn and
/// dropped (issue 12: on a 1 GB transcript the ~4 MB answer was held as typed lenses with
/// `serde_json::Value` arguments too). With `Shared::reference_answers`, made whole through a
/// `Value` (the tests' reference).
pub(crate) fn code_lens(b: &Backend, ctx: &Ctx, _params: CodeLensParams) -> Result<Vec<u8>> {
    let reference = b.shared.reference_answers.load(Ordering::Relaxed);
    let lenses = lenses(b, ctx);
    if reference {
        let answer: Vec<CodeLens> = lenses
            .into_iter()
            .map(|l| to_proto::code_lens(l, ctx.uri(), &ctx.doc))
            .collect();
        return crate::lsp::state::answer_json(&answer, true, "code lenses");
    }
    let mut out = Vec::with_capacity(2 + lenses.len() * 160);
    out.push(b'[');
    for (n, l) in lenses.into_iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, &to_proto::code_lens(l, ctx.uri(), &ctx.doc))
            .map_err(|e| internal(format!("code lens as JSON: {e}")))?;
    }
    out.push(b']');
    Ok(out)
}

/// The document's lenses in line order (`ide::DocAnalysis::lenses`).
fn lenses(b: &Backend, ctx: &Ctx) -> Vec<ide::code_lens::Lens> {
    let phases = read(&b.shared.settings).gate_phases.clone();
    let host = &b.shared.host;
    ctx.doc.lenses(&phases, |f| host.steps_in(&f.path))
}
