//! Zstandard-compressed transcripts: Codex 0.14x may keep rollouts as
//! `rollout-….jsonl.zst` (server/FORMATS.md "Codex", issue 9 item 4). They are read-only:
//! decompressed whole for `stats`, `outline` and `render`. Decoding is done by `ruzstd`, a
//! maintained pure-Rust decoder (no C toolchain needed to build the server).

use std::io::Read;

/// The zstd frame magic number as it appears in the file (RFC 8878 §3.1.1).
pub const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Most memory a compressed transcript may take once decompressed and read (1 GiB), as
/// [`memory_estimate`] counts it: bounded memory on any input, however well it compresses
/// (issue 25 item 1: the bytes alone were bounded, and 1 GiB of `{}` lines still took
/// 7.5 GB as records).
pub const MAX_DECOMPRESSED: u64 = 1 << 30;

pub use crate::source::room::{LINE_COST, memory_estimate};

/// True when `bytes` start with a zstd frame.
pub fn is_zstd(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// Decompresses every frame of `bytes`, in order, within [`MAX_DECOMPRESSED`]: see
/// [`decompress_within`].
pub fn decompress(bytes: &[u8]) -> Result<Vec<u8>, String> {
    decompress_within(bytes, MAX_DECOMPRESSED)
}

/// Decompresses every frame of `bytes`, in order, stopping as soon as the text so far would
/// take more than `budget` bytes of memory ([`memory_estimate`]): the output never grows
/// past `budget` bytes. Errors: `corrupt zstd data: …`, or `decompresses to more than the
/// N MiB a compressed transcript may take in memory (… lines, … bytes so far)`.
pub fn decompress_within(bytes: &[u8], budget: u64) -> Result<Vec<u8>, String> {
    let mut input = bytes;
    let mut out = Vec::new();
    let mut lines = 0u64;
    let mut chunk = vec![0u8; 64 * 1024];
    while !input.is_empty() {
        let before = input.len();
        let mut decoder = ruzstd::decoding::StreamingDecoder::new(&mut input)
            .map_err(|e| format!("corrupt zstd data: {e}"))?;
        loop {
            let n = match decoder.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("corrupt zstd data: {e}")),
            };
            lines += chunk[..n].iter().filter(|&&b| b == b'\n').count() as u64;
            let total = out.len() as u64 + n as u64;
            if memory_estimate(total, lines) > budget {
                return Err(format!(
                    "decompresses to more than the {} MiB a compressed transcript may take in \
                     memory ({lines} lines, {total} bytes so far): not read",
                    budget >> 20
                ));
            }
            out.extend_from_slice(&chunk[..n]);
        }
        if input.len() == before {
            break; // nothing consumed: never loop forever
        }
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `printf '{"a":1}\n' | zstd -c` (zstd 1.5.4, written for this test).
    pub(crate) const SMALL: [u8; 21] = [
        0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x58, 0x41, 0x00, 0x00, 0x7b, 0x22, 0x61, 0x22, 0x3a, 0x31,
        0x7d, 0x0a, 0xe2, 0xef, 0xec, 0xe0,
    ];

    #[test]
    fn decompresses_a_frame_and_rejects_garbage() {
        assert!(is_zstd(&SMALL));
        assert_eq!(decompress(&SMALL).unwrap(), b"{\"a\":1}\n");
        let mut two = SMALL.to_vec();
        two.extend_from_slice(&SMALL);
        assert_eq!(decompress(&two).unwrap(), b"{\"a\":1}\n{\"a\":1}\n");
        // A frame cut short.
        assert!(
            decompress(&SMALL[..12])
                .unwrap_err()
                .starts_with("corrupt zstd data")
        );
        assert!(!is_zstd(b"{\"a\":1}"));
    }

    /// One prompt line then `n` lines of `{}`, compressed (issue 25 item 1's file, smaller).
    pub(crate) fn prompt_and_empty_records(n: usize) -> Vec<u8> {
        let mut text =
            b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n".to_vec();
        for _ in 0..n {
            text.extend_from_slice(b"{}\n");
        }
        ruzstd::encoding::compress_to_vec(&text[..], ruzstd::encoding::CompressionLevel::Fastest)
    }

    /// The budget bounds the memory the lines take, not only the bytes (issue 25 item 1):
    /// 10 000 `{}` lines are 30 000 + 57 bytes but count 1 150 169 bytes; they pass a budget
    /// of that and fail one byte less, with the counts in the message.
    #[test]
    fn the_budget_counts_lines_not_only_bytes() {
        let z = prompt_and_empty_records(10_000);
        let text_len = 57 + 30_000;
        let cost = memory_estimate(text_len, 10_001);
        assert_eq!(cost, 30_057 + 112 * 10_001);
        assert_eq!(decompress_within(&z, cost).unwrap().len() as u64, text_len);
        let e = decompress_within(&z, cost - 1).unwrap_err();
        assert!(
            e.starts_with("decompresses to more than the 1 MiB a compressed transcript"),
            "{e}"
        );
        assert!(e.ends_with("lines, 30057 bytes so far): not read"), "{e}");
        // Far below the bytes alone: a budget of 1 MiB stops 30 kB of text.
        assert!(decompress_within(&z, 1 << 20).is_err());
        assert_eq!(memory_estimate(u64::MAX, 2), u64::MAX);
    }
}
