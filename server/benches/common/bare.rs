//! The baseline every benchmark measures against (issue 7's index, issue 12's table, the
//! reader's MB/s): one bare typed serde_json pass — memchr line split, one borrowed struct per
//! line holding the fields any reader needs (Claude Code's envelope and message, Codex's
//! `payload` kept raw), nothing built from them. Shared by `read`, `index` and `scale` so
//! their ratios have one denominator.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

/// One record as the baseline decodes it; fields are read only to make serde do the work.
#[derive(Deserialize)]
#[allow(dead_code)]
struct BareLine<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    subtype: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    uuid: Option<Cow<'a, str>>,
    #[serde(rename = "parentUuid", default, borrow)]
    parent_uuid: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    cwd: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: bool,
    #[serde(default, borrow)]
    message: Option<BareMessage<'a>>,
    /// Codex's record body, kept raw: exact span, no allocation.
    #[serde(default, borrow)]
    payload: Option<&'a RawValue>,
    #[serde(rename = "toolUseResult", default)]
    tool_use_result: Option<IgnoredAny>,
    #[serde(default)]
    data: Option<IgnoredAny>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct BareMessage<'a> {
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    role: Option<Cow<'a, str>>,
    /// Kept raw: exact span, no allocation.
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
    #[serde(default)]
    usage: Option<BareUsage>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct BareUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

/// The bare pass over `text`: returns (records decoded, their output tokens), so the work
/// cannot be optimised away.
pub fn bare_pass(text: &str) -> (usize, u64) {
    let (mut records, mut tokens) = (0, 0);
    let mut start = 0;
    let b = text.as_bytes();
    while start < b.len() {
        let end = memchr::memchr(b'\n', &b[start..]).map_or(b.len(), |n| start + n);
        if let Ok(line) = serde_json::from_str::<BareLine>(&text[start..end]) {
            records += 1;
            tokens += line
                .message
                .and_then(|m| m.usage)
                .map_or(0, |u| u.output_tokens);
        }
        start = end + 1;
    }
    (records, tokens)
}
