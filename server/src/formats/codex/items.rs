//! Content blocks, tool calls and results, and the text rules of Codex items (summaries,
//! apply_patch paths, output facts, injected-context markers).

use super::*;

/// Hash of a text with whitespace runs collapsed and ends trimmed: the normalised text used
/// to pair duplicates (case 15). Parts are joined by whitespace.
pub(super) fn text_hash<'t>(parts: impl IntoIterator<Item = &'t str>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut first = true;
    for part in parts {
        for word in part.split_whitespace() {
            if !first {
                h.write_u8(b' ');
            }
            h.write(word.as_bytes());
            first = false;
        }
    }
    h.finish()
}

/// The first file path of an apply_patch body: the first `*** Update File:` / `*** Add
/// File:` path, else the first `*** Delete File:` path.
pub(super) fn patch_path(text: &str) -> Option<String> {
    let mut deleted = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(p) = line
            .strip_prefix("*** Update File:")
            .or_else(|| line.strip_prefix("*** Add File:"))
        {
            return Some(clip(p.trim()));
        }
        if deleted.is_none() {
            deleted = line
                .strip_prefix("*** Delete File:")
                .map(|p| clip(p.trim()));
        }
    }
    deleted
}

/// `data:image/png;base64,AAAA` -> (`image/png`, payload length in source bytes).
pub(super) fn image_of(raw_url: Option<Raw<'_>>) -> (Box<str>, usize) {
    let unknown = || ("image/unknown".into(), 0);
    let Some(r) = raw_url else { return unknown() };
    let s = r.get();
    if s.len() < 2 || !s.starts_with('"') {
        return unknown();
    }
    let s = &s[1..s.len() - 1];
    let Some(rest) = s.strip_prefix("data:") else {
        return unknown();
    };
    let Some(comma) = rest.find(',') else {
        return unknown();
    };
    let media = rest[..comma].split(';').next().unwrap_or("");
    let media = if media.is_empty() {
        "image/unknown"
    } else {
        media
    };
    (media.into(), rest.len() - comma - 1)
}

/// An array of strings joined with spaces (`["bash","-lc","ls"]` -> `bash -lc ls`).
pub(super) fn joined(r: Raw<'_>) -> Option<String> {
    if !is_array(r) {
        return None;
    }
    let parts: Vec<Cow<str>> = elements(Some(r))
        .into_iter()
        .filter_map(|e| jstr(Some(e)))
        .collect();
    Some(parts.join(" "))
}

/// Summary of a call from its name and decoded arguments (a JSON object, or free text).
pub(super) fn call_summary(name: &str, args: &str) -> String {
    let Ok(scan) = object::<ArgsScan>(args) else {
        return match patch_path(args) {
            Some(p) if args.contains("*** Begin Patch") => p,
            _ => one_line(args),
        };
    };
    if let Some(cmd) = &scan.command {
        if cmd.contains("*** Begin Patch")
            && let Some(p) = patch_path(cmd)
        {
            return clip(&format!("apply_patch {p}"));
        }
        return one_line(cmd);
    }
    if name == "apply_patch"
        && let Some(p) = scan.patch.as_deref().and_then(patch_path)
    {
        return p;
    }
    if let Some(n) = scan.plan {
        return if n == 1 {
            "1 step".into()
        } else {
            format!("{n} steps")
        };
    }
    if let Some(s) = scan.first_short.or(scan.first) {
        return one_line(&s);
    }
    String::new()
}

/// Exit code and first meaningful line of a tool output text: the old JSON-string shape
/// `{"output":…,"metadata":{"exit_code":N}}`, or the newer header shape (`Chunk ID: …`,
/// `Wall time: …`, `Process exited with code N` / `Exit code: N`, `Output:`) followed by the
/// output.
pub(super) fn output_facts(text: &str) -> (Option<i64>, String) {
    if text.trim_start().starts_with('{')
        && let Ok(old) = object::<OldOutput>(text)
        && (old.output.is_some() || old.metadata.is_some())
    {
        let exit = old.metadata.and_then(|m| m.exit_code).map(|c| c as i64);
        let inner = jstr(old.output).unwrap_or_default();
        let (inner_exit, summary) = output_facts(&inner);
        return (exit.or(inner_exit), summary);
    }
    let mut exit = None;
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l == "Output:" {
            continue;
        }
        if let Some(n) = l
            .strip_prefix("Process exited with code ")
            .or_else(|| l.strip_prefix("Exit code: "))
            .or_else(|| l.strip_prefix("Exit code "))
            && let Ok(n) = n.trim().parse::<i64>()
        {
            exit = Some(n);
            continue;
        }
        const HEADERS: [&str; 5] = [
            "Chunk ID:",
            "Wall time:",
            "Original token count:",
            "Process running with session ID",
            "Total output lines:",
        ];
        if HEADERS.iter().any(|h| l.starts_with(h)) {
            continue;
        }
        return (exit, clip(l));
    }
    (exit, String::new())
}

/// The text values of a list of `{type, text}` items or of plain strings.
pub(super) fn item_texts<'a>(field: Option<Raw<'a>>) -> Vec<Raw<'a>> {
    let mut out = Vec::new();
    for el in elements(field) {
        if el.get().starts_with('"') {
            out.push(el);
        } else if let Ok(c) = object::<ContentItem<'a>>(el.get())
            && let Some(text) = c.text.filter(|r| r.get().starts_with('"'))
        {
            out.push(text);
        }
    }
    out
}

/// The step of a compaction request metered by a `token_usage_record`.
pub(super) fn compaction_step(
    response_id: &str,
    model: Option<Box<str>>,
    usage: Usage,
) -> StepInfo {
    StepInfo {
        key: format!("codex-compaction-{response_id}").into(),
        model,
        usage: Some(usage),
        ..StepInfo::default()
    }
}

/// Widens a step's measured generation interval by `timing`.
pub(super) fn merge_timing(step: &mut StepInfo, timing: Option<(i64, i64)>) {
    if let Some((a, b)) = timing {
        step.stream_ms = Some(match step.stream_ms {
            Some((c, d)) => (a.min(c), b.max(d)),
            None => (a, b),
        });
    }
}

/// `<image>`, `</image>`, `<image name=[Image #1]>`: the wrappers Codex writes around the
/// image parts of a prompt's response item (its copy has the typed text only).
pub(super) fn is_image_marker(s: &str) -> bool {
    let s = s.trim();
    s == "</image>" || (s.starts_with("<image") && s.ends_with('>') && !s[1..].contains('<'))
}

/// True for response item kinds read from legacy bare lines.
pub(super) fn is_item_kind(kind: &str) -> bool {
    matches!(
        kind,
        "message"
            | "reasoning"
            | "function_call"
            | "function_call_output"
            | "custom_tool_call"
            | "custom_tool_call_output"
            | "local_shell_call"
            | "web_search_call"
            | "tool_search_call"
            | "tool_search_output"
            | "image_generation_call"
            | "ghost_snapshot"
    )
}

/// True when the whole text is one `<tag …>…</tag>` element (CLI-injected context such as
/// `<permissions instructions>…</permissions instructions>`).
pub(super) fn wrapped_in_one_tag(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('<') else {
        return false;
    };
    let Some(close) = rest.find('>') else {
        return false;
    };
    let open = &rest[..close];
    if open.is_empty() || open.starts_with('/') || open.contains('<') || !s.ends_with('>') {
        return false;
    }
    let Some(end) = s.rfind("</") else {
        return false;
    };
    if end < close + 2 {
        return false;
    }
    let closing = s[end + 2..s.len() - 1].trim();
    !closing.is_empty() && (closing == open || open.split_whitespace().next() == Some(closing))
}

/// Content blocks of a message, and the decoded texts of its text blocks.
pub(super) fn content_blocks<'a>(
    l: &Line,
    content: Option<Raw<'a>>,
) -> (Vec<Block>, Vec<Cow<'a, str>>) {
    let mut blocks = Vec::new();
    let mut texts = Vec::new();
    let Some(content) = content else {
        return (blocks, texts);
    };
    if let Some(s) = l.str_of(content) {
        blocks.push(Block {
            span: l.span_of(content.get()),
            kind: BlockKind::Text { text: s },
        });
        texts.extend(jstr(Some(content)));
        return (blocks, texts);
    }
    for el in elements(Some(content)) {
        let span = l.span_of(el.get());
        let Ok(item) = object::<ContentItem>(el.get()) else {
            blocks.push(Block {
                span,
                kind: BlockKind::Other {
                    block_type: "unknown".into(),
                },
            });
            continue;
        };
        let ty = jstr(item.ty).unwrap_or_default();
        let kind = match ty.as_ref() {
            "input_text" | "output_text" | "text" | "Text" | "refusal" => {
                let raw = if ty == "refusal" {
                    item.refusal.or(item.text)
                } else {
                    item.text
                };
                match raw.and_then(|r| l.str_of(r)) {
                    Some(s) => {
                        let decoded = jstr(raw);
                        // `<image>` / `</image>` around an image part: markup of the image
                        // block next to it, not text the user typed (shown as the image's
                        // placeholder alone; issue 9).
                        let marker = decoded.as_deref().is_some_and(is_image_marker);
                        texts.extend(decoded);
                        if marker {
                            continue;
                        }
                        BlockKind::Text { text: s }
                    }
                    None => BlockKind::Other {
                        block_type: ty.as_ref().into(),
                    },
                }
            }
            "input_image" | "output_image" | "image" => {
                let (media_type, data_len) = image_of(item.image_url);
                BlockKind::Image {
                    media_type,
                    data_len,
                }
            }
            other => BlockKind::Other {
                block_type: if other.is_empty() {
                    "unknown".into()
                } else {
                    other.into()
                },
            },
        };
        blocks.push(Block { span, kind });
    }
    (blocks, texts)
}

/// The tool call of a `function_call`, `custom_tool_call`, `web_search_call`,
/// `local_shell_call`, `tool_search_call` or `image_generation_call` item.
pub(super) fn tool_use(l: &Line, p: &Payload, kind: &str, pspan: Span) -> ToolUse {
    let id: Box<str> = jstr(p.call_id)
        .or_else(|| jstr(p.id))
        .unwrap_or_default()
        .into();
    let empty = pspan.start..pspan.start;
    let (name, input, summary) = match kind {
        "function_call" | "custom_tool_call" | "tool_search_call" => {
            let name = jstr(p.name).map(Cow::into_owned).unwrap_or_else(|| {
                if kind == "tool_search_call" {
                    "tool_search".into()
                } else {
                    String::new()
                }
            });
            let raw = if kind == "custom_tool_call" {
                p.input
            } else {
                p.arguments
            };
            let (input, text) = match raw {
                Some(r) => match l.str_of(r) {
                    Some(s) => (s.raw.clone(), jstr(Some(r)).unwrap_or_default()),
                    None => (l.span_of(r.get()), Cow::Borrowed(r.get())),
                },
                None => (empty, Cow::Borrowed("")),
            };
            let summary = if name == "apply_patch" || text.contains("*** Begin Patch") {
                patch_path(&text).unwrap_or_else(|| call_summary(&name, &text))
            } else {
                call_summary(&name, &text)
            };
            (name, input, summary)
        }
        "web_search_call" | "local_shell_call" => {
            let action = p
                .action
                .and_then(|a| object::<Action>(a.get()).ok())
                .unwrap_or_default();
            let input = p.action.map_or(empty, |a| l.span_of(a.get()));
            let summary = if kind == "web_search_call" {
                jstr(action.query)
                    .or_else(|| {
                        elements(action.queries)
                            .into_iter()
                            .find_map(|q| jstr(Some(q)))
                    })
                    .or_else(|| jstr(action.url))
                    .or_else(|| jstr(action.pattern))
                    .map(|s| one_line(&s))
                    .unwrap_or_default()
            } else {
                action
                    .command
                    .and_then(|c| jstr(Some(c)).map(Cow::into_owned).or_else(|| joined(c)))
                    .map(|s| one_line(&s))
                    .unwrap_or_default()
            };
            let name = if kind == "web_search_call" {
                "web_search"
            } else {
                "local_shell"
            };
            (name.to_string(), input, summary)
        }
        _ => {
            // image_generation_call: the prompt it ran with; `result` (base64) is never read.
            let summary = jstr(p.revised_prompt)
                .map(|s| one_line(&s))
                .unwrap_or_default();
            ("image_generation".to_string(), pspan, summary)
        }
    };
    ToolUse {
        id,
        name: name.into(),
        input,
        summary,
        subagent: None,
    }
}

/// The tool result of a `function_call_output`, `custom_tool_call_output` or
/// `tool_search_output` item.
pub(super) fn tool_result(l: &Line, p: &Payload, kind: &str) -> ToolResult {
    let id: Box<str> = jstr(p.call_id)
        .or_else(|| jstr(p.id))
        .unwrap_or_default()
        .into();
    let mut result = ToolResult {
        tool_use_id: id,
        is_error: false,
        content: l.span.start..l.span.start,
        content_len: 0,
        summary: String::new(),
        images: Vec::new(),
        subagent: None,
    };
    if kind == "tool_search_output" {
        if let Some(tools) = p.tools {
            result.content = l.span_of(tools.get());
            result.content_len = result.content.len();
            let n = elements(Some(tools)).len();
            result.summary = if n == 1 {
                "1 tool".into()
            } else {
                format!("{n} tools")
            };
        }
        return result;
    }
    let Some(out) = p.output else { return result };
    let mut exit = None;
    if let Some(s) = l.str_of(out) {
        result.content = s.raw.clone();
        let text = jstr(Some(out)).unwrap_or_default();
        let (code, summary) = output_facts(&text);
        exit = code;
        result.summary = summary;
    } else {
        result.content = l.span_of(out.get());
        let items = if is_array(out) {
            elements(Some(out))
        } else {
            vec![out]
        };
        for el in items {
            let Ok(item) = object::<ContentItem>(el.get()) else {
                continue;
            };
            let ty = jstr(item.ty).unwrap_or_default();
            if matches!(ty.as_ref(), "input_image" | "output_image" | "image") {
                let image = image_of(item.image_url);
                if result.summary.is_empty() {
                    result.summary = format!("[image {}]", image.0);
                }
                result.images.push(image);
                continue;
            }
            if item.success == Some(false) {
                result.is_error = true;
            }
            if let Some(text) = jstr(item.text).or_else(|| jstr(item.content)) {
                let (code, summary) = output_facts(&text);
                exit = exit.or(code);
                if result.summary.is_empty() {
                    result.summary = summary;
                }
            }
        }
    }
    result.content_len = result.content.len();
    result.is_error |= exit.is_some_and(|c| c != 0);
    result
}

/// A line that failed the record parse: `Unparsed` when it is not JSON or not an object,
/// else `Other` with a hint (never silently dropped).
pub(super) fn malformed(
    source: &str,
    line: usize,
    span: Span,
    err: serde_json::Error,
    t: &mut Transcript,
) {
    let text = &source[span.clone()];
    if let Err(e) = serde_json::from_str::<IgnoredAny>(text) {
        return crate::formats::push_unparsed(t, text, line, span, Some(e));
    }
    if !text.trim_start().starts_with('{') {
        t.problems.push(Problem {
            line,
            span: span.clone(),
            severity: Severity::Warning,
            message: "record is not a JSON object".to_string(),
        });
        t.entries
            .push(Entry::new(line, span, Role::Unparsed, "unparsed"));
        return;
    }
    t.problems.push(Problem {
        line,
        span: span.clone(),
        severity: Severity::Hint,
        message: format!("Codex record with an unexpected shape: {err}"),
    });
    t.entries
        .push(Entry::new(line, span, Role::Other, "unknown"));
}

/// A record whose payload could not be read (not an object, duplicate keys): `Other` with a
/// hint.
pub(super) fn shape_mismatch(
    l: &Line,
    kind: &str,
    err: serde_json::Error,
    t: &mut Transcript,
) -> Entry {
    t.problems.push(Problem {
        line: l.line,
        span: l.span.clone(),
        severity: Severity::Hint,
        message: format!("Codex `{kind}` record with an unexpected shape: {err}"),
    });
    l.entry(Role::Other, kind)
}
