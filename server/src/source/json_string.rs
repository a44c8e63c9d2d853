//! JSON string literals inside the source: decoding, and mapping decoded-string offsets back
//! to raw source offsets (FORMATS.md §0: highlighted text sits inside JSON strings).

use std::borrow::Cow;

/// Decodes the raw contents of a JSON string literal (the bytes between the quotes).
///
/// Escapes (`\n`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\t`, `\uXXXX`, surrogate pairs) are
/// resolved. A lone surrogate escape (`\udcb2`) or a malformed escape becomes U+FFFD; this
/// never fails. Borrows `raw` when it holds no backslash.
pub fn decode(raw: &str) -> Cow<'_, str> {
    let Some(first) = memchr::memchr(b'\\', raw.as_bytes()) else {
        return Cow::Borrowed(raw);
    };
    let bytes = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    out.push_str(&raw[..first]);
    let mut i = first;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            let next = memchr::memchr(b'\\', &bytes[i..]).map_or(bytes.len(), |n| i + n);
            out.push_str(&raw[i..next]);
            i = next;
            continue;
        }
        let (ch, len) = decode_escape(bytes, i);
        out.push(ch);
        i += len;
    }
    Cow::Owned(out)
}

/// Decodes the escape starting at `bytes[i] == b'\\'`; returns the character and the number of
/// source bytes the escape spans. Malformed escapes yield U+FFFD over the backslash alone
/// (or the whole `\uXXXX` when its hex digits parse).
pub fn decode_escape(bytes: &[u8], i: usize) -> (char, usize) {
    let Some(&c) = bytes.get(i + 1) else {
        return ('\u{FFFD}', 1);
    };
    match c {
        b'"' => ('"', 2),
        b'\\' => ('\\', 2),
        b'/' => ('/', 2),
        b'b' => ('\u{8}', 2),
        b'f' => ('\u{c}', 2),
        b'n' => ('\n', 2),
        b'r' => ('\r', 2),
        b't' => ('\t', 2),
        b'u' => {
            let Some(hi) = hex4(bytes, i + 2) else {
                return ('\u{FFFD}', 2);
            };
            if (0xD800..0xDC00).contains(&hi) {
                if bytes.get(i + 6) == Some(&b'\\') && bytes.get(i + 7) == Some(&b'u') {
                    if let Some(lo) = hex4(bytes, i + 8) {
                        if (0xDC00..0xE000).contains(&lo) {
                            let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                            return (char::from_u32(cp).unwrap_or('\u{FFFD}'), 12);
                        }
                    }
                }
                ('\u{FFFD}', 6)
            } else {
                (char::from_u32(hi).unwrap_or('\u{FFFD}'), 6)
            }
        }
        _ => ('\u{FFFD}', 2),
    }
}

fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at + 4)?;
    let mut v = 0u32;
    for &d in digits {
        v = v * 16 + (d as char).to_digit(16)?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_pairs() {
        assert_eq!(decode(r#"a\"b\\c\nd"#), "a\"b\\c\nd");
        assert_eq!(decode(r"\u00e9\ud83d\ude00!"), "é😀!");
        assert!(matches!(decode("plain é"), Cow::Borrowed(_)));
    }

    #[test]
    fn lone_surrogates_become_replacement() {
        assert_eq!(decode(r"x\udcb2y"), "x\u{FFFD}y");
        assert_eq!(decode(r"\ud83dz"), "\u{FFFD}z");
        assert_eq!(decode(r"bad\q"), "bad\u{FFFD}");
        assert_eq!(decode(r"end\"), "end\u{FFFD}");
        assert_eq!(decode(r"\u12"), "\u{FFFD}12");
    }
}
