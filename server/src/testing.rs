//! Generators of realistic inputs for benchmarks and load tests (DESIGN.md §6: "a 100 MB
//! transcript must open and answer its first requests in well under a second"). Not used by
//! the server itself; public so that `benches/` and the LSP tests can share one generator.

use std::fmt::Write as _;

/// A deterministic Claude Code session file (FORMATS.md §1) of about `target_bytes` bytes
/// (it stops after the first turn that reaches the target, so it overshoots by at most one
/// turn, at most about 2 MB), the same for the same `(target_bytes, seed)`.
///
/// Shape, per turn: a `progress` hook line, a user prompt (string content with `\n`, quotes,
/// non-ASCII, sometimes a raw U+2028), then 1–6 model responses. Each response is streamed as
/// one line per content block sharing `message.id` and `requestId` (thinking with a base64
/// signature, text, 1–3 `tool_use`); each tool_use is answered by a `tool_result` line with a
/// 1–50 KB output (log-uniform; escapes `\n`, `\t`, `\"`, `\\`, `\u001b`; non-ASCII raw or
/// as `\uXXXX` escapes and surrogate pairs) and a `toolUseResult` sidecar, sometimes preceded
/// by `bash_progress` lines and followed by a `PostToolUse` hook line. The turn ends with a
/// text answer (`stop_reason: "end_turn"`) and a `system/turn_duration` line. Once, half-way,
/// a prompt carries a pasted image of `min(2 MiB, target_bytes / 20)` base64 bytes. Every
/// line ends with `\n`.
pub fn synth_claude_transcript(target_bytes: usize, seed: u64) -> String {
    let mut g = Synth {
        out: String::with_capacity(target_bytes + (1 << 20)),
        rng: SplitMix64(seed),
        clock_ms: 1_776_500_000_000, // 2026-04-18
        parent: None,
        session: String::new(),
    };
    g.session = g.uuid();
    g.file_history_snapshot();
    let mut image_done = false;
    while g.out.len() < target_bytes {
        let with_image = !image_done && g.out.len() >= target_bytes / 2;
        image_done |= with_image;
        g.turn(with_image, target_bytes);
    }
    g.out
}

/// SplitMix64: a small, fast, deterministic generator (no dependency needed).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }

    /// True with probability `1 / n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.range(0, items.len() - 1)]
    }
}

const WORDS: &[&str] = &[
    "the",
    "file",
    "test",
    "function",
    "error",
    "build",
    "module",
    "parser",
    "line",
    "value",
    "should",
    "return",
    "config",
    "server",
    "change",
    "check",
    "update",
    "fix",
    "we",
    "now",
    "café",
    "naïve",
    "résumé",
    "日本語",
    "überprüfen",
    "👍",
    "→",
    "✓",
    "Ünïcödé",
    "größe",
];

const TOOLS: &[&str] = &["Bash", "Read", "Edit", "Grep", "Glob", "Write", "TodoWrite"];

const CODE_LINES: &[&str] = &[
    "fn main() {",
    "    let path = \"C:\\\\Users\\\\dev\\\\src\";",
    "\tif x > 0 { return Err(\"bad \\\"input\\\"\".into()); }",
    "    println!(\"résumé: {}\", value); // café",
    "\u{1b}[1mCompiling\u{1b}[0m transcript-ls v0.1.0",
    "test result: ok. 42 passed; 0 failed; 0 ignored",
    "    // 日本語のコメント 😀",
    "}",
    "warning: unused variable: `naïve`",
    "error[E0308]: mismatched types → expected `u32`, found `&str`",
];

struct Synth {
    out: String,
    rng: SplitMix64,
    clock_ms: i64,
    parent: Option<String>,
    session: String,
}

impl Synth {
    fn uuid(&mut self) -> String {
        let a = self.rng.next();
        let b = self.rng.next();
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            0x8000 | ((b >> 48) & 0x3fff),
            b & 0xffff_ffff_ffff
        )
    }

    fn base62(&mut self, n: usize) -> String {
        const ALPHA: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        (0..n)
            .map(|_| ALPHA[(self.rng.next() % 62) as usize] as char)
            .collect()
    }

    fn base64(&mut self, n: usize) -> String {
        const ALPHA: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut s = String::with_capacity(n);
        while s.len() < n {
            let mut r = self.rng.next();
            for _ in 0..10 {
                if s.len() == n {
                    break;
                }
                s.push(ALPHA[(r & 63) as usize] as char);
                r >>= 6;
            }
        }
        s
    }

    fn tick(&mut self, lo: usize, hi: usize) -> String {
        self.clock_ms += self.rng.range(lo, hi) as i64;
        match jiff::Timestamp::from_millisecond(self.clock_ms) {
            Ok(ts) => ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
            Err(_) => "2026-04-18T00:00:00.000Z".to_string(),
        }
    }

    /// Prose of about `n` bytes, with sentence breaks and paragraph breaks (`\n\n`).
    fn prose(&mut self, n: usize) -> String {
        let mut s = String::with_capacity(n + 16);
        while s.len() < n {
            s.push_str(self.rng.pick(WORDS));
            match self.rng.range(0, 30) {
                0 => s.push_str(".\n\n"),
                1 => s.push_str(", \"quoted\" "),
                2 | 3 => s.push_str(". "),
                4 => s.push_str(" `code` "),
                _ => s.push(' '),
            }
        }
        s
    }

    /// Tool output of about `n` bytes: numbered code lines, ANSI, tabs, quotes, backslashes.
    fn tool_output(&mut self, n: usize) -> String {
        let mut s = String::with_capacity(n + 128);
        let mut line = 1;
        while s.len() < n {
            let _ = write!(s, "{line:>6}→");
            s.push_str(self.rng.pick(CODE_LINES));
            s.push('\n');
            line += 1;
        }
        s
    }

    /// Starts an envelope line: `{"parentUuid":…,…,"type":"<ty>",` — the caller adds the
    /// record's own fields and calls [`Synth::end_line`].
    fn begin_line(&mut self, ty: &str) -> String {
        let uuid = self.uuid();
        self.out.push_str("{\"parentUuid\":");
        match &self.parent {
            Some(p) => {
                self.out.push('"');
                self.out.push_str(p);
                self.out.push('"');
            }
            None => self.out.push_str("null"),
        }
        let _ = write!(
            self.out,
            ",\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"/home/dev/project\",\
             \"sessionId\":\"{}\",\"version\":\"2.1.114\",\"gitBranch\":\"main\",\"type\":\"{ty}\",",
            self.session
        );
        uuid
    }

    fn end_line(&mut self, uuid: String, lo_ms: usize, hi_ms: usize) {
        let ts = self.tick(lo_ms, hi_ms);
        let _ = writeln!(self.out, "\"uuid\":\"{uuid}\",\"timestamp\":\"{ts}\"}}");
        self.parent = Some(uuid);
    }

    fn file_history_snapshot(&mut self) {
        let id = self.uuid();
        let ts = self.tick(0, 10);
        let _ = writeln!(
            self.out,
            "{{\"type\":\"file-history-snapshot\",\"messageId\":\"{id}\",\"snapshot\":{{\
             \"messageId\":\"{id}\",\"trackedFileBackups\":{{}},\"timestamp\":\"{ts}\"}},\
             \"isSnapshotUpdate\":false}}"
        );
    }

    /// A `progress/hook_progress` line for `event` (`UserPromptSubmit`, `PostToolUse`, …).
    fn progress_hook(&mut self, event: &str) {
        let id = self.uuid();
        let uuid = self.begin_line("progress");
        let _ = write!(
            self.out,
            "\"data\":{{\"type\":\"hook_progress\",\"hookEvent\":\"{event}\",\
             \"hookName\":\"{event}\",\"command\":\"~/.claude/hooks/notify.sh\"}},\
             \"parentToolUseID\":\"{id}\",\"toolUseID\":\"{id}\","
        );
        self.end_line(uuid, 5, 50);
    }

    fn turn(&mut self, with_image: bool, target: usize) {
        self.progress_hook("UserPromptSubmit");
        self.prompt(with_image, target);
        let start = self.clock_ms;
        for _ in 0..self.rng.range(1, 6) {
            self.response(false);
        }
        self.response(true);
        let turn_ms = self.clock_ms - start;
        let uuid = self.begin_line("system");
        let _ = write!(
            self.out,
            "\"subtype\":\"turn_duration\",\"durationMs\":{turn_ms},\"isMeta\":false,"
        );
        self.end_line(uuid, 1, 5);
    }

    fn prompt(&mut self, with_image: bool, target: usize) {
        let uuid = self.begin_line("user");
        let n = self.rng.range(40, 1500);
        let mut text = self.prose(n);
        if self.rng.one_in(8) {
            text.push_str(" line\u{2028}separator");
        }
        self.out
            .push_str("\"message\":{\"role\":\"user\",\"content\":");
        if with_image {
            let size = (2 << 20).min(target / 20);
            let data = self.base64(size);
            let _ = write!(
                self.out,
                "[{{\"type\":\"image\",\"source\":{{\"type\":\"base64\",\"media_type\":\
                 \"image/png\",\"data\":\"{data}\"}}}},{{\"type\":\"text\",\"text\":"
            );
            push_json_string(&mut self.out, &format!("[Image #1] {text}"), false);
            self.out.push_str("}]");
        } else {
            push_json_string(&mut self.out, &text, false);
        }
        self.out.push_str("},\"permissionMode\":\"acceptEdits\",");
        self.end_line(uuid, 1_000, 60_000);
    }

    /// One model response: thinking, maybe text, then tool_use lines answered by tool_result
    /// lines; or, when `last`, thinking + the final text answer.
    fn response(&mut self, last: bool) {
        let msg_id = format!("msg_01{}", self.base62(22));
        let req_id = format!("req_011C{}", self.base62(18));
        let tools = if last { 0 } else { self.rng.range(1, 3) };
        let output_tokens = self.rng.range(20, 3000);
        let stop = if last { "\"end_turn\"" } else { "\"tool_use\"" };
        let mut blocks: Vec<String> = Vec::new();
        let sig_len = self.rng.range(400, 4000);
        let n = self.rng.range(0, 2000);
        let thinking = self.prose(n);
        let mut b = String::from("{\"type\":\"thinking\",\"thinking\":");
        push_json_string(&mut b, &thinking, false);
        let _ = write!(b, ",\"signature\":\"{}\"}}", self.base64(sig_len));
        blocks.push(b);
        if last || self.rng.one_in(2) {
            let n = if last {
                self.rng.range(200, 6000)
            } else {
                self.rng.range(20, 400)
            };
            let text = self.prose(n);
            let mut b = String::from("{\"type\":\"text\",\"text\":");
            push_json_string(&mut b, &text, self.rng.one_in(4));
            b.push('}');
            blocks.push(b);
        }
        let mut tool_ids = Vec::new();
        for _ in 0..tools {
            let id = format!("toolu_01{}", self.base62(22));
            let name = self.rng.pick(TOOLS);
            let n = self.rng.range(10, 200);
            let cmd = self.prose(n);
            let mut b = format!(
                "{{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"{name}\",\"input\":{{\"command\":"
            );
            push_json_string(&mut b, &cmd, false);
            b.push_str(",\"description\":\"Run the step\"},\"caller\":{\"type\":\"direct\"}}");
            blocks.push(b);
            tool_ids.push(id);
        }
        let count = blocks.len();
        for (i, block) in blocks.into_iter().enumerate() {
            let uuid = self.begin_line("assistant");
            let stop_reason = if i + 1 == count { stop } else { "null" };
            let _ = write!(
                self.out,
                "\"message\":{{\"model\":\"claude-opus-4-7\",\"id\":\"{msg_id}\",\"type\":\"message\",\
                 \"role\":\"assistant\",\"content\":[{block}],\"stop_reason\":{stop_reason},\
                 \"stop_sequence\":null,\"usage\":{{\"input_tokens\":6,\
                 \"cache_creation_input_tokens\":2786,\"cache_read_input_tokens\":41234,\
                 \"output_tokens\":{output_tokens},\"service_tier\":\"standard\",\
                 \"cache_creation\":{{\"ephemeral_1h_input_tokens\":2786,\
                 \"ephemeral_5m_input_tokens\":0}}}}}},\"requestId\":\"{req_id}\","
            );
            self.end_line(uuid, 100, 20_000);
        }
        for id in tool_ids {
            if self.rng.one_in(3) {
                for k in 0..self.rng.range(1, 4) {
                    let uuid = self.begin_line("progress");
                    let n = self.rng.range(100, 600);
                    let partial = self.tool_output(n);
                    self.out
                        .push_str("\"data\":{\"type\":\"bash_progress\",\"output\":");
                    push_json_string(&mut self.out, &partial, false);
                    let _ = write!(
                        self.out,
                        ",\"elapsedTimeSeconds\":{k},\"totalLines\":{},\"timeoutMs\":120000}},\
                         \"parentToolUseID\":\"{id}\",\"toolUseID\":\"bash-progress-{k}\",",
                        k * 7
                    );
                    self.end_line(uuid, 500, 1500);
                }
            }
            // Log-uniform in 1..50 KB: many small outputs, a few big ones.
            let u = self.rng.range(0, 1 << 20) as f64 / (1 << 20) as f64;
            let n = (1024.0 * 50f64.powf(u)) as usize;
            let output = self.tool_output(n);
            let ascii_escapes = self.rng.one_in(5);
            let is_error = self.rng.one_in(20);
            let uuid = self.begin_line("user");
            let _ = write!(
                self.out,
                "\"message\":{{\"role\":\"user\",\"content\":[{{\"tool_use_id\":\"{id}\",\
                 \"type\":\"tool_result\",\"content\":"
            );
            push_json_string(&mut self.out, &output, ascii_escapes);
            let _ = write!(self.out, ",\"is_error\":{is_error}}}]}},");
            if self.rng.one_in(3) {
                self.out.push_str("\"toolUseResult\":{\"stdout\":");
                push_json_string(&mut self.out, &output, ascii_escapes);
                self.out
                    .push_str(",\"stderr\":\"\",\"interrupted\":false,\"isImage\":false},");
            } else {
                self.out
                    .push_str("\"toolUseResult\":{\"type\":\"text\",\"numLines\":3},");
            }
            self.end_line(uuid, 50, 30_000);
            if self.rng.one_in(2) {
                self.progress_hook("PostToolUse");
            }
        }
    }
}

/// Appends `s` as a JSON string literal (with quotes), escaping as `JSON.stringify` does; with
/// `ascii`, non-ASCII characters are written as `\uXXXX` escapes (surrogate pairs above
/// U+FFFF), as Python's `json.dumps` does by default.
fn push_json_string(out: &mut String, s: &str, ascii: bool) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut plain = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let needs = b < 0x20 || b == b'"' || b == b'\\' || (ascii && b >= 0x80);
        if !needs {
            continue;
        }
        if b >= 0x80 && !s.is_char_boundary(i) {
            continue; // continuation byte of a character already escaped
        }
        out.push_str(&s[plain..i]);
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x00..=0x1F => {
                let _ = write!(out, "\\u{b:04x}");
            }
            _ => {
                let ch = s[i..].chars().next().unwrap_or('\u{FFFD}');
                for unit in ch.encode_utf16(&mut [0; 2]) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
                plain = i + ch.len_utf8();
                continue;
            }
        }
        plain = i + 1;
    }
    out.push_str(&s[plain..]);
    out.push('"');
}

/// Installs the file-history fixture (`fixtures/history`: a fake index root `root/` and the
/// project file `src/app.py`, issue 22) into `dst`: every file of `fixture`'s `root/` and
/// `src/` is copied under `dst` with each `@ROOT@` replaced by `dst`'s path, so that the
/// sessions name the copied `dst/src/app.py` by an absolute path. Returns the index root
/// (`dst/root`). Errors are I/O errors.
pub fn install_history_fixture(
    fixture: &std::path::Path,
    dst: &std::path::Path,
) -> std::io::Result<std::path::PathBuf> {
    fn copy(from: &std::path::Path, to: &std::path::Path, root: &str) -> std::io::Result<()> {
        std::fs::create_dir_all(to)?;
        for e in std::fs::read_dir(from)? {
            let e = e?;
            let target = to.join(e.file_name());
            if e.file_type()?.is_dir() {
                copy(&e.path(), &target, root)?;
            } else {
                let text = std::fs::read_to_string(e.path())?;
                std::fs::write(&target, text.replace("@ROOT@", root))?;
            }
        }
        Ok(())
    }
    let root = dst.to_string_lossy().into_owned();
    for part in ["root", "src"] {
        copy(&fixture.join(part), &dst.join(part), &root)?;
    }
    Ok(dst.join("root"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_round_trip_through_serde() {
        let s = "a\"b\\c\nd\te\u{1b}[1m é 😀 \u{2028}";
        for ascii in [false, true] {
            let mut out = String::new();
            push_json_string(&mut out, s, ascii);
            assert_eq!(serde_json::from_str::<String>(&out).unwrap(), s);
        }
        let mut out = String::new();
        push_json_string(&mut out, "é😀\u{1b}", true);
        assert_eq!(out, r#""\u00e9\ud83d\ude00\u001b""#);
    }

    #[test]
    fn synthetic_transcript_is_valid_jsonl_of_the_requested_size() {
        let text = synth_claude_transcript(3 << 20, 42);
        assert_eq!(text, synth_claude_transcript(3 << 20, 42), "deterministic");
        assert!(
            text.len() >= 3 << 20 && text.len() < 4 << 20,
            "{}",
            text.len()
        );
        assert!(text.ends_with('\n'));
        let mut types = std::collections::BTreeMap::new();
        let mut message_ids = std::collections::BTreeMap::new();
        let mut images = 0;
        for line in text.lines() {
            #[derive(serde::Deserialize)]
            struct Probe<'a> {
                #[serde(rename = "type")]
                ty: &'a str,
                #[serde(default)]
                message: Option<Msg<'a>>,
            }
            #[derive(serde::Deserialize)]
            struct Msg<'a> {
                #[serde(default, borrow)]
                id: Option<&'a str>,
            }
            let probe: Probe = serde_json::from_str(line).expect(line);
            *types.entry(probe.ty).or_insert(0) += 1;
            if let Some(id) = probe.message.and_then(|m| m.id) {
                *message_ids.entry(id).or_insert(0) += 1;
            }
            images += line.contains("\"type\":\"image\"") as usize;
        }
        assert_eq!(images, 1);
        assert_eq!(
            types.keys().copied().collect::<Vec<_>>(),
            vec![
                "assistant",
                "file-history-snapshot",
                "progress",
                "system",
                "user"
            ]
        );
        // Streaming split: responses span several lines sharing one message id.
        assert!(message_ids.values().any(|&n| n >= 3));
        assert_eq!(
            crate::formats::detect_line(text.lines().nth(1).unwrap()),
            Some(crate::model::Format::ClaudeCode)
        );
        // Both escape styles and raw non-ASCII are present.
        assert!(text.contains(r"\u00e9") && text.contains("é"));
        assert!(text.contains(r"\ud83d\ude00") && text.contains('\u{2028}'));
    }
}
