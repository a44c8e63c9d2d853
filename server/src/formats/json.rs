//! Small helpers shared by the readers of the event-log formats (Pi, Copilot CLI): a line being
//! read with its source span, borrowed raw JSON values, and one-line summaries. Nothing here
//! allocates per value unless a string has escapes.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::model::{Entry, Problem, Role, Severity, Span, Str, Transcript};
use crate::source::json_string;

/// A borrowed raw JSON value of the line.
pub type Raw<'a> = &'a RawValue;

/// Longest one-line summary of a tool call or result, in chars (model: `ToolUse::summary`).
pub const SUMMARY_MAX: usize = 160;

/// The line being read: `span` is its byte range in `source` (without the newline), `ts` its
/// parsed timestamp (epoch ms).
pub struct Line<'s> {
    pub source: &'s str,
    pub line: usize,
    pub span: Span,
    pub ts: Option<i64>,
}

impl<'s> Line<'s> {
    /// A new entry for this line with `role`, `record_type` and the line's timestamp.
    pub fn entry(&self, role: Role, record_type: &str) -> Entry {
        let mut e = Entry::new(self.line, self.span.clone(), role, record_type);
        e.set_timestamp_ms(self.ts);
        e
    }

    /// Byte span in the source of `s`, a slice of this line (an empty span at the line start
    /// if it is not one: never panics).
    pub fn span_of(&self, s: &str) -> Span {
        let start = (s.as_ptr() as usize).wrapping_sub(self.source.as_ptr() as usize);
        if start >= self.span.start && start.saturating_add(s.len()) <= self.span.end {
            start..start + s.len()
        } else {
            self.span.start..self.span.start
        }
    }

    /// The span of a raw value of this line.
    pub fn raw_span(&self, r: Raw<'_>) -> Span {
        self.span_of(r.get())
    }

    /// The contents of a string literal (between its quotes) as a [`Str`]; `None` for any other
    /// JSON value.
    pub fn str_of(&self, r: Raw<'_>) -> Option<Str> {
        let s = r.get();
        (s.len() >= 2 && s.starts_with('"')).then(|| Str {
            raw: self.span_of(&s[1..s.len() - 1]),
        })
    }

    /// A problem on the whole line.
    pub fn problem(&self, t: &mut Transcript, severity: Severity, message: String) {
        t.problems.push(Problem {
            line: self.line,
            span: self.span.clone(),
            severity,
            message,
        });
    }
}

/// Reads a JSON object into a typed struct. Anything else is an error (serde would read a
/// struct from an array positionally).
pub fn object<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, serde_json::Error> {
    if text.trim_start().starts_with('{') {
        serde_json::from_str(text)
    } else {
        Err(serde::de::Error::custom("expected a JSON object"))
    }
}

/// Decodes a raw string literal; `None` when the value is absent or not a string.
pub fn jstr<'a>(r: Option<Raw<'a>>) -> Option<Cow<'a, str>> {
    let s = r?.get();
    (s.len() >= 2 && s.starts_with('"')).then(|| json_string::decode(&s[1..s.len() - 1]))
}

/// A non-negative count written as an integer or a float (negative, non-finite or any other
/// value: `None`).
pub fn jcount(r: Option<Raw<'_>>) -> Option<u64> {
    let s = r?.get();
    if let Ok(v) = s.parse::<u64>() {
        return Some(v);
    }
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v.round() as u64)
}

/// A finite number.
pub fn jnum(r: Option<Raw<'_>>) -> Option<f64> {
    r?.get().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `true` / `false`.
pub fn jbool(r: Option<Raw<'_>>) -> Option<bool> {
    match r?.get() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

pub fn is_array(r: Raw<'_>) -> bool {
    r.get().starts_with('[')
}

pub fn is_object(r: Raw<'_>) -> bool {
    r.get().starts_with('{')
}

/// Elements of an array value (empty for anything else or on error).
pub fn elements<'a>(r: Option<Raw<'a>>) -> Vec<Raw<'a>> {
    match r {
        Some(r) if is_array(r) => serde_json::from_str(r.get()).unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Members of an object value in order (empty for anything else or on error).
pub fn members<'a>(r: Option<Raw<'a>>) -> Vec<(Cow<'a, str>, Raw<'a>)> {
    struct V<'a>(Vec<(Cow<'a, str>, Raw<'a>)>);
    impl<'de: 'a, 'a> Deserialize<'de> for V<'a> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Vis<'a>(std::marker::PhantomData<&'a ()>);
            impl<'de: 'a, 'a> serde::de::Visitor<'de> for Vis<'a> {
                type Value = V<'a>;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut m: A,
                ) -> Result<V<'a>, A::Error> {
                    let mut out = Vec::new();
                    while let Some((k, v)) = m.next_entry::<Cow<'a, str>, Raw<'a>>()? {
                        out.push((k, v));
                    }
                    Ok(V(out))
                }
            }
            d.deserialize_map(Vis(std::marker::PhantomData))
        }
    }
    match r {
        Some(r) if is_object(r) => serde_json::from_str::<V>(r.get()).map_or(Vec::new(), |v| v.0),
        _ => Vec::new(),
    }
}

/// First non-empty line of `text`, trimmed, at most [`SUMMARY_MAX`] chars (`…` when cut).
pub fn one_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    clip(line)
}

/// `line` cut to [`SUMMARY_MAX`] chars (`…` when cut).
pub fn clip(line: &str) -> String {
    if line.chars().count() <= SUMMARY_MAX {
        return line.to_string();
    }
    let mut out: String = line.chars().take(SUMMARY_MAX - 1).collect();
    out.push('…');
    out
}

/// The key argument of a tool call from its arguments object (a JSON object, or a string
/// holding one): `command`, then a path (`path`, `file_path`, `filePath`), `pattern`, `query`,
/// `url`, `description`, `prompt`; else the first short string member; else `fallback`
/// (Copilot's `intentionSummary`). One line, at most [`SUMMARY_MAX`] chars.
pub fn call_summary(args: Option<Raw<'_>>, fallback: Option<&str>) -> String {
    const KEYS: [&str; 9] = [
        "command",
        "cmd",
        "path",
        "file_path",
        "filePath",
        "pattern",
        "query",
        "url",
        "description",
    ];
    let decoded;
    let obj = match args {
        Some(a) if is_object(a) => Some(a),
        Some(a) => match jstr(Some(a)) {
            Some(s) => {
                decoded = s.into_owned();
                serde_json::from_str::<Raw>(&decoded)
                    .ok()
                    .filter(|r| is_object(r))
            }
            None => None,
        },
        None => None,
    };
    let ms = members(obj);
    for k in KEYS {
        if let Some((_, v)) = ms.iter().find(|(n, _)| n == k)
            && let Some(s) = jstr(Some(v)).filter(|s| !s.trim().is_empty())
        {
            return one_line(&s);
        }
        if k == "command"
            && let Some((_, v)) = ms.iter().find(|(n, _)| n == k)
        {
            let parts: Vec<Cow<str>> = elements(Some(v))
                .into_iter()
                .filter_map(|e| jstr(Some(e)))
                .collect();
            if !parts.is_empty() {
                return one_line(&parts.join(" "));
            }
        }
    }
    if let Some(s) = fallback.filter(|s| !s.trim().is_empty()) {
        return one_line(s);
    }
    ms.iter()
        .filter(|(_, v)| v.get().len() <= 400)
        .find_map(|(_, v)| jstr(Some(v)).filter(|s| !s.trim().is_empty()))
        .map(|s| one_line(&s))
        .unwrap_or_default()
}

/// A line that is not a JSON object: an `Unparsed` entry and a warning (never silently
/// dropped).
pub fn not_an_object(source: &str, line: usize, span: Span, t: &mut Transcript) {
    let text = &source[span.clone()];
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        return super::push_unparsed(t, text, line, span, Some(e));
    }
    t.problems.push(Problem {
        line,
        span: span.clone(),
        severity: Severity::Warning,
        message: "record is not a JSON object".to_string(),
    });
    t.entries
        .push(Entry::new(line, span, Role::Unparsed, "unparsed"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    #[test]
    fn call_summaries_pick_the_key_argument() {
        let r = raw(r#"{"path":"CLAUDE.md","content":"x"}"#);
        assert_eq!(call_summary(Some(&r), None), "CLAUDE.md");
        let r = raw(r#""{\"command\":\"ls -la\"}""#);
        assert_eq!(call_summary(Some(&r), Some("List")), "ls -la");
        let r = raw(r#"{"n":3}"#);
        assert_eq!(
            call_summary(Some(&r), Some("List the files")),
            "List the files"
        );
        let r = raw(r#"{"command":["bash","-lc","make"]}"#);
        assert_eq!(call_summary(Some(&r), None), "bash -lc make");
        assert_eq!(call_summary(None, None), "");
    }

    #[test]
    fn counts_and_members() {
        let r = raw("12.0");
        assert_eq!(jcount(Some(&r)), Some(12));
        let r = raw("-3");
        assert_eq!(jcount(Some(&r)), None);
        let r = raw(r#"{"a":1,"b":"x"}"#);
        let m = members(Some(&r));
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].0, "b");
    }
}
