//! Typed, borrowed views of Claude Code records (FORMATS.md §1.2–§1.5) and lenient field types.
//!
//! Every leaf field is *lenient*: a value of an unexpected JSON type reads as absent instead of
//! failing the whole record (FORMATS.md §4 item 5: `"[trimmed for fixture]"` in numeric fields,
//! fields added or retyped between releases). Bulky values (`toolUseResult`, `snapshot`, image
//! `data`, `signature`, `stdout` …) are either `&RawValue` (borrowed, never decoded) or unknown
//! fields, which serde skips without allocating.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::model::Span;

/// Implements the visitor methods for the JSON kinds every lenient field maps to "absent": null,
/// arrays and objects (drained without allocating).
macro_rules! other_values_are_none {
    ($none:expr) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_any(self)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($none)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($none)
        }
    };
}

/// A string field: `Some` for a JSON string, `None` for anything else (absent, null, number…).
#[derive(Debug, Default)]
pub struct S<'a>(pub Option<Cow<'a, str>>);

impl<'a> S<'a> {
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The value when present and not empty, as a boxed string.
    pub fn boxed(&self) -> Option<Box<str>> {
        self.get().filter(|s| !s.is_empty()).map(Box::from)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for S<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = S<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<S<'a>, E> {
                Ok(S(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<S<'a>, E> {
                Ok(S(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<S<'a>, E> {
                Ok(S(Some(Cow::Owned(v))))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<S<'a>, E> {
                Ok(S(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<S<'a>, E> {
                Ok(S(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<S<'a>, E> {
                Ok(S(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<S<'a>, E> {
                Ok(S(None))
            }
            other_values_are_none!(S(None));
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A non-negative integer field: JSON integers ≥ 0 and finite non-negative floats (truncated);
/// `None` for anything else.
#[derive(Debug, Default, Clone, Copy)]
pub struct N(pub Option<u64>);

impl<'de> Deserialize<'de> for N {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = N;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<N, E> {
                Ok(N(Some(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<N, E> {
                Ok(N(u64::try_from(v).ok()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<N, E> {
                Ok(N(
                    (v.is_finite() && v >= 0.0 && v < u64::MAX as f64).then_some(v as u64)
                ))
            }
            fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<N, E> {
                Ok(N(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<N, E> {
                Ok(N(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<N, E> {
                Ok(N(None))
            }
            other_values_are_none!(N(None));
        }
        d.deserialize_any(V)
    }
}

/// A boolean field: `Some(b)` for JSON `true`/`false`, `None` for anything else.
#[derive(Debug, Default, Clone, Copy)]
pub struct B(pub Option<bool>);

impl B {
    /// True only for JSON `true`.
    pub fn is_true(self) -> bool {
        self.0 == Some(true)
    }
}

impl<'de> Deserialize<'de> for B {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = B;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<B, E> {
                Ok(B(Some(v)))
            }
            fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<B, E> {
                Ok(B(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<B, E> {
                Ok(B(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<B, E> {
                Ok(B(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<B, E> {
                Ok(B(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<B, E> {
                Ok(B(None))
            }
            other_values_are_none!(B(None));
        }
        d.deserialize_any(V)
    }
}

/// An object field read as `T`; `None` when the value is not an object (string, array, null…).
#[derive(Debug)]
pub struct Obj<T>(pub Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Obj<T>, E> {
                Ok(Obj(None))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Obj<T>, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Obj<T>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Obj(None))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// One line of a Claude Code file, any `type` (FORMATS.md §1.2, §1.3). Only the fields this
/// crate reads; the rest is skipped.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record<'a> {
    #[serde(rename = "type", borrow, default)]
    pub ty: S<'a>,
    #[serde(borrow, default)]
    pub subtype: S<'a>,
    #[serde(borrow, default)]
    pub uuid: S<'a>,
    #[serde(borrow, default)]
    pub parent_uuid: S<'a>,
    #[serde(borrow, default)]
    pub session_id: S<'a>,
    #[serde(borrow, default)]
    pub timestamp: S<'a>,
    #[serde(borrow, default)]
    pub version: S<'a>,
    #[serde(borrow, default)]
    pub cwd: S<'a>,
    #[serde(borrow, default)]
    pub agent_id: S<'a>,
    #[serde(borrow, default)]
    pub request_id: S<'a>,
    #[serde(default)]
    pub is_sidechain: B,
    #[serde(default)]
    pub is_meta: B,
    #[serde(default)]
    pub is_compact_summary: B,
    #[serde(default)]
    pub is_api_error_message: B,
    /// `message` of user / assistant lines.
    #[serde(borrow, default)]
    pub message: Obj<Message<'a>>,
    /// Sidecar on tool-result lines: a string (errors, rejections) or an object per tool.
    #[serde(borrow, default)]
    pub tool_use_result: Sidecar<'a>,
    /// `content` of `system` lines (string) and `queue-operation` lines (string, list or null).
    #[serde(borrow, default)]
    pub content: Option<&'a RawValue>,
    /// `queue-operation`: `enqueue` | `dequeue` | `remove` | `popAll`.
    #[serde(borrow, default)]
    pub operation: S<'a>,
    #[serde(borrow, default)]
    pub attachment: Obj<Attachment<'a>>,
    /// `progress` payload.
    #[serde(borrow, default)]
    pub data: Obj<Typed<'a>>,
    #[serde(borrow, default)]
    pub compact_metadata: Obj<CompactMetadata<'a>>,
    /// Top-level `trigger` (catalog `compact_boundary` carries it beside `compactMetadata`).
    #[serde(borrow, default)]
    pub trigger: S<'a>,
    #[serde(default)]
    pub duration_ms: N,
    /// `error` of synthetic API-error assistant lines (`"rate_limit"` …); objects read as absent.
    #[serde(borrow, default)]
    pub error: S<'a>,
    /// `summary` record text.
    #[serde(borrow, default)]
    pub summary: S<'a>,
    /// `summary` / `last-prompt`: the uuid of the conversation leaf the record is about (it may
    /// be in another file).
    #[serde(borrow, default)]
    pub leaf_uuid: S<'a>,
    #[serde(borrow, default)]
    pub ai_title: S<'a>,
    #[serde(borrow, default)]
    pub custom_title: S<'a>,
    /// 2.1.193+: `origin: {kind: "human" | "task-notification" | …}` of user lines.
    #[serde(borrow, default)]
    pub origin: Obj<Typed2<'a>>,
    /// 2.1.161+: `promptSource: "typed"` of user lines.
    #[serde(borrow, default)]
    pub prompt_source: S<'a>,
    /// 2.1.2xx assistant lines: the reasoning effort (`"xhigh"`).
    #[serde(borrow, default)]
    pub effort: S<'a>,
    /// `cost-state`: session-cumulative cost in USD (a JSON number).
    #[serde(rename = "totalCostUSD", borrow, default)]
    pub total_cost_usd: Option<&'a RawValue>,
    /// `cost-state`: session-cumulative API time in ms.
    #[serde(rename = "totalAPIDuration", default)]
    pub total_api_duration: N,
}

/// Reads `text`, one JSON object, into `rec` (which must be [`Record::default`]) as
/// `serde_json::from_str::<Record>` reads it: the same fields, the same values, the same
/// errors at the same places (a repeated field: ``duplicate field `uuid` ``). Issue 12: the
/// derived reading builds the record (some 900 bytes) in its own frame and moves it out
/// through three more, 3 % of `stats`; this one writes each field where it stays.
pub fn read_record<'a>(text: &'a str, rec: &mut Record<'a>) -> serde_json::Result<()> {
    let mut de = serde_json::Deserializer::from_str(text);
    de::DeserializeSeed::deserialize(RecordSeed(rec), &mut de)?;
    de.end()
}

/// [`read_record`]'s seed: the record to fill.
struct RecordSeed<'r, 'a>(&'r mut Record<'a>);

impl<'de: 'a, 'a> de::DeserializeSeed<'de> for RecordSeed<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_struct("Record", &[], self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for RecordSeed<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Record")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let r = self.0;
        let mut seen = 0u64;
        // Each field: its JSON name, its place, and its bit in `seen`, in the order of
        // `Record`'s declaration (a field met twice fails, as deriving does).
        macro_rules! fields {
            ($key:expr; $($bit:literal $name:literal => $field:ident),* $(,)?) => {
                match $key {
                    $($name => {
                        if seen & (1u64 << $bit) != 0 {
                            return Err(de::Error::duplicate_field($name));
                        }
                        seen |= 1u64 << $bit;
                        r.$field = map.next_value()?;
                    })*
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            };
        }
        while let Some(Key(k)) = map.next_key::<Key<'a>>()? {
            fields!(&*k;
                0 "type" => ty,
                1 "subtype" => subtype,
                2 "uuid" => uuid,
                3 "parentUuid" => parent_uuid,
                4 "sessionId" => session_id,
                5 "timestamp" => timestamp,
                6 "version" => version,
                7 "cwd" => cwd,
                8 "agentId" => agent_id,
                9 "requestId" => request_id,
                10 "isSidechain" => is_sidechain,
                11 "isMeta" => is_meta,
                12 "isCompactSummary" => is_compact_summary,
                13 "isApiErrorMessage" => is_api_error_message,
                14 "message" => message,
                15 "toolUseResult" => tool_use_result,
                16 "content" => content,
                17 "operation" => operation,
                18 "attachment" => attachment,
                19 "data" => data,
                20 "compactMetadata" => compact_metadata,
                21 "trigger" => trigger,
                22 "durationMs" => duration_ms,
                23 "error" => error,
                24 "summary" => summary,
                25 "leafUuid" => leaf_uuid,
                26 "aiTitle" => ai_title,
                27 "customTitle" => custom_title,
                28 "origin" => origin,
                29 "promptSource" => prompt_source,
                30 "effort" => effort,
                31 "totalCostUSD" => total_cost_usd,
                32 "totalAPIDuration" => total_api_duration,
            );
        }
        Ok(())
    }
}

/// An object with a `kind` (`origin`).
#[derive(Debug, Default, serde::Deserialize)]
pub struct Typed2<'a> {
    #[serde(borrow, default)]
    pub kind: S<'a>,
}

/// `message` of a user or assistant line.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Message<'a> {
    #[serde(borrow, default)]
    pub id: S<'a>,
    #[serde(borrow, default)]
    pub model: S<'a>,
    /// A string or a list of content blocks, read in the record's own pass ([`Content`]).
    #[serde(borrow, default)]
    pub content: Content<'a>,
    #[serde(borrow, default)]
    pub stop_reason: S<'a>,
    #[serde(borrow, default)]
    pub usage: Obj<RawUsage<'a>>,
}

/// `message.usage` (FORMATS.md §1.9): all token counts.
#[derive(Debug, Default, serde::Deserialize)]
pub struct RawUsage<'a> {
    #[serde(default)]
    pub input_tokens: N,
    #[serde(default)]
    pub output_tokens: N,
    #[serde(default)]
    pub cache_creation_input_tokens: N,
    #[serde(default)]
    pub cache_read_input_tokens: N,
    /// 2.1.1xx+: `[{type: "message" | "advisor_message", model?, input_tokens, …}]`, read
    /// with [`iterations`].
    #[serde(borrow, default)]
    pub iterations: Option<&'a RawValue>,
}

/// One element of `usage.iterations`.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Iteration<'a> {
    #[serde(rename = "type", borrow, default)]
    pub ty: S<'a>,
    #[serde(default)]
    pub input_tokens: N,
    #[serde(default)]
    pub output_tokens: N,
    #[serde(default)]
    pub cache_creation_input_tokens: N,
    #[serde(default)]
    pub cache_read_input_tokens: N,
}

/// The elements of `usage.iterations` that are objects (others are skipped).
pub fn iterations(raw: &RawValue) -> Vec<Iteration<'_>> {
    serde_json::from_str::<Vec<Obj<Iteration>>>(raw.get())
        .map(|v| v.into_iter().filter_map(|o| o.0).collect())
        .unwrap_or_default()
}

/// `attachment` of an `attachment` line (FORMATS.md §1.3).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attachment<'a> {
    #[serde(rename = "type", borrow, default)]
    pub ty: S<'a>,
    /// `queued_command`: the queued prompt, a string or a list of blocks.
    #[serde(borrow, default)]
    pub prompt: Option<&'a RawValue>,
    /// `queued_command`: `prompt`, `task-notification`, … when given.
    #[serde(borrow, default)]
    pub command_mode: S<'a>,
}

/// Any object with a `type`.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Typed<'a> {
    #[serde(rename = "type", borrow, default)]
    pub ty: S<'a>,
}

/// `compactMetadata` of `system/compact_boundary`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactMetadata<'a> {
    #[serde(borrow, default)]
    pub trigger: S<'a>,
    #[serde(default)]
    pub pre_tokens: N,
}

/// One content block (FORMATS.md §1.4), any type.
#[derive(Debug, Default, serde::Deserialize)]
pub struct RawBlock<'a> {
    #[serde(rename = "type", borrow, default)]
    pub ty: S<'a>,
    /// `text` blocks.
    #[serde(borrow, default)]
    pub text: Option<&'a RawValue>,
    /// `thinking` blocks.
    #[serde(borrow, default)]
    pub thinking: Option<&'a RawValue>,
    /// `tool_use` / `server_tool_use`.
    #[serde(borrow, default)]
    pub id: S<'a>,
    #[serde(borrow, default)]
    pub name: S<'a>,
    #[serde(borrow, default)]
    pub input: Option<&'a RawValue>,
    /// `tool_result`.
    #[serde(borrow, default)]
    pub tool_use_id: S<'a>,
    #[serde(borrow, default)]
    pub content: Option<&'a RawValue>,
    #[serde(default)]
    pub is_error: B,
    /// `image`.
    #[serde(borrow, default)]
    pub source: Obj<ImageSource<'a>>,
    /// `tool_reference`.
    #[serde(borrow, default)]
    pub tool_name: S<'a>,
    /// `input` as the record's own pass read it ([`read_block`]): an object placed in the
    /// line, with its members, so that they are not read again from `input` (issue 12). Only
    /// [`read_block`] sets it (`input` is then `None`); deriving reads `input`.
    #[serde(skip)]
    pub input_object: Option<PlacedObject<'a>>,
}

/// A JSON object read member by member (values raw) where it sits in the line: `from` is the
/// address of its first key's contents, `to` the address after its last value; the caller
/// finds its `{` and `}` around them ([`crate::formats::claude_code::blocks`]).
#[derive(Debug, Default)]
pub struct PlacedObject<'a> {
    pub from: usize,
    pub to: usize,
    pub members: Members<'a>,
}

/// A value read as [`PlacedObject`]: `None` when it is not an object with at least one
/// member whose first key is written without escapes (it cannot be placed then).
struct MaybePlacedObject<'a>(Option<PlacedObject<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybePlacedObject<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = MaybePlacedObject<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                let (mut from, mut to) = (None, 0);
                while let Some(Key(k)) = map.next_key::<Key<'a>>()? {
                    if members.is_empty()
                        && let Cow::Borrowed(k) = &k
                    {
                        from = Some(k.as_ptr() as usize);
                    }
                    let v: &'a RawValue = map.next_value()?;
                    to = v.get().as_ptr() as usize + v.get().len();
                    members.push((k, v));
                }
                Ok(MaybePlacedObject(from.map(|from| PlacedObject {
                    from,
                    to,
                    members: Members(members),
                })))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MaybePlacedObject(None))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(MaybePlacedObject(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(MaybePlacedObject(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(MaybePlacedObject(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(MaybePlacedObject(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(MaybePlacedObject(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(MaybePlacedObject(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(MaybePlacedObject(None))
            }
            fn visit_borrowed_str<E: de::Error>(self, _: &'de str) -> Result<Self::Value, E> {
                Ok(MaybePlacedObject(None))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// `source` of an image block. `data` stays a borrowed raw literal: base64 is never decoded.
#[derive(Debug, Default, serde::Deserialize)]
pub struct ImageSource<'a> {
    #[serde(borrow, default)]
    pub media_type: S<'a>,
    #[serde(borrow, default)]
    pub data: Option<&'a RawValue>,
}

/// The fields of a `toolUseResult` object this crate reads (Task/Agent totals, FORMATS.md §1.5).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseResultObj<'a> {
    #[serde(borrow, default)]
    pub agent_id: S<'a>,
    #[serde(default)]
    pub total_duration_ms: N,
    #[serde(default)]
    pub total_tokens: N,
    #[serde(default)]
    pub total_tool_use_count: N,
}

/// `message.content`, read in the record's own pass (issue 12: kept raw, then read again
/// block by block, every content byte was scanned twice; `message.content` holds most of a
/// session's bytes). Where a block sits is taken from where serde's borrowed keys and raw
/// values sit in the line. What cannot be placed that way (a string with escapes, a block
/// `{}` or one whose first key has escapes, a number or an object as content) is
/// [`Content::Again`]: the caller reads the raw value again ([`MessageContent`]) and reads it
/// as before.
#[derive(Debug, Default)]
pub enum Content<'a> {
    /// No `content` member, or `null` (as `Option<&RawValue>` read them).
    #[default]
    Absent,
    /// A string literal without escapes: its contents, borrowed from the line.
    Str(&'a str),
    /// A list, every element placed and read.
    List(Vec<Element<'a>>),
    /// Something else: to be read again from its raw value.
    Again,
}

impl<'a> Content<'a> {
    /// True when the content is the string literal `"{s}"` exactly as written (no escapes).
    pub fn is_literal(&self, s: &str) -> bool {
        matches!(self, Content::Str(v) if *v == s)
    }
}

/// One element of a [`Content::List`]: where it sits (addresses in the line read: `from` is
/// the first byte of its first key's contents, or of a string's contents; `to` the byte after
/// its last value, or after a string's contents) and, for an object, the block read as
/// [`RawBlock`] would read it (`None` when that would fail, e.g. a repeated field).
#[derive(Debug)]
pub struct Element<'a> {
    pub from: usize,
    pub to: usize,
    /// `None` for a string element, `Some(block)` for an object.
    pub block: Option<Option<RawBlock<'a>>>,
    /// When the last member is an `input` read as a [`PlacedObject`], its `from` and `to`:
    /// `to` is then the address after that object's last value, and the block ends after
    /// the object's `}`.
    pub last_input: Option<(usize, usize)>,
}

/// A list element as read: `None` when it could not be placed (see [`Content`]).
struct Placed<'a>(Option<Element<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Content<'a>, E> {
                Ok(Content::Str(v))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Content<'a>, E> {
                Ok(Content::Again)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Content<'a>, E> {
                Ok(Content::Again)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Content<'a>, E> {
                Ok(Content::Again)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Content<'a>, E> {
                Ok(Content::Again)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Content<'a>, E> {
                Ok(Content::Again)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Content<'a>, E> {
                Ok(Content::Absent)
            }
            fn visit_none<E: de::Error>(self) -> Result<Content<'a>, E> {
                Ok(Content::Absent)
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Content<'a>, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Content<'a>, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Content::Again)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content<'a>, A::Error> {
                let mut out = Vec::new();
                let mut placed = true;
                while let Some(Placed(e)) = seq.next_element::<Placed<'a>>()? {
                    match e {
                        Some(e) if placed => out.push(e),
                        _ => placed = false,
                    }
                }
                Ok(if placed {
                    Content::List(out)
                } else {
                    Content::Again
                })
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A key as serde gives it: borrowed from the line (no escapes) or decoded.
struct Key<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(V(PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Placed<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Placed<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Placed<'a>, E> {
                let from = v.as_ptr() as usize;
                Ok(Placed(Some(Element {
                    from,
                    to: from + v.len(),
                    block: None,
                    last_input: None,
                })))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Placed<'a>, E> {
                Ok(Placed(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Placed<'a>, E> {
                Ok(Placed(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Placed<'a>, E> {
                Ok(Placed(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Placed<'a>, E> {
                Ok(Placed(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Placed<'a>, E> {
                Ok(Placed(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Placed<'a>, E> {
                Ok(Placed(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<Placed<'a>, E> {
                Ok(Placed(None))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Placed<'a>, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Placed<'a>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Placed(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Placed<'a>, A::Error> {
                read_block(map).map(Placed)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// Reads a content block object member by member, every value raw, into what deriving
/// `Deserialize` for [`RawBlock`] gives (`Some(None)` where that fails: a repeated field, an
/// image `source` that does not read) and where it sits; `None` when it cannot be placed (no
/// member, or a first key with escapes).
fn read_block<'de: 'a, 'a, A: MapAccess<'de>>(mut map: A) -> Result<Option<Element<'a>>, A::Error> {
    let mut b = RawBlock::default();
    let mut from = None;
    let mut to = 0;
    let mut seen = 0u16;
    let mut ok = true;
    let mut first = true;
    let (mut unplaced, mut last_input) = (false, None);
    while let Some(Key(k)) = map.next_key::<Key<'a>>()? {
        if std::mem::take(&mut first)
            && let Cow::Borrowed(k) = &k
        {
            from = Some(k.as_ptr() as usize);
        }
        if &*k == "input" {
            // Read with its members (a tool call's arguments), once; an input that cannot
            // be placed leaves the whole block unplaced, to be read again as before.
            let MaybePlacedObject(o) = map.next_value()?;
            let Some(o) = o else {
                unplaced = true;
                continue;
            };
            to = o.to;
            last_input = Some((o.from, o.to));
            if ok {
                if seen & (1 << 5) != 0 {
                    ok = false;
                }
                seen |= 1 << 5;
                b.input_object = Some(o);
            }
            continue;
        }
        let v: &'a RawValue = map.next_value()?;
        to = v.get().as_ptr() as usize + v.get().len();
        last_input = None;
        if !ok {
            continue;
        }
        let raw = |v: &'a RawValue| (v.get() != "null").then_some(v);
        let bit = match &*k {
            "type" => {
                b.ty = lenient_s(v);
                0
            }
            "text" => {
                b.text = raw(v);
                1
            }
            "thinking" => {
                b.thinking = raw(v);
                2
            }
            "id" => {
                b.id = lenient_s(v);
                3
            }
            "name" => {
                b.name = lenient_s(v);
                4
            }
            "tool_use_id" => {
                b.tool_use_id = lenient_s(v);
                6
            }
            "content" => {
                b.content = raw(v);
                7
            }
            "is_error" => {
                b.is_error = serde_json::from_str::<B>(v.get()).unwrap_or_default();
                8
            }
            "source" => {
                match serde_json::from_str::<Obj<ImageSource<'a>>>(v.get()) {
                    Ok(src) => b.source = src,
                    Err(_) => ok = false,
                }
                9
            }
            "tool_name" => {
                b.tool_name = lenient_s(v);
                10
            }
            _ => continue,
        };
        if seen & (1 << bit) != 0 {
            ok = false;
        }
        seen |= 1 << bit;
    }
    if unplaced {
        return Ok(None);
    }
    Ok(from.map(|from| Element {
        from,
        to,
        block: Some(ok.then_some(b)),
        last_input,
    }))
}

/// A string field's value as [`S`] reads it, from its raw JSON: a literal without escapes is
/// borrowed as it stands (the common case, without starting another parse), anything else
/// is parsed as before.
fn lenient_s<'a>(v: &'a RawValue) -> S<'a> {
    let s = v.get();
    if let Some(inner) = s.strip_prefix('"').and_then(|r| r.strip_suffix('"'))
        && !inner.contains('\\')
    {
        return S(Some(Cow::Borrowed(inner)));
    }
    serde_json::from_str::<S<'a>>(s).unwrap_or_default()
}

/// `message.content` alone, raw: read again when [`Content`] could not place it.
#[derive(Debug, Default, serde::Deserialize)]
pub struct MessageContent<'a> {
    #[serde(borrow, default)]
    pub message: Obj<MessageContentOnly<'a>>,
}

/// See [`MessageContent`].
#[derive(Debug, Default, serde::Deserialize)]
pub struct MessageContentOnly<'a> {
    #[serde(borrow, default)]
    pub content: Option<&'a RawValue>,
}

/// `toolUseResult`, read in the record's own pass for what `blocks::tool_use_result` needs
/// (issue 12: it is a copy of the tool's output, a quarter of a session's bytes, and was kept
/// raw, then searched twice for the sub-agent key names).
#[derive(Debug, Default)]
pub enum Sidecar<'a> {
    /// No `toolUseResult`, or `null`.
    #[default]
    Absent,
    /// A string without escapes: its contents, borrowed from the line.
    Str(&'a str),
    /// An object: its sub-agent fields as deriving `Deserialize` for [`ToolUseResultObj`]
    /// reads them (`None` where that fails: a repeated field).
    Obj(Option<ToolUseResultObj<'a>>),
    /// A number, a boolean or a list: no error, no sub-agent.
    Other,
    /// A string with escapes, or an object whose sub-agent keys are all written with
    /// escapes (the raw search for their names decides): to be read again from the raw
    /// value ([`SidecarRaw`]).
    Again,
}

/// `toolUseResult` alone, raw: read again for [`Sidecar::Again`].
#[derive(Debug, Default, serde::Deserialize)]
pub struct SidecarRaw<'a> {
    #[serde(rename = "toolUseResult", borrow, default)]
    pub tool_use_result: Option<&'a RawValue>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Sidecar<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Sidecar<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Sidecar<'a>, E> {
                Ok(Sidecar::Str(v))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Sidecar<'a>, E> {
                Ok(Sidecar::Again)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Sidecar<'a>, E> {
                Ok(Sidecar::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Sidecar<'a>, E> {
                Ok(Sidecar::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Sidecar<'a>, E> {
                Ok(Sidecar::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Sidecar<'a>, E> {
                Ok(Sidecar::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Sidecar<'a>, E> {
                Ok(Sidecar::Absent)
            }
            fn visit_none<E: de::Error>(self) -> Result<Sidecar<'a>, E> {
                Ok(Sidecar::Absent)
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Sidecar<'a>, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Sidecar<'a>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Sidecar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Sidecar<'a>, A::Error> {
                let mut o = ToolUseResultObj::default();
                let (mut seen, mut repeated) = (0u8, false);
                let (mut literal, mut escaped) = (false, false);
                while let Some(Key(k)) = map.next_key::<Key<'a>>()? {
                    let bit = match &*k {
                        "agentId" => {
                            o.agent_id = map.next_value()?;
                            0
                        }
                        "totalDurationMs" => {
                            o.total_duration_ms = map.next_value()?;
                            1
                        }
                        "totalTokens" => {
                            o.total_tokens = map.next_value()?;
                            2
                        }
                        "totalToolUseCount" => {
                            o.total_tool_use_count = map.next_value()?;
                            3
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                            continue;
                        }
                    };
                    match k {
                        Cow::Borrowed(_) => literal = true,
                        Cow::Owned(_) => escaped = true,
                    }
                    repeated |= seen & (1 << bit) != 0;
                    seen |= 1 << bit;
                }
                Ok(if escaped && !literal {
                    Sidecar::Again
                } else {
                    Sidecar::Obj((!repeated).then_some(o))
                })
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// The members of a JSON object in order, values raw: `(key, value)`. Used for tool inputs,
/// whose keys depend on the tool.
#[derive(Debug, Default)]
pub struct Members<'a>(pub Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'a>, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = map.next_key::<S<'a>>()? {
                    let v: &'a RawValue = map.next_value()?;
                    if let Some(k) = k.0 {
                        out.push((k, v));
                    }
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

impl<'a> Members<'a> {
    /// The raw value of the first member named `key`.
    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

/// Byte span of a raw value inside the source: `base` is the source offset of `text`, and
/// `raw` must be borrowed from `text`.
pub fn span_of(raw: &RawValue, text: &str, base: usize) -> Span {
    span_of_str(raw.get(), text, base)
}

/// Byte span of `raw`, a slice of `text`, inside the source (`base`: source offset of `text`).
pub fn span_of_str(raw: &str, text: &str, base: usize) -> Span {
    let start = raw.as_ptr() as usize - text.as_ptr() as usize + base;
    start..start + raw.len()
}

/// If `raw` is a JSON string literal, the span of its contents between the quotes.
pub fn str_span(raw: &RawValue, text: &str, base: usize) -> Option<Span> {
    str_span_of_str(raw.get(), text, base)
}

/// [`str_span`] of the raw JSON `raw`, a slice of `text`.
pub fn str_span_of_str(s: &str, text: &str, base: usize) -> Option<Span> {
    if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        let sp = span_of_str(s, text, base);
        Some(sp.start + 1..sp.end - 1)
    } else {
        None
    }
}

/// Calls `f` with each element of `list`, the raw text of a JSON array already read by serde
/// (a `RawValue`): the element's raw text, and the element read as `T` when it is an object
/// that reads as one. Each element is read once, in place (issue 12: reading the list as raw
/// values first, then each element again, scanned every content block twice). Returns false
/// when `list` is not an array (nothing is called then) or an element cannot be read at all.
pub fn for_each_element<'a, T: Deserialize<'a>>(
    list: &'a str,
    mut f: impl FnMut(&'a str, Option<T>),
) -> bool {
    let b = list.as_bytes();
    let ws = |mut i: usize| {
        while b
            .get(i)
            .is_some_and(|c| matches!(c, b' ' | b'\n' | b'\r' | b'\t'))
        {
            i += 1;
        }
        i
    };
    let mut i = ws(0);
    if b.get(i) != Some(&b'[') {
        return false;
    }
    i = ws(i + 1);
    if b.get(i) == Some(&b']') {
        return true;
    }
    loop {
        let rest = &list[i..];
        let read = if rest.starts_with('{') {
            let mut it = serde_json::Deserializer::from_str(rest).into_iter::<T>();
            match it.next() {
                Some(Ok(t)) => Some((it.byte_offset(), Some(t))),
                _ => None,
            }
        } else {
            None
        };
        let (len, parsed) = match read {
            Some(r) => r,
            None => {
                let mut it = serde_json::Deserializer::from_str(rest).into_iter::<&RawValue>();
                match it.next() {
                    Some(Ok(_)) => (it.byte_offset(), None),
                    _ => return false,
                }
            }
        };
        f(&rest[..len], parsed);
        i = ws(i + len);
        match b.get(i) {
            Some(b',') => i = ws(i + 1),
            Some(b']') => return true,
            _ => return false,
        }
    }
}

/// The raw contents between the quotes when `raw` is a string literal.
pub fn str_contents(raw: &RawValue) -> Option<&str> {
    let s = raw.get();
    (s.len() >= 2 && s.starts_with('"') && s.ends_with('"')).then(|| &s[1..s.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_fields_read_unexpected_types_as_absent() {
        #[derive(serde::Deserialize)]
        struct T<'a> {
            #[serde(borrow, default)]
            s: S<'a>,
            #[serde(default)]
            n: N,
            #[serde(default)]
            b: B,
            #[serde(default)]
            o: Obj<Typed<'a>>,
        }
        let t: T =
            serde_json::from_str(r#"{"s":[1,{"a":2}],"n":"[trimmed]","b":1,"o":"x"}"#).unwrap();
        assert!(t.s.0.is_none() && t.n.0.is_none() && t.b.0.is_none() && t.o.0.is_none());
        let t: T =
            serde_json::from_str(r#"{"s":"a\"b","n":12.9,"b":true,"o":{"type":"k"}}"#).unwrap();
        assert_eq!(t.s.get(), Some("a\"b"));
        assert_eq!(t.n.0, Some(12));
        assert!(t.b.is_true());
        assert_eq!(t.o.0.unwrap().ty.get(), Some("k"));
        let t: T = serde_json::from_str(r#"{"n":-3,"s":null}"#).unwrap();
        assert_eq!(t.n.0, None);
        assert_eq!(t.s.0, None);
    }

    /// Elements come out with their exact raw text, objects read as `T` once; other values
    /// and objects that do not read as `T` come with `None`.
    #[test]
    fn array_elements_are_read_once_with_their_text() {
        let list = r#" [ {"type":"a"} ,"s\"",  7,{"type":[1]} ,{"type":"b","x":{"y":"}"}}] "#;
        let mut got = Vec::new();
        let ok = for_each_element::<Typed>(list, |raw, t| {
            got.push((raw, t.map(|t| t.ty.get().map(str::to_string))));
        });
        assert!(ok);
        assert_eq!(
            got,
            vec![
                (r#"{"type":"a"}"#, Some(Some("a".to_string()))),
                (r#""s\"""#, None),
                ("7", None),
                (r#"{"type":[1]}"#, Some(None)),
                (r#"{"type":"b","x":{"y":"}"}}"#, Some(Some("b".to_string()))),
            ]
        );
        assert!(for_each_element::<Typed>("[]", |_, _| panic!()));
        assert!(!for_each_element::<Typed>(r#""[1]""#, |_, _| panic!()));
        assert!(!for_each_element::<Typed>("{}", |_, _| panic!()));
    }

    #[test]
    fn members_keep_order_and_spans() {
        let text = r#"{"b": "x", "a": {"k": [1]}}"#;
        let m: Members = serde_json::from_str(text).unwrap();
        let keys: Vec<&str> = m.0.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["b", "a"]);
        let a = m.get("a").unwrap();
        assert_eq!(&text[span_of(a, text, 0)], r#"{"k": [1]}"#);
        let b = m.get("b").unwrap();
        assert_eq!(&text[str_span(b, text, 0).unwrap()], "x");
    }
}
