//! The agent registry (issue 21 item 1): one [`Agent`] entry per coding agent whose session
//! files this crate reads, holding everything the rest of the program asks of an agent: its id
//! and name, how its records are detected, its default session folders (and the environment
//! variable that moves them), how the session index reads its grown files and links its
//! files, its sub-agent files, and its line reader.
//!
//! Every list of agents elsewhere is derived from [`AGENTS`] (messages, default roots,
//! `Format::as_str`, detection, dispatch) or checked against it by a test (the CLI help,
//! `server/PROTOCOL.md`'s agent table, the Neovim plugin's detector and roots, the VS Code
//! manifest: `tests/it/agents.rs`). Adding an agent: see `CONTRIBUTING.md` at the repository root.
//!
//! The registry holds data and format-level behaviour only (DESIGN.md §1): nothing here knows
//! editors or LSP; the index and the IDE features look agents up here instead of matching on
//! [`Format`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::value::RawValue;

use crate::model::{Format, Span, SubagentFile, Transcript};

/// One agent's line reader: the per-format state that [`crate::formats::Reader`] feeds every
/// complete line of a detected file to, in file order, once each.
pub trait LineReader: std::fmt::Debug + Send + Sync {
    /// Reads the record at `span` (bytes of `source`, without its `\n`; never blank), which is
    /// physical line `line` of the file, into `t`.
    fn line(&mut self, source: &str, line: usize, span: Span, t: &mut Transcript);

    /// Finishes work that spans the lines of one batch (called after each feed; Pi: the
    /// abandoned flags after a branch switch). The default does nothing.
    fn settle(&mut self, _t: &mut Transcript) {}

    /// Whether consecutive bare records this reader pushed may be read as one entry
    /// ([`crate::model::RecordRun`]; issue 25 item 8): the reader keeps nothing per entry
    /// index for a bare record ([`crate::model::Entry::is_bare`]). True for every reader
    /// here; a reader that keeps per-entry state for such records must say no.
    fn joins_bare_runs(&self) -> bool {
        true
    }
}

/// A default session folder of an agent: `~/<home>`, or `$<env>/<under_env>` when the
/// variable `env` is set and not empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DefaultRoot {
    /// The folder relative to `$HOME`, e.g. `.codex/sessions`.
    pub home: &'static str,
    /// The environment variable that moves the agent's home, e.g. `CODEX_HOME`.
    pub env: &'static str,
    /// The folder relative to that variable's value, e.g. `sessions`.
    pub under_env: &'static str,
}

impl DefaultRoot {
    /// The folder as people write it: `~/.codex/sessions`.
    pub fn tilde(&self) -> String {
        format!("~/{}", self.home)
    }

    /// The folder with `env` looked up by `var`: `$<env>/<under_env>` when set and not empty,
    /// else `$HOME/<home>` when `HOME` is set and not empty, else none.
    pub fn resolve(&self, var: &impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
        if let Some(v) = var(self.env).filter(|v| !v.is_empty()) {
            return Some(PathBuf::from(v).join(self.under_env));
        }
        let home = var("HOME").filter(|v| !v.is_empty())?;
        Some(PathBuf::from(home).join(self.home))
    }
}

/// How an agent's session files lie on disk beyond the transcript itself: its sub-agent
/// (child) files and the way back from one to its session.
#[derive(Debug, Clone, Copy)]
pub struct SessionLayout {
    /// The child files of the session whose main transcript is `main`, sorted by path
    /// (missing folders give none, never an error). `child_ids`: the agent ids the main
    /// transcript's spawning calls name (Codex thread ids), only when `main` is the file asked
    /// about.
    pub children: fn(main: &Path, child_ids: &[&str]) -> Vec<SubagentFile>,
    /// The main transcript of the child file at `path`, when `path` is one of this agent's
    /// child files; may read the file's first lines.
    pub main_of: fn(path: &Path) -> Option<PathBuf>,
    /// True when the session index may call `main_of` to link a child to its session; false
    /// when the child file names its parent itself (Codex `parent_session`, linked by id) and
    /// `main_of` would read files.
    pub index_by_path: bool,
}

/// Files beside a transcript that add to what its lines say (a sidecar, a parent session): read
/// by whoever reads the transcript from a path (the open document, the session index, the
/// CLI), after its lines.
#[derive(Debug, Clone, Copy)]
pub struct Beside {
    /// True when `path` has such files (checked before the transcript is read: a document
    /// whose transcript is changed afterwards is copied, not lent, by its reader).
    pub applies: fn(path: &Path) -> bool,
    /// Adds what they say to `t`, read from the file at `path` (nothing when they are
    /// missing or unreadable; never an error).
    pub apply: fn(t: &mut Transcript, path: &Path),
}

/// One agent: everything the program asks of it.
#[derive(Debug)]
pub struct Agent {
    /// The format value the model carries for this agent's files.
    pub format: Format,
    /// The stable id: `stats --json` `format`, the protocol's `format` / `agent`, e.g.
    /// `claude-code`.
    pub id: &'static str,
    /// The name for people, e.g. `Claude Code`.
    pub name: &'static str,
    /// Its default session folders (the server's default `roots`, the CLI's `history` /
    /// `blame`, both editors' defaults).
    pub roots: &'static [DefaultRoot],
    /// Detection order: lower is tried first ([`detect_line`]).
    pub detect_rank: u8,
    /// True when one parsed record says the file is this agent's.
    pub detect: fn(&Probe) -> bool,
    /// A fresh line reader for one file.
    pub reader: fn() -> Box<dyn LineReader>,
    /// True when a grown file can be read from its last turn's opening line on (the session
    /// index's tail read, `index::summary::read_tail`): each record reads the same without
    /// what came before the turn. False reads grown files whole.
    pub tail_readable: bool,
    /// For a tail-readable agent: the entry the tail is read from, given the last turn's
    /// opening entry (Codex: the bookkeeping records right before it). `None`: the opener.
    pub tail_start: Option<fn(&Transcript, usize) -> usize>,
    /// Its child files, if the format has them.
    pub layout: Option<SessionLayout>,
    /// Files beside a transcript that add to it (Claude Code's `/btw` aside parent, Kiro's
    /// `<uuid>.json`, Vibe's `meta.json`), if any.
    pub beside: Option<Beside>,
}

/// Every agent, in the order people read them (messages, help, tables).
pub static AGENTS: &[Agent] = &[
    Agent {
        format: Format::ClaudeCode,
        id: "claude-code",
        name: "Claude Code",
        roots: &[DefaultRoot {
            home: ".claude/projects",
            env: "CLAUDE_CONFIG_DIR",
            under_env: "projects",
        }],
        detect_rank: 90,
        detect: super::claude_code::detect,
        reader: || Box::<super::claude_code::State>::default(),
        tail_readable: true,
        tail_start: None,
        layout: Some(SessionLayout {
            children: |main, _| super::claude_code::discover_subagents(main),
            main_of: super::claude_code::subagents::main_of,
            index_by_path: true,
        }),
        beside: Some(Beside {
            applies: super::claude_code::aside::is_aside_file,
            apply: |t, path| {
                super::claude_code::aside::apply(t, path);
            },
        }),
    },
    Agent {
        format: Format::Codex,
        id: "codex",
        name: "Codex",
        roots: &[DefaultRoot {
            home: ".codex/sessions",
            env: "CODEX_HOME",
            under_env: "sessions",
        }],
        detect_rank: 80,
        detect: super::codex::detect,
        reader: || Box::<super::codex::State>::default(),
        tail_readable: true,
        tail_start: Some(super::codex::tail_start),
        layout: Some(SessionLayout {
            children: super::codex_files::children,
            main_of: super::codex_files::parent,
            index_by_path: false,
        }),
        beside: None,
    },
    Agent {
        format: Format::Pi,
        id: "pi",
        name: "Pi",
        roots: &[DefaultRoot {
            home: ".pi/agent/sessions",
            env: "PI_CODING_AGENT_DIR",
            under_env: "sessions",
        }],
        detect_rank: 20,
        detect: super::pi::detect,
        reader: || Box::<super::pi::State>::default(),
        tail_readable: false,
        tail_start: None,
        layout: None,
        beside: None,
    },
    Agent {
        format: Format::CopilotCli,
        id: "copilot-cli",
        name: "Copilot CLI",
        roots: &[DefaultRoot {
            home: ".copilot/session-state",
            env: "COPILOT_HOME",
            under_env: "session-state",
        }],
        detect_rank: 10,
        detect: super::copilot::detect,
        reader: || Box::<super::copilot::State>::default(),
        tail_readable: false,
        tail_start: None,
        layout: None,
        beside: None,
    },
    Agent {
        format: Format::KiroCli,
        id: "kiro-cli",
        name: "Kiro CLI",
        roots: &[DefaultRoot {
            home: ".kiro/sessions/cli",
            env: "KIRO_HOME",
            under_env: "sessions/cli",
        }],
        detect_rank: 50,
        detect: super::kiro::detect,
        reader: || Box::<super::kiro::State>::default(),
        // A rewound fork repeats earlier prompt ids: only the whole file tells them apart.
        tail_readable: false,
        tail_start: None,
        layout: None,
        beside: Some(Beside {
            applies: |p| super::kiro::sidecar_path(p).is_some_and(|s| s.is_file()),
            apply: |t, path| {
                super::kiro::apply_sidecar(t, path);
            },
        }),
    },
    Agent {
        format: Format::MistralVibe,
        id: "mistral-vibe",
        name: "Mistral Vibe",
        roots: &[DefaultRoot {
            home: ".vibe/logs/session",
            env: "VIBE_HOME",
            under_env: "logs/session",
        }],
        detect_rank: 60,
        detect: super::vibe::detect,
        reader: || Box::<super::vibe::State>::default(),
        tail_readable: false,
        tail_start: None,
        layout: Some(SessionLayout {
            children: super::vibe::children,
            main_of: super::vibe::main_of,
            index_by_path: true,
        }),
        beside: Some(Beside {
            applies: |p| p.parent().is_some_and(|d| d.join("meta.json").is_file()),
            apply: |t, path| {
                super::vibe::apply_meta(t, path);
            },
        }),
    },
    Agent {
        format: Format::GeminiCli,
        id: "gemini-cli",
        name: "Gemini CLI",
        // gemini-cli's `homedir()` is `$GEMINI_CLI_HOME` when set: its sessions are then
        // under `$GEMINI_CLI_HOME/.gemini/tmp`.
        roots: &[DefaultRoot {
            home: ".gemini/tmp",
            env: "GEMINI_CLI_HOME",
            under_env: ".gemini/tmp",
        }],
        detect_rank: 30,
        detect: super::gemini::detect,
        reader: || Box::<super::gemini::State>::default(),
        // A mutation log: a record reads right only after the history it rewrites.
        tail_readable: false,
        tail_start: None,
        layout: Some(SessionLayout {
            children: super::gemini::children,
            main_of: super::gemini::main_of,
            index_by_path: true,
        }),
        beside: None,
    },
    Agent {
        format: Format::Antigravity,
        id: "antigravity",
        name: "Antigravity CLI",
        // The CLI's store and the IDE's (same bytes). agy moves `~/.gemini` only with its
        // hidden `--gemini_dir` flag; `GEMINI_CLI_HOME` (Gemini CLI's variable for the folder
        // holding `.gemini`) moves both here, as it moves Gemini CLI's.
        roots: &[
            DefaultRoot {
                home: ".gemini/antigravity-cli/brain",
                env: "GEMINI_CLI_HOME",
                under_env: ".gemini/antigravity-cli/brain",
            },
            DefaultRoot {
                home: ".gemini/antigravity/brain",
                env: "GEMINI_CLI_HOME",
                under_env: ".gemini/antigravity/brain",
            },
        ],
        detect_rank: 35,
        detect: super::antigravity::detect,
        reader: || Box::<super::antigravity::State>::default(),
        // The model, the calls waiting for results and the session's step indices carry
        // across turns: grown files are read whole.
        tail_readable: false,
        tail_start: None,
        layout: Some(SessionLayout {
            children: super::antigravity::children,
            main_of: |_| None,
            index_by_path: false,
        }),
        beside: None,
    },
];

/// The entry of `format`; `None` for [`Format::Unknown`].
pub fn of(format: Format) -> Option<&'static Agent> {
    AGENTS.iter().find(|a| a.format == format)
}

impl Format {
    /// The stable name used in `stats --json` and in the protocol: `claude-code`, `codex`,
    /// `pi`, `copilot-cli`, `gemini-cli`, `unknown`: the registry's [`Agent::id`].
    pub fn as_str(self) -> &'static str {
        of(self).map_or("unknown", |a| a.id)
    }

    /// The agent's name for people: `Claude Code`, `Codex`, `Pi`, `Copilot CLI`, `unknown
    /// format`: the registry's [`Agent::name`].
    pub fn display_name(self) -> &'static str {
        of(self).map_or("unknown format", |a| a.name)
    }
}

/// The entry whose id is `id` (`claude-code`, …).
pub fn by_id(id: &str) -> Option<&'static Agent> {
    AGENTS.iter().find(|a| a.id == id)
}

/// The agents' names as one phrase, the last joined by `last` (`or`, `and`): `Claude Code,
/// Codex, Pi, Copilot CLI or Antigravity CLI`.
pub fn names(last: &str) -> String {
    let mut out = String::new();
    for (i, a) in AGENTS.iter().enumerate() {
        if i > 0 {
            out.push_str(if i + 1 == AGENTS.len() { " " } else { ", " });
            if i + 1 == AGENTS.len() {
                out.push_str(last);
                out.push(' ');
            }
        }
        out.push_str(a.name);
    }
    out
}

/// Every agent's default session folders, in registry order, resolved from the process
/// environment (see [`DefaultRoot::resolve`]).
pub fn default_roots() -> Vec<PathBuf> {
    default_roots_with(&|k| std::env::var_os(k))
}

/// [`default_roots`] with the environment given by `var` (tests).
pub fn default_roots_with(var: &impl Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    AGENTS
        .iter()
        .flat_map(|a| a.roots.iter())
        .filter_map(|r| r.resolve(var))
        .collect()
}

/// The main transcript of a child (sub-agent) file, by any agent's layout; any other path is
/// its own main.
pub fn main_of(path: &Path) -> PathBuf {
    AGENTS
        .iter()
        .filter_map(|a| a.layout)
        .find_map(|l| (l.main_of)(path))
        .unwrap_or_else(|| path.to_path_buf())
}

/// True when some agent has files beside `path` that add to its transcript
/// ([`Agent::beside`]).
pub fn has_beside(path: &Path) -> bool {
    AGENTS
        .iter()
        .filter_map(|a| a.beside)
        .any(|b| (b.applies)(path))
}

/// Adds what the files beside `path` say to `t`, the transcript read from it (each agent's
/// [`Beside::apply`] checks that `t` is its format).
pub fn apply_beside(t: &mut Transcript, path: &Path) {
    for b in AGENTS.iter().filter_map(|a| a.beside) {
        if (b.applies)(path) {
            (b.apply)(t, path);
        }
    }
}

/// The agents in detection order.
fn detection_order() -> &'static [&'static Agent] {
    static ORDER: std::sync::OnceLock<Vec<&'static Agent>> = std::sync::OnceLock::new();
    ORDER.get_or_init(|| {
        let mut v: Vec<&Agent> = AGENTS.iter().collect();
        v.sort_by_key(|a| a.detect_rank);
        v
    })
}

/// Detects the format of one line (one JSON record), if it tells: the first agent, in
/// detection order (`detect_rank`), whose `detect` accepts it. A line that is not a JSON
/// object, or whose `type` is neither a string nor `null`, tells nothing.
pub fn detect_line(line: &str) -> Option<Format> {
    let probe = Probe::new(line)?;
    detection_order()
        .iter()
        .find(|a| (a.detect)(&probe))
        .map(|a| a.format)
}

/// One record's top-level keys, parsed for detection only (values kept raw and unread).
#[derive(Debug)]
pub struct Probe<'a> {
    fields: HashMap<Cow<'a, str>, &'a RawValue>,
    ty: Option<Cow<'a, str>>,
}

impl<'a> Probe<'a> {
    /// Parses `line`; `None` when it is not a JSON object or its `type` is neither a string
    /// nor `null`.
    pub fn new(line: &'a str) -> Option<Probe<'a>> {
        #[derive(serde::Deserialize, PartialEq, Eq, Hash)]
        struct Key<'a>(#[serde(borrow)] Cow<'a, str>);
        let map: HashMap<Key<'a>, &'a RawValue> = serde_json::from_str(line).ok()?;
        let fields: HashMap<Cow<'a, str>, &'a RawValue> =
            map.into_iter().map(|(k, v)| (k.0, v)).collect();
        let ty = match fields.get("type") {
            None => None,
            Some(raw) if raw.get() == "null" => None,
            Some(raw) => Some(serde_json::from_str::<Cow<'a, str>>(raw.get()).ok()?),
        };
        Some(Probe { fields, ty })
    }

    /// The record's `type` when it is a string.
    pub fn ty(&self) -> Option<&str> {
        self.ty.as_deref()
    }

    /// True when `key` is present, whatever its value (`null` included).
    pub fn has(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }

    /// True when `key` is present with a value other than `null`.
    pub fn val(&self, key: &str) -> bool {
        self.fields.get(key).is_some_and(|v| v.get() != "null")
    }

    /// The raw JSON of `key`'s value, when present.
    pub fn raw(&self, key: &str) -> Option<&'a str> {
        self.fields.get(key).map(|v| v.get())
    }

    /// `key`'s value when it is a JSON string (decoded).
    pub fn str(&self, key: &str) -> Option<Cow<'a, str>> {
        serde_json::from_str::<Cow<'a, str>>(self.raw(key)?).ok()
    }

    /// True for a record with the Claude Code conversation envelope (`uuid` or `sessionId`
    /// not `null`): other agents' detectors leave it alone.
    pub fn claude_envelope(&self) -> bool {
        self.val("uuid") || self.val("sessionId")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_join_the_last_with_the_word_given() {
        assert_eq!(
            names("or"),
            "Claude Code, Codex, Pi, Copilot CLI, Kiro CLI, Mistral Vibe, Gemini CLI or Antigravity CLI"
        );
    }

    #[test]
    fn every_format_but_unknown_has_one_entry_with_unique_id_and_rank() {
        let mut ids: Vec<&str> = AGENTS.iter().map(|a| a.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), AGENTS.len());
        let mut ranks: Vec<u8> = AGENTS.iter().map(|a| a.detect_rank).collect();
        ranks.sort_unstable();
        ranks.dedup();
        assert_eq!(ranks.len(), AGENTS.len());
        assert!(of(Format::Unknown).is_none());
        for a in AGENTS {
            assert_eq!(of(a.format).map(|x| x.id), Some(a.id));
            assert_eq!(by_id(a.id).map(|x| x.format), Some(a.format));
            assert_eq!(a.format.as_str(), a.id);
            assert_eq!(a.format.display_name(), a.name);
            assert!(a.tail_start.is_none() || a.tail_readable, "{}", a.id);
        }
    }

    /// `$HOME/<home>` by default; the agent's variable moves its folder; nothing without a
    /// home.
    #[test]
    fn default_roots_follow_home_and_the_agents_variables() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let got = default_roots_with(&env(&[("HOME", "/h")]));
        assert_eq!(
            got,
            [
                "/h/.claude/projects",
                "/h/.codex/sessions",
                "/h/.pi/agent/sessions",
                "/h/.copilot/session-state",
                "/h/.kiro/sessions/cli",
                "/h/.vibe/logs/session",
                "/h/.gemini/tmp",
                "/h/.gemini/antigravity-cli/brain",
                "/h/.gemini/antigravity/brain",
            ]
            .map(PathBuf::from)
        );
        let got = default_roots_with(&env(&[
            ("HOME", "/h"),
            ("CODEX_HOME", "/c"),
            ("CLAUDE_CONFIG_DIR", ""),
        ]));
        assert_eq!(got[0], PathBuf::from("/h/.claude/projects"));
        assert_eq!(got[1], PathBuf::from("/c/sessions"));
        assert_eq!(default_roots_with(&env(&[])), Vec::<PathBuf>::new());
        assert_eq!(
            default_roots_with(&env(&[("PI_CODING_AGENT_DIR", "/p"), ("KIRO_HOME", "/k")])),
            vec![
                PathBuf::from("/p/sessions"),
                PathBuf::from("/k/sessions/cli")
            ]
        );
        assert_eq!(
            default_roots_with(&env(&[("GEMINI_CLI_HOME", "/g")])),
            vec![
                PathBuf::from("/g/.gemini/tmp"),
                PathBuf::from("/g/.gemini/antigravity-cli/brain"),
                PathBuf::from("/g/.gemini/antigravity/brain")
            ]
        );
    }

    #[test]
    fn probes_tell_null_from_absent_and_refuse_non_objects() {
        let p = Probe::new(r#"{"type":null,"a":null,"b":1,"k\u0065y":"v\n"}"#).unwrap();
        assert_eq!(p.ty(), None);
        assert!(p.has("a") && !p.val("a") && p.val("b") && !p.has("c"));
        assert_eq!(p.str("key").as_deref(), Some("v\n"));
        assert!(Probe::new(r#"["summary"]"#).is_none());
        assert!(Probe::new(r#"{"type":3}"#).is_none());
        assert!(Probe::new("not json").is_none());
    }
}
