//! A transcript's read -> the documents the search index holds (issue 26): one per prompt
//! text, answer text, comment (agent prose outside the answer), tool call (its name and the
//! string values of its input: commands, file paths, patterns, edits) and tool result (its
//! text), each with its turn, transcript line and kind. Thinking, injected context, meta
//! records, compaction summaries, and records inherited from a parent, repeated, or on an
//! abandoned branch are not documents. Pure; no I/O.

use std::collections::HashSet;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::DocKind;
use crate::analysis::{Analysis, TurnKind};
use crate::index::summary::Base;
use crate::model::{BlockKind, Role, Transcript};
use crate::source::json_string;

/// At most this many bytes of one document's text are indexed and kept for snippets (the
/// start of a longer tool result or input; a prompt or answer is rarely longer). Bounds the
/// index's size and the writer's memory per document.
pub const MAX_DOC_BYTES: usize = 64 * 1024;

/// One searchable text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doc {
    /// Turn number (1-based; 0 for records before the first prompt).
    pub turn: usize,
    /// 0-based line of the record in the transcript file.
    pub line: usize,
    pub kind: DocKind,
    /// The text (at most [`MAX_DOC_BYTES`], cut at a character boundary).
    pub text: String,
    /// The record's time (epoch ms), when it has one.
    pub time_ms: Option<i64>,
}

/// The documents of one read (`summary::Visit`): the whole file (`base.offset == 0`), or the
/// tail after an append (then the records before the tail's first turn, which were read
/// before, are left out, and turns are numbered after `base.turns_before`).
pub fn extract(t: &Transcript, a: &Analysis, src: &str, base: Base) -> Vec<Doc> {
    let mut out = Vec::new();
    for turn in &a.turns {
        if turn.kind == TurnKind::Preamble && base.offset > 0 {
            continue;
        }
        let n = if turn.kind == TurnKind::Preamble {
            base.turns_before
        } else {
            base.turns_before + turn.n
        };
        let answer: HashSet<(usize, usize)> = turn
            .final_answer
            .as_ref()
            .map(|f| f.blocks.iter().copied().collect())
            .unwrap_or_default();
        let Some(entries) = t.entries.get(turn.entries.clone()) else {
            continue;
        };
        for (k, e) in entries.iter().enumerate() {
            let ei = turn.entries.start + k;
            if e.abandoned || e.inherited || e.repeated {
                continue;
            }
            let prose = match e.role {
                Role::Prompt(_) | Role::Steering => Some(true),
                Role::Model => Some(false),
                Role::ToolResults => None,
                _ => continue,
            };
            for (bi, b) in e.blocks.iter().enumerate() {
                let (kind, text) = match &b.kind {
                    BlockKind::Text { text } => match prose {
                        Some(true) => (DocKind::Prompt, text.decode(src).into_owned()),
                        Some(false) if answer.contains(&(ei, bi)) => {
                            (DocKind::Answer, text.decode(src).into_owned())
                        }
                        Some(false) => (DocKind::Comment, text.decode(src).into_owned()),
                        None => continue,
                    },
                    BlockKind::ToolUse(u) => {
                        let mut s = String::with_capacity(64);
                        s.push_str(&u.name);
                        s.push('\n');
                        json_text(src.get(u.input.clone()).unwrap_or(""), &mut s);
                        (DocKind::ToolInput, s)
                    }
                    BlockKind::ToolResult(r) => {
                        let mut s = String::new();
                        json_text(src.get(r.content.clone()).unwrap_or(""), &mut s);
                        (DocKind::ToolResult, s)
                    }
                    _ => continue,
                };
                let text = cut(text);
                if text.trim().is_empty() {
                    continue;
                }
                out.push(Doc {
                    turn: n,
                    line: base.line + e.line,
                    kind,
                    text,
                    time_ms: e.timestamp_ms(),
                });
            }
        }
    }
    out
}

/// `s` cut to at most [`MAX_DOC_BYTES`] at a character boundary.
fn cut(mut s: String) -> String {
    if s.len() > MAX_DOC_BYTES {
        let mut end = MAX_DOC_BYTES;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

/// The readable text of a JSON value or string in the source (a tool's input or result):
/// the raw contents of a string literal, a string literal, or an object / array. Strings
/// that hold JSON (Codex `arguments`) are read as that JSON. Appends to `out` the string
/// values, one per line, leaving out the values of keys that hold no words (`type`, `id`,
/// base64 `data`, …) and anything that looks like base64; text that is not JSON is taken as
/// it is.
pub fn json_text(raw: &str, out: &mut String) {
    let raw = raw.trim();
    if (raw.starts_with('{') || raw.starts_with('[')) && leaves(raw, out) {
        return;
    }
    // A string literal, or a literal's raw contents (escapes undecoded).
    let inner = match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(lit) => json_string::decode(lit),
        None => json_string::decode(raw),
    };
    let t = inner.trim_start();
    if (t.starts_with('{') || t.starts_with('[')) && leaves(t, out) {
        return;
    }
    out.push_str(&inner);
}

/// The string values of the JSON text `s` into `out`; false (and `out` as it was) when `s`
/// is not JSON.
fn leaves(s: &str, out: &mut String) -> bool {
    let len = out.len();
    let mut de = serde_json::Deserializer::from_str(s);
    let ok = Leaves { out: &mut *out }.deserialize(&mut de).is_ok() && de.end().is_ok();
    if !ok {
        out.truncate(len);
    }
    ok
}

/// Keys whose values are never words to search for.
const SKIP_KEYS: [&str; 10] = [
    "type",
    "id",
    "tool_use_id",
    "call_id",
    "data",
    "media_type",
    "mimeType",
    "signature",
    "encrypted_content",
    "image_url",
];

/// A string of this many bytes or more with no white space is taken for base64 or a blob.
const BLOB_MIN: usize = 512;

struct Leaves<'a> {
    out: &'a mut String,
}

impl<'de> DeserializeSeed<'de> for Leaves<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Leaves<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        if self.out.len() >= MAX_DOC_BYTES
            || (v.len() >= BLOB_MIN && !v.bytes().any(|b| b.is_ascii_whitespace()))
        {
            return Ok(());
        }
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
        self.out.push_str(v);
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(Leaves {
                out: &mut *self.out,
            })?
            .is_some()
        {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if SKIP_KEYS.contains(&key.as_ref()) {
                map.next_value::<IgnoredAny>()?;
            } else {
                map.next_value_seed(Leaves {
                    out: &mut *self.out,
                })?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(raw: &str) -> String {
        let mut s = String::new();
        json_text(raw, &mut s);
        s
    }

    #[test]
    fn json_values_become_their_strings() {
        assert_eq!(
            text(r#"{"command":"cargo test","description":"Run the tests","timeout":5}"#),
            "cargo test\nRun the tests"
        );
        // Codex arguments: a JSON string holding JSON.
        assert_eq!(
            text(r#""{\"cmd\":[\"rg\",\"flaky\"],\"workdir\":\"/p\"}""#),
            "rg\nflaky\n/p"
        );
        // Raw string contents with escapes, holding JSON or not.
        assert_eq!(text(r#"line one\nline two"#), "line one\nline two");
        assert_eq!(text(r#"{\"path\":\"src/a.rs\"}"#), "src/a.rs");
        // Base64 and ids are left out.
        let b64 = "A".repeat(600);
        assert_eq!(
            text(&format!(
                r#"[{{"type":"text","text":"shot taken"}},{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{b64}"}}}},{{"blob":"{b64}"}}]"#
            )),
            "shot taken"
        );
        // Not JSON: as it is.
        assert_eq!(text("{not json"), "{not json");
    }

    #[test]
    fn long_texts_are_cut_at_a_character_boundary() {
        let s = "é".repeat(MAX_DOC_BYTES);
        let c = cut(s);
        assert_eq!(c.len(), MAX_DOC_BYTES);
        let s = format!("a{}", "é".repeat(MAX_DOC_BYTES));
        assert_eq!(cut(s).len(), MAX_DOC_BYTES - 1);
    }
}
