//! Tokens per second of a turn (seed 002 "Turn throughput"; DESIGN.md §4; FORMATS.md §1.9).
//!
//! Always total output tokens of the turn's output-bearing steps (main thread) divided by the
//! total decode time; never an average of per-step rates.
//!
//! * **Measured per step** (Codex 0.14x `item_completed {started_at_ms, completed_at_ms}`):
//!   when every output-bearing step has a measured first-token time
//!   ([`Step::stream_start_ms`]), decode = Σ (step end − measured first token), the end being
//!   the later of the step's last model record and its measured generation end. This is the
//!   decode time proper (no waiting for the first token, no tool time).
//! * **Measured** (Codex `task_complete` with `duration_ms` and `time_to_first_token_ms`):
//!   decode = duration − time to first token − tool execution time, where tool execution time
//!   is the union of the intervals from each tool call record's timestamp to its result
//!   record's timestamp inside the turn. Used only when every tool call of the turn has a
//!   timestamped result (else tool time cannot be excluded and the estimate below is used).
//!   Codex records the time to first token of the turn's first API call only, so on a turn with
//!   several API calls the later calls' waits stay in the decode time: the figure is then a
//!   lower bound of the decode speed.
//! * **Estimate** (only row timestamps, Claude Code): per output-bearing step, decode ≈ the
//!   step's last record − its request time (latest non-model record before its first record,
//!   FORMATS.md §1.9 recipe); this includes time to first token, so it is a lower bound too.
//!   Under [`MIN_ESTIMATE_TOKENS`] output tokens the wait dominates and no estimate is given.
//! * **None** while the turn is in flight (the figure belongs to the closing receipt), when
//!   there is no output-bearing step, when an output-bearing step's count is a
//!   streaming placeholder (a wrong figure is worse than none), or when a step lacks timing.

use super::{Step, Throughput};

/// [`Throughput::None`] reason: no main-thread step of the turn has output tokens.
pub const NO_OUTPUT: &str = "no output-bearing responses";
/// [`Throughput::None`] reason: the turn has responses but the file records no token counts
/// for any of them (Antigravity CLI; issue 21 item 6: "not recorded", never 0).
pub const NOT_RECORDED: &str = "token counts not recorded: the agent's file holds none";
/// [`Throughput::None`] reason: an output-bearing step's count is a streaming placeholder.
pub const PLACEHOLDERS: &str = "output counts are streaming placeholders";
/// [`Throughput::None`] reason: an output-bearing step has no request or end timestamp.
pub const MISSING_TIMESTAMPS: &str = "missing timestamps";
/// [`Throughput::None`] reason: an estimate over fewer than [`MIN_ESTIMATE_TOKENS`] output
/// tokens, where the wait for the first token (inside every estimate) dominates: a one-word
/// answer after a 2 s wait read `≈1.1 tok/s` (issue 20 item 10).
pub const TOO_FEW_TOKENS: &str = "too few output tokens: the wait for the first token dominates";
/// The least output tokens of a turn for which an estimate (decode time from row timestamps,
/// time to first token included) is shown (issue 20 item 10). Measured figures, whose decode
/// time excludes the wait, have no such floor.
pub const MIN_ESTIMATE_TOKENS: u64 = 50;
/// [`Throughput::None`] reason: a turn still in flight has no closing figure yet (seed 002: the rate belongs to the closing
/// receipt).
pub const IN_FLIGHT: &str = "turn in flight";

/// Throughput of one turn. `steps` are the turn's main-thread steps; `measured` is the turn's
/// `(duration_ms, time_to_first_token_ms)` when the format recorded both; `tools` the turn's
/// main-thread tool calls as `(call timestamp, result timestamp)` (either may be missing).
pub fn of_turn(
    steps: &[&Step],
    measured: Option<(u64, u64)>,
    tools: &[(Option<i64>, Option<i64>)],
) -> Throughput {
    let bearing: Vec<&Step> = steps
        .iter()
        .copied()
        .filter(|s| s.usage.output > 0)
        .collect();
    if bearing.is_empty() {
        if !steps.is_empty() && steps.iter().all(|s| !s.usage_recorded) {
            return Throughput::None {
                reason: NOT_RECORDED,
            };
        }
        return Throughput::None { reason: NO_OUTPUT };
    }
    if bearing.iter().any(|s| !s.output_final) {
        return Throughput::None {
            reason: PLACEHOLDERS,
        };
    }
    // Saturating, as every token sum (issue 25 item 10).
    let tokens: u64 = bearing
        .iter()
        .fold(0u64, |t, s| t.saturating_add(s.usage.output));
    if bearing.iter().all(|s| s.stream_start_ms.is_some()) {
        let mut decode: u64 = 0;
        for s in &bearing {
            if let (Some(a), Some(b)) = (s.stream_start_ms, s.end_ms)
                && b > a
            {
                decode += (b - a) as u64;
            }
        }
        if decode > 0 {
            return Throughput::Measured {
                tok_per_s: rate(tokens, decode),
                tokens,
                decode_ms: decode,
            };
        }
    }
    if let Some((duration, ttft)) = measured
        && let Some(tool_ms) = tool_time(tools)
    {
        let decode = duration.saturating_sub(ttft).saturating_sub(tool_ms);
        if decode > 0 {
            return Throughput::Measured {
                tok_per_s: rate(tokens, decode),
                tokens,
                decode_ms: decode,
            };
        }
    }
    let mut decode: u64 = 0;
    for s in &bearing {
        match (s.request_ms, s.end_ms) {
            (Some(r), Some(e)) if e > r => decode += (e - r) as u64,
            _ => {
                return Throughput::None {
                    reason: MISSING_TIMESTAMPS,
                };
            }
        }
    }
    if tokens < MIN_ESTIMATE_TOKENS {
        return Throughput::None {
            reason: TOO_FEW_TOKENS,
        };
    }
    Throughput::Estimate {
        tok_per_s: rate(tokens, decode),
        tokens,
        decode_ms: decode,
    }
}

fn rate(tokens: u64, ms: u64) -> f64 {
    tokens as f64 * 1000.0 / ms as f64
}

/// Total time covered by the tool intervals (overlapping parallel calls counted once), or
/// `None` when a call or its result has no timestamp.
fn tool_time(tools: &[(Option<i64>, Option<i64>)]) -> Option<u64> {
    let mut iv: Vec<(i64, i64)> = Vec::with_capacity(tools.len());
    for &(a, b) in tools {
        let (a, b) = (a?, b?);
        if b > a {
            iv.push((a, b));
        }
    }
    iv.sort_unstable();
    let mut total: u64 = 0;
    let mut cur: Option<(i64, i64)> = None;
    for (a, b) in iv {
        cur = match cur {
            Some((ca, cb)) if a <= cb => Some((ca, cb.max(b))),
            Some((ca, cb)) => {
                total += (cb - ca) as u64;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some((ca, cb)) = cur {
        total += (cb - ca) as u64;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_time_merges_overlaps() {
        assert_eq!(
            tool_time(&[
                (Some(0), Some(10)),
                (Some(5), Some(20)),
                (Some(30), Some(35))
            ]),
            Some(25)
        );
        assert_eq!(tool_time(&[(Some(0), None)]), None);
        assert_eq!(tool_time(&[]), Some(0));
    }

    fn step(output: u64, request_ms: i64, end_ms: i64) -> Step {
        Step {
            entries: Vec::new(),
            usage: crate::model::Usage {
                output,
                ..Default::default()
            },
            usage_recorded: true,
            advisor_usage: crate::model::Usage::default(),
            output_final: true,
            end_turn: true,
            start_ms: Some(request_ms + 100),
            end_ms: Some(end_ms),
            request_ms: Some(request_ms),
            stream_start_ms: None,
            tool_calls: 0,
            cost_usd: None,
            sidechain: false,
        }
    }

    /// A one-word answer after a 2 s wait has no estimate; 50 tokens in 2 s have one (25).
    #[test]
    fn an_estimate_needs_enough_tokens_to_outweigh_the_wait() {
        let few = step(2, 0, 1_800);
        assert!(matches!(
            of_turn(&[&few], None, &[]),
            Throughput::None {
                reason: TOO_FEW_TOKENS
            }
        ));
        let enough = step(50, 0, 2_000);
        match of_turn(&[&enough], None, &[]) {
            Throughput::Estimate { tok_per_s, .. } => assert_eq!(tok_per_s, 25.0),
            other => panic!("{other:?}"),
        }
    }
}
