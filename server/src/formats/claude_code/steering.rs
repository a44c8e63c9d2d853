//! Pairing of the records that carry a prompt typed while the agent worked (cases 07, 08;
//! FORMATS.md §1.3 `queue-operation`, `attachment/queued_command`).
//!
//! One delivery can be written up to three times: `queue-operation/enqueue` (text),
//! `queue-operation/remove` (text, or `null` in older harnesses) and, from 2.1.9x, an in-DAG
//! `attachment/queued_command` (text or a list of blocks). Exactly one of them must show the
//! text, as [`Role::Steering`]; the others are [`Role::Meta`]. Later lines decide, so earlier
//! entries are revised:
//!
//! * `queued_command` is always the steering record (unless it is a machine notification). It
//!   takes over the text of one earlier unclaimed `enqueue` and one earlier orphan `remove`
//!   with the same `(sessionId, text)`, which become `Meta`; it absorbs one later such
//!   `enqueue` and one later such `remove` too.
//! * An `enqueue` with text is steering until claimed: by a `queued_command` (above), by a
//!   `dequeue` (FIFO per session: the text is then sent as an ordinary prompt, 2.0.x), by a
//!   `popAll`, or by a later user prompt with the same text. A slash command (`/mcp`) or a
//!   `<task-notification>` is never steering (it runs as a command / arrives as a wake-up).
//! * A `remove` with text that matches an earlier `queued_command` or an unclaimed `enqueue` is
//!   `Meta`; otherwise it is an orphan and steering (case 08 C) until a `queued_command` with
//!   its text arrives. A `remove` without text is `Meta` (case 07).
//!
//! Texts are compared after trimming, as a 64-bit hash per `(sessionId, text)`. Memory is
//! bounded: at most [`MAX_PENDING`] records of each kind are remembered.

use std::collections::VecDeque;
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::model::{Role, Transcript};

/// Most records of each pending kind kept for pairing (oldest forgotten first).
pub const MAX_PENDING: usize = 256;

/// A `(sessionId, text)` pair reduced to hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub session: u64,
    pub text: u64,
}

impl Key {
    pub fn new(session: Option<&str>, text: &str) -> Key {
        Key {
            session: session_hash(session),
            text: hash(text.trim()),
        }
    }
}

/// Hash of a session id (`None` and `""` are the same session).
pub fn session_hash(session: Option<&str>) -> u64 {
    hash(session.unwrap_or(""))
}

fn hash(s: &str) -> u64 {
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Enqueue,
    Remove,
}

#[derive(Debug, Clone, Copy)]
struct Claim {
    key: Key,
    entry: usize,
    kind: Kind,
}

#[derive(Debug, Clone, Copy)]
struct Queued {
    session: u64,
    text: Option<u64>,
    entry: usize,
}

#[derive(Debug, Clone, Copy)]
struct Delivery {
    key: Key,
    took_enqueue: bool,
    took_remove: bool,
}

/// Pairing state of one file.
#[derive(Debug, Default)]
pub struct Steering {
    /// Enqueued items not yet dequeued / removed, in order.
    fifo: VecDeque<Queued>,
    /// Records currently shown as steering that a later record may take over.
    claims: Vec<Claim>,
    /// `queued_command` deliveries that may still absorb a later enqueue / remove.
    deliveries: VecDeque<Delivery>,
}

fn push_capped<T>(v: &mut VecDeque<T>, x: T) {
    if v.len() >= MAX_PENDING {
        v.pop_front();
    }
    v.push_back(x);
}

fn set_meta(t: &mut Transcript, idx: usize) {
    if t.entries.get(idx).is_some_and(|e| e.role == Role::Steering)
        && let Some(e) = t.revise(idx)
    {
        e.role = Role::Meta;
    }
}

impl Steering {
    fn add_claim(&mut self, c: Claim) {
        if self.claims.len() >= MAX_PENDING {
            self.claims.remove(0);
        }
        self.claims.push(c);
    }

    /// Takes the first claim of `kind` with `key`, if any, returning its entry index.
    fn take_claim(&mut self, key: Key, kind: Kind) -> Option<usize> {
        let i = self
            .claims
            .iter()
            .position(|c| c.key == key && c.kind == kind)?;
        Some(self.claims.remove(i).entry)
    }

    /// `queue-operation/enqueue` about to be pushed as entry `entry`. `text` is its text when it
    /// has any; `machine` marks slash commands and notifications. Returns its role.
    pub fn enqueue(
        &mut self,
        session: Option<&str>,
        text: Option<&str>,
        machine: bool,
        entry: usize,
    ) -> Role {
        let session_h = session_hash(session);
        let key = text.map(|t| Key::new(session, t));
        push_capped(
            &mut self.fifo,
            Queued {
                session: session_h,
                text: key.map(|k| k.text),
                entry,
            },
        );
        let Some(key) = key else { return Role::Meta };
        if let Some(d) = self
            .deliveries
            .iter_mut()
            .find(|d| d.key == key && !d.took_enqueue)
        {
            d.took_enqueue = true;
            return Role::Meta;
        }
        if machine {
            return Role::Meta;
        }
        self.add_claim(Claim {
            key,
            entry,
            kind: Kind::Enqueue,
        });
        Role::Steering
    }

    /// `queue-operation/dequeue`: the first queued item of the session was sent as an ordinary
    /// prompt, so its enqueue is not steering.
    pub fn dequeue(&mut self, session: Option<&str>, t: &mut Transcript) {
        let s = session_hash(session);
        if let Some(i) = self.fifo.iter().position(|q| q.session == s)
            && let Some(q) = self.fifo.remove(i)
        {
            self.unclaim(q.entry, t);
        }
    }

    /// `queue-operation/popAll`: every queued item of the session went back to the input box.
    pub fn pop_all(&mut self, session: Option<&str>, t: &mut Transcript) {
        let s = session_hash(session);
        let (popped, kept): (Vec<Queued>, Vec<Queued>) =
            self.fifo.drain(..).partition(|q| q.session == s);
        self.fifo = kept.into();
        for q in popped {
            self.unclaim(q.entry, t);
        }
    }

    fn unclaim(&mut self, entry: usize, t: &mut Transcript) {
        self.claims.retain(|c| c.entry != entry);
        set_meta(t, entry);
    }

    /// `queue-operation/remove` about to be pushed as entry `entry`. Returns its role.
    pub fn remove(&mut self, session: Option<&str>, text: Option<&str>, entry: usize) -> Role {
        let s = session_hash(session);
        let key = text.map(|t| Key::new(session, t));
        // The removed item leaves the queue (absorbed or sent); its enqueue keeps its role.
        let at = key
            .and_then(|k| {
                self.fifo
                    .iter()
                    .position(|q| q.session == s && q.text == Some(k.text))
            })
            .or_else(|| self.fifo.iter().position(|q| q.session == s));
        if let Some(i) = at {
            self.fifo.remove(i);
        }
        let Some(key) = key else { return Role::Meta };
        if let Some(d) = self
            .deliveries
            .iter_mut()
            .find(|d| d.key == key && !d.took_remove)
        {
            d.took_remove = true;
            return Role::Meta;
        }
        if self
            .claims
            .iter()
            .any(|c| c.key == key && c.kind == Kind::Enqueue)
        {
            return Role::Meta;
        }
        self.add_claim(Claim {
            key,
            entry,
            kind: Kind::Remove,
        });
        Role::Steering
    }

    /// `attachment/queued_command` about to be pushed as entry `entry`. Returns its role and
    /// revises the earlier records it takes over.
    pub fn queued_command(
        &mut self,
        session: Option<&str>,
        text: Option<&str>,
        machine: bool,
        t: &mut Transcript,
    ) -> Role {
        if machine {
            return Role::Meta;
        }
        if let Some(text) = text {
            let key = Key::new(session, text);
            let e = self.take_claim(key, Kind::Enqueue);
            let r = self.take_claim(key, Kind::Remove);
            for idx in e.iter().chain(r.iter()) {
                set_meta(t, *idx);
            }
            push_capped(
                &mut self.deliveries,
                Delivery {
                    key,
                    took_enqueue: e.is_some(),
                    took_remove: r.is_some(),
                },
            );
        }
        Role::Steering
    }

    /// True when some steering record of the session could be claimed by a prompt (so the
    /// caller needs the prompt's text).
    pub fn has_claims(&self, session: Option<&str>) -> bool {
        let s = session_hash(session);
        self.claims.iter().any(|c| c.key.session == s)
    }

    /// A user prompt (or wake-up) with this text: a steering record with the same text was
    /// delivered as this prompt, so it is not steering.
    pub fn prompt(&mut self, session: Option<&str>, text: &str, t: &mut Transcript) {
        let key = Key::new(session, text);
        while let Some(i) = self.claims.iter().position(|c| c.key == key) {
            let c = self.claims.remove(i);
            set_meta(t, c.entry);
        }
    }
}
