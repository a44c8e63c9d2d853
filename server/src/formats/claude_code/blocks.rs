//! Content blocks of Claude Code messages (FORMATS.md §1.4, §1.5): each block is read on its
//! own from its raw JSON, so an unknown or malformed block becomes `BlockKind::Other` without
//! touching its siblings (case 04). Images are measured, never decoded (cases 05, 06).

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::raw::{self, Members, RawBlock, ToolUseResultObj};
use thin_vec::ThinVec;

use crate::model::{
    Block, BlockKind, Span, Str, SubagentResult, SubagentSpawn, ToolResult, ToolUse,
};
use crate::source::json_string;

/// Longest summary, in characters (model: `ToolUse::summary`, `ToolResult::summary`).
pub const SUMMARY_MAX: usize = 160;

/// How many raw source bytes of a string are decoded to find a summary line: a first try,
/// then a longer one when the first holds only blank lines.
const SUMMARY_SCAN_FIRST: usize = 1024;
/// The first look of [`summary_line`], raw bytes.
const SUMMARY_SCAN_QUICK: usize = 256;
const SUMMARY_SCAN: usize = 16 * 1024;

/// A tool-input string longer than this (raw bytes) is not "short" (fallback summary).
const SHORT_FIELD: usize = 400;

/// Where the raw values being read sit in the source: `text` is the line as parsed (the
/// original or a same-length patched copy), `base` its byte offset in the source.
#[derive(Clone, Copy)]
pub struct Ctx<'t> {
    pub text: &'t str,
    pub base: usize,
}

impl<'t> Ctx<'t> {
    pub fn span(&self, raw: &RawValue) -> Span {
        raw::span_of(raw, self.text, self.base)
    }

    /// The raw (undecoded) contents of a `Str` read from this line (`""` for a `Str` that is
    /// not inside it).
    pub fn raw_text(&self, s: &Str) -> &'t str {
        let (Some(a), Some(b)) = (
            s.raw.start.checked_sub(self.base),
            s.raw.end.checked_sub(self.base),
        ) else {
            return "";
        };
        self.text.get(a..b).unwrap_or("")
    }

    /// The source offset of the byte at address `addr`, when it is inside the line.
    pub fn offset(&self, addr: usize) -> Option<usize> {
        let at = addr.checked_sub(self.text.as_ptr() as usize)?;
        (at <= self.text.len()).then_some(self.base + at)
    }

    /// The raw text of a content list element found by the record's pass: a string literal,
    /// or an object from its `{` to its `}` (checked to be there).
    fn element(&self, e: &raw::Element) -> Option<&'t str> {
        if e.block.is_some() {
            return self.object(e.from, e.to);
        }
        let b = self.text.as_bytes();
        let from = e.from.checked_sub(self.text.as_ptr() as usize)?;
        let to = e.to.checked_sub(self.text.as_ptr() as usize)?;
        let start = from.checked_sub(1)?;
        if b.get(start) != Some(&b'"') || b.get(to) != Some(&b'"') {
            return None;
        }
        self.text.get(start..to + 1)
    }

    /// The raw text of an object of the line from its `{` to its `}` (checked to be there),
    /// given the address `from` of its first key's contents and `to` after its last value.
    pub fn object(&self, from: usize, to: usize) -> Option<&'t str> {
        let b = self.text.as_bytes();
        let from = from.checked_sub(self.text.as_ptr() as usize)?;
        let mut end = to.checked_sub(self.text.as_ptr() as usize)?;
        let mut start = from.checked_sub(1)?;
        if b.get(start) != Some(&b'"') {
            return None;
        }
        let ws = |c: &u8| matches!(c, b' ' | b'\n' | b'\r' | b'\t');
        while start > 0 && ws(&b[start - 1]) {
            start -= 1;
        }
        start = start.checked_sub(1)?;
        while b.get(end).is_some_and(ws) {
            end += 1;
        }
        if b.get(start) != Some(&b'{') || b.get(end) != Some(&b'}') {
            return None;
        }
        self.text.get(start..end + 1)
    }

    /// A `Str` for a string literal; `None` for any other JSON value.
    pub fn str(&self, raw: &RawValue) -> Option<Str> {
        raw::str_span(raw, self.text, self.base).map(|raw| Str { raw })
    }
}

/// Reads `message.content` (or a queued prompt, or a `queue-operation` content): a string
/// becomes one `Text` block spanning the string literal; a list becomes one block per element
/// (each element read once, in place: [`raw::for_each_element`]). Returns `false` when the
/// value is neither (the caller reports the shape).
pub fn content_blocks(ctx: Ctx, content: &RawValue, out: &mut ThinVec<Block>) -> bool {
    let s = content.get();
    if s.starts_with('"') {
        let span = ctx.span(content);
        let text = ctx.str(content).unwrap_or_default();
        out.push(Block {
            span,
            kind: BlockKind::Text { text },
        });
        true
    } else if s.starts_with('[') {
        let before = out.len();
        let ok = raw::for_each_element::<RawBlock>(s, |raw, b| out.push(block_read(ctx, raw, b)));
        if !ok {
            out.truncate(before);
        }
        ok
    } else {
        false
    }
}

/// Reads `message.content` as [`content_blocks`] reads its raw value, from what the record's
/// own pass found ([`raw::Content`]): a string becomes one `Text` block, each list element one
/// block at the place it was found. Content that pass could not place is read again from the
/// line. Returns the raw content when it is neither a string nor a list (nothing is pushed;
/// the caller reports its shape).
pub fn message_blocks<'t>(
    ctx: Ctx<'t>,
    content: raw::Content<'t>,
    out: &mut ThinVec<Block>,
) -> Option<&'t RawValue> {
    let before = out.len();
    let placed = match content {
        raw::Content::Absent => return None,
        // Past the line's first byte: the opening quote is before it.
        raw::Content::Str(v) => ctx
            .offset(v.as_ptr() as usize)
            .filter(|&at| at > ctx.base)
            .map(|at| {
                out.reserve_exact(1);
                out.push(Block {
                    span: at - 1..at + v.len() + 1,
                    kind: BlockKind::Text {
                        text: Str {
                            raw: at..at + v.len(),
                        },
                    },
                });
            }),
        raw::Content::List(elements) => {
            out.reserve_exact(elements.len());
            elements.into_iter().try_for_each(|mut e| {
                // A block's `input` object must be placed too; when it is the last member,
                // the block ends after it.
                if let Some((from, to)) = e.last_input {
                    let s = ctx.object(from, to)?;
                    e.to = s.as_ptr() as usize + s.len();
                }
                if let Some(Some(b)) = &e.block
                    && let Some(o) = &b.input_object
                {
                    ctx.object(o.from, o.to)?;
                }
                let s = ctx.element(&e)?;
                out.push(block_read(ctx, s, e.block.flatten()));
                Some(())
            })
        }
        raw::Content::Again => None,
    };
    if placed.is_some() {
        return None;
    }
    out.truncate(before);
    let c = serde_json::from_str::<raw::MessageContent>(ctx.text)
        .ok()?
        .message
        .0?
        .content?;
    (!content_blocks(ctx, c, out)).then_some(c)
}

/// One content block from its raw text `s` (a slice of the line) and, when it is an object
/// that reads as one, its [`RawBlock`].
fn block_read(ctx: Ctx, s: &str, b: Option<RawBlock>) -> Block {
    let span = raw::span_of_str(s, ctx.text, ctx.base);
    if s.starts_with('"') {
        // A bare string inside a content list: take it as text.
        let text = raw::str_span_of_str(s, ctx.text, ctx.base)
            .map(|raw| Str { raw })
            .unwrap_or_default();
        return Block {
            span,
            kind: BlockKind::Text { text },
        };
    }
    let other = |t: &str| BlockKind::Other {
        block_type: t.into(),
    };
    if !s.starts_with('{') {
        return Block {
            span,
            kind: other("(not an object)"),
        };
    }
    let Some(b) = b else {
        return Block {
            span,
            kind: other("(unreadable)"),
        };
    };
    let ty = b.ty.get().unwrap_or("");
    let kind = match ty {
        "text" => match b.text.and_then(|t| ctx.str(t)) {
            Some(text) => BlockKind::Text { text },
            None => other("text"),
        },
        "thinking" => BlockKind::Thinking {
            text: b.thinking.and_then(|t| ctx.str(t)).unwrap_or(Str {
                raw: span.start..span.start,
            }),
            encrypted: false,
        },
        "redacted_thinking" => BlockKind::Thinking {
            text: Str {
                raw: span.start..span.start,
            },
            encrypted: true,
        },
        "tool_use" | "server_tool_use" => BlockKind::ToolUse(Box::new(tool_use(ctx, &b, span.end))),
        "tool_result" => BlockKind::ToolResult(Box::new(tool_result(ctx, &b, span.end))),
        "image" => image(&b),
        "" => other("(no type)"),
        t => other(t),
    };
    Block { span, kind }
}

fn image(b: &RawBlock) -> BlockKind {
    let (media_type, data_len) = match &b.source.0 {
        Some(src) => (
            src.media_type
                .get()
                .filter(|m| !m.is_empty())
                .unwrap_or("image/unknown"),
            src.data.and_then(raw::str_contents).map_or(0, str::len),
        ),
        None => ("image/unknown", 0),
    };
    BlockKind::Image {
        media_type: media_type.into(),
        data_len,
    }
}

fn tool_use(ctx: Ctx, b: &RawBlock, end: usize) -> ToolUse {
    let name = b.name.get().unwrap_or("");
    let placed = b
        .input_object
        .as_ref()
        .and_then(|o| Some((ctx.object(o.from, o.to)?, &o.members)));
    let read;
    let (input, members) = match placed {
        // Read in the record's pass (`message_blocks` checked that it is placed).
        Some((s, members)) => (raw::span_of_str(s, ctx.text, ctx.base), members),
        None => {
            read = b
                .input
                .and_then(|i| serde_json::from_str::<Members>(i.get()).ok())
                .unwrap_or_default();
            (b.input.map_or(end..end, |i| ctx.span(i)), &read)
        }
    };
    let (summary, subagent) = tool_summary(name, members);
    ToolUse {
        id: b.id.get().unwrap_or("").into(),
        name: name.into(),
        input,
        summary,
        subagent,
    }
}

/// The key argument of a tool call, one line of at most [`SUMMARY_MAX`] chars, and the
/// sub-agent description for `Task` / `Agent` calls.
///
/// Bash → `command`; Read/Write/Edit/MultiEdit → `file_path`; NotebookEdit → `notebook_path`
/// (or `file_path`); Grep/Glob → `pattern`; WebFetch → `url`; WebSearch → `query`;
/// Task/Agent → `description`; TodoWrite → `N todos`; any other tool (or a missing key
/// argument) → the first string member of at most 400 source bytes.
pub fn tool_summary(name: &str, input: &Members) -> (String, Option<SubagentSpawn>) {
    let field = |k: &str| input.get(k).and_then(raw::str_contents);
    let is = |n: &str| name.eq_ignore_ascii_case(n);
    let key: Option<&str> = if is("Bash") {
        field("command")
    } else if is("Read") || is("Write") || is("Edit") || is("MultiEdit") {
        field("file_path")
    } else if is("NotebookEdit") {
        field("notebook_path").or_else(|| field("file_path"))
    } else if is("Grep") || is("Glob") {
        field("pattern")
    } else if is("WebFetch") {
        field("url")
    } else if is("WebSearch") {
        field("query")
    } else if is("Task") || is("Agent") {
        field("description")
    } else if is("TodoWrite") {
        if let Some(todos) = input.get("todos")
            && let Ok(v) = serde_json::from_str::<Vec<serde::de::IgnoredAny>>(todos.get())
        {
            return (format!("{} todos", v.len()), None);
        }
        None
    } else {
        None
    };
    let key = key.or_else(|| {
        input
            .0
            .iter()
            .filter_map(|(_, v)| raw::str_contents(v))
            .find(|s| !s.trim().is_empty() && s.len() <= SHORT_FIELD)
    });
    let summary = key.map_or_else(String::new, |raw| summary_line(raw, false));
    let subagent = (is("Task") || is("Agent")).then(|| SubagentSpawn {
        description: field("description").map(|r| json_string::decode(r).into_owned()),
        agent_type: field("subagent_type").map(|r| json_string::decode(r).into_owned()),
    });
    (summary, subagent)
}

fn tool_result(ctx: Ctx, b: &RawBlock, end: usize) -> ToolResult {
    let mut images = Vec::new();
    let mut summary = String::new();
    let content = match b.content {
        Some(c) => {
            let s = c.get();
            if let Some(raw) = raw::str_contents(c) {
                summary = result_summary(raw);
                ctx.str(c).map_or_else(|| ctx.span(c), |s| s.raw)
            } else {
                if s.starts_with('[') {
                    summary = list_result_summary(ctx, c, &mut images);
                }
                ctx.span(c)
            }
        }
        None => end..end,
    };
    ToolResult {
        tool_use_id: b.tool_use_id.get().unwrap_or("").into(),
        is_error: b.is_error.is_true(),
        content_len: content.len(),
        content,
        summary,
        images,
        subagent: None,
    }
}

fn list_result_summary(ctx: Ctx, list: &RawValue, images: &mut Vec<(Box<str>, usize)>) -> String {
    let mut text = String::new();
    let mut tools: Vec<String> = Vec::new();
    let ok = raw::for_each_element::<RawBlock>(list.get(), |raw, rb| {
        let tool_name = rb
            .as_ref()
            .and_then(|rb| rb.tool_name.get().map(str::to_string));
        let b = block_read(ctx, raw, rb);
        match b.kind {
            BlockKind::Image {
                media_type,
                data_len,
            } => images.push((media_type, data_len)),
            BlockKind::Text { text: t } if text.is_empty() => {
                text = result_summary(ctx.raw_text(&t));
            }
            BlockKind::Other { block_type } if &*block_type == "tool_reference" => {
                tools.extend(tool_name);
            }
            _ => {}
        }
    });
    if !ok {
        images.clear();
        return String::new();
    }
    if !text.is_empty() {
        text
    } else if !tools.is_empty() {
        one_line(&format!("loaded tools: {}", tools.join(", ")), SUMMARY_MAX)
    } else if let Some((mt, _)) = images.first() {
        format!("[{mt}]")
    } else {
        String::new()
    }
}

/// The summary of a string result: its first meaningful line, or for a `<persisted-output>`
/// result (FORMATS.md §1.5) `output saved to …/tool-results/<file> (141KB)`.
pub fn result_summary(raw: &str) -> String {
    summary_line(raw, true)
}

/// [`one_line`] of a raw string literal, decoding a short prefix first and a longer one only
/// when the short one holds no meaningful line; with `persisted`, a `<persisted-output>`
/// text gets its own summary.
///
/// A first look decodes only [`SUMMARY_SCAN_QUICK`] bytes: when they hold a whole first
/// line and the start of another (not of exactly [`SUMMARY_MAX`] characters, and not a
/// `<persisted-output>` text), the longer prefix gives the same summary (issue 12: decoding
/// 1 KiB of every tool result was 2 % of `stats`).
fn summary_line(raw: &str, persisted: bool) -> String {
    let special = |text: &str| {
        let rest = text.trim_start().strip_prefix("<persisted-output>")?;
        persisted.then(|| persisted_summary(rest))?
    };
    if raw.len() > SUMMARY_SCAN_QUICK {
        let text = decode_prefix(raw, SUMMARY_SCAN_QUICK);
        if !(persisted && text.trim_start().starts_with("<persisted-output>"))
            && let Some(out) = settled_line(&text, SUMMARY_MAX)
        {
            return out;
        }
    }
    let mut out = String::new();
    for limit in [SUMMARY_SCAN_FIRST, SUMMARY_SCAN] {
        let text = decode_prefix(raw, limit);
        if let Some(s) = special(&text) {
            return s;
        }
        let cut = raw.len() > limit;
        out = one_line(&text, SUMMARY_MAX);
        if cut && !out.ends_with('…') && !out.is_empty() && text.trim_end().ends_with(out.as_str())
        {
            // The prefix ended inside (or right after) the first line: more text follows.
            if out.chars().count() >= SUMMARY_MAX {
                out.pop();
            }
            out.push('…');
        }
        if !out.is_empty() || !cut {
            break;
        }
    }
    out
}

/// [`one_line`] of `text` when any longer text starting with it gives the same: its first
/// non-blank line is followed by another non-blank one (so it is whole and the summary ends
/// with `…`) and is not exactly `max` characters (then no `…` would follow it).
fn settled_line(text: &str, max: usize) -> Option<String> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next()?;
    lines.next()?;
    let (out, n) = cut_line(first, true, max);
    (n != max).then_some(out)
}

fn persisted_summary(rest: &str) -> Option<String> {
    let path_at = rest.find("saved to: ")? + "saved to: ".len();
    let path = rest[path_at..].lines().next()?.trim();
    let comps: Vec<&str> = path.rsplit('/').take(2).collect();
    let short = if comps.len() == 2 && path.matches('/').count() > 1 {
        format!("…/{}/{}", comps[1], comps[0])
    } else {
        path.to_string()
    };
    let size = rest
        .find("too large (")
        .map(|i| &rest[i + "too large (".len()..])
        .and_then(|r| r.find(')').map(|j| &r[..j]));
    let s = match size {
        Some(size) => format!("output saved to {short} ({size})"),
        None => format!("output saved to {short}"),
    };
    Some(one_line(&s, SUMMARY_MAX))
}

/// [`tool_use_result`] of a sidecar read in the record's pass (`line`: the line it was read
/// from, read again for [`raw::Sidecar::Again`]); `None` without a sidecar.
pub fn sidecar_result(
    line: &str,
    sidecar: &raw::Sidecar,
) -> Option<(bool, Option<SubagentResult>)> {
    Some(match sidecar {
        raw::Sidecar::Absent => return None,
        raw::Sidecar::Str(s) => (string_is_error(s), None),
        raw::Sidecar::Obj(o) => (false, o.as_ref().and_then(subagent_of)),
        raw::Sidecar::Other => (false, None),
        raw::Sidecar::Again => tool_use_result(
            serde_json::from_str::<raw::SidecarRaw>(line)
                .ok()?
                .tool_use_result?,
        ),
    })
}

/// A string sidecar (raw contents) that says the call failed: `Error…` or `User rejected…`.
fn string_is_error(s: &str) -> bool {
    let head = decode_prefix(s, 64);
    let head = head.trim_start();
    head.starts_with("Error") || head.starts_with("User rejected")
}

/// What a sidecar object says about a sub-agent, when it says anything.
fn subagent_of(o: &ToolUseResultObj) -> Option<SubagentResult> {
    let r = SubagentResult {
        agent_id: o.agent_id.get().map(str::to_string),
        duration_ms: o.total_duration_ms.0,
        total_tokens: o.total_tokens.0,
        tool_uses: o.total_tool_use_count.0,
    };
    let any = r.agent_id.is_some()
        || r.duration_ms.is_some()
        || r.total_tokens.is_some()
        || r.tool_uses.is_some();
    any.then_some(r)
}

/// Reads a `toolUseResult` sidecar (FORMATS.md §1.5) into what it says about the result:
/// `(is_error, subagent)`. A string starting with `Error` or `User rejected` is an error;
/// an object with `agentId` or sub-agent totals reports on a sub-agent.
pub fn tool_use_result(raw: &RawValue) -> (bool, Option<SubagentResult>) {
    if let Some(s) = raw::str_contents(raw) {
        return (string_is_error(s), None);
    }
    // Most results are not about sub-agents: skip the parse unless a sub-agent key may be
    // there (`"agentId"`, `"totalDurationMs"`, `"totalTokens"`, `"totalToolUseCount"`): two
    // searches of a sidecar that can be big, with searchers built once (issue 12: four, each
    // building its searcher). Each `"total` found is checked for one of the three names:
    // `Read` results carry `"totalLines"`, and parsing every one of them was 1 % of `stats`.
    static KEYS: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 2]> =
        std::sync::LazyLock::new(|| {
            [
                memchr::memmem::Finder::new(b"\"agentId\""),
                memchr::memmem::Finder::new(b"\"total"),
            ]
        });
    let bytes = raw.get().as_bytes();
    let total_key = || {
        KEYS[1].find_iter(bytes).any(|at| {
            let rest = &bytes[at + b"\"total".len()..];
            [&b"DurationMs\""[..], b"Tokens\"", b"ToolUseCount\""]
                .iter()
                .any(|k| rest.starts_with(k))
        })
    };
    if !raw.get().starts_with('{') || !(KEYS[0].find(bytes).is_some() || total_key()) {
        return (false, None);
    }
    let Ok(o) = serde_json::from_str::<ToolUseResultObj>(raw.get()) else {
        return (false, None);
    };
    (false, subagent_of(&o))
}

/// Decodes at most `max_raw` bytes of the raw contents of a JSON string literal, cutting at a
/// character boundary and never inside an escape.
pub fn decode_prefix(raw: &str, max_raw: usize) -> Cow<'_, str> {
    if raw.len() <= max_raw {
        return json_string::decode(raw);
    }
    let bytes = raw.as_bytes();
    let mut cut = max_raw;
    while !raw.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut i = 0;
    while let Some(n) = memchr::memchr(b'\\', &bytes[i..cut]) {
        let at = i + n;
        let (_, len) = json_string::decode_escape(bytes, at);
        if at + len > cut {
            cut = at;
            break;
        }
        i = at + len;
    }
    json_string::decode(&raw[..cut])
}

/// The first non-blank line of `s` with ANSI escape sequences removed, trimmed, and cut to at
/// most `max` characters (an ellipsis `…` marks a cut or further lines).
pub fn one_line(s: &str, max: usize) -> String {
    let mut lines = s.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(first) = lines.next() else {
        return String::new();
    };
    let more = lines.next().is_some();
    cut_line(first, more, max).0
}

/// [`one_line`] of its first non-blank line `first` (`more`: another non-blank line follows),
/// and that line's length in characters once cleaned.
fn cut_line(first: &str, more: bool, max: usize) -> (String, usize) {
    let first = strip_ansi(first);
    let first = first.trim();
    let n = first.chars().count();
    let out = if n > max {
        let mut out: String = first.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    } else if more && n < max {
        let mut out = String::with_capacity(first.len() + '…'.len_utf8());
        out.push_str(first);
        out.push('…');
        out
    } else {
        first.to_string()
    };
    (out, n)
}

/// Removes ANSI CSI / OSC escape sequences (`ESC [ … final`, `ESC ] … BEL`) and other control
/// characters except tab.
pub fn strip_ansi(s: &str) -> Cow<'_, str> {
    if !has_control(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\u{1b}' {
            match it.peek() {
                Some('[') => {
                    it.next();
                    for d in it.by_ref() {
                        if ('@'..='~').contains(&d) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    it.next();
                    while let Some(d) = it.next() {
                        if d == '\u{7}' {
                            break;
                        }
                        if d == '\u{1b}' && it.peek() == Some(&'\\') {
                            it.next();
                            break;
                        }
                    }
                }
                _ => {}
            }
        } else if !c.is_control() || c == '\t' {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether `s` holds a control character other than tab (`char::is_control`: U+0000–U+001F,
/// U+007F–U+009F), looked for in its bytes: U+0080–U+009F are `C2 80`–`C2 9F` in UTF-8
/// (issue 12: a check per character was 1.4 % of `stats`).
fn has_control(s: &str) -> bool {
    let b = s.as_bytes();
    // A first look without an early exit, which the compiler runs 16 bytes at a time: most
    // lines hold none of these bytes.
    let maybe = b.iter().fold(false, |any, &c| {
        any | ((c < 0x20) & (c != b'\t')) | (c == 0x7f) | (c == 0xc2)
    });
    maybe
        && b.iter().enumerate().any(|(i, &c)| {
            (c < 0x20 && c != b'\t')
                || c == 0x7f
                || (c == 0xc2 && b.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Calls `f` with every line of every `.jsonl` file under the shared corpus and cases.
    fn each_corpus_line(mut f: impl FnMut(&str)) {
        let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared");
        let mut dirs = vec![shared.join("corpus"), shared.join("cases")];
        while let Some(d) = dirs.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for p in rd.flatten().map(|e| e.path()) {
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|e| e == "jsonl")
                    && let Ok(text) = std::fs::read_to_string(&p)
                {
                    text.lines().for_each(&mut f);
                }
            }
        }
    }

    /// `message.content` read in the record's own pass gives the blocks (and the shape
    /// report) that reading its raw value gives, on every shape: the oddities are read again,
    /// the common ones are placed without it. Over small lines and every line of the corpus
    /// and the cases.
    #[test]
    fn message_content_read_in_place_as_its_raw_value_reads() {
        fn check(line: &str) -> Option<bool> {
            let rec = serde_json::from_str::<raw::Record>(line).ok()?;
            let msg = rec.message.0?;
            let ctx = Ctx {
                text: line,
                base: 7,
            };
            let mut got = ThinVec::new();
            let placed = matches!(msg.content, raw::Content::Str(_) | raw::Content::List(_));
            let shape = message_blocks(ctx, msg.content, &mut got).map(RawValue::get);
            let old: raw::MessageContent = serde_json::from_str(line).unwrap();
            let mut want = ThinVec::new();
            let old_shape = old
                .message
                .0
                .and_then(|m| m.content)
                .and_then(|c| (!content_blocks(ctx, c, &mut want)).then_some(c.get()));
            assert_eq!(got, want, "{line}");
            assert_eq!(shape, old_shape, "{line}");
            Some(placed)
        }
        let placed = [
            r#"{"message":{"content":"plain"}}"#,
            r#"{"message":{"content":""}}"#,
            r#"{"message":{"content":[]}}"#,
            r#"{"message":{"content": [ {"type":"text","text":"a\nb"} , "bare" ,{ "type" : "thinking", "thinking":"t", "signature":"x"}
             ]}}"#,
            r#"{"message":{"content":[{"":1,"type":"text","text":"a"}]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls -l"}},{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"ok"},{"type":"image","source":{"media_type":"image/png","data":"QUJD"}}],"is_error":true}]}}"#,
            r#"{"message":{"content":[{"type":"text","text":"a","type":"text"}]}}"#,
            r#"{"message":{"content":[{"type":"image","source":{"data":"x","data":"y"}}]}}"#,
            r#"{"message":{"content":[{"type":"image","source":"nope"},{"type":7},{"text":null,"type":"text"}]}}"#,
            r#"{"message":{"content":[{"type":"tool_result","tool_use_id":"t","content":null,"is_error":"yes"}]}}"#,
            r#"{"message":{"content":[{"type":"mystery","x":{"y":[1,2]}},{"type":"text","text":"\u00e9","t\u0065xt":"dup"}]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","id":"t\u0031","name":"Read","input": {  "file_path" : "/a\"b" ,"limit":[1,{"x":2}] } }]}}"#,
            r#"{"message":{"content":[{"input":{"description":"d","subagent_type":"s\n"},"type":"tool_use","name":"Task","id":"t2"}]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"a"},"input":{"command":"b"}}]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"a"},"name":"x"}]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","name":"X","input":{"k":"v","k\u0031":"w"}}]}}"#,
        ];
        for line in placed {
            assert_eq!(check(line), Some(true), "{line}");
        }
        let again = [
            r#"{"message":{"content":"esc\"aped"}}"#,
            r#"{"message":{"content":7}}"#,
            r#"{"message":{"content":{"type":"text"}}}"#,
            r#"{"message":{"content":true}}"#,
            r#"{"message":{"content":[{}]}}"#,
            r#"{"message":{"content":[{"\u0074ype":"text","text":"a"}]}}"#,
            r#"{"message":{"content":["esc\n", {"type":"text","text":"a"}]}}"#,
            r#"{"message":{"content":[1,{"type":"text","text":"a"}]}}"#,
            r#"{"message":{"content":[[{"type":"text","text":"a"}],null]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","name":"Bash","input":{}}]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","name":"Bash","input":null}]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","name":"Bash","input":"ls"}]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","name":"Bash","input":[1]}]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","name":"Bash","input":{"\u0063ommand":"ls"}}]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"a"},"input":null}]}}"#,
            r#"{"message":{"content":[{"type":"tool_use","name":"X","input":{"k\u0031":"v","k":"w"}}]}}"#,
        ];
        for line in again {
            assert_eq!(check(line), Some(false), "{line}");
        }
        assert_eq!(check(r#"{"message":{"content":null}}"#), Some(false));
        assert_eq!(check(r#"{"message":{}}"#), Some(false));

        let (mut lines, mut in_place) = (0, 0);
        each_corpus_line(|line| {
            if let Some(placed) = check(line) {
                lines += 1;
                in_place += usize::from(placed);
            }
        });
        assert!(lines > 2_000, "corpus not found: {lines} message lines");
        assert!(in_place * 10 > lines * 9, "{in_place} of {lines} placed");
        eprintln!("{in_place} of {lines} message lines placed in the record pass");
    }

    /// A record read in place is the record deriving reads, field for field, and a line
    /// deriving refuses is refused with the same message at the same column: over crafted
    /// lines (repeated fields, written plainly or with escapes, at the top and inside) and
    /// every line of the corpus and the cases.
    #[test]
    fn records_read_in_place_as_deriving_reads_them() {
        fn check(line: &str) -> bool {
            let want = serde_json::from_str::<raw::Record>(line);
            let mut got = raw::Record::default();
            let got = raw::read_record(line, &mut got).map(|()| got);
            match (&got, &want) {
                (Ok(g), Ok(w)) => assert_eq!(format!("{g:?}"), format!("{w:?}"), "{line}"),
                (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "{line}"),
                _ => panic!("{line}: {got:?} vs {want:?}"),
            }
            got.is_ok()
        }
        let lines = [
            r#"{"type":"user","uuid":"a","parentUuid":null,"isSidechain":false,"message":{"role":"user","content":"hi"},"timestamp":"2026-01-01T00:00:00Z","x":[1,{"y":2}]}"#,
            r#"{"uuid":"a","uuid":"b"}"#,
            r#"{"type":"x","ty\u0070e":"y"}"#,
            r#"{"toolUseResult":1,"toolUseResult":{"agentId":"a"}}"#,
            r#"{"message":{"id":"a","id":"b"}}"#,
            r#"{"message":{"content":[{"type":"text"}],"usage":{"input_tokens":1,"input_tokens":2}}}"#,
            r#"{"isMeta":true,"isMeta":"yes"}"#,
            r#"{"totalCostUSD":1.5,"totalAPIDuration":"x","durationMs":-1,"content":null}"#,
            r#"{"attachment":{"type":"queued_command","prompt":[1]},"data":7,"origin":{"kind":"human"}}"#,
            r#"{"compactMetadata":{"trigger":"auto","preTokens":9},"trigger":"manual","error":{}}"#,
            r#"{"summary":"s","leafUuid":"l","aiTitle":"t","customTitle":"c","promptSource":"typed","effort":"high"}"#,
            r#"{"sessionId":"s","version":"2","cwd":"/","agentId":"a","requestId":"r","subtype":"x","operation":"enqueue"}"#,
            r#"{"isCompactSummary":true,"isApiErrorMessage":false,"isSidechain":null}"#,
            r#"{"a":1} x"#,
            r#"{"a":1"#,
            r#"{"a":"\ud800"}"#,
            r#"{}"#,
            r#"  { "type" : "user" }  "#,
        ];
        for line in lines {
            check(line);
        }
        let (mut read, mut refused) = (0, 0);
        each_corpus_line(|line| {
            if line.trim_start().starts_with('{') {
                if check(line) {
                    read += 1;
                } else {
                    refused += 1;
                }
            }
        });
        assert!(read > 5_000, "corpus not found: {read} records");
        eprintln!("{read} records read in place, {refused} refused alike");
    }

    /// The byte check finds exactly the characters `char::is_control` finds (but tab).
    #[test]
    fn control_characters_found_in_bytes() {
        for c in (0..=0x2ffu32).chain([0x2028, 0x202f, 0xfeff, 0x1f600]) {
            let Some(c) = char::from_u32(c) else { continue };
            for s in [format!("{c}"), format!("ab{c}"), format!("é{c}x")] {
                assert_eq!(
                    has_control(&s),
                    s.chars().any(|c| c.is_control() && c != '\t'),
                    "{:?}",
                    s
                );
            }
        }
    }

    /// A `toolUseResult` read in the record's own pass says what reading its raw value says,
    /// on every shape (those it cannot settle are read again), over small lines and every
    /// line of the corpus and the cases.
    #[test]
    fn sidecars_read_in_the_record_pass_as_their_raw_value_reads() {
        fn check(line: &str) -> Option<bool> {
            let rec = serde_json::from_str::<raw::Record>(line).ok()?;
            let got = sidecar_result(line, &rec.tool_use_result);
            let old: raw::SidecarRaw = serde_json::from_str(line).unwrap();
            let want = old.tool_use_result.map(tool_use_result);
            assert_eq!(got, want, "{line}");
            Some(!matches!(rec.tool_use_result, raw::Sidecar::Again))
        }
        let settled = [
            r#"{"toolUseResult":"fine"}"#,
            r#"{"toolUseResult":"Error: exit 1"}"#,
            r#"{"toolUseResult":"   User rejected tool use"}"#,
            r#"{"toolUseResult":"                                                                      Error: late"}"#,
            r#"{"toolUseResult":{"agentId":"a1","totalDurationMs":85000,"totalTokens":24000,"totalToolUseCount":3,"content":[]}}"#,
            r#"{"toolUseResult":{"agentId":"a","agentId":"b"}}"#,
            r#"{"toolUseResult":{"type":"text","file":{"totalLines":9}}}"#,
            r#"{"toolUseResult":{"totalTokens":"x","totalDurationMs":-3}}"#,
            r#"{"toolUseResult":{"stdout":"\"agentId\": 1","nested":{"agentId":"n"}}}"#,
            r#"{"toolUseResult":{"agent\u0049d":"e","totalTokens":5}}"#,
            r#"{"toolUseResult":null}"#,
            r#"{"toolUseResult":7}"#,
            r#"{"toolUseResult":[{"agentId":"x"}]}"#,
            r#"{"type":"user"}"#,
        ];
        for line in settled {
            assert_eq!(check(line), Some(true), "{line}");
        }
        let again = [
            r#"{"toolUseResult":"Error:\n exit 1"}"#,
            r#"{"toolUseResult":"\u0045rror"}"#,
            r#"{"toolUseResult":{"agent\u0049d":"e"}}"#,
            r#"{"toolUseResult":{"nested":{"agentId":"n"},"agent\u0049d":"e"}}"#,
        ];
        for line in again {
            assert_eq!(check(line), Some(false), "{line}");
        }

        let (mut lines, mut in_pass) = (0, 0);
        each_corpus_line(|line| {
            if line.contains("\"toolUseResult\"")
                && let Some(settled) = check(line)
            {
                lines += 1;
                in_pass += usize::from(settled);
            }
        });
        assert!(lines > 500, "corpus not found: {lines} sidecar lines");
        eprintln!("{in_pass} of {lines} sidecars settled in the record pass");
    }

    #[test]
    fn one_line_cuts_and_marks_more() {
        assert_eq!(one_line("\n\n  first  \nsecond", 160), "first…");
        assert_eq!(one_line("only", 160), "only");
        assert_eq!(one_line("abcdef", 4), "abc…");
        assert_eq!(one_line("   \n \n", 10), "");
        assert_eq!(one_line("\u{1b}[1mbold\u{1b}[22m text", 160), "bold text");
    }

    #[test]
    fn decode_prefix_never_cuts_an_escape_or_a_char() {
        assert_eq!(decode_prefix(r"ab\ncd", 3), "ab");
        assert_eq!(decode_prefix(r"ab\ncd", 4), "ab\n");
        assert_eq!(decode_prefix(r"é\u00e9x", 3), "é");
        assert_eq!(decode_prefix(r"é\u00e9x", 8), "éé");
        assert_eq!(decode_prefix("ééé", 3), "é");
    }

    #[test]
    fn summaries_look_past_a_short_prefix_only_when_needed() {
        let blank_then_text = format!("{}found it\\nmore", r"\n".repeat(700));
        assert_eq!(result_summary(&blank_then_text), "found it…");
        let long_line = "y".repeat(3000);
        let s = result_summary(&long_line);
        assert_eq!(s.chars().count(), SUMMARY_MAX);
        assert!(s.ends_with('…'));
        let line_at_cut = format!("{}{}", "z".repeat(SUMMARY_MAX), " ".repeat(2000));
        let s = result_summary(&line_at_cut);
        assert_eq!(s.chars().count(), SUMMARY_MAX);
        assert!(s.ends_with('…'));
        assert_eq!(result_summary(r"short\nsecond"), "short…");
        assert_eq!(result_summary("short"), "short");
    }

    /// The summary as it was computed before the quick first look (issue 12).
    fn summary_line_reference(raw: &str, persisted: bool) -> String {
        let special = |text: &str| {
            let rest = text.trim_start().strip_prefix("<persisted-output>")?;
            persisted.then(|| persisted_summary(rest))?
        };
        let mut out = String::new();
        for limit in [SUMMARY_SCAN_FIRST, SUMMARY_SCAN] {
            let text = decode_prefix(raw, limit);
            if let Some(s) = special(&text) {
                return s;
            }
            let cut = raw.len() > limit;
            out = one_line(&text, SUMMARY_MAX);
            if cut
                && !out.ends_with('…')
                && !out.is_empty()
                && text.trim_end().ends_with(out.as_str())
            {
                if out.chars().count() >= SUMMARY_MAX {
                    out.pop();
                }
                out.push('…');
            }
            if !out.is_empty() || !cut {
                break;
            }
        }
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// The quick first look never changes a summary: raw string contents built from
        /// pieces that move line ends, blank lines, escapes, ANSI codes, wide characters and
        /// first lines of 159–161 characters around the 256- and 1024-byte cuts.
        #[test]
        fn summaries_are_those_of_the_full_look(
            pieces in proptest::collection::vec(0usize..16, 0..120),
            persisted in proptest::bool::ANY,
        ) {
            const PIECES: [&str; 16] = [
                "a", "é", " ", "\\n", "\\r\\n", "\\t", "\\u001b[1m", "<persisted-output>",
                "saved to: /x/y/tool-results/t.txt", "too large (3KB)", "\\u00e9",
                "\\\"", "\\n\\n   \\n", "日本", "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy",
                "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
            ];
            let raw: String = pieces.iter().map(|&i| PIECES[i]).collect();
            proptest::prop_assert_eq!(
                summary_line(&raw, persisted),
                summary_line_reference(&raw, persisted),
                "{}", raw
            );
        }
    }

    #[test]
    fn quick_summaries_at_their_edges() {
        let line = |n: usize| "x".repeat(n);
        for n in [1, 150, 159, 160, 161, 250, 300] {
            // The last: a second line like the first, so that a cut prefix ends as the
            // first line does.
            let same = format!("\\n{}", line(2000));
            for tail in ["", "\\nmore", "\\n   \\nmore", "\\n", &same] {
                for pad in [0, 100, 240, 300, 1100] {
                    let raw = format!("{}{}{tail}{}", " ".repeat(pad), line(n), "w".repeat(pad));
                    for persisted in [false, true] {
                        assert_eq!(
                            summary_line(&raw, persisted),
                            summary_line_reference(&raw, persisted),
                            "{raw}"
                        );
                    }
                }
            }
        }
        let persisted = format!(
            "<persisted-output>\\nOutput too large (141KB). Full output saved to: /h/tool-results/t.txt\\n{}",
            "p".repeat(2000)
        );
        assert_eq!(
            result_summary(&persisted),
            "output saved to …/tool-results/t.txt (141KB)"
        );
    }

    #[test]
    fn persisted_output_summary() {
        let raw = r"<persisted-output>\nOutput too large (141KB). Full output saved to: /home/u/.claude/projects/p/s/tool-results/toolu_019C.txt\n\nPreview (first 2KB):\nfoo";
        assert_eq!(
            result_summary(raw),
            "output saved to …/tool-results/toolu_019C.txt (141KB)"
        );
    }

    #[test]
    fn tool_use_result_strings_and_objects() {
        let r = |s: &str| tool_use_result(serde_json::from_str::<&RawValue>(s).unwrap());
        assert_eq!(r(r#""User rejected tool use""#), (true, None));
        assert_eq!(r(r#""Error: exit code 1""#), (true, None));
        assert_eq!(r(r#""fine""#), (false, None));
        assert_eq!(r(r#"{"stdout":"x","stderr":""}"#), (false, None));
        // A `Read` result's `totalLines` is no sub-agent total.
        assert_eq!(
            r(r#"{"type":"text","file":{"numLines":3,"totalLines":9,"totalTokensX":1}}"#),
            (false, None)
        );
        assert_eq!(
            r(r#"{"totalLines":9,"totalToolUseCount":2}"#),
            (
                false,
                Some(SubagentResult {
                    agent_id: None,
                    duration_ms: None,
                    total_tokens: None,
                    tool_uses: Some(2),
                })
            )
        );
        assert_eq!(
            r(
                r#"{"agentId":"a1","totalDurationMs":85000,"totalTokens":24000,"totalToolUseCount":3,"content":[]}"#
            ),
            (
                false,
                Some(SubagentResult {
                    agent_id: Some("a1".into()),
                    duration_ms: Some(85000),
                    total_tokens: Some(24000),
                    tool_uses: Some(3),
                })
            )
        );
    }
}
