//! Settings (PROTOCOL.md §Settings), from `initializationOptions` and from
//! `workspace/didChangeConfiguration` (section `transcript`). Unknown keys are ignored; a value
//! of the wrong type keeps the previous value and is reported in the log.

use std::path::PathBuf;

use serde_json::Value;

use crate::analysis::{self, Phase};
use crate::source::age::FileState;

/// Which semantic token legend to advertise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenLegend {
    /// The custom types (`prompt`, `finalAnswer`, …) and modifiers.
    #[default]
    Custom,
    /// Standard LSP types only (`keyword`, `string`, `comment`, `function`, …) for clients that
    /// cannot colour custom types.
    Standard,
}

/// The keys of the `transcript` settings object, as PROTOCOL.md, the VS Code extension's
/// `package.json` and the Neovim plugin name them (tests keep the four in step).
pub const SETTING_KEYS: [&str; 9] = [
    "verbose",
    "finalMarker",
    "roots",
    "workspaceFolders",
    "indexCache",
    "timeZone",
    "gatePhases",
    "semanticTokens",
    "fileState",
];

/// The server's settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Verbose view by default (`transcript:` URIs may override with `?verbose=1|0`).
    pub verbose: bool,
    /// Honour `[[OMNISCIO_FINAL]]` / `[[AMC_FINAL]]` (seed 000).
    pub final_marker: bool,
    /// Roots of the session index (sessions and workspace symbols), as configured.
    pub roots: Vec<PathBuf>,
    /// Index the transcripts inside the client's workspace folders too (`workspaceFolders`,
    /// default true; issue 7: the defaults are the agents' folders plus the workspace's own
    /// transcripts).
    pub index_workspace_folders: bool,
    /// The client's workspace folders (`initialize.workspaceFolders`, else `rootUri`; kept
    /// current by `workspace/didChangeWorkspaceFolders`). Not a setting.
    pub workspace_folders: Vec<PathBuf>,
    /// IANA zone for finish times; `None` = system zone.
    pub time_zone: Option<String>,
    /// The gate phase table.
    pub gate_phases: Vec<Phase>,
    /// Keep the session index in a cache file between runs (`indexCache`, default true;
    /// `crate::index::disk::cache_path`).
    pub index_cache: bool,
    /// Legend choice (read at `initialize` only: a legend cannot change afterwards).
    pub semantic_tokens: TokenLegend,
    /// Whether a file is read as finished: by its age (default), always, or never (issue 11).
    pub file_state: FileState,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            verbose: false,
            final_marker: true,
            roots: default_roots(),
            index_workspace_folders: true,
            workspace_folders: Vec::new(),
            index_cache: true,
            time_zone: None,
            gate_phases: analysis::default_phases(),
            semantic_tokens: TokenLegend::Custom,
            file_state: FileState::Auto,
        }
    }
}

/// The agents' own session folders (`index::disk::default_roots`).
pub fn default_roots() -> Vec<PathBuf> {
    crate::index::disk::default_roots()
}

fn expand_home(s: &str) -> PathBuf {
    if let Some(rest) = s.strip_prefix("~/")
        && let Some(h) = std::env::var_os("HOME")
    {
        return PathBuf::from(h).join(rest);
    }
    PathBuf::from(s)
}

impl Settings {
    /// The directories the session index scans and watches: the configured `roots`, then the
    /// workspace folders when `workspaceFolders` is on, each once, in that order.
    pub fn index_roots(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        let folders = self
            .workspace_folders
            .iter()
            .filter(|_| self.index_workspace_folders);
        for r in self.roots.iter().chain(folders) {
            if !out.contains(r) {
                out.push(r.clone());
            }
        }
        out
    }

    /// The analysis options these settings give.
    pub fn analysis_options(&self) -> analysis::Options {
        analysis::Options {
            final_marker: self.final_marker,
            time_zone: self.time_zone.clone(),
            gate_phases: self.gate_phases.clone(),
            file_complete: false,
        }
    }

    /// Applies a settings object: either `{ "transcript": { … } }` or the inner object itself.
    /// Returns one message per ignored value.
    pub fn apply(&mut self, value: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        let obj = match value.get("transcript") {
            Some(v @ Value::Object(_)) => v,
            _ => value,
        };
        let Value::Object(map) = obj else {
            if !obj.is_null() {
                problems.push(format!("settings must be an object, got {obj}"));
            }
            return problems;
        };
        for (k, v) in map {
            match k.as_str() {
                "verbose" => match v.as_bool() {
                    Some(b) => self.verbose = b,
                    None => problems.push(format!("`verbose` must be a boolean, got {v}")),
                },
                "finalMarker" => match v.as_bool() {
                    Some(b) => self.final_marker = b,
                    None => problems.push(format!("`finalMarker` must be a boolean, got {v}")),
                },
                "roots" => match v {
                    Value::Array(items) if items.iter().all(Value::is_string) => {
                        self.roots = items
                            .iter()
                            .filter_map(Value::as_str)
                            .map(expand_home)
                            .collect();
                    }
                    Value::Null => self.roots = default_roots(),
                    _ => problems.push(format!("`roots` must be a list of paths, got {v}")),
                },
                "workspaceFolders" => match v.as_bool() {
                    Some(b) => self.index_workspace_folders = b,
                    None => problems.push(format!("`workspaceFolders` must be a boolean, got {v}")),
                },
                "indexCache" => match v.as_bool() {
                    Some(b) => self.index_cache = b,
                    None => problems.push(format!("`indexCache` must be a boolean, got {v}")),
                },
                "timeZone" => match v {
                    Value::Null => self.time_zone = None,
                    Value::String(s) if s.is_empty() => self.time_zone = None,
                    Value::String(s) => {
                        if jiff::tz::TimeZone::get(s).is_ok() {
                            self.time_zone = Some(s.clone());
                        } else {
                            problems.push(format!("`timeZone`: unknown time zone {s:?}"));
                        }
                    }
                    _ => problems.push(format!("`timeZone` must be a string or null, got {v}")),
                },
                "gatePhases" => match parse_phases(v) {
                    Ok(p) => self.gate_phases = p,
                    Err(e) => problems.push(format!("`gatePhases`: {e}")),
                },
                "fileState" => match v {
                    Value::Null => self.file_state = FileState::Auto,
                    _ => match v.as_str().and_then(FileState::parse) {
                        Some(f) => self.file_state = f,
                        None => problems.push(format!(
                            "`fileState` must be \"auto\", \"complete\" or \"growing\", got {v}"
                        )),
                    },
                },
                "semanticTokens" => match v.as_str() {
                    Some("custom") => self.semantic_tokens = TokenLegend::Custom,
                    Some("standard") => self.semantic_tokens = TokenLegend::Standard,
                    _ => problems.push(format!(
                        "`semanticTokens` must be \"custom\" or \"standard\", got {v}"
                    )),
                },
                _ => {}
            }
        }
        problems
    }
}

/// Parses a phase table: a list of `{ "name": "Plan", "emoji": "📋", "number": 1 }`
/// (`number` optional), at least one phase. `null` restores the default table.
fn parse_phases(v: &Value) -> Result<Vec<Phase>, String> {
    if v.is_null() {
        return Ok(analysis::default_phases());
    }
    let Value::Array(items) = v else {
        return Err(format!("must be a list of phases, got {v}"));
    };
    if items.is_empty() {
        return Err("must hold at least one phase".to_string());
    }
    items
        .iter()
        .map(|p| {
            let name = p
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("phase without a `name`: {p}"))?;
            let emoji = p.get("emoji").and_then(Value::as_str).unwrap_or("●");
            let number = match p.get("number") {
                None | Some(Value::Null) => None,
                Some(n) => Some(
                    n.as_u64()
                        .and_then(|n| u32::try_from(n).ok())
                        .ok_or_else(|| format!("phase `number` must be a small integer: {p}"))?,
                ),
            };
            Ok(Phase {
                name: name.to_string(),
                emoji: emoji.to_string(),
                number,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_key_is_read() {
        // A wrong value for each key is reported by name: `apply` knows every key.
        for key in SETTING_KEYS {
            let mut s = Settings::default();
            let p = s.apply(&json!({ key: {"not": "valid"} }));
            assert_eq!(p.len(), 1, "{key}: {p:?}");
            assert!(p[0].contains(&format!("`{key}`")), "{key}: {p:?}");
        }
    }
    use serde_json::json;

    #[test]
    fn applies_nested_and_flat_settings() {
        let mut s = Settings::default();
        let p = s.apply(
            &json!({"transcript": {"verbose": true, "timeZone": "Europe/Paris",
            "semanticTokens": "standard", "roots": ["/a", "/b"]}}),
        );
        assert!(p.is_empty(), "{p:?}");
        assert!(s.verbose);
        assert_eq!(s.time_zone.as_deref(), Some("Europe/Paris"));
        assert_eq!(s.semantic_tokens, TokenLegend::Standard);
        assert_eq!(s.roots, vec![PathBuf::from("/a"), PathBuf::from("/b")]);
        let p = s.apply(&json!({"finalMarker": "yes", "timeZone": "Mars/Olympus",
            "gatePhases": [{"name": "Plan", "emoji": "P", "number": 1}, {"name": "Ship"}]}));
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(s.final_marker);
        assert_eq!(s.time_zone.as_deref(), Some("Europe/Paris"));
        assert_eq!(s.gate_phases.len(), 2);
        assert_eq!(s.gate_phases[1].emoji, "●");
        assert_eq!(s.gate_phases[0].number, Some(1));
    }

    #[test]
    fn index_roots_add_the_workspace_folders_once_unless_turned_off() {
        let mut s = Settings::default();
        s.apply(&json!({"roots": ["/a", "/w"]}));
        s.workspace_folders = vec![PathBuf::from("/w"), PathBuf::from("/x")];
        let paths = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(s.index_roots(), paths(&["/a", "/w", "/x"]));
        assert!(s.apply(&json!({"workspaceFolders": false})).is_empty());
        assert_eq!(s.index_roots(), paths(&["/a", "/w"]));
    }
}
