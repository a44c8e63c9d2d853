//! The server's log (issue 24 item 7): `tracing` events written to stderr by one subscriber,
//! started by [`crate::lsp::serve_stdio`] only (the command line prints its own stderr, which
//! tests compare byte for byte). Every client message is answered inside a span named
//! `request` (with `method` and `id`) or `notification` (with `method`)
//! (`TranscriptService::reply`), so an event logged while answering it names it.
//!
//! The level comes from [`ENV`] (`TRANSCRIPT_LS_LOG`): a level for everything (`error`,
//! `warn`, `info`, `debug`, `trace`, `off`) or `tracing-subscriber` `Targets` directives
//! (`transcript_ls=debug,warn`); unset, [`default_filter`] (`transcript_ls=info,warn`). By
//! default the stderr is what it was before the subscriber: the server's own messages; at
//! `debug` each answered message adds a line with its span and the time it took.
//!
//! Line format: `transcript-ls: [LEVEL ][span{fields}: ]message[ key=value]`, the level left
//! out at `info` (the editors show this stderr in their LSP log; `Shared::log` also sends
//! `window/logMessage`).

use std::fmt;
use std::str::FromStr;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

/// The environment variable naming the log level or directives (see the module doc).
pub const ENV: &str = "TRANSCRIPT_LS_LOG";

/// The filter of `value` (the content of [`ENV`]): [`default_filter`] when unset or blank; an
/// unreadable value is an error naming it (the caller logs it and uses the default).
pub fn filter(value: Option<&str>) -> Result<Targets, String> {
    let v = value.map(str::trim).unwrap_or("");
    if v.is_empty() {
        return Ok(default_filter());
    }
    Targets::from_str(v).map_err(|e| format!("{ENV}={v:?} is not a level or directives ({e})"))
}

/// The default filter, `transcript_ls=info,warn`: the server's own messages, and only the
/// warnings of its libraries (tower-lsp-server logs each `shutdown` and `exit` at `info`), so
/// stderr shows what it showed before the subscriber.
pub fn default_filter() -> Targets {
    Targets::new()
        .with_target("transcript_ls", LevelFilter::INFO)
        .with_default(LevelFilter::WARN)
}

/// Starts the stderr subscriber with the level of [`ENV`]. Does nothing if a subscriber is
/// already set (a second server in one process).
pub fn init() {
    let (targets, bad) = match filter(std::env::var(ENV).ok().as_deref()) {
        Ok(t) => (t, None),
        Err(e) => (default_filter(), Some(e)),
    };
    let fmt = tracing_subscriber::fmt::layer()
        .event_format(Line)
        .with_writer(std::io::stderr);
    if tracing_subscriber::registry()
        .with(targets)
        .with(fmt)
        .try_init()
        .is_ok()
        && let Some(e) = bad
    {
        tracing::warn!("{e}; logging with the default, transcript_ls=info,warn");
    }
}

/// One event on one line (the format in the module doc).
struct Line;

impl<S, N> FormatEvent<S, N> for Line
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        writer.write_str("transcript-ls: ")?;
        let level = *event.metadata().level();
        if level != Level::INFO {
            write!(writer, "{level} ")?;
        }
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                writer.write_str(span.name())?;
                let ext = span.extensions();
                if let Some(fields) = ext.get::<FormattedFields<N>>()
                    && !fields.is_empty()
                {
                    write!(writer, "{{{fields}}}")?;
                }
                writer.write_str(": ")?;
            }
        }
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_level_comes_from_the_variable() {
        let info = filter(None).unwrap();
        assert!(info.would_enable("transcript_ls::lsp", &Level::INFO));
        assert!(!info.would_enable("transcript_ls::lsp", &Level::DEBUG));
        assert!(!info.would_enable("tower_lsp_server::service", &Level::INFO));
        assert!(info.would_enable("tower_lsp_server::service", &Level::WARN));
        assert!(
            filter(Some("  "))
                .unwrap()
                .would_enable("transcript_ls", &Level::INFO)
        );
        let debug = filter(Some(" debug ")).unwrap();
        assert!(debug.would_enable("transcript_ls::lsp", &Level::DEBUG));
        let only = filter(Some("transcript_ls=debug,warn")).unwrap();
        assert!(only.would_enable("transcript_ls::lsp", &Level::DEBUG));
        assert!(!only.would_enable("tower_lsp_server", &Level::INFO));
        let bad = filter(Some("bogus=x=y")).unwrap_err();
        assert!(
            bad.starts_with("TRANSCRIPT_LS_LOG=\"bogus=x=y\" is not"),
            "{bad}"
        );
    }
}
