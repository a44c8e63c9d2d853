//! The shapes of Codex rollout records as serde reads them (borrowed, bulky fields skipped),
//! and the line being read.

use super::*;

/// Cumulative token totals of `token_count.info.total_token_usage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub(super) struct Totals {
    #[serde(default, deserialize_with = "count")]
    pub(super) input_tokens: u64,
    #[serde(default, deserialize_with = "count")]
    pub(super) cached_input_tokens: u64,
    /// Codex 0.14x: tokens written to the prompt cache (a part of `input_tokens`).
    #[serde(default, deserialize_with = "count")]
    pub(super) cache_write_input_tokens: u64,
    #[serde(default, deserialize_with = "count")]
    pub(super) output_tokens: u64,
    #[serde(default, deserialize_with = "count")]
    pub(super) reasoning_output_tokens: u64,
}

impl Totals {
    pub(super) fn covers(&self, o: &Totals) -> bool {
        self.input_tokens >= o.input_tokens
            && self.cached_input_tokens >= o.cached_input_tokens
            && self.cache_write_input_tokens >= o.cache_write_input_tokens
            && self.output_tokens >= o.output_tokens
            && self.reasoning_output_tokens >= o.reasoning_output_tokens
    }
}

#[derive(Deserialize)]
pub(super) struct TokenInfo {
    #[serde(default)]
    pub(super) total_token_usage: Option<Totals>,
}

/// A token count that may be written as an integer or a float (or null).
pub(super) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let v = Option::<f64>::deserialize(d)?;
    Ok(v.filter(|v| v.is_finite() && *v > 0.0)
        .map_or(0, |v| v as u64))
}

/// A field whose presence matters even when its value is `null`.
#[derive(Debug, Default)]
pub(super) struct Seen<'a> {
    pub(super) present: bool,
    pub(super) raw: Option<Raw<'a>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Seen<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Option::<Raw<'a>>::deserialize(d)?;
        Ok(Seen { present: true, raw })
    }
}

/// One line, envelope or legacy bare record. Only what decides the shape is read here.
#[derive(Deserialize)]
pub(super) struct Record<'a> {
    #[serde(rename = "type", borrow, default)]
    pub(super) ty: Option<Raw<'a>>,
    #[serde(borrow, default)]
    pub(super) timestamp: Option<Raw<'a>>,
    #[serde(borrow, default)]
    pub(super) payload: Option<Raw<'a>>,
    #[serde(borrow, default)]
    pub(super) record_type: Seen<'a>,
    #[serde(borrow, default)]
    pub(super) instructions: Seen<'a>,
    #[serde(borrow, default)]
    pub(super) git: Seen<'a>,
    #[serde(borrow, default)]
    pub(super) ordinal: Option<Raw<'a>>,
    #[serde(borrow, default)]
    pub(super) id: Option<Raw<'a>>,
}

/// A payload (or a legacy bare item). Every field is a borrowed raw value, so a field of an
/// unexpected JSON type never fails the record; it is interpreted where it is used.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Payload<'a> {
    #[serde(rename = "type", borrow)]
    pub(super) ty: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) role: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) phase: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) content: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) summary: Option<Raw<'a>>,
    /// Only its presence is used; the opaque payload is skipped (KBs).
    pub(super) encrypted_content: Option<IgnoredAny>,
    #[serde(borrow)]
    pub(super) name: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) arguments: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) input: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) call_id: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) id: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) output: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) action: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) message: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) text: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) images: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) local_images: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) kind: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) info: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) turn_id: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) duration_ms: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) time_to_first_token_ms: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) cwd: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) cli_version: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) model: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) source: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) revised_prompt: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) tools: Option<Raw<'a>>,
    /// `event_msg/thread_name_updated`: the thread's name (the session's title; issue 7).
    #[serde(borrow)]
    pub(super) thread_name: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) item: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) effort: Option<Raw<'a>>,
    /// `turn_context.approval_policy` (`untrusted`, `on-request`, `on-failure`, `never`).
    #[serde(borrow)]
    pub(super) approval_policy: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) thread_settings: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) response_id: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) compaction_response_id: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) usage: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) new_thread_id: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) new_agent_nickname: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) new_agent_role: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) started_at_ms: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) completed_at_ms: Option<Raw<'a>>,
}

/// A content item of a message or tool output (`input_text`, `output_text`, `input_image`,
/// `refusal`, `encrypted_content`, …).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct ContentItem<'a> {
    #[serde(rename = "type", borrow)]
    pub(super) ty: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) text: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) refusal: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) image_url: Option<Raw<'a>>,
    /// `{"content": "...", "success": false}` outputs.
    #[serde(borrow)]
    pub(super) content: Option<Raw<'a>>,
    pub(super) success: Option<bool>,
}

/// `web_search_call.action` / `local_shell_call.action`.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Action<'a> {
    #[serde(borrow)]
    pub(super) query: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) queries: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) url: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) pattern: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) command: Option<Raw<'a>>,
}

/// The old JSON-string tool output `{"output": "...", "metadata": {"exit_code": 0, …}}`.
#[derive(Deserialize)]
pub(super) struct OldOutput<'a> {
    #[serde(borrow, default)]
    pub(super) output: Option<Raw<'a>>,
    #[serde(default)]
    pub(super) metadata: Option<OldMetadata>,
}

#[derive(Deserialize)]
pub(super) struct OldMetadata {
    #[serde(default)]
    pub(super) exit_code: Option<f64>,
}

/// `session_meta.source` when it is an object: `{"subagent": …}` marks a sub-agent rollout.
#[derive(Deserialize)]
pub(super) struct SourceObj<'a> {
    #[serde(borrow, default)]
    pub(super) subagent: Option<Raw<'a>>,
}

/// `source.subagent` when it is an object: `{thread_spawn: {parent_thread_id, …}}`.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct SubagentObj<'a> {
    #[serde(borrow)]
    pub(super) thread_spawn: Option<Raw<'a>>,
}

/// `session_meta` fields that say a rollout is a fork or a sub-agent (Codex 0.14x).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Lineage<'a> {
    #[serde(borrow)]
    pub(super) forked_from_id: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) parent_thread_id: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) subagent_history_start_ordinal: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) thread_source: Option<Raw<'a>>,
}

/// `inter_agent_communication_metadata` payload.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct InterAgent {
    pub(super) trigger_turn: Option<bool>,
}

/// The line being read.
pub(super) struct Line<'s> {
    pub(super) source: &'s str,
    pub(super) line: usize,
    pub(super) span: Span,
    pub(super) ts: Option<i64>,
}

impl<'s> Line<'s> {
    pub(super) fn entry(&self, role: Role, record_type: &str) -> Entry {
        let mut e = Entry::new(self.line, self.span.clone(), role, record_type);
        e.set_timestamp_ms(self.ts);
        e
    }

    /// Byte span in the source of `s`, a slice of this line (an empty span at the line start
    /// if it is not one: never panics).
    pub(super) fn span_of(&self, s: &str) -> Span {
        let start = (s.as_ptr() as usize).wrapping_sub(self.source.as_ptr() as usize);
        if start >= self.span.start && start + s.len() <= self.span.end {
            start..start + s.len()
        } else {
            self.span.start..self.span.start
        }
    }

    /// The contents of a string literal (between its quotes) as a [`Str`].
    pub(super) fn str_of(&self, r: Raw<'_>) -> Option<Str> {
        let s = r.get();
        if s.len() >= 2 && s.starts_with('"') {
            Some(Str {
                raw: self.span_of(&s[1..s.len() - 1]),
            })
        } else {
            None
        }
    }

    pub(super) fn empty_str(&self) -> Str {
        Str {
            raw: self.span.start..self.span.start,
        }
    }
}

/// What the arguments of a call say, scanned in key order.
#[derive(Default)]
pub(super) struct ArgsScan {
    /// `cmd` / `command`, arrays joined with spaces.
    pub(super) command: Option<String>,
    /// Number of `plan` steps.
    pub(super) plan: Option<usize>,
    /// First string value that holds an apply_patch body.
    pub(super) patch: Option<String>,
    /// First short (≤ 160 chars, non-empty) string value.
    pub(super) first_short: Option<String>,
    /// First string value of any length.
    pub(super) first: Option<String>,
}

impl<'de> Deserialize<'de> for ArgsScan {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ArgsScan;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object of arguments")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<ArgsScan, A::Error> {
                let mut scan = ArgsScan::default();
                while let Some(key) = m.next_key::<Cow<'de, str>>()? {
                    let value: &'de RawValue = m.next_value()?;
                    let text = jstr(Some(value));
                    if matches!(key.as_ref(), "cmd" | "command") && scan.command.is_none() {
                        scan.command = match &text {
                            Some(t) => Some(t.to_string()),
                            None => joined(value),
                        };
                    }
                    if key == "plan" && is_array(value) {
                        scan.plan = Some(elements(Some(value)).len());
                    }
                    if let Some(t) = text {
                        if scan.patch.is_none() && t.contains("*** Begin Patch") {
                            scan.patch = Some(t.to_string());
                        }
                        let short = !t.trim().is_empty() && t.chars().count() <= SUMMARY_MAX;
                        if scan.first_short.is_none() && short {
                            scan.first_short = Some(t.to_string());
                        }
                        if scan.first.is_none() {
                            scan.first = Some(t.into_owned());
                        }
                    }
                }
                Ok(scan)
            }
        }
        d.deserialize_map(V)
    }
}

/// `thread_settings_applied.thread_settings` (Codex 0.14x).
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct ThreadSettings<'a> {
    #[serde(borrow)]
    pub(super) model: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) reasoning_effort: Option<Raw<'a>>,
}

/// An event copy's raw text values and what else it says.
pub(super) struct Copy<'a> {
    /// Raw string values of the copy's text (one per part).
    pub(super) texts: Vec<Raw<'a>>,
    pub(super) id: Option<String>,
    pub(super) phase: Option<String>,
    /// `item_completed {started_at_ms, completed_at_ms}`.
    pub(super) timing: Option<(i64, i64)>,
}

/// `item_completed.item` (Codex 0.147+): `{type: UserMessage | AgentMessage | Reasoning |
/// Plan | …, id, content: [{type, text}], phase?, summary_text: [string]}`.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct CompletedItem<'a> {
    #[serde(rename = "type", borrow)]
    pub(super) ty: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) id: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) content: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) phase: Option<Raw<'a>>,
    #[serde(borrow)]
    pub(super) summary_text: Option<Raw<'a>>,
}
