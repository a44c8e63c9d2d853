//! Zstandard-compressed transcripts: Codex 0.14x may keep rollouts as
//! `rollout-….jsonl.zst` (server/FORMATS.md "Codex", issue 9 item 4). They are read-only:
//! decompressed whole for `stats`, `outline` and `render`. Decoding is done by `ruzstd`, a
//! maintained pure-Rust decoder (no C toolchain needed to build the server).

use std::io::Read;

/// The zstd frame magic number as it appears in the file (RFC 8878 §3.1.1).
pub const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Most bytes a compressed transcript may decompress to (1 GiB): bounded memory on any
/// input, however well it compresses.
pub const MAX_DECOMPRESSED: u64 = 1 << 30;

/// True when `bytes` start with a zstd frame.
pub fn is_zstd(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// Decompresses every frame of `bytes`, in order. Errors: `corrupt zstd data: …`, or
/// `decompressed size exceeds 1 GiB`.
pub fn decompress(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let mut input = bytes;
    let mut out = Vec::new();
    while !input.is_empty() {
        let before = input.len();
        let decoder = ruzstd::decoding::StreamingDecoder::new(&mut input)
            .map_err(|e| format!("corrupt zstd data: {e}"))?;
        let room = MAX_DECOMPRESSED + 1 - out.len() as u64;
        decoder
            .take(room)
            .read_to_end(&mut out)
            .map_err(|e| format!("corrupt zstd data: {e}"))?;
        if out.len() as u64 > MAX_DECOMPRESSED {
            return Err("decompressed size exceeds 1 GiB".to_string());
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
}
