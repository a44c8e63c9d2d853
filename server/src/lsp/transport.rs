//! The wire, and the one seam between it and tower-lsp-server (issue 24 item 4).
//!
//! tower-lsp-server is the protocol engine: its `LspService` routes every message to the
//! `LanguageServer` methods and keeps the server's state (initialized, shut down, exited).
//! Its `Server` (stdin/stdout framing) is not used: [`serve`] drives the service itself,
//! with the same order and concurrency as `Server::serve` (requests and notifications
//! called in arrival order, at most [`MAX_CONCURRENCY`] of their futures polled at once, the
//! answers and the server's own requests written by one writer). Each message is framed once
//! and parsed once:
//!
//! - **Framing** ([`Decoder`]): tolerant. tower-lsp-server's `FramedRead` ended the session
//!   at the first malformed message (issue 8 defect 3); here garbage, a header without
//!   `Content-Length`, a body that is not JSON or not JSON-RPC 2.0 is answered `ParseError`
//!   (-32700) or `InvalidRequest` (-32600) ([`parse`], [`Refused`]) and the server reads on.
//!   Bodies bigger than [`message_limit`] are skipped and answered.
//! - **Parsing** ([`parse`]): each body once into a `jsonrpc::Request` or `Response`. A
//!   `textDocument/didOpen` is the one exception to "through serde": [`split_did_open`]
//!   decodes its text in the body's own buffer (issue 12: a 100 MB transcript was buffered and
//!   copied several times) and moves it, without a copy, into the request's params; the request
//!   then goes to the service like any other.
//! - **On arrival** (before the message waits its turn): `$/cancelRequest` answers the request
//!   `RequestCancelled` and ends its future ([`InFlight`], issue 25 item 7), `exit` ends the
//!   session even behind slow requests.
//! - **Answers** (`crate::lsp::dispatch::Reply`): a tower-lsp-server `Response`, serialised
//!   here with serde (no assumption on bytes tower-lsp-server would write), or, for the few
//!   requests whose answers are made as JSON bytes (`dispatch::RAW_ANSWERED`, issue 12: the
//!   ~1.1 MB outline of a 100 MB transcript cost twenty times an append through a
//!   `serde_json::Value`), those bytes framed as they are. Which requests take that way is
//!   decided in one place, `TranscriptService` (`crate::lsp`), which serves them from the
//!   backend with the state checks tower-lsp-server applies to its own methods.
//! - **Writing**: one thread, whole frames ([`write_pieces`]), every byte checked to be UTF-8
//!   ([`utf8_on_the_wire`], issue 25 item 3).

use std::io;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use futures::{SinkExt, StreamExt};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tower::Service;
use tower_lsp_server::jsonrpc::{Id, Request, Response};
use tower_lsp_server::{ClientSocket, ExitedError};

use crate::source::json_string;

/// What a client message is answered with.
#[derive(Debug)]
pub enum Reply {
    /// A response made by tower-lsp-server (or by the dispatcher: errors, panics).
    Response(Response),
    /// The answer of a request answered as JSON bytes (`crate::lsp::dispatch::RAW_ANSWERED`,
    /// `dispatch::RawJson`).
    Json {
        /// The request's id.
        id: Id,
        /// The result.
        json: Vec<u8>,
        /// Assembled from kept pieces (`dispatch::RawJson::kept`).
        kept: bool,
    },
}

impl Reply {
    /// The reply as a `Response` (the in-process service: the JSON parsed into a `Value`;
    /// bytes that are not JSON are an `InternalError`).
    pub fn into_response(self) -> Response {
        match self {
            Reply::Response(r) => r,
            Reply::Json { id, json, .. } => match serde_json::from_slice(&json) {
                Ok(v) => Response::from_ok(id, v),
                Err(e) => Response::from_error(
                    id,
                    tower_lsp_server::jsonrpc::Error {
                        code: tower_lsp_server::jsonrpc::ErrorCode::InternalError,
                        message: format!("an answer that is not JSON: {e}").into(),
                        data: None,
                    },
                ),
            },
        }
    }
}

/// A boxed, sendable future.
type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'static>>;

/// Largest header block accepted (bytes up to the blank line).
const MAX_HEADER_BYTES: usize = 8 * 1024;
/// Message bodies up to this size (256 MiB) are always accepted; a bigger one only when
/// [`message_limit`] allows it.
pub const ALWAYS_ACCEPTED_BYTES: usize = 256 << 20;
/// Most bytes reserved for a message beyond what has arrived of it while it is small
/// (16 MiB); past that, as much again as has arrived. The declared `Content-Length` is not
/// trusted for the reservation: a lying or truncated header would reserve all it declares at
/// once.
const RESERVE_STEP_BYTES: usize = 16 << 20;
/// Bytes read from the client (or the server) at a time.
const READ_BYTES: usize = 64 * 1024;
/// Capacity the decoder keeps between messages; a bigger buffer (after a big `didOpen`) is
/// given back.
const KEPT_BUFFER_BYTES: usize = 1 << 20;

/// The largest message body the server takes now, in bytes (issue 12: Neovim sends a
/// transcript of any size in one `didOpen`, whose JSON-escaped text is bigger than the file).
///
/// Two thirds of the memory available to the process ([`crate::source::room::available`]:
/// the smallest of the system's `MemAvailable`, what the process's cgroup still allows and
/// what `ulimit -v` still allows), never less than [`ALWAYS_ACCEPTED_BYTES`]. Two thirds, because opening a
/// transcript needs the body and then about 1.4 times the text (text, model, analysis).
/// Where none of these can be read (not Linux), 4 GiB.
pub fn message_limit() -> usize {
    let avail = crate::source::room::available().unwrap_or(6 << 30);
    usize::try_from(avail / 3 * 2)
        .unwrap_or(usize::MAX)
        .max(ALWAYS_ACCEPTED_BYTES)
}

/// One unit read from the client.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A message body (`Content-Length` bytes).
    Body(Vec<u8>),
    /// Bytes that are not a message: why (for the error response and the log).
    Garbage(String),
    /// A message bigger than the limit (skipped): why, for the error response, the log and
    /// the user.
    TooBig(String),
}

/// Splits a byte stream into LSP base-protocol frames (`Content-Length: n\r\n\r\n` + n bytes),
/// resynchronising on the next header line (`Content-…`) after garbage.
#[derive(Debug)]
pub struct Decoder {
    buf: Vec<u8>,
    /// Body bytes still to drop (an oversized message).
    skip: usize,
    /// The header of the message arriving was read and dropped: the buffer starts with its
    /// body, of this many bytes (a big body is then handed over as the buffer itself, with
    /// no header to cut off its front: that moved the whole body, issue 12).
    body_len: Option<usize>,
    /// The largest body taken: a function of the declared length, called only for bodies
    /// bigger than [`ALWAYS_ACCEPTED_BYTES`] ([`message_limit`] by default).
    limit: fn() -> usize,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::with_limit(message_limit)
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

/// Where the header block `buf` starts with ends: (the end of its last line, where the body
/// starts), at the first blank line of either kind (`\r\n` or `\n`, after a line ended by
/// either; issue 25 item 9: searching for `\r\n\r\n` alone took a header ended by `\n\n`
/// up to the next message's blank line, swallowing that request). `None` while the blank
/// line has not arrived.
fn header_end(buf: &[u8]) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'\n', &buf[from..]).map(|i| from + i) {
        let end = if i > 0 && buf[i - 1] == b'\r' {
            i - 1
        } else {
            i
        };
        match buf.get(i + 1..)? {
            [b'\n', ..] => return Some((end, i + 2)),
            [b'\r', b'\n', ..] => return Some((end, i + 3)),
            [b'\r'] => return None, // more bytes needed
            _ => from = i + 1,
        }
    }
    None
}

/// Length of the longest suffix of `buf` that is a proper prefix of `Content-`, in any case
/// (the start of a header line).
fn header_prefix_suffix(buf: &[u8]) -> usize {
    const H: &[u8] = b"content-";
    (1..H.len().min(buf.len() + 1))
        .rev()
        .find(|&k| buf[buf.len() - k..].eq_ignore_ascii_case(&H[..k]))
        .unwrap_or(0)
}

/// Where the next `Content-` starts in `buf`, in any case (after garbage, a lowercase
/// `content-length` header was not found again).
fn find_header_start(buf: &[u8]) -> Option<usize> {
    memchr::memchr2_iter(b'C', b'c', buf).find(|&i| {
        buf.get(i..i + 8)
            .is_some_and(|w| w.eq_ignore_ascii_case(b"content-"))
    })
}

/// Whether `buf` starts with a header block whose first line is not `Content-…` (`X-Trace:
/// 1\r\nContent-Length: 2\r\n\r\n`): a token, `:`, a value without control characters, the
/// block ended by a blank line and holding a `Content-Length`. `None`: not known yet (more
/// bytes needed).
fn starts_header_line(buf: &[u8]) -> Option<bool> {
    let token = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_');
    let Some(colon) = buf.iter().position(|b| !token(b)) else {
        return if buf.len() < MAX_HEADER_BYTES {
            None
        } else {
            Some(false)
        };
    };
    if colon == 0 || buf[colon] != b':' {
        return Some(false);
    }
    let Some((h, _)) = header_end(buf) else {
        let line = memchr::memchr(b'\n', buf).unwrap_or(buf.len());
        let clean = buf[colon + 1..line]
            .iter()
            .all(|&b| b >= 0x20 || b == b'\t' || b == b'\r');
        return if clean && buf.len() < MAX_HEADER_BYTES {
            None
        } else {
            Some(false)
        };
    };
    let block = &buf[..h];
    let clean = block
        .iter()
        .all(|&b| b >= 0x20 || matches!(b, b'\t' | b'\r' | b'\n'));
    Some(
        clean
            && block
                .split(|&b| b == b'\n')
                .any(|l| l.len() >= 15 && l[..15].eq_ignore_ascii_case(b"content-length:")),
    )
}

impl Decoder {
    /// A decoder taking bodies up to `limit()` bytes (asked when a body is bigger than
    /// [`ALWAYS_ACCEPTED_BYTES`]).
    pub fn with_limit(limit: fn() -> usize) -> Decoder {
        Decoder {
            buf: Vec::new(),
            skip: 0,
            body_len: None,
            limit,
        }
    }

    /// Adds bytes read from the client.
    pub fn push(&mut self, bytes: &[u8]) {
        let mut bytes = bytes;
        if self.skip > 0 {
            let n = self.skip.min(bytes.len());
            self.skip -= n;
            bytes = &bytes[n..];
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Reads once from `from` straight into the buffer (no copy of a big body through a read
    /// buffer; issue 12); `Ok(0)` at the end of input. Blocking: [`serve`] calls it on a
    /// thread of its own.
    pub fn read_from(&mut self, from: &mut Input) -> io::Result<usize> {
        if self.skip > 0 {
            // An oversized body is dropped: read it through a small buffer, never kept.
            let mut scratch = [0u8; 8192];
            let n = from.read(&mut scratch)?;
            self.push(&scratch[..n]);
            return Ok(n);
        }
        if self.buf.capacity() - self.buf.len() < READ_BYTES {
            // While a body arrives, `next_frame` reserves room ahead; this is the rest.
            self.buf.reserve_exact(READ_BYTES);
        }
        from.read_into_spare(&mut self.buf)
    }

    /// The next complete frame, or `None` when more bytes are needed.
    pub fn next_frame(&mut self) -> Option<Frame> {
        if let Some(n) = self.body_len {
            return self.body(n);
        }
        // Leading line breaks between messages are tolerated silently, and so is a UTF-8
        // byte order mark (some clients write one before their first header).
        loop {
            let lead = self
                .buf
                .iter()
                .take_while(|b| matches!(b, b'\r' | b'\n' | b' ' | b'\t'))
                .count();
            self.buf.drain(..lead);
            if self.buf.starts_with(b"\xef\xbb\xbf") {
                self.buf.drain(..3);
            } else {
                break;
            }
        }
        if self.buf.is_empty() || b"\xef\xbb\xbf".starts_with(&self.buf) {
            return None;
        }
        // Anything before a header is garbage. A header block starts with `Content-` or
        // with another header line (`X-Trace: 1`, read and ignored: LSP 3.17 "Header Part").
        let probe = &self.buf[..self.buf.len().min(8)];
        let other_header = || starts_header_line(&self.buf);
        if !b"content-"[..probe.len()].eq_ignore_ascii_case(probe) && other_header() != Some(true) {
            other_header()?; // `None`: a header line, not whole yet
            let drop = match find_header_start(&self.buf) {
                Some(at) => at,
                None if self.buf.len() > MAX_HEADER_BYTES || self.buf.contains(&b'\n') => {
                    // Keep a possible start of the next header.
                    self.buf.len() - header_prefix_suffix(&self.buf)
                }
                None => return None,
            };
            if drop == 0 {
                return None;
            }
            self.buf.drain(..drop);
            return Some(Frame::Garbage(format!(
                "{drop} bytes that are not an LSP message"
            )));
        }
        let Some((end, body_start)) = header_end(&self.buf) else {
            if self.buf.len() > MAX_HEADER_BYTES {
                let n = self.buf.len();
                self.buf.drain(..1);
                let at = find_header_start(&self.buf).unwrap_or(self.buf.len());
                self.buf.drain(..at);
                return Some(Frame::Garbage(format!(
                    "a header block longer than {MAX_HEADER_BYTES} bytes ({n} bytes dropped)"
                )));
            }
            return None;
        };
        let header = String::from_utf8_lossy(&self.buf[..end]).into_owned();
        let mut length: Option<Result<usize, String>> = None;
        for line in header.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let Some((name, value)) = line.split_once(':') else {
                length = Some(Err(format!("a header line without ':': {line:?}")));
                break;
            };
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = Some(
                    value
                        .trim()
                        .parse::<usize>()
                        .map_err(|_| format!("an invalid Content-Length {:?}", value.trim())),
                );
            }
        }
        let limit = match length {
            Some(Ok(n)) if n > ALWAYS_ACCEPTED_BYTES => (self.limit)(),
            _ => usize::MAX,
        };
        match length {
            Some(Ok(n)) if n > limit => {
                self.buf.drain(..body_start);
                let have = self.buf.len().min(n);
                self.buf.drain(..have);
                self.skip = n - have;
                Some(Frame::TooBig(format!(
                    "a message of {} MiB, more than the {} MiB the server takes now (two \
                     thirds of the memory available to it); a transcript that big opens as a \
                     view from disk (a transcript: URI, the transcript.openView command)",
                    n >> 20,
                    limit >> 20
                )))
            }
            Some(Ok(n)) => {
                // The header goes now, while little of the body has arrived.
                self.buf.drain(..body_start);
                self.body_len = Some(n);
                self.body(n)
            }
            Some(Err(why)) => {
                self.buf.drain(..body_start);
                Some(Frame::Garbage(why))
            }
            None => {
                self.buf.drain(..body_start);
                Some(Frame::Garbage(
                    "a header block without Content-Length".to_string(),
                ))
            }
        }
    }
}

impl Decoder {
    /// The body of `n` bytes the buffer starts with, once it has all arrived.
    fn body(&mut self, n: usize) -> Option<Frame> {
        if self.buf.len() < n {
            // Room for the rest of the message, but never more ahead than has arrived (at
            // least a step): a lying `Content-Length` reserves no gigabyte, and a big body
            // still ends in a buffer of exactly its size (growing by plain doubling could
            // leave twice its size; issue 12). Reserved only when the room left would not
            // take the next read, so it grows a few times in all, not at every read.
            let missing = n - self.buf.len();
            let spare = self.buf.capacity() - self.buf.len();
            if spare < missing.min(READ_BYTES) {
                let ahead = missing.min(self.buf.len().max(RESERVE_STEP_BYTES));
                self.buf.reserve_exact(ahead);
            }
            return None;
        }
        self.body_len = None;
        let body = if self.buf.len() == n {
            // The usual case, nothing after the body: hand over the buffer itself.
            std::mem::take(&mut self.buf)
        } else {
            let body = self.buf[..n].to_vec();
            self.buf.drain(..n);
            if self.buf.capacity() > KEPT_BUFFER_BYTES {
                self.buf.shrink_to(KEPT_BUFFER_BYTES);
            }
            body
        };
        Some(Frame::Body(body))
    }
}

/// Frames `body` for the wire.
pub fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = header(body.len());
    out.extend_from_slice(body);
    out
}

/// The header of a frame whose body has `len` bytes.
fn header(len: usize) -> Vec<u8> {
    format!("Content-Length: {len}\r\n\r\n").into_bytes()
}

/// One frame for the writer, in pieces written one after the other (a body is not copied
/// behind its header).
type Pieces = Vec<Vec<u8>>;

/// A frame for the writer and whether it is an answer assembled from kept pieces
/// (`Reply::Json`'s `kept`).
type Outgoing = (Pieces, bool);

/// Writes `pieces` whole to `out` (vectored: one system call for a header and its body).
fn write_pieces(out: &mut impl std::io::Write, pieces: &[Vec<u8>]) -> io::Result<()> {
    let mut slices: Vec<io::IoSlice> = pieces.iter().map(|p| io::IoSlice::new(p)).collect();
    let mut left = &mut slices[..];
    io::IoSlice::advance_slices(&mut left, 0);
    while !left.is_empty() {
        match out.write_vectored(left) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => io::IoSlice::advance_slices(&mut left, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    out.flush()
}

/// `"2.0"`, the only version accepted.
struct JsonRpcVersion;

impl<'de> serde::Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        if v == "2.0" {
            Ok(JsonRpcVersion)
        } else {
            Err(serde::de::Error::custom(
                "expected JSON-RPC version \"2.0\"",
            ))
        }
    }
}

/// A present key, even `null`, is `Some` (as in tower-lsp-server).
fn some<'de, T: serde::Deserialize<'de>, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// The client's requests not answered yet, by id (`5`, `"a"`: the id's JSON text): the
/// transport answers a `$/cancelRequest` on its arrival (issue 25 item 7: with four slow
/// requests running, tower-lsp-server read a cancel only once one of them ended; 0 of 60
/// cancelled requests were cancelled). On arrival of a cancel for an open request the client
/// is answered `-32800 RequestCancelled`, the request's handler is told through
/// [`InFlight::signal`] (its future then ends, freeing its place among the requests
/// tower-lsp-server runs at once; work already on the blocking pool runs to its end), and
/// the server's own later response to that id is dropped: every request gets one answer.
///
/// Only integer and string ids are tracked; at most [`IN_FLIGHT_MAX`] requests at once (a
/// request beyond that is served as before, its cancel taking effect when the server reads
/// it).
#[derive(Debug, Default)]
pub struct InFlight {
    open: Mutex<std::collections::HashMap<String, tokio::sync::watch::Sender<bool>>>,
    /// A `shutdown` request arrived (before `exit`, when read at `exit`).
    shutdown: AtomicBool,
}

/// Most requests [`InFlight`] tracks at once.
pub const IN_FLIGHT_MAX: usize = 1 << 16;

/// The key [`InFlight`] files an id under: its JSON text, for integer and string ids only.
fn id_key(id: &Value) -> Option<String> {
    match id {
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        Value::String(_) => Some(id.to_string()),
        _ => None,
    }
}

impl InFlight {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<
        '_,
        std::collections::HashMap<String, tokio::sync::watch::Sender<bool>>,
    > {
        crate::sync::lock(&self.open)
    }

    /// A request with this id goes to the server (called before it is handed over): `false`
    /// when a request with the same id is still open, so this one must be refused as
    /// tower-lsp-server's `Pending` refuses a duplicate id (`InvalidRequest`, -32600; the
    /// requests the seam answers itself never reach `Pending`, issue 24 item 4).
    fn begin(&self, key: &str) -> bool {
        let mut open = self.lock();
        if open.contains_key(key) {
            return false;
        }
        if open.len() < IN_FLIGHT_MAX {
            open.insert(key.to_string(), tokio::sync::watch::channel(false).0);
        }
        true
    }

    /// The client cancelled this id: `true` when it is open and was not cancelled before
    /// (the caller answers it), its handler told.
    fn cancel(&self, key: &str) -> bool {
        let open = self.lock();
        match open.get(key) {
            Some(tx) if !*tx.borrow() => {
                tx.send_replace(true);
                true
            }
            _ => false,
        }
    }

    /// The server answers this id: `true` when the answer must be dropped (the request was
    /// answered as cancelled). The id is no longer open either way.
    fn answered(&self, key: &str) -> bool {
        self.lock().remove(key).is_some_and(|tx| *tx.borrow())
    }

    /// Resolves when the client cancels the request `id` (never, when it is not tracked).
    pub fn signal(
        &self,
        id: &tower_lsp_server::jsonrpc::Id,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let rx = serde_json::to_value(id)
            .ok()
            .as_ref()
            .and_then(id_key)
            .and_then(|k| self.lock().get(&k).map(|tx| tx.subscribe()));
        async move {
            let told = match rx {
                Some(mut rx) => rx.wait_for(|c| *c).await.is_ok(),
                None => false,
            };
            if !told {
                std::future::pending::<()>().await;
            }
        }
    }

    /// Whether the client sent `shutdown`: `exit` after it ends the process with code 0
    /// even when the server had no time to handle it (a pipelined `shutdown` + `exit`
    /// exited 1; LSP 3.17 §exit: 0 when a shutdown request was received before).
    pub fn shutdown_seen(&self) -> bool {
        self.shutdown.load(Ordering::SeqCst)
    }

    /// Number of requests open (tests).
    pub fn open(&self) -> usize {
        self.lock().len()
    }
}

/// The key [`InFlight`] files a request's id under ([`id_key`]).
fn id_key_of(id: &Id) -> Option<String> {
    match id {
        Id::Number(n) => Some(n.to_string()),
        Id::String(s) => serde_json::to_string(s).ok(),
        Id::Null => None,
    }
}

/// What the transport does on a client message's arrival, before the message waits its turn
/// ([`arrival`]).
#[derive(Debug, PartialEq, Eq)]
enum Arrival {
    /// A request (a method and an integer or string id): its [`id_key`].
    Request(String),
    /// `$/cancelRequest` of the request with this [`id_key`].
    Cancel(String),
    /// The `shutdown` request (its [`id_key`]): tracked like any request, and noted
    /// ([`InFlight::shutdown_seen`]).
    Shutdown(String),
    /// Anything else (a notification, an untracked id).
    Other,
}

/// What `req` is on arrival ([`Arrival`]).
fn arrival(req: &Request) -> Arrival {
    match (req.method(), req.id()) {
        ("", _) => Arrival::Other,
        ("$/cancelRequest", None) => req
            .params()
            .and_then(|p| p.get("id"))
            .and_then(id_key)
            .map_or(Arrival::Other, Arrival::Cancel),
        ("shutdown", Some(id)) => id_key_of(id).map_or(Arrival::Other, Arrival::Shutdown),
        (_, Some(id)) => id_key_of(id).map_or(Arrival::Other, Arrival::Request),
        _ => Arrival::Other,
    }
}

/// The `-32800 RequestCancelled` answer to the request filed under `key` ([`id_key`]).
/// The answer to a request whose id is already in flight ([`InFlight::begin`]): the error
/// tower-lsp-server's `Pending` gives (`InvalidRequest`, "Invalid request").
fn duplicate_answer(key: &str) -> Vec<u8> {
    let id: Value = serde_json::from_str(key).unwrap_or(Value::Null);
    let resp = json!({"jsonrpc": "2.0", "id": id,
        "error": {"code": -32600, "message": "Invalid request"}});
    frame(resp.to_string().as_bytes())
}

fn cancelled_answer(key: &str) -> Vec<u8> {
    let id: Value = serde_json::from_str(key).unwrap_or(Value::Null);
    let resp = json!({"jsonrpc": "2.0", "id": id,
        "error": {"code": -32800, "message": "request cancelled"}});
    frame(resp.to_string().as_bytes())
}

/// A `textDocument/didOpen` notification, its text left raw (borrowed from the body).
#[derive(serde::Deserialize)]
#[allow(dead_code)] // `jsonrpc` is read only to check it
struct OpenShape<'a> {
    jsonrpc: JsonRpcVersion,
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    params: OpenParams<'a>,
    #[serde(default, deserialize_with = "some")]
    id: Option<serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct OpenParams<'a> {
    #[serde(rename = "textDocument", borrow)]
    text_document: OpenItem<'a>,
}

#[derive(serde::Deserialize)]
struct OpenItem<'a> {
    uri: Value,
    #[serde(rename = "languageId")]
    language_id: Value,
    version: Value,
    #[serde(borrow)]
    text: &'a RawValue,
}

/// A `textDocument/didOpen` notification body as tower-lsp-server's `Request`, its text decoded
/// in the body's own buffer and moved (not copied) into the params: `Ok(request)`. `Err` gives the body back when it is not such
/// a notification (another method, a request, not UTF-8, not JSON, a member missing, a text
/// that is not a string serde_json reads): it then takes the usual way.
///
/// One pass over the text (issue 12: a UTF-8 check of the body, serde's scan of it and the
/// decoding were three): [`did_open_text_at`] finds the `text` literal by the message's
/// structure, [`json_string::decode_literal_in_place`] checks and decodes it front to back
/// over the body, and only the rest of the message (the text replaced by `""`) is checked by
/// serde. When either check fails, the decoded part of the text is written back as
/// serde_json writes it ([`json_string::encode_in_place_before`]): the body given back is the
/// same JSON as the one received, with the same first error, only escapes in its text may be
/// spelled differently (`\/` as `/`, `\u00e9` as `é`, a lone surrogate escape as U+FFFD).
///
/// The text is what tower-lsp-server would have decoded, except that a lone surrogate escape
/// (`\ud800`), which made the whole message fail there, becomes U+FFFD.
pub fn split_did_open(mut body: Vec<u8>) -> Result<Request, Vec<u8>> {
    if memchr::memmem::find(&body, b"textDocument/didOpen").is_none() {
        return Err(body);
    }
    let Some(quote) = did_open_text_at(&body) else {
        return Err(body);
    };
    let mut envelope = body[..quote].to_vec();
    let (n, close) = match json_string::decode_literal_in_place(&mut body, quote + 1) {
        Ok(v) => v,
        Err(stop) => return Err(put_back(body, &envelope, stop.decoded, stop.at)),
    };
    envelope.extend_from_slice(b"\"\"");
    envelope.extend_from_slice(&body[close + 1..]);
    let Some(item) = open_params(&envelope) else {
        return Err(put_back(body, &envelope[..quote], n, close));
    };
    body.truncate(n);
    body.shrink_to_fit();
    debug_assert!(std::str::from_utf8(&body).is_ok());
    // SAFETY: `decode_literal_in_place` checked every byte it kept (plain ASCII, whole valid
    // UTF-8 runs) and wrote whole encoded characters in place of escapes: the text is UTF-8.
    // Checking again would cost a pass over the whole text (issue 12).
    let text = unsafe { String::from_utf8_unchecked(body) };
    let OpenItem {
        uri,
        language_id,
        version,
        ..
    } = item;
    // The text is moved into the params, and from there into the handler's
    // `DidOpenTextDocumentParams` (`serde_json::from_value` takes owned strings). Not with
    // `json!`, which serialises its values by reference: a copy of the whole text.
    let mut item = serde_json::Map::new();
    item.insert("uri".into(), uri);
    item.insert("languageId".into(), language_id);
    item.insert("version".into(), version);
    item.insert("text".into(), Value::String(text));
    let mut params = serde_json::Map::new();
    params.insert("textDocument".into(), Value::Object(item));
    let params = Value::Object(params);
    Ok(Request::build("textDocument/didOpen")
        .params(params)
        .finish())
}

/// The text document of `envelope` when it is a `didOpen` notification whose text is `""`
/// (the text taken out), checked the way tower-lsp-server reads it.
fn open_params(envelope: &[u8]) -> Option<OpenItem<'_>> {
    let text = std::str::from_utf8(envelope).ok()?;
    let o = serde_json::from_str::<OpenShape>(text).ok()?;
    (o.method == "textDocument/didOpen"
        && o.id.is_none()
        && o.params.text_document.text.get() == "\"\"")
        .then_some(o.params.text_document)
}

/// The body as received, from what [`split_did_open`] left of it: `prefix` (the bytes before
/// the text's opening quote), the text decoded so far (`body[..decoded]`) written back as a
/// literal, and the untouched bytes from `rest` on.
fn put_back(mut body: Vec<u8>, prefix: &[u8], decoded: usize, rest: usize) -> Vec<u8> {
    let fits = json_string::encode_in_place_before(&mut body, decoded, rest)
        .filter(|&start| start > prefix.len());
    match fits {
        Some(start) => {
            // Always the case: a literal written back is never longer than the one read.
            let at = start - prefix.len() - 1;
            body[at..start - 1].copy_from_slice(prefix);
            body[start - 1] = b'"';
            body.drain(..at);
            body
        }
        None => {
            let literal = serde_json::to_string(&String::from_utf8_lossy(&body[..decoded]))
                .unwrap_or_default();
            let mut out = prefix.to_vec();
            out.extend_from_slice(&literal.as_bytes()[..literal.len().saturating_sub(1)]);
            out.extend_from_slice(&body[rest..]);
            out
        }
    }
}

/// Offset of the opening quote of `params.textDocument.text` in a JSON message body, found
/// by its structure without reading the rest of the body (the text is the last thing read):
/// the first member of each name, keys compared decoded. `None` when the body is not shaped
/// so (not an object, no such member, the text not a string). Lenient: what it skips is not
/// checked, serde checks the rest of the message once the text is out.
fn did_open_text_at(b: &[u8]) -> Option<usize> {
    let mut i = skip_ws(b, 0);
    for name in ["params", "textDocument", "text"] {
        i = member_value(b, i, name)?;
    }
    (b.get(i) == Some(&b'"')).then_some(i)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// Offset of the value of the first member named `name` of the object starting at `b[i]`.
fn member_value(b: &[u8], i: usize, name: &str) -> Option<usize> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut i = skip_ws(b, i + 1);
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let end = skip_string(b, i)?;
        let key = &b[i + 1..end - 1];
        i = skip_ws(b, end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let is_name = if key.contains(&b'\\') {
            std::str::from_utf8(key).is_ok_and(|k| json_string::decode(k) == name)
        } else {
            key == name.as_bytes()
        };
        if is_name {
            return Some(i);
        }
        i = skip_ws(b, skip_value(b, i)?);
        if b.get(i) != Some(&b',') {
            return None;
        }
        i = skip_ws(b, i + 1);
    }
}

/// Offset just past the string literal starting at `b[i]` (a quote).
fn skip_string(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        j += memchr::memchr2(b'"', b'\\', b.get(j..)?)?;
        if b[j] == b'"' {
            return Some(j + 1);
        }
        j += 2;
    }
}

/// Offset just past the JSON value starting at `b[i]`.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match b.get(j)? {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let n = b[i..]
                .iter()
                .position(|c| matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))?;
            (n > 0).then_some(i + n)
        }
    }
}

/// A client message refused by [`check`]: the error response sent instead of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// `-32700` (ParseError) or `-32600` (InvalidRequest).
    pub code: i64,
    /// `parse error: …` / `invalid request: …`.
    pub message: String,
    /// The message's `id` as written (`1e3`, `18446744073709551616`, `"a"`), `null` when it
    /// has none that can be echoed (JSON-RPC 2.0 §5: the same value as in the request).
    pub id: String,
}

impl Refused {
    fn new(code: i64, message: String) -> Refused {
        Refused {
            code,
            message,
            id: "null".to_string(),
        }
    }

    /// The error response, the id as the client wrote it.
    pub fn body(&self) -> Vec<u8> {
        let message = Value::String(self.message.clone());
        format!(
            r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":{},"message":{message}}}}}"#,
            self.id, self.code
        )
        .into_bytes()
    }
}

/// A request whose string id holds a lone surrogate escape (`"\ud800"`), refused as
/// InvalidRequest with the id as written. Patched to U+FFFD like the rest of the message (which
/// tower-lsp-server could not decode otherwise), its answer came back under another id,
/// `"\ufffd"`, that the client never sent (issue 25, Low list). `None` for any other message.
fn lone_surrogate_id(body: &[u8]) -> Option<Refused> {
    let id = raw_id(std::str::from_utf8(body).ok()?)?;
    if !id.starts_with('"') {
        return None;
    }
    let mut copy = id.clone().into_bytes();
    crate::source::json_string::patch_lone_surrogates(&mut copy).then(|| Refused {
        code: -32600,
        message: format!(
            "invalid request: an id must be a string of Unicode characters, not {id} (a lone \
             surrogate)"
        ),
        id,
    })
}

/// The `id` of a JSON object `text` as written, when it is a number or a string.
fn raw_id(text: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct IdOnly<'a> {
        #[serde(borrow, default)]
        id: Option<&'a RawValue>,
    }
    let id = serde_json::from_str::<IdOnly>(text).ok()?.id?.get();
    (id.starts_with('"') || id.starts_with('-') || id.starts_with(|c: char| c.is_ascii_digit()))
        .then(|| id.to_string())
}

/// A client message that passed [`parse`].
#[derive(Debug)]
pub enum Incoming {
    /// A request or a notification (tower-lsp-server's `Request`).
    Request(Request),
    /// The client's response to a request of the server.
    Response(Response),
}

/// Parses a message body once, the way tower-lsp-server reads one (a JSON-RPC 2.0 request,
/// notification or response; a `textDocument/didOpen` through [`split_did_open`]). `Err`
/// holds the error response to send instead. A request whose id is a number that is not an
/// integer tower-lsp-server reads (`1e3`, `1.5`, past `i64`) is refused as InvalidRequest with
/// its id as written (it was echoed as `1000.0`; LSP ids are integers or strings); one whose
/// string id holds a lone surrogate escape too ([`lone_surrogate_id`]); a lone surrogate
/// escape anywhere else becomes U+FFFD (serde_json refuses it, which made a `didChange` end
/// the session).
pub fn parse(body: Vec<u8>) -> Result<Incoming, Refused> {
    let mut body = match split_did_open(body) {
        Ok(req) => return Ok(Incoming::Request(req)),
        Err(body) => body,
    };
    if memchr::memmem::find(&body, b"\\ud").is_some()
        || memchr::memmem::find(&body, b"\\uD").is_some()
    {
        if let Some(r) = lone_surrogate_id(&body) {
            return Err(r);
        }
        json_string::patch_lone_surrogates(&mut body);
    }
    match serde_json::from_slice::<Request>(&body) {
        // Without a method it may be a response (tower-lsp-server tries that first).
        Ok(req) if req.method().is_empty() => Ok(serde_json::from_slice::<Response>(&body)
            .map_or(Incoming::Request(req), Incoming::Response)),
        Ok(req) => Ok(Incoming::Request(req)),
        Err(_) => match serde_json::from_slice::<Response>(&body) {
            Ok(res) => Ok(Incoming::Response(res)),
            Err(_) => Err(refusal(&body)),
        },
    }
}

/// [`parse`] without keeping the message (tests).
pub fn check(body: &[u8]) -> Result<(), Refused> {
    parse(body.to_vec()).map(|_| ())
}

/// Why a body that is neither a request nor a response is refused.
fn refusal(body: &[u8]) -> Refused {
    let Ok(text) = std::str::from_utf8(body) else {
        return Refused::new(-32700, "parse error: the message is not UTF-8".to_string());
    };
    match serde_json::from_str::<Value>(text) {
        Err(e) => Refused::new(
            -32700,
            format!("parse error: the message is not JSON ({e})"),
        ),
        Ok(Value::Array(_)) => Refused::new(
            -32600,
            "invalid request: batches are not supported by LSP".to_string(),
        ),
        Ok(v) => {
            let id = raw_id(text);
            let why = match (v.get("jsonrpc"), v.get("id")) {
                (Some(Value::String(s)), Some(Value::Number(_))) if s == "2.0" => format!(
                    "an id must be an integer or a string, not {}",
                    id.as_deref().unwrap_or("this number")
                ),
                (Some(Value::String(s)), _) if s == "2.0" => {
                    "not a JSON-RPC 2.0 request, notification or response".to_string()
                }
                (Some(other), _) => format!("\"jsonrpc\" must be \"2.0\", not {other}"),
                (None, _) => "\"jsonrpc\": \"2.0\" is missing".to_string(),
            };
            let mut r = Refused::new(-32600, format!("invalid request: {why}"));
            if let Some(id) = id {
                r.id = id;
            }
            r
        }
    }
}

/// The frame of an answer, in pieces written one after the other, and whether it was
/// assembled from kept pieces (`Reply::Json`'s `kept`): a `Response` serialised by serde, or
/// JSON bytes framed as they are (not copied) behind `{"jsonrpc":"2.0","id":…,"result":`.
fn answer_frame(reply: Reply) -> Option<Outgoing> {
    match reply {
        Reply::Response(r) => match serde_json::to_vec(&r) {
            Ok(body) => Some((vec![header(body.len()), body], false)),
            Err(e) => {
                tracing::error!("a response could not be written as JSON: {e}");
                None
            }
        },
        Reply::Json { id, json, kept } => {
            let id = serde_json::to_string(&id).ok()?;
            let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#);
            let len = head.len() + json.len() + 1;
            let head = format!("Content-Length: {len}\r\n\r\n{head}").into_bytes();
            Some((vec![head, json, b"}".to_vec()], kept))
        }
    }
}

/// The id of an answer, as [`InFlight`] files it.
fn reply_key(reply: &Reply) -> Option<String> {
    match reply {
        Reply::Response(r) => id_key_of(r.id()),
        Reply::Json { id, .. } => id_key_of(id),
    }
}

/// A frame (`Content-Length` header and body, in pieces) whose bytes are all UTF-8, as JSON
/// must be: as it is when they are (checked with `simdutf8`, every outgoing byte), else
/// framed again with each invalid sequence replaced by U+FFFD and a line on stderr (issue 25
/// item 3: a mapped file rewritten in place under a `&str` put raw `\xff\xfe` bytes inside
/// JSON-RPC strings; the watcher then reads the file again, this keeps the wire valid
/// meanwhile). A piece boundary never splits a character (pieces join at JSON structure).
fn utf8_on_the_wire(pieces: Pieces) -> Pieces {
    if pieces.iter().all(|p| simdutf8::basic::from_utf8(p).is_ok()) {
        return pieces;
    }
    let all = pieces.concat();
    let body = find(&all, b"\r\n\r\n").map_or(&all[..], |at| &all[at + 4..]);
    let fixed = String::from_utf8_lossy(body).into_owned().into_bytes();
    tracing::warn!(
        "an outgoing message held bytes that are not UTF-8 (a file changed under \
         its mapping?); they were sent as U+FFFD"
    );
    vec![frame(&fixed)]
}

/// Size of an outgoing message from which the writer hands the heap's free pages back to
/// the system before writing it ([`crate::store::build::release_free_heap`]; for an answer
/// assembled from kept pieces, only when a snapshot was built since the last trim).
const BIG_ANSWER_BYTES: usize = 256 << 10;

/// Most request and notification futures polled at once (tower-lsp-server's `Server`
/// default): a fifth waits until one of them ends.
pub const MAX_CONCURRENCY: usize = 4;

/// Serves `service` (the seam, `crate::lsp::TranscriptService::replies`) with messages read
/// from `input` and answers written to `output`, its `socket` carrying the server's own
/// requests and notifications to the client and the client's responses back, `in_flight` the
/// requests not answered yet (see the module's doc). Returns when the input ends or `exit`
/// arrived, and the answers of the messages read before were written (after `exit`, at
/// most [`EXIT_GRACE`] later).
pub async fn serve<O, S>(
    input: Input,
    output: O,
    service: S,
    socket: ClientSocket,
    in_flight: std::sync::Arc<InFlight>,
) where
    O: std::io::Write + Send + 'static,
    S: Service<Request, Response = Option<Reply>, Error = ExitedError> + Send + 'static,
    S::Future: Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<Outgoing>();

    // The one writer: whole frames, written by a thread of its own straight to `output` (a
    // big answer is written without a copy).
    let writer = tokio::task::spawn_blocking(move || {
        let mut output = output;
        while let Some((f, kept)) = rx.blocking_recv() {
            // A big answer (semantic tokens, code lenses, a view) may have been built as many
            // small blocks, all freed once it was encoded: give their pages back before the
            // client sees it (issue 12, RSS after appends). One assembled from kept pieces
            // freed little: only when a snapshot was built since the last trim.
            if f.iter().map(Vec::len).sum::<usize>() >= BIG_ANSWER_BYTES {
                if kept {
                    crate::store::build::release_free_heap_after_builds();
                } else {
                    crate::store::build::release_free_heap();
                }
            }
            if write_pieces(&mut output, &f).is_err() {
                break;
            }
        }
    });

    // The server's requests and notifications to the client.
    let (mut to_client, mut client_answers) = socket.split();
    let out = tx.clone();
    let server_requests = tokio::spawn(async move {
        while let Some(req) = to_client.next().await {
            let Ok(body) = serde_json::to_vec(&req) else {
                continue;
            };
            if out
                .send((utf8_on_the_wire(vec![header(body.len()), body]), false))
                .is_err()
            {
                break;
            }
        }
    });

    // The answers: futures in arrival order, at most `MAX_CONCURRENCY` polled at once
    // (`Server::serve`'s `buffer_unordered`); the answer of a request the client cancelled
    // on arrival is not written (it was answered then).
    // The queue holds up to `QUEUE_MAX` messages (tower-lsp-server's held 100): the reader
    // waits for a place in it only past that, so a `$/cancelRequest` or an `exit` behind
    // thousands of slow requests is still read on arrival (issue 25 item 7), and a client that
    // sends without end cannot make the server hold all it sent (memory stays bounded).
    let (tasks, mut queued) = mpsc::channel::<BoxFuture<Option<Reply>>>(QUEUE_MAX);
    let out = tx.clone();
    let answered = in_flight.clone();
    let mut answers = tokio::spawn(async move {
        let mut replies = futures::stream::poll_fn(move |cx| queued.poll_recv(cx))
            .buffer_unordered(MAX_CONCURRENCY);
        while let Some(reply) = replies.next().await {
            let Some(reply) = reply else { continue };
            if reply_key(&reply).is_some_and(|k| answered.answered(&k)) {
                continue;
            }
            let Some((pieces, kept)) = answer_frame(reply) else {
                continue;
            };
            if out.send((utf8_on_the_wire(pieces), kept)).is_err() {
                break;
            }
        }
    });

    // The reader: a thread of its own reading the client's bytes straight into the decoder
    // (see `Input`), parsing each message and calling the service in arrival order. It is
    // not joined: at the end it may be waiting in a read of the client's pipe.
    let rt = tokio::runtime::Handle::current();
    // A weak sender: the writer ends once the answers end, while this thread may still wait
    // for the client's next bytes.
    let errors = tx.downgrade();
    drop(tx);
    let send = move |f: Pieces| {
        if let Some(tx) = errors.upgrade() {
            let _ = tx.send((f, false));
        }
    };
    // `exit` takes effect on arrival (issue 25 item 7: it waited 14 s behind 120 queued
    // requests).
    let exited = std::sync::Arc::new(tokio::sync::Notify::new());
    let exit_seen = exited.clone();
    // Messages handed to the service and not answered yet.
    let running = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let inbound = move || {
        let mut input = input;
        let mut service = service;
        let mut dec = Decoder::default();
        loop {
            match dec.read_from(&mut input) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            while let Some(f) = dec.next_frame() {
                match f {
                    Frame::Body(b) => match parse(b) {
                        Ok(Incoming::Request(req)) => {
                            match arrival(&req) {
                                Arrival::Request(id) if !in_flight.begin(&id) => {
                                    send(vec![duplicate_answer(&id)]);
                                    continue;
                                }
                                Arrival::Request(_) => {}
                                Arrival::Shutdown(id) => {
                                    in_flight.shutdown.store(true, Ordering::SeqCst);
                                    in_flight.begin(&id);
                                }
                                Arrival::Cancel(id) if in_flight.cancel(&id) => {
                                    send(vec![cancelled_answer(&id)]);
                                }
                                _ => {}
                            }
                            if req.method() == "exit" && req.id().is_none() {
                                // The messages read before `exit` are given a moment to be
                                // answered (a pipelined `shutdown` gets its `null`; exit
                                // cancels what still runs), then the server exits.
                                exit_seen.notify_one();
                                let t0 = std::time::Instant::now();
                                while running.load(Ordering::SeqCst) > 0
                                    && t0.elapsed() < EXIT_GRACE
                                {
                                    std::thread::sleep(std::time::Duration::from_millis(2));
                                }
                            }
                            let exit = req.method() == "exit" && req.id().is_none();
                            let fut = {
                                let _rt = rt.enter();
                                let mut cx = Context::from_waker(std::task::Waker::noop());
                                if let Poll::Ready(Err(e)) = service.poll_ready(&mut cx) {
                                    tracing::warn!("{e}");
                                    return;
                                }
                                service.call(req)
                            };
                            let done = running.clone();
                            done.fetch_add(1, Ordering::SeqCst);
                            let fut: BoxFuture<Option<Reply>> = Box::pin(async move {
                                let reply = fut.await.unwrap_or_else(|e| {
                                    tracing::warn!("{e}");
                                    None
                                });
                                done.fetch_sub(1, Ordering::SeqCst);
                                reply
                            });
                            if tasks.blocking_send(fut).is_err() {
                                return;
                            }
                            if exit {
                                return;
                            }
                        }
                        Ok(Incoming::Response(res)) => {
                            if rt.block_on(client_answers.send(res)).is_err() {
                                return;
                            }
                        }
                        Err(refused) => {
                            tracing::warn!("dropped a malformed message: {}", refused.message);
                            send(vec![frame(&refused.body())]);
                        }
                    },
                    Frame::TooBig(why) => {
                        tracing::warn!("dropped {why}");
                        let resp = json!({"jsonrpc": "2.0", "id": null,
                            "error": {"code": -32600, "message": format!("invalid request: {why}")}});
                        send(vec![frame(resp.to_string().as_bytes())]);
                        // A dropped didOpen is otherwise silent in the editor.
                        let note = json!({"jsonrpc": "2.0", "method": "window/showMessage",
                            "params": {"type": 1, "message": format!("transcript-ls: dropped {why}")}});
                        send(vec![frame(note.to_string().as_bytes())]);
                    }
                    Frame::Garbage(why) => {
                        tracing::warn!("dropped {why}");
                        let resp = json!({"jsonrpc": "2.0", "id": null,
                            "error": {"code": -32700, "message": format!("parse error: {why}")}});
                        send(vec![frame(resp.to_string().as_bytes())]);
                    }
                }
            }
        }
        // End of input (or `exit`): dropping `tasks` lets the answers end once the queued
        // messages are answered.
    };
    if let Err(e) = std::thread::Builder::new()
        .name("transcript-ls-input".into())
        .spawn(inbound)
    {
        tracing::error!("cannot start the input thread: {e}");
        return;
    }
    let exit = tokio::select! {
        _ = &mut answers => false,
        _ = exited.notified() => {
            // The reader gives the answers a moment before it calls `exit`, then they are
            // given as much again, then left (the process exits; answers still running are
            // not sent).
            if tokio::time::timeout(2 * EXIT_GRACE, &mut answers).await.is_err() {
                answers.abort();
            }
            true
        }
    };
    // Let the last frames out.
    server_requests.abort();
    let _ = server_requests.await;
    if exit {
        let _ = tokio::time::timeout(EXIT_GRACE, writer).await;
    } else {
        let _ = writer.await;
    }
}

/// Most messages [`serve`] has read and the service has not taken yet; past that the reader
/// waits for a place (the queue was unbounded for a while, issue 24 item 4: a client sending
/// without end grew it without end).
const QUEUE_MAX: usize = 4096;

/// How long [`serve`] waits for the server to end after `exit` arrived (issue 25 item 7).
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_millis(200);

/// The process's standard output for [`serve`]'s writer: a duplicate of its descriptor,
/// written without std's line buffering (which searched every frame for its last line break
/// and copied the frame into its buffer; issue 12: a 1 MB answer per append);
/// `std::io::stdout()` where it cannot be duplicated.
pub fn raw_stdout() -> Box<dyn std::io::Write + Send> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() {
            return Box::new(std::fs::File::from(fd));
        }
    }
    Box::new(std::io::stdout())
}

/// What [`serve`] reads the client's messages from, on a thread of its own (issue 12: tokio's
/// `stdin()` read each piece of a 100 MB `didOpen` on its blocking pool into a buffer of its
/// own, then copied it into the decoder's, with two thread hand-overs per 64 KiB).
pub enum Input {
    /// A file descriptor (the process's standard input), read straight into the decoder's
    /// buffer.
    #[cfg(unix)]
    Fd(std::fs::File),
    /// Any reader (where there is no descriptor to read): its room is zeroed before each read.
    Reader(Box<dyn std::io::Read + Send>),
}

impl Input {
    /// The process's standard input: a duplicate of its descriptor, whose pipe (when it is
    /// one) is enlarged to take 1 MiB at a time (fewer reads and wake-ups for a big
    /// `didOpen`; the kernel caps it at `/proc/sys/fs/pipe-max-size`, errors are ignored).
    pub fn stdin() -> Input {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            if let Ok(fd) = std::io::stdin().as_fd().try_clone_to_owned() {
                #[cfg(target_os = "linux")]
                // SAFETY: fcntl on a descriptor we own; F_SETPIPE_SZ takes an int and fails
                // harmlessly (EBADF, EINVAL, EPERM) on anything but a pipe it may resize.
                unsafe {
                    use std::os::fd::AsRawFd;
                    libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20);
                }
                return Input::Fd(std::fs::File::from(fd));
            }
        }
        Input::Reader(Box::new(std::io::stdin()))
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use std::io::Read;
        loop {
            let r = match self {
                #[cfg(unix)]
                Input::Fd(f) => f.read(buf),
                Input::Reader(r) => r.read(buf),
            };
            match r {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => return r,
            }
        }
    }

    /// Reads once into the spare capacity of `buf` (at least one byte of it), extending its
    /// length by the bytes read.
    fn read_into_spare(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        let len = buf.len();
        let room = buf.capacity() - len;
        match self {
            #[cfg(unix)]
            Input::Fd(f) => {
                use std::os::fd::AsRawFd;
                let n = loop {
                    // SAFETY: `read(2)` writes at most `room` bytes at the vector's spare
                    // capacity (allocated, `room` bytes long) through a raw pointer; nothing
                    // reads that memory before `set_len` below covers what was written.
                    let n = unsafe {
                        libc::read(
                            f.as_raw_fd(),
                            buf.as_mut_ptr().add(len).cast::<libc::c_void>(),
                            room,
                        )
                    };
                    if n >= 0 {
                        break n as usize;
                    }
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                };
                // SAFETY: `read(2)` initialised `n <= room` bytes after `len`.
                unsafe { buf.set_len(len + n.min(room)) };
                Ok(n)
            }
            Input::Reader(_) => {
                buf.resize(len + room, 0);
                let r = self.read(&mut buf[len..]);
                buf.truncate(len + *r.as_ref().unwrap_or(&0));
                r
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A big body is handed over without a copy and the decoder does not keep its buffer
    /// (issue 12: a 100 MB didOpen left twice its size allocated in the decoder).
    #[test]
    fn a_big_body_leaves_no_big_buffer_behind() {
        let body = vec![b' '; 4 << 20];
        let mut d = Decoder::default();
        let framed = frame(&body);
        for chunk in framed.chunks(64 * 1024) {
            d.push(chunk);
            if let Some(f) = d.next_frame() {
                assert_eq!(f, Frame::Body(body.clone()));
            }
        }
        assert!(
            d.buf.capacity() <= KEPT_BUFFER_BYTES,
            "{}",
            d.buf.capacity()
        );
        // Two messages in one read: the second is still decoded.
        let mut two = frame(&body);
        two.extend_from_slice(&frame(b"{}"));
        d.push(&two);
        assert_eq!(d.next_frame(), Some(Frame::Body(body)));
        assert!(
            d.buf.capacity() <= KEPT_BUFFER_BYTES,
            "{}",
            d.buf.capacity()
        );
        assert_eq!(d.next_frame(), Some(Frame::Body(b"{}".to_vec())));
    }

    fn frames(bytes: &[u8]) -> Vec<Frame> {
        let mut d = Decoder::default();
        d.push(bytes);
        std::iter::from_fn(|| d.next_frame()).collect()
    }

    #[test]
    fn splits_frames_and_resyncs_after_garbage() {
        let mut input = frame(b"{\"a\":1}");
        input.extend_from_slice(b"junk\r\n");
        input.extend_from_slice(&frame(b"{\"b\":2}"));
        input.extend_from_slice(b"Content-Type: x\r\n\r\n");
        input.extend_from_slice(&frame(b"{}"));
        assert_eq!(
            frames(&input),
            vec![
                Frame::Body(b"{\"a\":1}".to_vec()),
                Frame::Garbage("6 bytes that are not an LSP message".to_string()),
                Frame::Body(b"{\"b\":2}".to_vec()),
                Frame::Garbage("a header block without Content-Length".to_string()),
                Frame::Body(b"{}".to_vec()),
            ]
        );
    }

    /// Issue 25, Low list: a byte order mark before a header, a header line other than
    /// `Content-…` first, and a lowercase `content-length` after garbage are read (a BOM or an
    /// unknown header gave a spurious ParseError; after junk, only `Content-` was searched
    /// for), whole or byte by byte.
    #[test]
    fn a_bom_an_unknown_header_and_a_lowercase_header_after_junk_are_read() {
        let mut input = b"\xef\xbb\xbf".to_vec();
        input.extend_from_slice(&frame(b"{\"a\":1}"));
        input.extend_from_slice(b"X-Trace: 7\r\nContent-Length: 7\r\n\r\n{\"b\":2}");
        input.extend_from_slice(b"junk!\r\ncontent-length: 2\r\n\r\n{}");
        let want = vec![
            Frame::Body(b"{\"a\":1}".to_vec()),
            Frame::Body(b"{\"b\":2}".to_vec()),
            Frame::Garbage("7 bytes that are not an LSP message".to_string()),
            Frame::Body(b"{}".to_vec()),
        ];
        assert_eq!(frames(&input), want);
        let mut d = Decoder::default();
        let mut got = Vec::new();
        for b in &input {
            d.push(std::slice::from_ref(b));
            got.extend(std::iter::from_fn(|| d.next_frame()));
        }
        assert_eq!(got, want);
    }

    /// Issue 25 item 3: a message whose bytes are not all UTF-8 (text read through a mapping
    /// of a file rewritten in place) goes out with U+FFFD in their place and the right
    /// `Content-Length`; a valid one goes out as it is, in its pieces.
    #[test]
    fn only_utf8_goes_on_the_wire() {
        let ok = vec![header(9), br#"{"a":"\u00e9"}"#[..9].to_vec()];
        assert_eq!(utf8_on_the_wire(ok.clone()), ok);
        let body = b"{\"r\":\"a\xff\xfe\x80\xc3(\"}";
        let pieces = vec![header(body.len()), body[..6].to_vec(), body[6..].to_vec()];
        let out = utf8_on_the_wire(pieces);
        let want = "{\"r\":\"a\u{fffd}\u{fffd}\u{fffd}\u{fffd}(\"}";
        assert_eq!(out, vec![frame(want.as_bytes())]);
        let v: Value = serde_json::from_str(want).unwrap();
        assert_eq!(v["r"], "a\u{fffd}\u{fffd}\u{fffd}\u{fffd}(");
    }

    /// Issue 25 item 9: a header ended by `\n\n` (or lines ended by `\n`, or a mix) ends at
    /// its own blank line; the next well-formed request is not swallowed.
    #[test]
    fn a_header_ends_at_the_first_blank_line_of_either_kind() {
        let mut input = b"Content-Length: 7\n\n{\"a\":1}".to_vec();
        input.extend_from_slice(&frame(b"{\"b\":2}"));
        input.extend_from_slice(b"Content-Length: 2\r\n\n[]");
        input.extend_from_slice(b"Content-Length: 2\nContent-Type: x\n\r\n{}");
        input.extend_from_slice(&frame(b"{\"c\":3}"));
        let want = vec![
            Frame::Body(b"{\"a\":1}".to_vec()),
            Frame::Body(b"{\"b\":2}".to_vec()),
            Frame::Body(b"[]".to_vec()),
            Frame::Body(b"{}".to_vec()),
            Frame::Body(b"{\"c\":3}".to_vec()),
        ];
        assert_eq!(frames(&input), want);
        // Byte by byte: a `\r` or `\n` at the end of what has arrived waits for more.
        let mut d = Decoder::default();
        let mut got = Vec::new();
        for b in &input {
            d.push(std::slice::from_ref(b));
            got.extend(std::iter::from_fn(|| d.next_frame()));
        }
        assert_eq!(got, want);
        assert_eq!(header_end(b"A: 1\r\n\r"), None);
        assert_eq!(header_end(b"A: 1\r\n"), None);
        assert_eq!(header_end(b"A: 1\r\n\r\nx"), Some((4, 8)));
        assert_eq!(header_end(b"A: 1\n\nx"), Some((4, 6)));
    }

    #[test]
    fn byte_by_byte_equals_whole() {
        let mut input = frame("{\"é\":1}".as_bytes());
        input.extend_from_slice(&frame(b"[]"));
        let mut d = Decoder::default();
        let mut got = Vec::new();
        for b in &input {
            d.push(std::slice::from_ref(b));
            while let Some(f) = d.next_frame() {
                got.push(f);
            }
        }
        assert_eq!(got, frames(&input));
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn cancels_and_requests_are_seen_on_the_way_in() {
        let on_arrival = |b: &[u8]| match parse(b.to_vec()) {
            Ok(Incoming::Request(req)) => Some(arrival(&req)),
            _ => None,
        };
        let cancel = br#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"x"}}"#;
        assert_eq!(on_arrival(cancel), Some(Arrival::Cancel(r#""x""#.into())));
        let request = br#"{"jsonrpc":"2.0","id":3,"method":"transcript/stats","params":{}}"#;
        assert_eq!(on_arrival(request), Some(Arrival::Request("3".into())));
        let shutdown = br#"{"jsonrpc":"2.0","id":"s","method":"shutdown"}"#;
        assert_eq!(
            on_arrival(shutdown),
            Some(Arrival::Shutdown(r#""s""#.into()))
        );
        let reply = br#"{"jsonrpc":"2.0","id":3,"result":null}"#;
        assert!(matches!(parse(reply.to_vec()), Ok(Incoming::Response(_))));
        let f = InFlight::default();
        assert!(f.begin("3"));
        assert!(!f.begin("3"), "a second request with an open id is refused");
        assert!(!f.cancel("4"), "an unknown id is not answered");
        assert!(f.cancel("3"));
        assert!(!f.cancel("3"), "a second cancel is not answered again");
        assert!(f.answered("3"), "the server's late answer is dropped");
        assert!(!f.answered("3"));
        assert_eq!(f.open(), 0);
        assert!(f.begin("8"));
        assert!(
            !f.answered("8"),
            "an answer to a request not cancelled is written"
        );
    }

    #[test]
    fn checks_bodies_as_tower_lsp_server_parses_them() {
        assert!(check(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{}}"#).is_ok());
        assert!(check(br#"{"jsonrpc":"2.0","id":1,"result":null}"#).is_ok());
        let code = |b: &[u8]| check(b).unwrap_err().code;
        assert_eq!(code(b"{not json"), -32700);
        assert_eq!(
            code(br#"{"jsonrpc":"2.0","id":1,"method":"x"} trailing"#),
            -32700
        );
        assert_eq!(code(br#"[{"jsonrpc":"2.0","id":1,"method":"x"}]"#), -32600);
        let r = check(br#"{"jsonrpc":"1.0","id":7,"method":"x"}"#).unwrap_err();
        assert_eq!((r.id.as_str(), r.code), ("7", -32600));
        // Ids tower-lsp-server cannot read are echoed as written, not as floats.
        for id in ["1e3", "18446744073709551616", "1.5"] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"shutdown"}}"#);
            let r = check(body.as_bytes()).unwrap_err();
            assert_eq!(
                String::from_utf8(r.body()).unwrap(),
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32600,"message":"invalid request: an id must be an integer or a string, not {id}"}}}}"#
                )
            );
        }
        assert_eq!(code(&[0xff, 0xfe]), -32700);
    }

    /// A string id with a lone surrogate escape is refused under the id as written; a paired
    /// surrogate, or a lone one elsewhere in the message, is no reason to refuse.
    #[test]
    fn a_lone_surrogate_id_is_refused_as_written() {
        let r = lone_surrogate_id(br#"{"jsonrpc":"2.0","id":"a\ud800","method":"shutdown"}"#)
            .expect("refused");
        assert_eq!(
            String::from_utf8(r.body()).unwrap(),
            r#"{"jsonrpc":"2.0","id":"a\ud800","error":{"code":-32600,"message":"invalid request: an id must be a string of Unicode characters, not \"a\\ud800\" (a lone surrogate)"}}"#
        );
        for ok in [
            &br#"{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"x"}"#[..],
            br#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"t":"\ud800"}}"#,
            br#"{"jsonrpc":"2.0","method":"x","params":{"t":"\ud800"}}"#,
        ] {
            assert!(
                lone_surrogate_id(ok).is_none(),
                "{}",
                String::from_utf8_lossy(ok)
            );
        }
    }

    /// A body over the limit is refused with a message naming both sizes, and its bytes are
    /// skipped without being kept; the limit is asked only for bodies over
    /// [`ALWAYS_ACCEPTED_BYTES`].
    #[test]
    fn oversized_body_is_skipped() {
        fn limit() -> usize {
            ALWAYS_ACCEPTED_BYTES + (1 << 20)
        }
        let mut d = Decoder::with_limit(limit);
        let n = limit() + 10;
        d.push(format!("Content-Length: {n}\r\n\r\nabc").as_bytes());
        match d.next_frame() {
            Some(Frame::TooBig(why)) => assert!(
                why.starts_with("a message of 257 MiB, more than the 257 MiB the server takes"),
                "{why}"
            ),
            other => panic!("{other:?}"),
        }
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..n >> 20 {
            d.push(&chunk);
            assert_eq!(d.next_frame(), None);
            assert!(d.buf.capacity() < 1 << 20);
        }
        d.push(&vec![b'x'; (n & ((1 << 20) - 1)) - 3]);
        d.push(&frame(b"{}"));
        assert_eq!(d.next_frame(), Some(Frame::Body(b"{}".to_vec())));
    }

    /// A didOpen's text comes out of its body decoded, whatever the order of the members, and
    /// the params left name the document; anything else is given back untouched.
    #[test]
    fn split_did_open_takes_the_text_out_of_the_body() {
        let text = "{\"type\":\"user\",\"message\":{\"content\":\"é\\n😀\"}}\n\u{1}\t/\\";
        let bodies = [
            json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument":
                {"uri": "file:///t/a%20b.jsonl", "languageId": "jsonl", "version": 3, "text": text}}})
            .to_string(),
            // Params first, text before the uri, extra members (Neovim's encoder orders keys
            // as it likes).
            format!(
                r#"{{"params":{{"textDocument":{{"text":{},"version":3,"uri":"file:///t/a%20b.jsonl","languageId":"jsonl","x":[1]}}}},"jsonrpc":"2.0","method":"textDocument/didOpen"}}"#,
                serde_json::to_string(text).unwrap()
            ),
        ];
        for body in bodies {
            let req = split_did_open(body.into_bytes()).unwrap();
            assert_eq!((req.method(), req.id()), ("textDocument/didOpen", None));
            assert_eq!(
                req.params(),
                Some(&json!({"textDocument": {"uri": "file:///t/a%20b.jsonl",
                    "languageId": "jsonl", "version": 3, "text": text}}))
            );
        }
        // A lone surrogate escape (which serde refuses in a decoded string) becomes U+FFFD.
        let body = r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a","languageId":"","version":1,"text":"x\ud800y"}}}"#;
        assert_eq!(text_of(split_did_open(body.into()).unwrap()), "x\u{FFFD}y");
        let untouched = [
            r#"{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///a","version":2},"contentChanges":[{"text":"textDocument/didOpen"}]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a","languageId":"","version":1,"text":""}}}"#,
            r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a","languageId":"","version":1,"text":7}}}"#,
            r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a","version":1,"text":""}}}"#,
            r#"{"jsonrpc":"1.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a","languageId":"","version":1,"text":""}}}"#,
            r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a","languageId":"","version":1,"text":"\q"}}}"#,
            r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a","languageId":"","version":1,"text":""}}} x"#,
        ];
        for body in untouched {
            assert_eq!(
                split_did_open(body.into()),
                Err(body.as_bytes().to_vec()),
                "{body}"
            );
        }
        assert_eq!(split_did_open(vec![0xff, 0xfe]), Err(vec![0xff, 0xfe]));
    }

    /// The text of a `didOpen` request made by [`split_did_open`].
    fn text_of(req: Request) -> String {
        let (_, _, params) = req.into_parts();
        match params {
            Some(Value::Object(mut p)) => match p.remove("textDocument") {
                Some(Value::Object(mut td)) => match td.remove("text") {
                    Some(Value::String(t)) => t,
                    other => panic!("text {other:?}"),
                },
                other => panic!("textDocument {other:?}"),
            },
            other => panic!("params {other:?}"),
        }
    }

    /// A didOpen body with `text` (raw literal contents, unchecked) and the given members
    /// before and after it.
    fn open_body(before: &str, text: &[u8], after: &str) -> Vec<u8> {
        let mut b = format!(
            r#"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"file:///a","languageId":"jsonl","version":1{before},"text":""#
        )
        .into_bytes();
        b.extend_from_slice(text);
        b.extend_from_slice(format!(r#""{after}}}}}}}"#).as_bytes());
        b
    }

    /// The text is found by the message's structure (members and values that look like it
    /// before it, a key spelled with an escape) and checked in the same pass: a text
    /// serde_json refuses gives the body back, which the usual way answers as before; a message
    /// refused after its text was decoded is given back as the same JSON.
    #[test]
    fn split_did_open_checks_the_text_and_gives_back_what_it_refuses() {
        let text = "line \"one\" é😀 \\ /\n\t{\"text\":\"no\"}\n";
        let lit = serde_json::to_string(text).unwrap();
        let lit = &lit[1..lit.len() - 1];
        // Members before the text that hold quotes, braces and a "text" of their own.
        let decoy = r#","x":{"text":"decoy","a":["}",{"b":"\"text\":"}]},"y":-1.5e3,"z":null"#;
        let got = text_of(split_did_open(open_body(decoy, lit.as_bytes(), "")).unwrap());
        assert_eq!(got, text);
        // The key spelled with an escape, and longer escapes than serde_json writes.
        let long = r#"\u006c\u0069ne \"one\" \u00e9\ud83d\ude00 \\ \/\n\t{\"text\":\"no\"}\u000A"#;
        let body = String::from_utf8(open_body("", long.as_bytes(), ""))
            .unwrap()
            .replace(r#","text":"#, r#","te\u0078t":"#);
        let req = split_did_open(body.into_bytes()).unwrap();
        assert_eq!(req.params().unwrap()["textDocument"]["uri"], "file:///a");
        assert_eq!(text_of(req), text);

        // Refused inside the text: the body comes back, untouched from the refused byte on,
        // and `check` refuses it as it refuses the original.
        let refused: [(&[u8], &[u8]); 6] = [
            (b"good \\u00e9 part then \xff\xfe", b"\xff\xfe"),
            (b"good \\/ part then a raw \x01 control", b"\x01 control"),
            (b"good \\\" part then \\q", b"\\q"),
            (b"good part then \\u12", b"\\u12"),
            (b"lone \\ud800 surrogate then \xc3", b"\xc3"),
            (b"raw\nnewline", b"\nnewline"),
        ];
        let code = |b: &[u8]| json!(check(b).unwrap_err().code);
        for (t, from) in refused {
            let original = open_body("", t, "");
            let back = split_did_open(original.clone()).unwrap_err();
            let shown = String::from_utf8_lossy(t);
            assert_eq!(code(&back), code(&original), "{shown}");
            assert_eq!(code(&back), json!(-32700), "{shown}");
            assert!(back.ends_with(&[from, b"\"}}}"].concat()), "{shown}");
        }
        // An unclosed text (the message ends inside it).
        let mut unclosed = open_body("", br"abc \u00e9", "");
        unclosed.truncate(unclosed.len() - 4);
        let back = split_did_open(unclosed.clone()).unwrap_err();
        assert!(back.ends_with(r#""text":"abc é"#.as_bytes()));
        assert_eq!(code(&back), code(&unclosed));

        // Refused around a text that was fine: the same JSON comes back (its escapes spelled
        // as serde_json writes them), so the usual way sees the same message.
        let refused_after = [
            open_body("", long.as_bytes(), r#","text":"twice""#),
            String::from_utf8(open_body("", long.as_bytes(), ""))
                .unwrap()
                .replace(r#"{"jsonrpc""#, r#"{"id":3,"jsonrpc""#)
                .into_bytes(),
            [open_body("", long.as_bytes(), ""), b" trailing".to_vec()].concat(),
            String::from_utf8(open_body("", long.as_bytes(), ""))
                .unwrap()
                .replace(r#""2.0""#, r#""1.0""#)
                .into_bytes(),
        ];
        for original in refused_after {
            let back = split_did_open(original.clone()).unwrap_err();
            let value = |b: &[u8]| serde_json::from_slice::<Value>(b).map_err(|e| e.classify());
            let shown = String::from_utf8_lossy(&original);
            assert_eq!(value(&back), value(&original), "{shown}");
            assert_eq!(check(&back).is_ok(), check(&original).is_ok(), "{shown}");
            let back = String::from_utf8(back).unwrap();
            assert!(back.contains(&format!(r#""text":"{lit}""#)), "{back}");
        }
    }

    /// The limit follows the memory available: between the floor and the machine's memory.
    #[test]
    fn the_message_limit_is_derived_from_memory() {
        let limit = message_limit();
        assert!(limit >= ALWAYS_ACCEPTED_BYTES);
        if let Some(avail) = crate::source::room::available() {
            assert!(limit as u64 <= (avail / 3 * 2).max(ALWAYS_ACCEPTED_BYTES as u64));
        }
    }

    /// A header whose `Content-Length` is far more than what follows reserves no more than
    /// what arrived (plus a step), not the declared size: a lying or truncated header made the
    /// decoder reserve up to 1 GiB at once, which aborts a server that runs with an address-space
    /// limit (`ulimit -v`) or without overcommit.
    #[test]
    fn a_lying_content_length_reserves_only_what_arrives() {
        let mut d = Decoder::default();
        d.push(format!("Content-Length: {}\r\n\r\n{{\"jsonrpc\"", 1 << 30).as_bytes());
        assert_eq!(d.next_frame(), None);
        assert!(
            d.buf.capacity() <= RESERVE_STEP_BYTES + 1024,
            "{} bytes reserved for 40 bytes received",
            d.buf.capacity()
        );
        // As the body arrives, the reservation follows it and ends at the body's exact size.
        let mut d = Decoder::default();
        let body = vec![b' '; 3 * RESERVE_STEP_BYTES + 5];
        let framed = frame(&body);
        let mut got = None;
        let mut grown = 0;
        for chunk in framed.chunks(READ_BYTES) {
            let cap = d.buf.capacity();
            d.push(chunk);
            if let Some(f) = d.next_frame() {
                got = Some(f);
            } else {
                grown += usize::from(d.buf.capacity() != cap);
                assert!(d.buf.capacity() <= 2 * d.buf.len() + RESERVE_STEP_BYTES);
                assert!(d.buf.capacity() <= framed.len());
            }
        }
        assert_eq!(got, Some(Frame::Body(body)));
        assert!(grown <= 4, "the buffer grew {grown} times");
    }

    /// The writer writes every piece whole and in order, however little the output takes
    /// at a time.
    #[test]
    fn pieces_are_written_whole_through_short_writes() {
        struct Trickle(Vec<u8>);
        impl std::io::Write for Trickle {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                let n = buf.len().min(3);
                self.0.extend_from_slice(&buf[..n]);
                Ok(n)
            }
            fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
                // At most 3 bytes, across pieces.
                let mut n = 0;
                for b in bufs {
                    let k = b.len().min(3 - n);
                    self.0.extend_from_slice(&b[..k]);
                    n += k;
                    if n == 3 {
                        break;
                    }
                }
                Ok(n)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let pieces = vec![
            header(11),
            Vec::new(),
            b"{\"a\":".to_vec(),
            b"[1,2]}".to_vec(),
        ];
        let mut out = Trickle(Vec::new());
        write_pieces(&mut out, &pieces).unwrap();
        assert_eq!(out.0, b"Content-Length: 11\r\n\r\n{\"a\":[1,2]}");
    }

    #[test]
    fn garbage_in_its_own_read_is_reported_once() {
        let mut d = Decoder::default();
        d.push(b"junk\r\nCont");
        assert_eq!(
            d.next_frame(),
            Some(Frame::Garbage(
                "6 bytes that are not an LSP message".to_string()
            ))
        );
        assert_eq!(d.next_frame(), None);
        d.push(b"ent-Length: 2\r\n\r\n{}");
        assert_eq!(d.next_frame(), Some(Frame::Body(b"{}".to_vec())));
    }
}
