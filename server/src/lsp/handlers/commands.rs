//! `workspace/executeCommand`: `transcript.nextTurn`, `transcript.previousTurn`,
//! `transcript.nextGate` (the next or previous turn or gate line from `line`, revealed when
//! `reveal`), `transcript.listSessionFiles`, `transcript.openView` (at a `turn` when given)
//! `transcript.showDiff` (`handlers::diff`) and `transcript.showChanges`
//! (`handlers::changes`) (PROTOCOL.md). The
//! arguments are parsed here; the work runs off the serve loop.

use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;

use crate::ide;
use crate::lsp::dispatch::off_loop;
use crate::lsp::ext::Command;
use crate::lsp::from_proto;
use crate::lsp::state::{Backend, invalid};
use crate::lsp::to_proto;

/// The request's method (named in errors and in the log when it panics).
const METHOD: &str = "workspace/executeCommand";

/// Arguments of the commands: `[{ "uri": …, "line": …, "verbose": …, "reveal": … }]`, or
/// positional `[uri, line]`.
#[derive(Debug, Default)]
struct Args {
    uri: Option<Uri>,
    line: Option<u32>,
    verbose: Option<bool>,
    reveal: bool,
    /// `transcript.openView`: the turn to show; `transcript.showChanges`: the turn whose
    /// changes to show.
    turn: Option<usize>,
    /// `transcript.showChanges`: the whole session's changes.
    session: bool,
}

/// A `line` argument: a 0-based line (clamped to `u32::MAX`), `null` for none; anything else
/// (`-1`, `1.5`, `"3"`) is refused (issue 25, Low list: `line: -1` answered as line 0).
fn line_arg(v: &Value) -> std::result::Result<Option<u32>, String> {
    match v {
        Value::Null => Ok(None),
        _ => v
            .as_u64()
            .map(|n| Some(n.min(u32::MAX as u64) as u32))
            .ok_or_else(|| format!("`line` must be a 0-based line number, got {v}")),
    }
}

fn parse_args(args: &[Value]) -> std::result::Result<Args, String> {
    let mut out = Args::default();
    let parse_uri = |v: &Value| -> std::result::Result<Uri, String> {
        let s = v
            .as_str()
            .ok_or_else(|| format!("`uri` must be a string, got {v}"))?;
        s.parse::<Uri>()
            .map_err(|e| format!("invalid uri {s:?}: {e}"))
    };
    match args.first() {
        Some(Value::Object(o)) => {
            if let Some(u) = o.get("uri") {
                out.uri = Some(parse_uri(u)?);
            } else if let Some(u) = o.get("textDocument").and_then(|t| t.get("uri")) {
                out.uri = Some(parse_uri(u)?);
            }
            out.line = match o.get("line") {
                Some(v) => line_arg(v)?,
                None => match o.get("position").and_then(|p| p.get("line")) {
                    Some(v) => line_arg(v)?,
                    None => None,
                },
            };
            out.verbose = o.get("verbose").and_then(Value::as_bool);
            out.reveal = o.get("reveal").and_then(Value::as_bool).unwrap_or(false);
            out.session = o.get("session").and_then(Value::as_bool).unwrap_or(false);
            out.turn = o
                .get("turn")
                .and_then(Value::as_u64)
                .map(|n| n.min(u32::MAX as u64) as usize);
        }
        Some(v @ Value::String(_)) => {
            out.uri = Some(parse_uri(v)?);
            out.line = match args.get(1) {
                Some(v) => line_arg(v)?,
                None => None,
            };
        }
        Some(v) => return Err(format!("unexpected argument {v}")),
        None => {}
    }
    Ok(out)
}

pub(crate) async fn execute_command(
    b: &Backend,
    params: ExecuteCommandParams,
) -> Result<Option<Value>> {
    let args = parse_args(&params.arguments).map_err(invalid)?;
    let need_uri = || {
        args.uri
            .clone()
            .ok_or_else(|| invalid(format!("{} needs a `uri` argument", params.command)))
    };
    let enc = b.shared.enc();
    let Some(command) = Command::from_name(&params.command) else {
        return Err(invalid(format!("unknown command {:?}", params.command)));
    };
    match command {
        Command::NextTurn | Command::PreviousTurn | Command::NextGate => {
            let uri = need_uri()?;
            let ctx = b.ctx(&uri).await?;
            let line = args.line.unwrap_or(0) as usize;
            let loc = off_loop(&b.shared, METHOD, move || {
                let (lines, forward) = match command {
                    Command::NextTurn => (ctx.doc.turn_lines(), true),
                    Command::PreviousTurn => (ctx.doc.turn_lines(), false),
                    _ => (ctx.doc.gate_lines(), true),
                };
                Ok(
                    ide::navigation::step_line(&lines, line, forward).map(|target| Location {
                        uri: ctx.uri().clone(),
                        range: to_proto::line_range(ctx.text(), ctx.lines(), target, enc)
                            .unwrap_or_default(),
                    }),
                )
            })
            .await?;
            let Some(loc) = loc else {
                return Ok(Some(Value::Null));
            };
            if args.reveal {
                b.reveal(
                    loc.uri.clone(),
                    Some(Range::new(loc.range.start, loc.range.start)),
                );
            }
            Ok(Some(serde_json::to_value(loc).unwrap_or(Value::Null)))
        }
        Command::ListSessionFiles => {
            let uri = need_uri()?;
            let ctx = b.ctx(&uri).await?;
            off_loop(&b.shared, METHOD, move || {
                Ok(Some(to_proto::session_files(ctx.doc.session_files())))
            })
            .await
        }
        Command::OpenView => {
            let uri = need_uri()?;
            let path = if from_proto::is_view(&uri) {
                from_proto::view_key(&uri, false).map_err(invalid)?.path
            } else {
                crate::lsp::from_proto::file_path(&uri)
                    .ok_or_else(|| invalid(format!("not a file URI: {}", uri.as_str())))?
            };
            let verbose = args.verbose;
            let view = off_loop(&b.shared, METHOD, move || {
                if !path.is_file() {
                    return Err(invalid(format!("no such transcript: {}", path.display())));
                }
                to_proto::view_uri(&path, verbose).ok_or_else(|| {
                    invalid(format!("cannot make a view URI for {}", path.display()))
                })
            })
            .await?;
            // At a turn: its heading line in that view.
            let mut line = None;
            if let Some(n) = args.turn {
                line = b.ctx(&view).await?.doc.heading_line(n);
            }
            if args.reveal {
                let range = line.map(|l| {
                    let p = Position::new(l as u32, 0);
                    Range::new(p, p)
                });
                b.reveal(view.clone(), range);
            }
            Ok(Some(match line {
                Some(l) => json!({ "uri": view.as_str(), "line": l }),
                None => json!({ "uri": view.as_str() }),
            }))
        }
        Command::ShowDiff => {
            let uri = need_uri()?;
            let line = args.line.unwrap_or(0) as usize;
            Ok(Some(
                crate::lsp::handlers::diff::show_diff(b, &uri, line).await?,
            ))
        }
        Command::ShowChanges => {
            let uri = need_uri()?;
            Ok(Some(
                crate::lsp::handlers::changes::show_changes(
                    b,
                    &uri,
                    args.turn,
                    args.session,
                    args.line.map(|l| l as usize),
                )
                .await?,
            ))
        }
    }
}
