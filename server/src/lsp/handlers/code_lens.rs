//! `textDocument/codeLens`: per-turn and per-gate lenses (`ide::code_lens`) with their commands
//! (`to_proto::code_lens`).

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::ide::host::DocSnap;
use crate::lsp::state::{Backend, Ctx, read};
use crate::lsp::to_proto;

pub(crate) fn code_lens(
    b: &Backend,
    ctx: &Ctx,
    _params: CodeLensParams,
) -> Result<Option<Vec<CodeLens>>> {
    if let DocSnap::Raw { snap } = &ctx.doc
        && !snap.is_transcript()
    {
        return Ok(Some(Vec::new()));
    }
    let phases = read(&b.shared.settings).gate_phases.clone();
    let host = &b.shared.host;
    let snap = ctx.snap();
    let files = &snap.session_files().subagents;
    let a = &snap.analysis;
    let mut lenses = match &ctx.doc {
        DocSnap::Raw { .. } => ide::code_lens::lenses(
            a,
            &phases,
            files,
            |g| a.gates.get(g).map(|g| g.line),
            |e, _| snap.transcript.entries.get(e).map(|x| x.line),
            |f| host.steps_in(&f.path),
        ),
        DocSnap::View { view, .. } => ide::code_lens::lenses(
            a,
            &phases,
            files,
            |g| view.index.line_of_gate(a, g),
            |e, b| view.index.line_of_block(e, b),
            |f| host.steps_in(&f.path),
        ),
    };
    crate::lsp::handlers::diff::add_edit_lenses(ctx, &mut lenses);
    crate::lsp::handlers::diff::add_activity_lenses(ctx, &mut lenses);
    Ok(Some(
        lenses
            .into_iter()
            .map(|l| to_proto::code_lens(l, ctx.uri(), &ctx.doc))
            .collect(),
    ))
}
