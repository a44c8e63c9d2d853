//! The Markdown form of a view (issue 23 item 6): what VS Code's Markdown preview shows for a
//! `transcript:` URI with `markdown=1` in its query. Same lines as the view, one for one (so a
//! line of the preview's source is the view's line), with two differences:
//!
//! - **Images**: each image placeholder the view shows (`[image/png · 34 KB]`,
//!   [`super::View::images`]) becomes a Markdown image whose URL is a `data:` URI of the image's
//!   base64 data, read from the source (VS Code's preview allows `data:` images under its
//!   default, strict, security level; its Markdown engine takes `data:` URLs of PNG, JPEG, GIF
//!   and WebP only). An image over [`MarkdownLimits::image_bytes`] of base64, past
//!   [`MarkdownLimits::total_image_bytes`] for the whole view, of another type, or whose data is
//!   not in the file stays a placeholder that says so: `[image/png · 3.2 MB] (too big for the
//!   preview: over 1.5 MB)`.
//! - **Activity lines**: the lines of a turn's activity that are not the agent's prose (the
//!   activity header, `▸ Worked · 2 tool calls`, tool calls, their output, thoughts, records)
//!   are literal text, each on its own line: Markdown punctuation escaped, leading spaces made
//!   non-breaking (an indented line is not a code block), a hard line break at the end (lines
//!   do not run together into one paragraph). `**Answer**` ends with a hard line break too.
//!
//! The plain view (what an editor shows as text) is not changed: base64 never appears there.

use super::{RegionKind, SpanKind, View};
use crate::model::Span;

/// Bounds on the images of a Markdown form.
#[derive(Debug, Clone, Copy)]
pub struct MarkdownLimits {
    /// Largest image shown, in base64 bytes (2 MiB: a 1.5 MB image).
    pub image_bytes: usize,
    /// All images of one view together, in base64 bytes (16 MiB).
    pub total_image_bytes: usize,
}

impl Default for MarkdownLimits {
    fn default() -> Self {
        MarkdownLimits {
            image_bytes: 2 * 1024 * 1024,
            total_image_bytes: 16 * 1024 * 1024,
        }
    }
}

/// The image types VS Code's Markdown preview shows from a `data:` URL (markdown-it's
/// `validateLink`).
const SHOWN_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The Markdown form of `view` (rendered from `src`): the view's text with the changes the
/// module documentation lists; as many lines as the view. Never fails: an image that cannot be
/// read stays a placeholder with the reason.
pub fn markdown(view: &View, src: &str, limits: &MarkdownLimits) -> String {
    let lines: Vec<&str> = view.text.split_inclusive('\n').collect();
    let mut literal = vec![false; lines.len()];
    for r in &view.regions {
        if matches!(
            r.kind,
            RegionKind::Activity
                | RegionKind::WorkRun
                | RegionKind::Thought
                | RegionKind::LongToolOutput
                | RegionKind::Subagent
        ) {
            for l in literal.iter_mut().take(r.end_line + 1).skip(r.start_line) {
                *l = true;
            }
        }
    }
    // The agent's prose inside the activity stays Markdown (at the line start: a sub-agent's
    // indented prose inside a work run is literal, else its indent would make it code).
    for s in &view.spans {
        if s.kind == SpanKind::Narration
            && s.start == 0
            && let Some(l) = literal.get_mut(s.line)
        {
            *l = false;
        }
    }
    let mut images = view.images.iter().peekable();
    let mut budget = limits.total_image_bytes;
    let mut out = String::with_capacity(view.text.len() + view.text.len() / 8);
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let mut text = if literal[i] && !line.trim().is_empty() {
            let mut t = literal_line(line);
            t.push_str("  ");
            t
        } else if line == "**Answer**" {
            "**Answer**  ".to_string()
        } else {
            line.to_string()
        };
        while let Some(img) = images.next_if(|im| im.line <= i) {
            if img.line != i {
                continue;
            }
            let shown = image_markdown(
                src,
                &img.span,
                img.index,
                &img.placeholder,
                limits,
                &mut budget,
            );
            // The placeholder as it is in the (maybe escaped) line.
            let needle = if literal[i] {
                literal_line(&img.placeholder)
            } else {
                img.placeholder.clone()
            };
            if let Some(at) = text.find(&needle) {
                text.replace_range(at..at + needle.len(), &shown);
            }
        }
        out.push_str(&text);
        if raw.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// `line` as literal Markdown text: ASCII punctuation backslash-escaped, leading spaces
/// non-breaking.
fn literal_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 16);
    let mut leading = true;
    for c in line.chars() {
        if leading && c == ' ' {
            out.push('\u{a0}');
            continue;
        }
        leading = false;
        if c.is_ascii_punctuation() {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The Markdown of one image: `![placeholder](data:…)`, or the placeholder and why it is not
/// shown. Takes the image's size from `budget`.
fn image_markdown(
    src: &str,
    span: &Span,
    index: usize,
    placeholder: &str,
    limits: &MarkdownLimits,
    budget: &mut usize,
) -> String {
    let alt = placeholder.trim_start_matches('[').trim_end_matches(']');
    let Some((media_type, data)) = src
        .get(span.clone())
        .and_then(|json| serde_json::from_str::<serde_json::Value>(json).ok())
        .and_then(|v| nth_image(&v, index))
    else {
        return format!("{placeholder} (not in the file: not shown)");
    };
    if !SHOWN_TYPES.contains(&media_type.as_str()) {
        return format!("{placeholder} (the preview shows PNG, JPEG, GIF and WebP only)");
    }
    let data: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    if !data
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=')
    {
        return format!("{placeholder} (not base64: not shown)");
    }
    if data.len() > limits.image_bytes {
        return format!(
            "{placeholder} (too big for the preview: over {})",
            super::text::fmt_bytes(super::text::base64_decoded_len(limits.image_bytes))
        );
    }
    if data.len() > *budget {
        return format!(
            "{placeholder} (not shown: the preview's images reached {})",
            super::text::fmt_bytes(super::text::base64_decoded_len(limits.total_image_bytes))
        );
    }
    *budget -= data.len();
    format!("![{alt}](data:{media_type};base64,{data})")
}

/// The `index`-th image under `v` (depth first, arrays in order) as (media type, base64
/// data). The shapes: Claude Code `{"type":"image","source":{"type":"base64","media_type",
/// "data"}}`, Codex `{"type":"input_image","image_url":"data:image/png;base64,…"}`, MCP and Pi
/// `{"type":"image","data","mimeType"}`.
fn nth_image(v: &serde_json::Value, index: usize) -> Option<(String, String)> {
    let mut found = Vec::new();
    collect_images(v, &mut found, index + 1);
    found.into_iter().nth(index).flatten()
}

/// Appends the images under `v` to `out` (`None` for an image whose data is not inline), up
/// to `want` of them.
fn collect_images(v: &serde_json::Value, out: &mut Vec<Option<(String, String)>>, want: usize) {
    if out.len() >= want {
        return;
    }
    match v {
        serde_json::Value::Array(items) => {
            for x in items {
                collect_images(x, out, want);
            }
        }
        serde_json::Value::Object(o) => {
            let ty = o.get("type").and_then(|t| t.as_str()).unwrap_or("");
            if matches!(ty, "image" | "input_image" | "output_image") {
                out.push(image_of(o));
                return;
            }
            for x in o.values() {
                collect_images(x, out, want);
            }
        }
        _ => {}
    }
}

fn image_of(o: &serde_json::Map<String, serde_json::Value>) -> Option<(String, String)> {
    let s = |v: Option<&serde_json::Value>| v.and_then(|x| x.as_str()).map(str::to_string);
    if let Some(src) = o.get("source").and_then(|x| x.as_object()) {
        return Some((s(src.get("media_type"))?, s(src.get("data"))?));
    }
    if let Some(url) = s(o.get("image_url").or_else(|| o.get("url"))) {
        let rest = url.strip_prefix("data:")?;
        let (mt, data) = rest.split_once(";base64,")?;
        return Some((mt.to_string(), data.to_string()));
    }
    Some((
        s(o.get("mimeType").or_else(|| o.get("media_type")))?,
        s(o.get("data"))?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view_of(src: &str, verbose: bool) -> View {
        let t = crate::formats::read(src);
        let a = crate::analysis::analyze(&t, src, &Default::default());
        super::super::render(&t, &a, src, &super::super::ViewOptions { verbose })
    }

    #[test]
    fn literal_lines_escape_and_keep_their_indent() {
        assert_eq!(
            literal_line("  ⚙ Bash  ls *.md"),
            "\u{a0}\u{a0}⚙ Bash  ls \\*\\.md"
        );
    }

    #[test]
    fn a_prompt_image_becomes_a_data_uri_and_a_big_one_says_so() {
        let png = "iVBORw0KGgo".repeat(40);
        let src = format!(
            "{{\"type\":\"user\",\"uuid\":\"u1\",\"sessionId\":\"s\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"image\",\"source\":{{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"{png}\"}}}},{{\"type\":\"text\",\"text\":\"what is this\"}}]}}}}\n"
        );
        let v = view_of(&src, false);
        assert_eq!(v.images.len(), 1, "{}", v.text);
        assert!(!v.text.contains(&png));
        let md = markdown(&v, &src, &MarkdownLimits::default());
        assert_eq!(md.lines().count(), v.text.lines().count());
        assert!(
            md.contains(&format!(
                "> ![image/png · 330 B](data:image/png;base64,{png})"
            )),
            "{md}"
        );
        let small = MarkdownLimits {
            image_bytes: 100,
            total_image_bytes: 1000,
        };
        let md = markdown(&v, &src, &small);
        assert!(
            md.contains("> [image/png · 330 B] (too big for the preview: over 75 B)"),
            "{md}"
        );
        assert!(!md.contains(&png));
    }
}
