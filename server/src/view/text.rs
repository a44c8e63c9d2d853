//! Small text helpers shared by the view, the outline and the command line: figure formatting
//! (bytes, tokens, durations), labels, and the cleaning that keeps view lines safe for editors
//! (no control characters, no ANSI escapes, no base64 runs, no line over the limit).

use std::borrow::Cow;

/// Longest view line, in characters (DESIGN.md §2: no line over 2,000 characters).
pub const MAX_LINE_CHARS: usize = 2000;

/// A run of base64-alphabet characters at least this long is never shown (DESIGN.md §2:
/// base64 never appears); it is replaced by `[base64 · 12 KB]`.
pub const BASE64_RUN: usize = 200;

/// A byte count for people: `68 B`, `1.5 KB`, `141 KB`, `1.0 MB` (1 KB = 1,024 bytes).
pub fn fmt_bytes(n: usize) -> String {
    const K: f64 = 1024.0;
    let f = n as f64;
    if n < 1024 {
        format!("{n} B")
    } else if f < 10.0 * K {
        format!("{:.1} KB", f / K)
    } else if f < K * K {
        format!("{:.0} KB", f / K)
    } else if f < K * K * K {
        format!("{:.1} MB", f / (K * K))
    } else {
        format!("{:.1} GB", f / (K * K * K))
    }
}

/// The decoded size of a base64 payload of `len` source bytes (`len × 3 / 4`).
pub fn base64_decoded_len(len: usize) -> usize {
    len / 4 * 3 + (len % 4) * 3 / 4
}

/// An image placeholder: `[image/png · 1.0 MB]`, or `[image/png]` when the data is not inline.
/// `data_len` is the base64 length in source bytes.
pub fn image_placeholder(media_type: &str, data_len: usize) -> String {
    let media_type = if media_type.is_empty() {
        "image/unknown"
    } else {
        media_type
    };
    let media_type = one_line(media_type, 40);
    if data_len == 0 {
        format!("[{media_type}]")
    } else {
        format!(
            "[{media_type} · {}]",
            fmt_bytes(base64_decoded_len(data_len))
        )
    }
}

/// A token count for people: `950`, `12.3k`, `167k`, `1.2M`; `u64::MAX`, where token sums
/// saturate (`model::Usage::add`, issue 25 item 10), is `overflowed`.
pub fn fmt_tokens(n: u64) -> String {
    let f = n as f64;
    if n == u64::MAX {
        "overflowed".to_string()
    } else if n < 1000 {
        n.to_string()
    } else if n < 10_000 {
        format!("{:.1}k", f / 1e3)
    } else if n < 1_000_000 {
        format!("{:.0}k", f / 1e3)
    } else {
        format!("{:.1}M", f / 1e6)
    }
}

/// A duration for people: `0.8s`, `42s`, `2m 25s`, `1h 03m`. Input in milliseconds.
pub fn fmt_duration(ms: u64) -> String {
    if ms < 1000 {
        return format!("{:.1}s", ms as f64 / 1000.0);
    }
    let s = ms / 1000;
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{}h {:02}m", s / 3600, (s % 3600) / 60)
    }
}

/// Tokens per second for people: one decimal under 10 (`0.3`, `8.0`), none above (`41`).
pub fn fmt_tok_per_s(x: f64) -> String {
    if x < 9.95 {
        // Round half away from zero, as `stats --json` does (`0.25` -> `0.3`).
        format!("{:.1}", (x * 10.0).round() / 10.0)
    } else {
        format!("{:.0}", x.round())
    }
}

/// `n thing` / `n things`. The nouns of the vocabulary (responses, tool calls, comments, …)
/// and their zero rule are in `crate::view::words`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// Collapses all whitespace runs to one space, trims, cleans control characters, and cuts to
/// `max` characters (ending with `…` when cut). For one-line thoughts (seed 003), titles and
/// summaries.
pub fn one_line(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max * 4 + 4));
    let mut chars = 0usize;
    let mut pending_space = false;
    let mut iter = s.chars().peekable();
    while let Some(c) = iter.next() {
        if c == '\u{1b}' {
            skip_ansi(&mut iter);
            continue;
        }
        if c.is_whitespace() || c.is_control() {
            pending_space = !out.is_empty();
            continue;
        }
        if crate::analysis::text::is_invisible_control(c) {
            // Shown as `<U+202E>` (issue 8 defect 9); counted as its escape's characters.
            let esc = format!("<U+{:04X}>", c as u32);
            let n = esc.len() + usize::from(pending_space);
            if chars + n > max {
                while chars + 1 > max && out.pop().is_some() {
                    chars -= 1;
                }
                out.push('…');
                return scrub_base64(&out).into_owned();
            }
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            out.push_str(&esc);
            chars += n;
            continue;
        }
        let extra = usize::from(pending_space);
        if chars + extra + 1 > max {
            // Cut: leave room for the ellipsis.
            while chars + 1 > max && out.pop().is_some() {
                chars -= 1;
            }
            out.push('…');
            return scrub_base64(&out).into_owned();
        }
        if pending_space {
            out.push(' ');
            chars += 1;
            pending_space = false;
        }
        out.push(c);
        chars += 1;
    }
    scrub_base64(&out).into_owned()
}

/// Skips the rest of an ANSI escape sequence after ESC (CSI `ESC [ … final`, OSC `ESC ] … BEL`,
/// or a two-character escape).
fn skip_ansi<I: Iterator<Item = char>>(iter: &mut std::iter::Peekable<I>) {
    match iter.peek() {
        Some('[') => {
            iter.next();
            for c in iter.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        }
        Some(']') => {
            iter.next();
            while let Some(c) = iter.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' {
                    if iter.peek() == Some(&'\\') {
                        iter.next();
                    }
                    break;
                }
            }
        }
        Some(_) => {
            iter.next();
        }
        None => {}
    }
}

/// Makes one line safe to show: ANSI escape sequences removed, other control characters
/// (except tab) and the Unicode line/paragraph separators replaced by a space (editors would
/// otherwise break the line and the view's line map), bidi and zero-width controls shown as
/// `<U+202E>` escapes (`analysis::text::show_invisible`), base64 runs replaced. Borrows when
/// nothing changes.
pub fn clean(s: &str) -> Cow<'_, str> {
    let needs = needs_clean(s.as_bytes());
    let s: Cow<'_, str> = if needs {
        let mut out = String::with_capacity(s.len());
        let mut iter = s.chars().peekable();
        while let Some(c) = iter.next() {
            if c == '\u{1b}' {
                skip_ansi(&mut iter);
            } else if (c.is_control() && c != '\t') || matches!(c, '\u{2028}' | '\u{2029}') {
                out.push(' ');
            } else if crate::analysis::text::is_invisible_control(c) {
                out.push_str(&format!("<U+{:04X}>", c as u32));
            } else {
                out.push(c);
            }
        }
        Cow::Owned(out)
    } else {
        Cow::Borrowed(s)
    };
    match scrub_base64(&s) {
        Cow::Borrowed(_) => s,
        Cow::Owned(o) => Cow::Owned(o),
    }
}

/// True when the text holds a control character other than tab (C0, DEL, C1) or U+2028 /
/// U+2029 (byte scan, no char decoding).
fn needs_clean(b: &[u8]) -> bool {
    b.iter().enumerate().any(|(i, &c)| {
        (c < 0x20 && c != b'\t')
            || c == 0x7f
            || (c == 0xC2 && b.get(i + 1).is_some_and(|n| (0x80..=0x9F).contains(n)))
            || (c == 0xE2
                && b.get(i + 1) == Some(&0x80)
                && matches!(b.get(i + 2), Some(0xA8 | 0xA9)))
            // Invisible controls (issue 8 defect 9): U+200B–U+200F, U+202A–U+202E,
            // U+2060–U+2064, U+2066–U+2069, U+FEFF, U+061C.
            || (c == 0xE2
                && b.get(i + 1) == Some(&0x80)
                && matches!(b.get(i + 2), Some(0x8B..=0x8F | 0xAA..=0xAE)))
            || (c == 0xE2
                && b.get(i + 1) == Some(&0x81)
                && matches!(b.get(i + 2), Some(0xA0..=0xA4 | 0xA6..=0xA9)))
            || (c == 0xEF && b.get(i + 1) == Some(&0xBB) && b.get(i + 2) == Some(&0xBF))
            || (c == 0xD8 && b.get(i + 1) == Some(&0x9C))
    })
}

/// True for a byte of the base64 or base64url alphabet.
pub fn is_b64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=' || b == b'-' || b == b'_'
}

/// True when a run holds upper-case letters, lower-case letters and digits, as any base64
/// payload of this length does (a long lower-case identifier or hex digest does not).
pub fn mixed_classes(run: &[u8]) -> bool {
    run.iter().any(u8::is_ascii_uppercase)
        && run.iter().any(u8::is_ascii_lowercase)
        && run.iter().any(u8::is_ascii_digit)
}

/// Replaces every run of [`BASE64_RUN`] or more base64/base64url characters that mixes
/// upper case, lower case and digits by `[base64 · N KB]` (decoded size). Borrows when there
/// is none.
pub fn scrub_base64(s: &str) -> Cow<'_, str> {
    let bytes = s.as_bytes();
    if bytes.len() < BASE64_RUN {
        return Cow::Borrowed(s);
    }
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if !is_b64(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_b64(bytes[i]) {
            i += 1;
        }
        if i - start >= BASE64_RUN && mixed_classes(&bytes[start..i]) {
            let o = out.get_or_insert_with(|| String::with_capacity(s.len()));
            o.push_str(&s[copied..start]);
            o.push_str(&format!(
                "[base64 · {}]",
                fmt_bytes(base64_decoded_len(i - start))
            ));
            copied = i;
        }
    }
    match out {
        None => Cow::Borrowed(s),
        Some(mut o) => {
            o.push_str(&s[copied..]);
            Cow::Owned(o)
        }
    }
}

/// The byte index of the `n`-th character of `s` (or `s.len()`).
pub fn char_index(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// Splits one logical line that is longer than `max` characters into pieces of at most `max`
/// characters, breaking after a space in the last quarter of a piece when there is one.
/// Lazy, and each piece costs O(`max`): taking the first k pieces of a line of any length
/// costs O(k · `max`) (issue 8 defect 5: it used to re-count the rest of the line per piece).
pub fn wrap_long(line: &str, max: usize) -> impl Iterator<Item = &str> {
    let max = max.max(1);
    let mut rest = Some(line);
    std::iter::from_fn(move || {
        let r = rest?;
        let cut = char_index(r, max);
        if cut >= r.len() {
            rest = None;
            return Some(r);
        }
        let window = char_index(r, max - max / 4);
        let cut = match r[window..cut].rfind(' ') {
            Some(p) => window + p + 1,
            None => cut,
        };
        rest = Some(&r[cut..]);
        Some(&r[..cut])
    })
}

/// Cuts a `<command-name>` wrapper (Claude slash commands) down to `/cmd args`; other text is
/// returned unchanged.
pub fn command_text(s: &str) -> Cow<'_, str> {
    fn tag<'a>(s: &'a str, name: &str) -> Option<&'a str> {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        let a = s.find(&open)? + open.len();
        let b = a + s[a..].find(&close)?;
        Some(s[a..b].trim())
    }
    match tag(s, "command-name") {
        Some(name) => {
            let args = tag(s, "command-args").unwrap_or("");
            if args.is_empty() {
                Cow::Owned(name.to_string())
            } else {
                Cow::Owned(format!("{name} {args}"))
            }
        }
        None => Cow::Borrowed(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures() {
        assert_eq!(fmt_bytes(68), "68 B");
        assert_eq!(fmt_bytes(1536), "1.5 KB");
        assert_eq!(fmt_bytes(141 * 1024 + 10), "141 KB");
        assert_eq!(fmt_bytes(1024 * 1024), "1.0 MB");
        assert_eq!(
            image_placeholder("image/png", 1_398_104),
            "[image/png · 1.0 MB]"
        );
        assert_eq!(image_placeholder("image/jpeg", 0), "[image/jpeg]");
        assert_eq!(fmt_tokens(950), "950");
        assert_eq!(fmt_tokens(12_345), "12k");
        assert_eq!(fmt_tokens(1_234), "1.2k");
        assert_eq!(fmt_tokens(167_094), "167k");
        assert_eq!(fmt_tokens(1_234_567), "1.2M");
        assert_eq!(fmt_tokens(u64::MAX - 1), "18446744073709.6M");
        assert_eq!(fmt_tokens(u64::MAX), "overflowed");
        assert_eq!(fmt_duration(800), "0.8s");
        assert_eq!(fmt_duration(42_000), "42s");
        assert_eq!(fmt_duration(145_000), "2m 25s");
        assert_eq!(fmt_duration(1_800_000), "30m 00s");
        assert_eq!(fmt_duration(3_780_000), "1h 03m");
        assert_eq!(fmt_tok_per_s(0.25), "0.3");
        assert_eq!(fmt_tok_per_s(9.96), "10");
        assert_eq!(fmt_tok_per_s(41.5), "42");
    }

    #[test]
    fn one_line_collapses_and_cuts() {
        assert_eq!(one_line("  a \n\n b\tc  ", 80), "a b c");
        assert_eq!(one_line("abcdef", 4), "abc…");
        assert_eq!(one_line("ab cdef", 3), "ab…");
        assert_eq!(one_line("\u{1b}[1mbold\u{1b}[22m x", 80), "bold x");
    }

    #[test]
    fn clean_removes_controls_ansi_and_base64() {
        assert_eq!(
            clean("a\u{1b}[31mred\u{1b}[0m\rb\u{7}c\u{2028}d"),
            "ared b c d"
        );
        let input = format!("data:image/png;base64,{} end", "QUf1".repeat(100));
        assert_eq!(clean(&input), "data:image/png;base64,[base64 · 300 B] end");
        // A long lower-case identifier or hex digest is not base64.
        let hex = "0123456789abcdef".repeat(20);
        assert_eq!(clean(&hex), hex.as_str());
        assert!(matches!(clean("plain text é ✓"), Cow::Borrowed(_)));
        assert_eq!(clean("a\u{85}b\u{7f}c"), "a b c");
    }

    #[test]
    fn wrap_breaks_at_spaces() {
        let s = "aaaa bbbb cccc dddd";
        let wrap = |s, n| wrap_long(s, n).collect::<Vec<_>>();
        assert_eq!(wrap(s, 10), vec!["aaaa bbbb ", "cccc dddd"]);
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(wrap("abcd", 4), vec!["abcd"]);
        assert_eq!(wrap("", 4), vec![""]);
    }

    #[test]
    fn command_wrappers() {
        assert_eq!(
            command_text(
                "<command-message>init is analyzing</command-message>\n<command-name>/init</command-name>"
            ),
            "/init"
        );
        assert_eq!(
            command_text("<command-name>/model</command-name><command-args>opus</command-args>"),
            "/model opus"
        );
        assert_eq!(command_text("hello"), "hello");
    }
}
