//! Reading prose inside JSON string literals without decoding more than needed.
//!
//! Analysis only ever looks at agent prose (text blocks), prompt titles and gate / marker
//! lines. These helpers work on the *raw* contents of a string literal (escapes undecoded, as
//! spanned by [`crate::model::Str`]) so that big strings are never decoded just to be
//! classified, and map decoded byte offsets back to source byte offsets for spans.

use std::borrow::Cow;

use crate::source::json_string;

/// True when the raw literal decodes to whitespace only (spaces, tabs, `\n`, `\r`, and their
/// escapes `\n` `\t` `\r` `\u0020`…). Stops at the first visible character, so it is O(1) for
/// ordinary text.
pub fn raw_is_blank(raw: &str) -> bool {
    let b = raw.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'\\' => {
                let (c, len) = json_string::decode_escape(b, i);
                if !c.is_whitespace() {
                    return false;
                }
                i += len;
            }
            _ => {
                // Non-ASCII whitespace (NBSP, ideographic space…) counts as blank too.
                let c = raw[i..].chars().next().unwrap_or('x');
                if !c.is_whitespace() {
                    return false;
                }
                i += c.len_utf8();
            }
        }
    }
    true
}

/// A decoded string literal with a map from decoded byte offsets back to source offsets.
#[derive(Debug)]
pub struct Mapped<'s> {
    /// The decoded text.
    pub text: Cow<'s, str>,
    /// Source byte offset of the literal's raw contents.
    base: usize,
    /// `(decoded offset, raw offset relative to base)` after each escape, ascending.
    breaks: Vec<(usize, usize)>,
}

impl<'s> Mapped<'s> {
    /// Decodes `source[raw]` (the raw contents of a string literal).
    pub fn new(source: &'s str, raw: std::ops::Range<usize>) -> Mapped<'s> {
        let base = raw.start;
        let s = source.get(raw).unwrap_or("");
        let bytes = s.as_bytes();
        let Some(first) = memchr::memchr(b'\\', bytes) else {
            return Mapped {
                text: Cow::Borrowed(s),
                base,
                breaks: Vec::new(),
            };
        };
        let mut out = String::with_capacity(s.len());
        let mut breaks = Vec::new();
        out.push_str(&s[..first]);
        let mut i = first;
        while i < bytes.len() {
            if bytes[i] != b'\\' {
                let next = memchr::memchr(b'\\', &bytes[i..]).map_or(bytes.len(), |n| i + n);
                out.push_str(&s[i..next]);
                i = next;
                continue;
            }
            let (ch, len) = json_string::decode_escape(bytes, i);
            out.push(ch);
            i += len;
            breaks.push((out.len(), i));
        }
        Mapped {
            text: Cow::Owned(out),
            base,
            breaks,
        }
    }

    /// Source byte offset of decoded offset `d`. An offset inside the output of an escape maps
    /// to the start of that escape's successor boundary computation (never out of range).
    pub fn source_offset(&self, d: usize) -> usize {
        let i = self.breaks.partition_point(|&(dd, _)| dd <= d);
        let rel = if i == 0 {
            d
        } else {
            let (dd, rr) = self.breaks[i - 1];
            rr + (d - dd)
        };
        self.base + rel
    }
}

/// Decodes at most the first `limit` characters of a raw literal (escape by escape), so a
/// title can be taken from a huge prompt without decoding all of it.
pub fn decode_prefix(raw: &str, limit: usize) -> String {
    let b = raw.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    let mut n = 0;
    while i < b.len() && n < limit {
        if b[i] == b'\\' {
            let (c, len) = json_string::decode_escape(b, i);
            out.push(c);
            i += len;
        } else {
            let c = raw[i..].chars().next().unwrap_or('\u{FFFD}');
            out.push(c);
            i += c.len_utf8();
        }
        n += 1;
    }
    out
}

/// The first non-empty line of `text`, trimmed, cut to `max` characters with `…` when longer;
/// invisible controls shown as escapes ([`show_invisible`]).
pub fn first_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    cut(line, max)
}

/// `s` cut to at most `max` characters, the last being `…` when it was cut; invisible
/// controls shown as escapes ([`show_invisible`]) before the cut.
pub fn cut(s: &str, max: usize) -> String {
    let s = show_invisible(s);
    if s.chars().count() <= max {
        return s.into_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// True for the invisible characters that reorder or hide text ("Trojan Source",
/// CVE-2021-42574; issue 8 defect 9): the bidi embeddings, overrides and isolates
/// U+202A–U+202E and U+2066–U+2069, the marks U+200E, U+200F and U+061C, the zero-width
/// U+200B–U+200D, U+2060–U+2064 and the byte order mark U+FEFF.
pub fn is_invisible_control(c: char) -> bool {
    matches!(c,
        '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200B}'..='\u{200F}'
        | '\u{2060}'..='\u{2064}'
        | '\u{061C}'
        | '\u{FEFF}')
}

/// True when `s` may hold an [`is_invisible_control`] character (a byte scan for their lead
/// bytes; false positives only cost a char scan).
pub fn may_hold_invisible(s: &str) -> bool {
    memchr::memchr3(0xE2, 0xEF, 0xD8, s.as_bytes()).is_some() && s.chars().any(is_invisible_control)
}

/// `s` with every [`is_invisible_control`] character replaced by a visible escape such as
/// `<U+202E>`, the same in titles, symbol names, the view and the command line, so a title
/// can never be spoofed. Borrows when there is none.
pub fn show_invisible(s: &str) -> std::borrow::Cow<'_, str> {
    if !may_hold_invisible(s) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_invisible_control(c) {
            out.push_str(&format!("<U+{:04X}>", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_detection_reads_escapes() {
        assert!(raw_is_blank(r"\n\n"));
        assert!(raw_is_blank(" \\t \\r\\n \\u0020"));
        assert!(raw_is_blank(""));
        assert!(!raw_is_blank(r"\n\nx"));
        assert!(!raw_is_blank(r"\u0041"));
    }

    #[test]
    fn mapped_offsets_go_back_through_escapes() {
        let src = r#"{"t":"a\nb\"[[X]]"}"#;
        let start = src.find("a\\n").unwrap();
        let end = src.rfind('"').unwrap();
        let m = Mapped::new(src, start..end);
        assert_eq!(m.text, "a\nb\"[[X]]");
        let d = m.text.find("[[X]]").unwrap();
        assert_eq!(&src[m.source_offset(d)..m.source_offset(d) + 5], "[[X]]");
        assert_eq!(m.source_offset(0), start);
        assert_eq!(m.source_offset(2), start + 3);
    }

    #[test]
    fn invisible_controls_are_escaped() {
        assert_eq!(
            first_line("fix \u{202E}gnp.exe\u{202C} now\u{200B}", 80),
            "fix <U+202E>gnp.exe<U+202C> now<U+200B>"
        );
        assert_eq!(cut("\u{FEFF}abc", 5), "<U+F…");
        assert!(matches!(
            show_invisible("plain — é"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn prefix_and_first_line() {
        assert_eq!(decode_prefix(r"\n\nCheck this\nmore", 12), "\n\nCheck this");
        assert_eq!(first_line("\n  \n  Hello world  \nnext", 80), "Hello world");
        assert_eq!(first_line("abcdef", 4), "abc…");
    }
}
