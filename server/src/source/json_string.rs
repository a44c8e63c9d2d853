//! JSON string literals inside the source: decoding, and mapping decoded-string offsets back
//! to raw source offsets (FORMATS.md §0: highlighted text sits inside JSON strings).

use std::borrow::Cow;

/// Decodes the raw contents of a JSON string literal (the bytes between the quotes).
///
/// Escapes (`\n`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\t`, `\uXXXX`, surrogate pairs) are
/// resolved. A lone surrogate escape (`\udcb2`) or a malformed escape becomes U+FFFD; this
/// never fails. Borrows `raw` when it holds no backslash.
pub fn decode(raw: &str) -> Cow<'_, str> {
    let Some(first) = memchr::memchr(b'\\', raw.as_bytes()) else {
        return Cow::Borrowed(raw);
    };
    let bytes = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    out.push_str(&raw[..first]);
    let mut i = first;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            let next = memchr::memchr(b'\\', &bytes[i..]).map_or(bytes.len(), |n| i + n);
            out.push_str(&raw[i..next]);
            i = next;
            continue;
        }
        let (ch, len) = decode_escape(bytes, i);
        out.push(ch);
        i += len;
    }
    Cow::Owned(out)
}

/// Replaces, in JSON text, every lone surrogate escape (`\ud800`–`\udfff` not part of a
/// high+low pair) by `\ufffd`, in place (same length, so offsets stay valid); true when it
/// replaced one. serde refuses lone surrogates in decoded strings: a record holding one is
/// read again from a patched copy (`formats::claude_code`), and a message holding one is
/// patched before tower-lsp-server decodes it (`lsp::transport`: it stopped the server).
pub fn patch_lone_surrogates(b: &mut [u8]) -> bool {
    let mut patched = false;
    let mut i = 0;
    while i < b.len() {
        let Some(n) = memchr::memchr(b'\\', &b[i..]) else {
            break;
        };
        let at = i + n;
        if b.get(at + 1) != Some(&b'u') {
            i = at + 2;
            continue;
        }
        let Some(cp) = hex4(b, at + 2) else {
            i = at + 2;
            continue;
        };
        let lone = if (0xD800..0xDC00).contains(&cp) {
            let paired = b.get(at + 6) == Some(&b'\\')
                && b.get(at + 7) == Some(&b'u')
                && hex4(b, at + 8).is_some_and(|lo| (0xDC00..0xE000).contains(&lo));
            if paired {
                i = at + 12;
                continue;
            }
            true
        } else {
            (0xDC00..0xE000).contains(&cp)
        };
        if lone {
            b[at..at + 6].copy_from_slice(b"\\ufffd");
            patched = true;
        }
        i = at + 6;
    }
    patched
}

/// Where [`decode_literal_in_place`] stopped before the end of a string literal: the first
/// byte `serde_json` would refuse there, or the end of the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped {
    /// Length of the text decoded before `at` (it is `buf[..decoded]`).
    pub decoded: usize,
    /// Offset in the buffer of the refused byte: a control character (U+0000–U+001F), the
    /// first byte of invalid UTF-8, the backslash of a malformed escape, or the buffer's end
    /// (no closing quote). Bytes from here on are untouched.
    pub at: usize,
}

/// Decodes and checks, in one pass, the JSON string literal whose contents start at
/// `buf[from]` (just after its opening quote), writing the decoded text to the front of `buf`
/// over whatever was there, without allocating (issue 12: a 100 MB `didOpen` text was checked
/// for UTF-8, scanned by serde, then decoded: three passes).
///
/// `Ok((n, close))`: the text is `buf[..n]` and is UTF-8; the closing quote is at `close`,
/// and the bytes from there on are untouched. It is the text `serde_json` decodes from the
/// literal, except that a lone surrogate escape (`\ud800`, which `serde_json` refuses)
/// becomes U+FFFD, as in [`decode`].
///
/// `Err(Stopped)` where `serde_json` would refuse the literal (see [`Stopped::at`]); the text
/// before that point is decoded, so [`encode_in_place_before`] can put an equivalent literal
/// back. Every escape is at least as long as what it decodes to, so the writing never passes
/// the reading.
pub fn decode_literal_in_place(buf: &mut [u8], from: usize) -> Result<(usize, usize), Stopped> {
    decode_literal_with(buf, from, compacting())
}

/// Whether this processor runs the compacting block path ([`blocks`]): x86-64 with SSSE3
/// (detected once at run time, then a cached flag).
fn compacting() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("ssse3")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// [`decode_literal_in_place`], with the compacting block path or without it (`compact`;
/// tests run both on every processor that has SSSE3).
fn decode_literal_with(
    buf: &mut [u8],
    from: usize,
    compact: bool,
) -> Result<(usize, usize), Stopped> {
    let len = buf.len();
    let (mut w, mut r) = (0, from);
    loop {
        // Whole 64-byte blocks of plain bytes and two-byte escapes first, then what they
        // leave (a closing quote, `\u`, a control character, non-ASCII, the last bytes) below.
        (w, r) = blocks(buf, w, r, compact);
        // Plain ASCII eight bytes at a time, up to the next byte that needs a look (JSONL
        // inside a JSON string has an escape every ten bytes or so: no call per run).
        while r + 8 <= len {
            let word = u64::from_le_bytes(buf[r..r + 8].try_into().unwrap_or([0; 8]));
            let at = special_at(word);
            if r - w >= 8 {
                // All eight bytes: those past `at` land below `r`, on bytes already read,
                // and are overwritten next.
                buf[w..w + 8].copy_from_slice(&word.to_le_bytes());
            } else {
                buf.copy_within(r..r + at, w);
            }
            w += at;
            r += at;
            if at < 8 {
                break;
            }
        }
        let stop = Stopped { decoded: w, at: r };
        let Some(&c) = buf.get(r) else {
            return Err(stop);
        };
        match c {
            b'"' => return Ok((w, r)),
            b'\\' => {
                let simple = match buf.get(r + 1) {
                    Some(b'"') => b'"',
                    Some(b'\\') => b'\\',
                    Some(b'/') => b'/',
                    Some(b'n') => b'\n',
                    Some(b't') => b'\t',
                    Some(b'r') => b'\r',
                    Some(b'b') => 0x08,
                    Some(b'f') => 0x0c,
                    Some(b'u') => 0,
                    _ => return Err(stop),
                };
                if simple != 0 {
                    buf[w] = simple;
                    w += 1;
                    r += 2;
                    continue;
                }
                let Some(hi) = hex4(buf, r + 2) else {
                    return Err(stop);
                };
                let (ch, n) = if (0xD800..0xDC00).contains(&hi) {
                    match (buf.get(r + 6..r + 8), hex4(buf, r + 8)) {
                        (Some(b"\\u"), Some(lo)) if (0xDC00..0xE000).contains(&lo) => {
                            let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                            (char::from_u32(cp).unwrap_or('\u{FFFD}'), 12)
                        }
                        _ => ('\u{FFFD}', 6),
                    }
                } else {
                    (char::from_u32(hi).unwrap_or('\u{FFFD}'), 6)
                };
                let mut utf8 = [0u8; 4];
                let ch = ch.encode_utf8(&mut utf8).as_bytes();
                // At most 4 bytes for at least 6 read: `w + 4 <= r + 6`.
                buf[w..w + ch.len()].copy_from_slice(ch);
                w += ch.len();
                r += n;
            }
            0..=0x1f => return Err(stop),
            0x80.. => {
                // A run of non-ASCII bytes: every byte of a multi-byte character is >= 0x80,
                // so a valid run holds whole characters.
                let end = buf[r..]
                    .iter()
                    .position(|&b| b < 0x80)
                    .map_or(len, |n| r + n);
                let valid = match std::str::from_utf8(&buf[r..end]) {
                    Ok(_) => end - r,
                    Err(e) => e.valid_up_to(),
                };
                buf.copy_within(r..r + valid, w);
                w += valid;
                r += valid;
                if r < end {
                    return Err(Stopped { decoded: w, at: r });
                }
            }
            _ => {
                // A plain byte in the last seven.
                buf[w] = c;
                w += 1;
                r += 1;
            }
        }
    }
}

/// What the byte after a backslash stands for in the two-byte escapes (`\"` `\\` `\/` `\b`
/// `\f` `\n` `\r` `\t`); 0 for `u` and for bytes that make no escape.
static UNESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 0x08;
    t[b'f' as usize] = 0x0c;
    t[b'n' as usize] = b'\n';
    t[b'r' as usize] = b'\r';
    t[b't' as usize] = b'\t';
    t
};

/// The fast part of [`decode_literal_in_place`]: decodes whole 64-byte blocks read at `r`,
/// writing at `w`, as long as they hold only plain ASCII, valid UTF-8 characters and
/// two-byte escapes; returns the new `(w, r)`, stopped at the first byte that needs the
/// careful path (a quote that is not escaped, `\u`, a malformed escape, a control character,
/// invalid UTF-8 or a character across the block's end) or where fewer than 80 bytes are left.
///
/// `compact` (SSSE3, checked by the caller): a block whose bytes are all of those kinds is
/// decoded without a branch per escape ([`compact_block`]: issue 12, JSONL inside a JSON
/// string has an escape every ten bytes or so, and taking them one by one cost 17 % of the
/// CPU of opening a 1 GB transcript). Other blocks, and every block without SSSE3, go escape
/// by escape ([`block_by_escapes`]).
#[cfg(target_arch = "x86_64")]
fn blocks(buf: &mut [u8], w: usize, r: usize, compact: bool) -> (usize, usize) {
    if compact {
        // SAFETY: the caller checked that the processor has SSSE3.
        unsafe { blocks_ssse3(buf, w, r) }
    } else {
        // SAFETY: no feature beyond x86-64's own SSE2 is used.
        unsafe { blocks_with::<false>(buf, w, r) }
    }
}

/// [`blocks_with`] compiled with SSSE3.
///
/// # Safety
/// The processor must have SSSE3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn blocks_ssse3(buf: &mut [u8], w: usize, r: usize) -> (usize, usize) {
    // SAFETY: SSSE3 is there (the caller's promise).
    unsafe { blocks_with::<true>(buf, w, r) }
}

/// The loop of [`blocks`]; `COMPACT` tries [`compact_block`] on each block first.
///
/// # Safety
/// With `COMPACT`, the processor must have SSSE3.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn blocks_with<const COMPACT: bool>(
    buf: &mut [u8],
    mut w: usize,
    mut r: usize,
) -> (usize, usize) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let len = buf.len();
    let base = buf.as_mut_ptr();
    while r + 80 <= len && r - w >= 16 {
        // SAFETY: the 64 bytes at `r` are inside the buffer (`r + 80 <= len`); SSE2 is part
        // of x86-64; unaligned loads are allowed.
        let masks = unsafe {
            let mut m = Masks::default();
            for k in 0..4 {
                let v = _mm_loadu_si128(base.add(r + 16 * k).cast::<__m128i>());
                let bit = |x: __m128i| u64::from(_mm_movemask_epi8(x) as u32 & 0xffff) << (16 * k);
                m.backslash |= bit(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)));
                m.quote |= bit(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)));
                // Signed: below 0x20 are the control bytes and every byte >= 0x80.
                m.low |= bit(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
                m.high |= bit(v);
            }
            m
        };
        if COMPACT {
            // SAFETY: as for `blocks`, and SSSE3 is there (the caller's promise).
            if let Some((dw, dr)) = unsafe { compact_block(base, w, r, &masks) } {
                w += dw;
                r += dr;
                continue;
            }
        }
        // SAFETY: `r + 80 <= len` and `r - w >= 16`, as `block_by_escapes` needs.
        let (dw, dr) = unsafe { block_by_escapes(base, w, r, &masks) };
        w += dw;
        r += dr;
        if dr < 64 {
            // Stopped at a byte for the careful path.
            break;
        }
    }
    (w, r)
}

/// One bit per byte of a 64-byte block (bit `i` for byte `i`).
#[derive(Default)]
struct Masks {
    /// `\`.
    backslash: u64,
    /// `"`.
    quote: u64,
    /// Below 0x20 or above 0x7f (signed below 0x20).
    low: u64,
    /// Above 0x7f.
    high: u64,
}

/// Decodes one 64-byte block at `r` escape by escape, writing at `w`: `(bytes written,
/// bytes read)`, fewer than 64 read when it stopped at a byte for the careful path.
///
/// Each escape is found from the block's bits, so the bytes between two escapes are looked
/// at once (issue 12: the careful path decoded a 100 MB `didOpen` at well under 1 GB/s,
/// mispredicting a branch at nearly every escape); a non-ASCII character is checked where it
/// stands and stays in the run (it sent the whole block to the careful path, a third of a
/// 100 MB `didOpen`'s decoding time). Runs are copied 16 bytes at a time.
///
/// # Safety
/// `base` points to a buffer of at least `r + 80` bytes, and `r - w >= 16`: every read is
/// below `r + 80` — the 64 bytes of the block, an escape's second byte (at most `r + 64`), a
/// character's bytes (at most `r + 63`), a 16-byte run chunk starting before the run's end
/// (at most `r + 64`), so ending before `r + 80`; every write is at `w`, at most 16 bytes
/// past the start of a chunk read 16 or more bytes further on, so inside the buffer, and
/// only over bytes already read.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn block_by_escapes(base: *mut u8, w: usize, r: usize, m: &Masks) -> (usize, usize) {
    let (backslash, high) = (m.backslash, m.high);
    let mut stops = backslash | m.quote | m.low;
    // Bytes of the block consumed (written, or the start of the run being read).
    let mut p = 0usize;
    let mut out = w;
    // SAFETY: see the function's contract.
    unsafe {
        loop {
            // `p < 64` here.
            let s = stops & (u64::MAX << p);
            let q = if s == 0 {
                64
            } else {
                s.trailing_zeros() as usize
            };
            if q < 64 && high >> q & 1 == 1 {
                // A character: part of the run when valid and inside the block.
                match char_len(base.add(r + q)) {
                    Some(n) if q + n <= 64 => {
                        stops &= !(((1u64 << n) - 1) << q);
                        continue;
                    }
                    _ => {}
                }
            }
            // The run `p..q`, 16 bytes at a time.
            let (src, dst) = (base.add(r + p), base.add(out));
            std::ptr::copy_nonoverlapping(src, dst, 16);
            let mut k = 16;
            while k < q - p {
                std::ptr::copy_nonoverlapping(src.add(k), dst.add(k), 16);
                k += 16;
            }
            out += q - p;
            p = q;
            if q == 64 || backslash >> q & 1 == 0 {
                break;
            }
            let d = UNESCAPE[usize::from(*base.add(r + q + 1))];
            if d == 0 {
                break;
            }
            *base.add(out) = d;
            out += 1;
            p = q + 2;
            if p >= 64 {
                break;
            }
        }
    }
    (out - w, p)
}

/// Bits of the even bytes of a block.
const EVEN_BYTES: u64 = 0x5555_5555_5555_5555;

/// Of the backslashes of a block that starts outside an escape (bit `i` for byte `i`): the
/// ones that start an escape, and the bytes they escape (the byte after each; one past the
/// block for a backslash at byte 63 is left out). In a run of backslashes every other one
/// starts an escape, from the first on; computed without a loop (carries of an addition
/// mark the runs that start at odd bytes, as in simdjson's escape scanner).
fn escapes(backslash: u64) -> (u64, u64) {
    let follows = backslash << 1;
    let odd_starts = backslash & !EVEN_BYTES & !follows;
    let runs = odd_starts.wrapping_add(backslash);
    let escaped = (EVEN_BYTES ^ (runs << 1)) & follows;
    (backslash & !escaped, escaped)
}

/// For each set of bytes to drop from an 8-byte group (bit `i`: byte `i`), the `pshufb`
/// indices of the bytes kept, in order (0x80, a zero byte, after them).
static KEPT_INDICES: [[u8; 8]; 256] = {
    let mut t = [[0x80u8; 8]; 256];
    let mut m = 0;
    while m < 256 {
        let (mut i, mut j) = (0, 0);
        while i < 8 {
            if m >> i & 1 == 0 {
                t[m][j] = i as u8;
                j += 1;
            }
            i += 1;
        }
        m += 1;
    }
    t
};

/// For each set of bytes to drop from an 8-byte group, how many are kept.
static KEPT_COUNT: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut m = 0;
    while m < 256 {
        t[m] = 8 - (m as u32).count_ones() as u8;
        m += 1;
    }
    t
};

/// Decodes the 64-byte block at `r` to `w` without a branch per escape, when all its bytes
/// are plain ASCII, whole valid UTF-8 characters, and two-byte escapes (`\"` `\\` `\/` `\b`
/// `\f` `\n` `\r` `\t`): `Some((bytes written, bytes read))`, 63 read when byte 63 starts an
/// escape (the next block starts with it). `None`, nothing written, for any other block (a
/// quote that is not escaped, a control character, `\u` or a malformed escape, invalid UTF-8
/// or a character across the block's end): [`block_by_escapes`] takes it.
///
/// The escapes come from the backslash bits at once ([`escapes`]); the few escapes that
/// decode to another byte (`\n`, `\t`, …) are written over their second byte in place;
/// then the escapes' backslashes are dropped from each 8-byte group with one shuffle
/// (`pshufb` by a table of the bytes kept), and the group stored 8 bytes wide.
///
/// # Safety
/// The processor has SSSE3; `base` points to a buffer of at least `r + 80` bytes, and
/// `r - w >= 16`: each 16 bytes of the block are loaded before their own two groups are
/// stored, and the stores of the groups before them end at most at `w + 16 k <= r + 16 k -
/// 16`, below them; the last store ends at most at `w + 64 <= r + 48`, below the byte 63
/// that may be read again.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn compact_block(base: *mut u8, w: usize, r: usize, m: &Masks) -> Option<(usize, usize)> {
    use std::arch::x86_64::{
        __m128i, _mm_loadl_epi64, _mm_loadu_si128, _mm_shuffle_epi8, _mm_srli_si128,
        _mm_storel_epi64,
    };
    let (starts, escaped) = escapes(m.backslash);
    let control = m.low & !m.high;
    if control != 0 || m.quote & !escaped != 0 {
        return None;
    }
    // SAFETY (the rest): reads are inside the block plus three bytes (`char_len`), below
    // `r + 80`; writes are over escaped bytes of the block (loaded only after that) and the
    // stores of the contract.
    unsafe {
        // Every non-ASCII byte belongs to a valid character inside the block.
        let mut high = m.high;
        while high != 0 {
            let q = high.trailing_zeros() as usize;
            match char_len(base.add(r + q)) {
                Some(n) if q + n <= 64 => high &= !(((1u64 << n) - 1) << q),
                _ => return None,
            }
        }
        // Escaped bytes other than `"` and `\\`: `/`, the letters of `\b \f \n \r \t`, or a
        // byte that makes no two-byte escape (`u` among them).
        let other = escaped & !(m.quote | m.backslash);
        let mut o = other;
        while o != 0 {
            if UNESCAPE[usize::from(*base.add(r + o.trailing_zeros() as usize))] == 0 {
                return None;
            }
            o &= o - 1;
        }
        let mut o = other;
        while o != 0 {
            let at = base.add(r + o.trailing_zeros() as usize);
            *at = UNESCAPE[usize::from(*at)];
            o &= o - 1;
        }
        let mut out = base.add(w);
        for k in 0..4 {
            let v = _mm_loadu_si128(base.add(r + 16 * k).cast::<__m128i>());
            for (half, v) in [v, _mm_srli_si128::<8>(v)].into_iter().enumerate() {
                let drop = usize::from((starts >> (16 * k + 8 * half)) as u8);
                let keep = _mm_loadl_epi64(KEPT_INDICES[drop].as_ptr().cast::<__m128i>());
                _mm_storel_epi64(out.cast::<__m128i>(), _mm_shuffle_epi8(v, keep));
                out = out.add(usize::from(KEPT_COUNT[drop]));
            }
        }
        let read = if starts >> 63 == 1 { 63 } else { 64 };
        Some((out.offset_from(base) as usize - w, read))
    }
}

/// Length of the valid UTF-8 character starting with the non-ASCII byte at `at` (RFC 3629:
/// no overlong forms, no surrogates, nothing above U+10FFFF), or `None`.
///
/// # Safety
/// The three bytes after `at` must be readable.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn char_len(at: *const u8) -> Option<usize> {
    // SAFETY: the caller makes `at..at + 4` readable.
    let b = unsafe { [*at, *at.add(1), *at.add(2), *at.add(3)] };
    let cont = |x: u8| x & 0xC0 == 0x80;
    let n = match b[0] {
        0xC2..=0xDF => 2,
        0xE0 if (0xA0..=0xBF).contains(&b[1]) => 3,
        0xE1..=0xEC | 0xEE..=0xEF if cont(b[1]) => 3,
        0xED if (0x80..=0x9F).contains(&b[1]) => 3,
        0xF0 if (0x90..=0xBF).contains(&b[1]) => 4,
        0xF1..=0xF3 if cont(b[1]) => 4,
        0xF4 if (0x80..=0x8F).contains(&b[1]) => 4,
        _ => return None,
    };
    let ok = match n {
        2 => cont(b[1]),
        3 => cont(b[2]),
        _ => cont(b[2]) && cont(b[3]),
    };
    ok.then_some(n)
}

/// Elsewhere the careful path does all the work.
#[cfg(not(target_arch = "x86_64"))]
fn blocks(_buf: &mut [u8], w: usize, r: usize, _compact: bool) -> (usize, usize) {
    (w, r)
}

/// Index of the first byte among the eight of `word` (little-endian: the first byte is the
/// lowest) that plain copying must stop at: `"`, `\`, a control character (< 0x20) or a
/// non-ASCII byte; 8 when there is none. Each zero-byte test may flag bytes above a true
/// hit (borrows), never below one, so the lowest flagged byte is always exact.
fn special_at(word: u64) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x;
    let backslash = zero(word ^ (ONES * u64::from(b'\\')));
    let quote = zero(word ^ (ONES * u64::from(b'"')));
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let found = (backslash | quote | control | word) & HIGHS;
    (found.trailing_zeros() / 8) as usize
}

/// Writes the contents of the JSON string literal `serde_json` writes for the text
/// `buf[..n]` (escapes `"`, `\` and control characters; `\b \t \n \f \r`, else `\u00XX`) so
/// that they end at `end` (exclusive), reading the text back to front; returns where they
/// start. `None` (nothing written) when they would not fit: they need `end` bytes at most.
///
/// Undoes [`decode_literal_in_place`] when the message turns out not to be what the transport
/// takes out (issue 12): the literal written is never longer than the one decoded, so it fits
/// where that one was.
pub fn encode_in_place_before(buf: &mut [u8], n: usize, end: usize) -> Option<usize> {
    let escaped = |b: u8| match b {
        b'"' | b'\\' | 0x08 | 0x09 | 0x0a | 0x0c | 0x0d => 2,
        0..=0x1f => 6,
        _ => 1,
    };
    let total: usize = buf[..n].iter().map(|&b| escaped(b)).sum();
    if n > end || total > end || end > buf.len() {
        return None;
    }
    // Each byte read writes at least one: the gap between writing and reading only shrinks,
    // to `end - total >= 0` at the end, so no unread byte is overwritten.
    let mut w = end;
    for r in (0..n).rev() {
        let b = buf[r];
        let short = match b {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            0x08 => Some(b'b'),
            0x09 => Some(b't'),
            0x0a => Some(b'n'),
            0x0c => Some(b'f'),
            0x0d => Some(b'r'),
            _ => None,
        };
        match short {
            Some(s) => {
                buf[w - 2..w].copy_from_slice(&[b'\\', s]);
                w -= 2;
            }
            None if b < 0x20 => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let e = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 15)],
                ];
                buf[w - 6..w].copy_from_slice(&e);
                w -= 6;
            }
            None => {
                buf[w - 1] = b;
                w -= 1;
            }
        }
    }
    Some(w)
}

/// Decodes the escape starting at `bytes[i] == b'\\'`; returns the character and the number of
/// source bytes the escape spans. Malformed escapes yield U+FFFD: over the backslash and the
/// character after it (`\q`, `\é`), over `\u` when 4 hex digits do not follow, over a
/// whole `\uXXXX` lone surrogate, over a lone backslash at the end. The span always ends on a
/// char boundary when `bytes` is a `str`.
pub fn decode_escape(bytes: &[u8], i: usize) -> (char, usize) {
    let Some(&c) = bytes.get(i + 1) else {
        return ('\u{FFFD}', 1);
    };
    match c {
        b'"' => ('"', 2),
        b'\\' => ('\\', 2),
        b'/' => ('/', 2),
        b'b' => ('\u{8}', 2),
        b'f' => ('\u{c}', 2),
        b'n' => ('\n', 2),
        b'r' => ('\r', 2),
        b't' => ('\t', 2),
        b'u' => {
            let Some(hi) = hex4(bytes, i + 2) else {
                return ('\u{FFFD}', 2);
            };
            if (0xD800..0xDC00).contains(&hi) {
                if bytes.get(i + 6) == Some(&b'\\')
                    && bytes.get(i + 7) == Some(&b'u')
                    && let Some(lo) = hex4(bytes, i + 8)
                    && (0xDC00..0xE000).contains(&lo)
                {
                    let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    return (char::from_u32(cp).unwrap_or('\u{FFFD}'), 12);
                }
                ('\u{FFFD}', 6)
            } else {
                (char::from_u32(hi).unwrap_or('\u{FFFD}'), 6)
            }
        }
        // Any other character after the backslash: consume it whole, so decoding resumes on
        // a char boundary (`\é` is 3 bytes).
        _ => ('\u{FFFD}', 1 + utf8_len(c)),
    }
}

/// Length in bytes of the UTF-8 sequence whose leading byte is `b`.
fn utf8_len(b: u8) -> usize {
    match b {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// Maps an offset in the decoded string to an offset in the raw literal contents `raw` (the
/// bytes between the quotes; both offsets in bytes, relative to their own string).
///
/// Plain bytes map one to one (an offset inside a multi-byte character maps to the
/// character's start); an offset at or inside the character an escape decodes to
/// (`\n`, `\"`, `\u00e9`, a `\ud83d\ude00` pair, or a malformed escape decoded as U+FFFD)
/// maps to the escape's backslash. Offsets past the decoded end map to `raw.len()`. One
/// forward pass over `raw`, O(bytes); for many ordered lookups use [`RawMapper`].
///
/// Used to put a semantic token on exactly the characters of a final answer inside a JSON
/// line, and by the view's source map to point into the raw line (FORMATS.md §0).
pub fn decoded_to_raw(raw: &str, decoded_offset: usize) -> usize {
    RawMapper::new(raw).to_raw(decoded_offset)
}

/// Maps an offset in the raw literal contents `raw` to the offset in the decoded string (both
/// in bytes). An offset inside an escape maps to the start of the character it decodes to,
/// one inside a multi-byte character to that character's start; offsets past `raw.len()` map
/// to the decoded length. O(bytes up to the offset).
pub fn raw_to_decoded(raw: &str, raw_offset: usize) -> usize {
    let bytes = raw.as_bytes();
    let mut target = raw_offset.min(bytes.len());
    while !raw.is_char_boundary(target) {
        target -= 1;
    }
    let (mut r, mut d) = (0, 0);
    while r < target {
        let Some(n) = memchr::memchr(b'\\', &bytes[r..target]) else {
            return d + (target - r);
        };
        r += n;
        d += n;
        if r == target {
            break;
        }
        let (ch, len) = decode_escape(bytes, r);
        if r + len > target {
            break; // inside the escape
        }
        r += len;
        d += ch.len_utf8();
    }
    d
}

/// Answers many decoded -> raw offset lookups on one literal in a single forward pass:
/// queries with non-decreasing decoded offsets cost O(raw bytes passed) in total, however
/// many there are. A smaller offset than the previous query restarts from the beginning of
/// the literal (correct, only slower). Results are those of [`decoded_to_raw`].
#[derive(Debug, Clone)]
pub struct RawMapper<'r> {
    raw: &'r str,
    /// Current raw offset and the decoded offset it corresponds to; always at a piece
    /// boundary or inside a run of plain bytes, never inside an escape.
    raw_at: usize,
    decoded_at: usize,
    /// Offset of the next backslash at or after `raw_at` (`raw.len()` when none), cached so a
    /// long run of plain bytes is scanned once, not once per query.
    next_escape: usize,
}

impl<'r> RawMapper<'r> {
    /// A mapper over the raw literal contents `raw` (escapes undecoded).
    pub fn new(raw: &'r str) -> RawMapper<'r> {
        RawMapper {
            raw,
            raw_at: 0,
            decoded_at: 0,
            next_escape: memchr::memchr(b'\\', raw.as_bytes()).unwrap_or(raw.len()),
        }
    }

    /// The raw offset of decoded offset `decoded_offset` (see [`decoded_to_raw`]).
    pub fn to_raw(&mut self, decoded_offset: usize) -> usize {
        if decoded_offset < self.decoded_at {
            *self = RawMapper::new(self.raw);
        }
        loop {
            // A run of plain bytes up to the next escape (or the end).
            let run = self.next_escape - self.raw_at;
            if decoded_offset - self.decoded_at <= run {
                let mut step = decoded_offset - self.decoded_at;
                // Plain bytes map one to one; inside a character, back to its start.
                while !self.raw.is_char_boundary(self.raw_at + step) {
                    step -= 1;
                }
                self.raw_at += step;
                self.decoded_at += step;
                return self.raw_at;
            }
            self.raw_at = self.next_escape;
            self.decoded_at += run;
            if self.raw_at >= self.raw.len() {
                return self.raw.len();
            }
            let (ch, len) = decode_escape(self.raw.as_bytes(), self.raw_at);
            if decoded_offset < self.decoded_at + ch.len_utf8() {
                return self.raw_at; // at or inside the escape's character
            }
            self.raw_at += len;
            self.decoded_at += ch.len_utf8();
            self.next_escape = memchr::memchr(b'\\', &self.raw.as_bytes()[self.raw_at..])
                .map_or(self.raw.len(), |n| self.raw_at + n);
        }
    }
}

fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at + 4)?;
    let mut v = 0u32;
    for &d in digits {
        v = v * 16 + (d as char).to_digit(16)?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_pairs() {
        assert_eq!(decode(r#"a\"b\\c\nd"#), "a\"b\\c\nd");
        assert_eq!(decode(r"\u00e9\ud83d\ude00!"), "é😀!");
        assert!(matches!(decode("plain é"), Cow::Borrowed(_)));
    }

    /// Decodes `lit` (raw literal contents) placed after `prefix` and followed by `"` and
    /// `suffix`, the way the transport does.
    fn in_place(
        prefix: &str,
        lit: &[u8],
        suffix: &str,
    ) -> (Vec<u8>, Result<(usize, usize), Stopped>) {
        let mut buf = prefix.as_bytes().to_vec();
        buf.push(b'"');
        buf.extend_from_slice(lit);
        buf.push(b'"');
        buf.extend_from_slice(suffix.as_bytes());
        let mut escape_by_escape = buf.clone();
        let got = decode_literal_in_place(&mut buf, prefix.len() + 1);
        // The compacting block path (where the processor has it) and the one without it
        // leave the same bytes and stop at the same place.
        let plain = decode_literal_with(&mut escape_by_escape, prefix.len() + 1, false);
        assert_eq!(got, plain, "with and without compaction: {lit:?}");
        // The same text, and the same bytes from where decoding stopped (the bytes between
        // are spent: each path leaves its own).
        let (n, at) = match got {
            Ok((n, close)) => (n, close),
            Err(s) => (s.decoded, s.at),
        };
        assert_eq!(buf[..n], escape_by_escape[..n], "{lit:?}");
        assert_eq!(buf[at..], escape_by_escape[at..], "{lit:?}");
        (buf, got)
    }

    /// The escapes of a block as [`escapes`] finds them, one byte at a time.
    fn escapes_one_by_one(backslash: u64) -> (u64, u64) {
        let (mut starts, mut escaped) = (0, 0);
        let mut i = 0;
        while i < 64 {
            if backslash >> i & 1 == 1 {
                starts |= 1 << i;
                if i < 63 {
                    escaped |= 1 << (i + 1);
                }
                i += 2;
            } else {
                i += 1;
            }
        }
        (starts, escaped)
    }

    #[test]
    fn block_escapes_equal_a_scan_byte_by_byte() {
        let mut rng = SplitMix(5);
        let mut cases = vec![0, u64::MAX, EVEN_BYTES, !EVEN_BYTES, 1, 1 << 63, 3 << 62];
        for _ in 0..20_000 {
            // Sparse, dense and run-heavy masks.
            let a = rng.below(usize::MAX) as u64;
            let b = rng.below(usize::MAX) as u64;
            cases.extend([a, a & b, a | b, a & (a >> 1), a & b & (a << 3)]);
        }
        for m in cases {
            assert_eq!(escapes(m), escapes_one_by_one(m), "{m:#066b}");
        }
    }

    /// Transcript-like literals (JSONL lines written inside a JSON string, so escapes of
    /// escapes: `\\\"`, runs of backslashes, a `\n` per line), with non-ASCII characters,
    /// `\/`, `\t`, `\u` escapes and refused bytes at random places, long enough for many
    /// 64-byte blocks: decoded as serde_json decodes them, by both block paths alike (checked
    /// in `in_place`), and stopped where serde_json refuses.
    #[test]
    fn transcript_like_literals_decode_as_serde_does() {
        const PIECES: &[&str] = &[
            r"\\",
            r"\\\\",
            r"\\\\\\",
            r"\\\\\\\\",
            r#"\\\""#,
            r#"\\\\\\\""#,
            r#"\""#,
            r"\n",
            r"\t",
            r"\/",
            r"\r",
            r"\b",
            r"\f",
            "é",
            "中文",
            "😀",
            r"\u00e9",
            r"\ud83d\ude00",
            r"\u000a",
            r#"{\"type\":\"user\"}"#,
        ];
        const REFUSED: &[&[u8]] = &[
            b"\x01",
            b"\xff",
            b"\xc3",
            b"\xe4\xb8",
            b"\xed\xa0\x80",
            br"\q",
            br"\u12",
            br"\",
        ];
        let mut rng = SplitMix(2026);
        for round in 0..3000 {
            let mut lit = Vec::new();
            let n = rng.below(900);
            while lit.len() < n {
                if rng.below(3) == 0 {
                    lit.extend_from_slice(PIECES[rng.below(PIECES.len())].as_bytes());
                } else {
                    let k = rng.below(12);
                    lit.extend(std::iter::repeat_n(b'a' + (round % 26) as u8, k));
                }
            }
            // One refused byte (or none) at a random place: serde_json says where it stops.
            if rng.below(3) == 0 {
                let at = rng.below(lit.len() + 1);
                let bad = REFUSED[rng.below(REFUSED.len())];
                lit.splice(at..at, bad.iter().copied());
            }
            let serde = |raw: &[u8]| {
                let mut quoted = vec![b'"'];
                quoted.extend_from_slice(raw);
                quoted.push(b'"');
                serde_json::from_slice::<String>(&quoted)
            };
            let prefix = "p".repeat(16 + rng.below(70));
            let start = prefix.len() + 1;
            let (buf, got) = in_place(&prefix, &lit, "}");
            match got {
                Ok((n, close)) => {
                    // Closed at the first quote that is not escaped (the literal's end, or a
                    // quote a lone backslash left unescaped).
                    let raw = &lit[..close - start];
                    assert!(close - start == lit.len() || serde(&lit).is_err());
                    match serde(raw) {
                        Ok(text) => assert_eq!(&buf[..n], text.as_bytes(), "round {round}"),
                        // A lone surrogate (which serde_json refuses) becomes U+FFFD.
                        Err(_) => {
                            let raw = std::str::from_utf8(raw).unwrap();
                            assert_eq!(&buf[..n], decode(raw).as_bytes(), "round {round}");
                            assert!(decode(raw).contains('\u{FFFD}'), "round {round}");
                        }
                    }
                }
                Err(stop) => {
                    assert!(serde(&lit).is_err(), "round {round}: {stop:?}");
                    // What was decoded is the decoding of the bytes before the stop.
                    let raw = std::str::from_utf8(&lit[..stop.at - start]).unwrap();
                    assert_eq!(
                        &buf[..stop.decoded],
                        decode(raw).as_bytes(),
                        "round {round}"
                    );
                    assert_eq!(&buf[stop.at..buf.len() - 2], &lit[stop.at - start..]);
                }
            }
        }
    }

    /// One-pass decoding gives what serde_json decodes, for every literal it writes or
    /// accepts, wherever the literal sits in the buffer; the closing quote and what follows it
    /// are left as they were.
    #[test]
    fn decoding_in_place_equals_serde() {
        let texts = [
            "",
            "plain",
            "a\"b\\c\nd\te\r\u{8}\u{c}/\u{7f}",
            "é😀 and \u{1} \u{1f} 中文",
            "{\"type\":\"user\",\"message\":{\"content\":\"x\\ny\"}}\n{}\n",
        ];
        // Escapes and multi-byte characters at every alignment of the eight-byte scan.
        let aligned: Vec<String> = (0..20)
            .map(|k| {
                format!(
                    "{}\"{}\\\n/\u{2028}{}",
                    "x".repeat(k),
                    "é".repeat(k),
                    "y".repeat(k)
                )
            })
            .collect();
        let mut literals: Vec<String> = texts
            .iter()
            .copied()
            .chain(aligned.iter().map(String::as_str))
            .map(|t| {
                let q = serde_json::to_string(t).unwrap();
                q[1..q.len() - 1].to_string()
            })
            .collect();
        // Escapes serde_json reads but does not write.
        literals.extend(
            [
                r"\u00e9\ud83d\ude00!",
                r"\/\b\f",
                r"a\\\\",
                r"\u0041\u00E9\u4E2D",
            ]
            .map(String::from),
        );
        for lit in &literals {
            let want: String = serde_json::from_str(&format!("\"{lit}\"")).unwrap();
            for prefix in ["", "{\"text\":", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"] {
                let (buf, got) = in_place(prefix, lit.as_bytes(), "}");
                let (n, close) = got.unwrap();
                assert_eq!(std::str::from_utf8(&buf[..n]).unwrap(), want, "{lit}");
                assert_eq!(close, prefix.len() + 1 + lit.len(), "{lit}");
                assert_eq!(&buf[close..], b"\"}");
            }
        }
        // Lone surrogates become U+FFFD, as in `decode` (serde_json refuses them).
        for (lit, want) in [
            (r"x\udcb2y", "x\u{FFFD}y"),
            (r"\ud83dz", "\u{FFFD}z"),
            (r"\ud83d\ud83d\ude00", "\u{FFFD}😀"),
            (r"\ud800", "\u{FFFD}"),
        ] {
            let (buf, got) = in_place("{\"text\":", lit.as_bytes(), "");
            assert_eq!(&buf[..got.unwrap().0], want.as_bytes(), "{lit}");
        }
    }

    /// Decoding stops exactly where serde_json refuses a literal (control character, invalid
    /// UTF-8, malformed escape, no closing quote), having decoded what comes before and left
    /// the rest untouched; serde_json refuses each of these literals.
    #[test]
    fn decoding_in_place_stops_where_serde_refuses() {
        let cases: [(&[u8], &str, usize); 9] = [
            (b"ab\\qcd", "ab", 2),
            (b"a\\\"b\\u12x4", "a\"b", 4),
            (b"0123456789\x01z", "0123456789", 10),
            (b"\\n\ttab", "\n", 2),
            (b"abc\xff", "abc", 3),
            (b"\xc3\xa9\xc3", "é", 2),
            (b"plain text\xed\xa0\x80", "plain text", 10),
            (
                b"\\u00e9 then a lone backslash \\",
                "é then a lone backslash ",
                29,
            ),
            (
                b"no closing quote at all \\\"",
                "no closing quote at all \"",
                26,
            ),
        ];
        for (lit, want, at) in cases {
            let prefix = "{\"text\":";
            let mut buf = prefix.as_bytes().to_vec();
            buf.push(b'"');
            buf.extend_from_slice(lit);
            let original = buf.clone();
            let got = decode_literal_in_place(&mut buf, prefix.len() + 1);
            let shown = String::from_utf8_lossy(lit);
            assert_eq!(
                got,
                Err(Stopped {
                    decoded: want.len(),
                    at: prefix.len() + 1 + at
                }),
                "{shown}"
            );
            assert_eq!(&buf[..want.len()], want.as_bytes(), "{shown}");
            assert_eq!(
                &buf[prefix.len() + 1 + at..],
                &original[prefix.len() + 1 + at..]
            );
            // serde_json refuses it too, closed by a quote (but for the unclosed one).
            let mut quoted = original[prefix.len()..].to_vec();
            if at < lit.len() {
                quoted.push(b'"');
            }
            assert!(
                serde_json::from_slice::<String>(&quoted).is_err(),
                "{shown}"
            );
        }
    }

    /// Encoding back gives serde_json's own literal of the text, ending where asked, and fits
    /// where any literal of the same text was.
    #[test]
    fn encoding_in_place_equals_serde() {
        for text in [
            "",
            "plain",
            "a\"b\\c\nd\te\r\u{8}\u{c}/\u{7f}\u{1}\u{1f}",
            "é😀 中文 \u{FFFD}",
        ] {
            let want = serde_json::to_string(text).unwrap();
            let want = &want.as_bytes()[1..want.len() - 1];
            // The text at the front, its literal to end at `end`, room exactly enough.
            let end = want.len();
            let mut buf = text.as_bytes().to_vec();
            buf.resize(end.max(text.len()) + 3, b'#');
            let start = encode_in_place_before(&mut buf, text.len(), end).unwrap();
            assert_eq!(&buf[start..end], want, "{text}");
            assert_eq!(start, 0);
            assert_eq!(&buf[end..], b"###");
            // A literal of the same text with longer escapes (`\u` everywhere) has room for it.
            let long: String = text.encode_utf16().map(|u| format!("\\u{u:04x}")).collect();
            let mut buf = format!("{{\"text\":\"{long}\"}}").into_bytes();
            let (n, close) = decode_literal_in_place(&mut buf, 9).unwrap();
            assert_eq!(&buf[..n], text.as_bytes());
            let start = encode_in_place_before(&mut buf, n, close).unwrap();
            assert_eq!(&buf[start..close], want, "{text}");
            assert_eq!(&buf[close..], b"\"}");
        }
        let mut buf = b"\n\n".to_vec();
        assert_eq!(encode_in_place_before(&mut buf, 2, 2), None);
        assert_eq!(buf, b"\n\n");
    }

    #[test]
    fn lone_surrogates_become_replacement() {
        assert_eq!(decode(r"x\udcb2y"), "x\u{FFFD}y");
        assert_eq!(decode(r"\ud83dz"), "\u{FFFD}z");
        assert_eq!(decode(r"bad\q"), "bad\u{FFFD}");
        assert_eq!(decode(r"end\"), "end\u{FFFD}");
        assert_eq!(decode(r"\u12"), "\u{FFFD}12");
        // A backslash before a multi-byte character consumes the whole character (this used
        // to slice inside "é" and panic).
        assert_eq!(decode("a\\éb"), "a\u{FFFD}b");
        assert_eq!(decode_escape("\\😀".as_bytes(), 0), ('\u{FFFD}', 5));
        assert_eq!(decoded_to_raw("a\\éb", 4), 4);
        assert_eq!(raw_to_decoded("a\\éb", 2), 1);
    }

    #[test]
    fn decoded_offsets_map_to_raw_offsets() {
        // raw:     a  \"   b  \u00e9   \ud83d\ude00   c
        // bytes:   0  1..3 3  4..10    10..22         22   (len 23)
        // decoded: a  "    b  é        😀             c
        // bytes:   0  1    2  3..5     5..9           9    (len 10)
        let raw = r#"a\"b\u00e9\ud83d\ude00c"#;
        assert_eq!(raw.len(), 23);
        assert_eq!(decode(raw), "a\"bé😀c");
        let to_raw: Vec<usize> = (0..=11).map(|d| decoded_to_raw(raw, d)).collect();
        assert_eq!(to_raw, vec![0, 1, 3, 4, 4, 10, 10, 10, 10, 22, 23, 23]);
        let to_decoded: Vec<usize> = (0..=24).map(|r| raw_to_decoded(raw, r)).collect();
        assert_eq!(
            to_decoded,
            vec![
                0, 1, 1, 2, 3, 3, 3, 3, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 9, 10, 10
            ]
        );
        let mut mapper = RawMapper::new(raw);
        let monotonic: Vec<usize> = (0..=11).map(|d| mapper.to_raw(d)).collect();
        assert_eq!(monotonic, to_raw);
        // Going back restarts and stays right.
        assert_eq!(mapper.to_raw(2), 3);
        assert_eq!(mapper.to_raw(2), 3);
    }

    #[test]
    fn newline_escapes_and_lone_surrogates_map() {
        // "x\ny" decodes to 3 bytes; the escape's character maps to its backslash.
        let raw = r"x\ny";
        assert_eq!(
            (0..=3).map(|d| decoded_to_raw(raw, d)).collect::<Vec<_>>(),
            vec![0, 1, 3, 4]
        );
        // A lone surrogate becomes U+FFFD (3 decoded bytes for 6 raw bytes).
        let raw = r"\udcb2z";
        assert_eq!(decode(raw), "\u{FFFD}z");
        assert_eq!(
            (0..=4).map(|d| decoded_to_raw(raw, d)).collect::<Vec<_>>(),
            vec![0, 0, 0, 6, 7]
        );
        assert_eq!(raw_to_decoded(raw, 6), 3);
        // A trailing lone backslash (1 raw byte) and a malformed \q (2 raw bytes).
        let raw = r"a\qb\";
        assert_eq!(decode(raw), "a\u{FFFD}b\u{FFFD}");
        assert_eq!(
            (0..=8).map(|d| decoded_to_raw(raw, d)).collect::<Vec<_>>(),
            vec![0, 1, 1, 1, 3, 4, 4, 4, 5]
        );
        // No escapes: identity, clamped to the end.
        assert_eq!(decoded_to_raw("héllo", 3), 3);
        assert_eq!(decoded_to_raw("héllo", 60), 6);
        assert_eq!(decoded_to_raw("", 0), 0);
        assert_eq!(raw_to_decoded("", 5), 0);
    }

    /// SplitMix64: a tiny deterministic generator, so tests need no new dependency.
    struct SplitMix(u64);

    impl SplitMix {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % n as u64) as usize
        }
    }

    /// Encodes `ch` as a JSON writer might: raw, or as one of its escapes.
    fn encode_char(ch: char, style: usize, out: &mut String) {
        match (ch, style % 3) {
            ('"', _) => out.push_str(r#"\""#),
            ('\\', _) => out.push_str(r"\\"),
            ('\n', _) => out.push_str(r"\n"),
            ('/', 1) => out.push_str(r"\/"),
            (c, 1 | 2) if c != '\u{FFFD}' => {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            (c, _) => out.push(c),
        }
    }

    /// Long literals (the block path works on 64 bytes at a time) with every kind of escape
    /// and character at random places: one-pass decoding equals serde_json's, and a refused
    /// byte placed anywhere in them stops it exactly there.
    #[test]
    fn decoding_long_literals_in_place_equals_serde() {
        const CHARS: &[char] = &[
            'a', 'z', ' ', '"', '\\', '/', '\n', '\t', '\u{1}', '\u{7f}', 'é', '中', '😀',
            '\u{2028}', '{', '}',
        ];
        let mut rng = SplitMix(12);
        for round in 0..400 {
            let mut raw = String::new();
            let mut text = String::new();
            for _ in 0..rng.below(600) {
                // Mostly plain letters, as in transcripts, with runs of escapes.
                let ch = if rng.below(3) == 0 {
                    CHARS[rng.below(CHARS.len())]
                } else {
                    'x'
                };
                let mut one = String::new();
                match (ch, rng.below(4)) {
                    ('\t', _) => one.push_str(r"\t"),
                    ('\u{1}', _) => one.push_str(r"\u0001"),
                    _ => encode_char(ch, rng.below(6), &mut one),
                }
                raw.push_str(&one);
                text.push(ch);
            }
            let want: String = serde_json::from_str(&format!("\"{raw}\"")).unwrap();
            assert_eq!(want, text);
            let prefix = "p".repeat(16 + rng.below(80));
            let (buf, got) = in_place(&prefix, raw.as_bytes(), "}}}");
            let (n, close) = got.unwrap();
            assert_eq!(
                std::str::from_utf8(&buf[..n]).unwrap(),
                text,
                "round {round}"
            );
            assert_eq!(close, prefix.len() + 1 + raw.len());
            // A refused byte at a random character boundary of the literal.
            let mut cut = rng.below(raw.len() + 1);
            while !raw.is_char_boundary(cut) {
                cut -= 1;
            }
            // Not inside an escape: back to the start of the one it cuts.
            let decoded_before = raw_to_decoded(&raw, cut);
            let cut = decoded_to_raw(&raw, decoded_before);
            // Invalid UTF-8 too: overlong forms, a surrogate, above U+10FFFF, a cut
            // character, a lone continuation byte (checked where they stand, issue 12).
            for bad in [
                &b"\x02"[..],
                b"\xff",
                br"\x",
                br"\u00g0",
                b"\xc0\x80",
                b"\xc1\xbf",
                b"\xe0\x80\x80",
                b"\xe0\x9f\xbf",
                b"\xed\xa0\x80",
                b"\xf0\x8f\xbf\xbf",
                b"\xf4\x90\x80\x80",
                b"\xf5\x80\x80\x80",
                b"\xe4\xb8x",
                b"\xf0\x9f\x98x",
                b"\x80",
            ] {
                let mut lit = raw.as_bytes()[..cut].to_vec();
                lit.extend_from_slice(bad);
                lit.extend_from_slice(&raw.as_bytes()[cut..]);
                let (buf, got) = in_place(&prefix, &lit, "}}}");
                assert_eq!(
                    got,
                    Err(Stopped {
                        decoded: text[..decoded_before].len(),
                        at: prefix.len() + 1 + cut
                    }),
                    "round {round}, {bad:?} at {cut}"
                );
                assert_eq!(&buf[..decoded_before], &text.as_bytes()[..decoded_before]);
                assert!(buf.ends_with(&[&lit[cut..], b"\"}}}"].concat()));
            }
        }
    }

    #[test]
    fn mapping_agrees_with_a_generated_encoding() {
        const CHARS: &[char] = &[
            'a', 'z', ' ', '"', '\\', '/', '\n', 'é', '中', '😀', '\u{2028}', '\u{FFFD}',
        ];
        let mut rng = SplitMix(7);
        for _ in 0..500 {
            let mut raw = String::new();
            let mut decoded = String::new();
            // Expected raw offset of each decoded char boundary.
            let mut expected = vec![];
            for _ in 0..rng.below(30) {
                let ch = CHARS[rng.below(CHARS.len())];
                expected.push((decoded.len(), raw.len()));
                let escape_start = raw.len();
                encode_char(ch, rng.below(6), &mut raw);
                // Inside a character produced by an escape: the escape's start.
                if raw.len() - escape_start != ch.len_utf8() {
                    for inside in 1..ch.len_utf8() {
                        expected.push((decoded.len() + inside, escape_start));
                    }
                }
                decoded.push(ch);
            }
            expected.push((decoded.len(), raw.len()));
            assert_eq!(decode(&raw), decoded, "{raw}");
            let mut mapper = RawMapper::new(&raw);
            for &(d, r) in &expected {
                assert_eq!(decoded_to_raw(&raw, d), r, "{raw} decoded {d}");
                assert_eq!(mapper.to_raw(d), r, "{raw} mapper {d}");
                if decoded.is_char_boundary(d) {
                    assert_eq!(raw_to_decoded(&raw, r), d, "{raw} raw {r}");
                }
            }
        }
    }

    #[test]
    fn arbitrary_backslash_soup_never_panics_and_stays_consistent() {
        const PIECES: &[&str] = &[
            "\\", "u", "d", "8", "3", "c", "0", "a", "e", "é", "😀", "\"", "n", "q", " ",
        ];
        let mut rng = SplitMix(99);
        for _ in 0..3000 {
            let raw: String = (0..rng.below(24))
                .map(|_| PIECES[rng.below(PIECES.len())])
                .collect();
            let decoded = decode(&raw);
            assert_eq!(decoded_to_raw(&raw, decoded.len()), raw.len(), "{raw:?}");
            assert_eq!(raw_to_decoded(&raw, raw.len()), decoded.len(), "{raw:?}");
            let mut mapper = RawMapper::new(&raw);
            let mut last = 0;
            for d in 0..=decoded.len() + 1 {
                let r = mapper.to_raw(d);
                assert_eq!(r, decoded_to_raw(&raw, d), "{raw:?} {d}");
                assert!(r >= last && raw.is_char_boundary(r), "{raw:?} {d} -> {r}");
                last = r;
            }
            let mut last = 0;
            for r in 0..=raw.len() + 1 {
                let d = raw_to_decoded(&raw, r);
                assert!(
                    d >= last && decoded.is_char_boundary(d),
                    "{raw:?} {r} -> {d}"
                );
                last = d;
            }
        }
    }
}
