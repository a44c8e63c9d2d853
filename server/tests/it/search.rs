//! Full-text search across sessions (issue 26), on `fixtures/search/root`: matching (words,
//! phrases, prefixes, case, Unicode), ranking, snippets, an append indexing only what it
//! adds, a deleted session leaving the results, and the index surviving a restart.

use std::path::{Path, PathBuf};

use transcript_ls::index::SessionIndex;
use transcript_ls::index::disk::{self, Refresh};
use transcript_ls::index::search::{self, SearchIndex, SearchQuery};

/// A copy of the fixture root under a temporary folder, and the search index's folder.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    index_dir: PathBuf,
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/search/root");
    let root = dir.path().join("root");
    copy(&src, &root);
    let index_dir = dir.path().join("search");
    Fixture {
        _dir: dir,
        root,
        index_dir,
    }
}

const CLAUDE: &str = "claude/-home-me-app/c1a2b3c4-0000-4000-8000-000000000001.jsonl";
const CODEX: &str =
    "codex/2026/05/03/rollout-2026-05-03T09-00-00-019e3c00-3333-7c01-9d02-4b72d3e5c6f8.jsonl";

impl Fixture {
    fn build(&self) -> (SessionIndex, SearchIndex) {
        let search = SearchIndex::open(&self.index_dir).unwrap();
        let mut idx = SessionIndex::new();
        search::sync(std::slice::from_ref(&self.root), &mut idx, &search).unwrap();
        (idx, search)
    }
}

/// `file turn line kind: snippet` with the matches in brackets.
fn hits(search: &SearchIndex, idx: &SessionIndex, q: &str) -> Vec<String> {
    let r = search
        .search(
            &SearchQuery {
                text: q.to_string(),
                ..SearchQuery::default()
            },
            idx,
        )
        .unwrap();
    assert!(r.complete);
    r.hits
        .iter()
        .map(|h| {
            let s = &h.snippet;
            let mut m = String::new();
            let mut at = 0;
            for r in &s.matches {
                m.push_str(&s.text[at..r.start]);
                m.push('[');
                m.push_str(&s.text[r.clone()]);
                m.push(']');
                at = r.end;
            }
            m.push_str(&s.text[at..]);
            let agent = h.agent;
            format!("{agent} t{} l{} {}: {m}", h.turn, h.line, h.kind.as_str())
        })
        .collect()
}

#[test]
fn words_phrases_prefixes_case_and_unicode_match() {
    let f = fixture();
    let (idx, s) = f.build();
    assert_eq!(idx.session_count(), 2);
    // A word: prompts and answers first (newer session first on ties), then the rest.
    assert_eq!(
        hits(&s, &idx, "flaky "),
        [
            "claude-code t1 l0 prompt: Why does the [flaky] test in tests/api_test.py fail on CI?",
            "codex t1 l8 answer: Migration applied: the accounts table has a currency column now. The [flaky] test is unrelated.",
            "claude-code t1 l4 answer: The test is [flaky] because the retry waits on a real clock; a fake clock fixes it.",
        ]
    );
    // Case does not matter; the last word is a prefix while it is typed.
    assert_eq!(hits(&s, &idx, "FLAKY "), hits(&s, &idx, "flaky "));
    // (Every word a prefix matches scores alike: ties, newer session first.)
    assert_eq!(
        hits(&s, &idx, "fla"),
        [
            "codex t1 l8 answer: Migration applied: the accounts table has a currency column now. The [flaky] test is unrelated.",
            "claude-code t1 l0 prompt: Why does the [flaky] test in tests/api_test.py fail on CI?",
            "claude-code t1 l4 answer: The test is [flaky] because the retry waits on a real clock; a fake clock fixes it.",
        ]
    );
    assert!(
        hits(&s, &idx, "fla ").is_empty(),
        "a finished word is whole"
    );
    // Two words: those holding them as one phrase first (`test` still a prefix: `tests`).
    assert_eq!(
        hits(&s, &idx, "flaky test"),
        [
            "codex t1 l8 answer: Migration applied: the accounts table has a currency column now. The [flaky test] is unrelated.",
            "claude-code t1 l0 prompt: Why does the [flaky test] in [tests]/api_[test].py fail on CI?",
            "claude-code t1 l4 answer: The [test] is [flaky] because the retry waits on a real clock; a fake clock fixes it.",
        ]
    );
    assert_eq!(
        hits(&s, &idx, "flaky test "),
        [
            "claude-code t1 l0 prompt: Why does the [flaky test] in tests/api_[test].py fail on CI?",
            "codex t1 l8 answer: Migration applied: the accounts table has a currency column now. The [flaky test] is unrelated.",
            "claude-code t1 l4 answer: The [test] is [flaky] because the retry waits on a real clock; a fake clock fixes it.",
        ]
    );
    // A quoted phrase must be a phrase.
    assert_eq!(
        hits(&s, &idx, "\"test is flaky\""),
        [
            "claude-code t1 l4 answer: The [test is flaky] because the retry waits on a real clock; a fake clock fixes it."
        ]
    );
    // Every part must match.
    assert!(hits(&s, &idx, "flaky alembic").is_empty());
    // Tool inputs (commands, paths) and results.
    assert_eq!(
        hits(&s, &idx, "alembic"),
        [
            "codex t1 l6 tool-input: shell bash -lc [alembic] upgrade head /home/me/db",
            "codex t1 l7 tool-result: INFO  [[alembic].runtime] Running upgrade -> accounts_v2, add currency column",
        ]
    );
    assert_eq!(
        hits(&s, &idx, "api_test.py"),
        [
            "claude-code t1 l0 prompt: Why does the flaky test in tests/[api_test.py] fail on CI?",
            "claude-code t1 l2 tool-input: Bash pytest tests/[api_test.py] -k retry Run the retry tests",
            "claude-code t1 l3 tool-result: FAILED tests/[api_test.py]::test_retry_on_timeout - TimeoutError: waited 30s",
        ]
    );
    // Unicode: accents fold, case folds beyond ASCII, Han characters are words.
    assert_eq!(
        hits(&s, &idx, "resume"),
        [
            "claude-code t2 l5 prompt: Écris le [résumé] en français, s'il te plaît",
            "claude-code t2 l6 answer: [Résumé] : le test échoue à cause de l'horloge. 测试修复完成。",
        ]
    );
    assert_eq!(hits(&s, &idx, "RÉSUMÉ"), hits(&s, &idx, "resume"));
    assert_eq!(
        hits(&s, &idx, "测试"),
        [
            "claude-code t2 l6 answer: Résumé : le test échoue à cause de l'horloge. [测试]修复完成。"
        ]
    );
    // Nothing to search for.
    assert!(hits(&s, &idx, "  ").is_empty());
    assert!(hits(&s, &idx, "\"\"").is_empty());
}

#[test]
fn ties_go_to_the_newer_session_and_limits_and_roots_apply() {
    let f = fixture();
    let (idx, s) = f.build();
    // The same comment in both sessions: the newer (Codex, 3 May) first.
    assert_eq!(
        hits(&s, &idx, "changelog"),
        [
            "codex t1 l5 comment: Checking the [changelog].",
            "claude-code t1 l1 comment: Checking the [changelog].",
        ]
    );
    let q = |limit: Option<usize>, roots: Vec<PathBuf>| SearchQuery {
        text: "changelog".into(),
        limit,
        roots,
    };
    let r = s.search(&q(Some(1), Vec::new()), &idx).unwrap();
    assert_eq!(r.hits.len(), 1);
    assert_eq!(r.hits[0].agent, "codex");
    assert_eq!(
        r.hits[0].title,
        "Run the database migration for the accounts table"
    );
    assert_eq!(r.hits[0].project.as_deref(), Some("/home/me/db"));
    assert_eq!(
        r.hits[0].turn_title,
        "Run the database migration for the accounts table"
    );
    assert_eq!(r.hits[0].path, f.root.join(CODEX));
    let r = s
        .search(&q(None, vec![f.root.join("claude")]), &idx)
        .unwrap();
    assert_eq!(r.hits.len(), 1);
    assert_eq!(r.hits[0].path, f.root.join(CLAUDE));
}

/// Appends a turn to the Claude session.
fn append(path: &Path, lines: &[&str]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
}

const TURN3: [&str; 2] = [
    r#"{"type":"user","message":{"role":"user","content":"Use a fake clock in the retry test"},"parentUuid":"s-07","isSidechain":false,"userType":"external","cwd":"/home/me/app","sessionId":"c1a2b3c4-0000-4000-8000-000000000001","version":"2.1.114","gitBranch":"main","uuid":"s-08","timestamp":"2026-05-04T08:00:00.000Z"}"#,
    r#"{"type":"assistant","requestId":"req_msg_S04","message":{"model":"claude-sonnet-4-5-20250929","id":"msg_S04","type":"message","role":"assistant","content":[{"type":"text","text":"Done: the retry test uses a fake clock, no longer flaky."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":20}},"parentUuid":"s-08","isSidechain":false,"userType":"external","cwd":"/home/me/app","sessionId":"c1a2b3c4-0000-4000-8000-000000000001","version":"2.1.114","gitBranch":"main","uuid":"s-09","timestamp":"2026-05-04T08:00:05.000Z"}"#,
];

#[test]
fn an_append_indexes_only_the_last_turn_and_what_follows() {
    let f = fixture();
    let (mut idx, s) = f.build();
    let claude = f.root.join(CLAUDE);
    let before = s.doc_count();
    assert_eq!(before, 12);
    append(&claude, &TURN3);
    let r = search::refresh_file(&claude, idx.get(&claude), &s).unwrap();
    let Refresh::Tail { entry, read } = r else {
        panic!("not a tail read: {r:?}");
    };
    // Read from turn 2's opening line (the old last turn), not the whole file.
    let len = std::fs::metadata(&claude).unwrap().len();
    let turn2 = idx.get(&claude).unwrap().tail.offset;
    assert_eq!(read, len - turn2);
    idx.insert(claude.clone(), entry);
    s.commit().unwrap();
    // Turn 2's two texts replaced, turn 3's two added: no duplicates.
    assert_eq!(s.doc_count(), before + 2);
    assert_eq!(
        hits(&s, &idx, "fake clock"),
        [
            "claude-code t1 l4 answer: The test is flaky because the retry waits on a real [clock]; a [fake clock] fixes it.",
            "claude-code t3 l7 prompt: Use a [fake clock] in the retry test",
            "claude-code t3 l8 answer: Done: the retry test uses a [fake clock], no longer flaky.",
        ]
    );
    assert_eq!(hits(&s, &idx, "resume").len(), 2);
    // The session is now the newer one: its answer comes before Codex's on a tie of kind.
    assert_eq!(hits(&s, &idx, "flaky ").len(), 4);
    // Nothing changed: nothing read.
    assert_eq!(
        search::refresh_file(&claude, idx.get(&claude), &s).unwrap(),
        Refresh::Unchanged
    );
}

#[test]
fn a_deleted_session_leaves_the_results() {
    let f = fixture();
    let (mut idx, s) = f.build();
    assert_eq!(hits(&s, &idx, "alembic").len(), 2);
    std::fs::remove_file(f.root.join(CODEX)).unwrap();
    // Gone from the session index: its hits go at once, before the search index hears of it.
    let mut without = idx.clone();
    without.remove(&f.root.join(CODEX));
    assert!(hits(&s, &without, "alembic").is_empty());
    // And from the search index itself.
    search::sync(std::slice::from_ref(&f.root), &mut idx, &s).unwrap();
    assert_eq!(idx.session_count(), 1);
    assert!(hits(&s, &idx, "alembic").is_empty());
    assert_eq!(s.files(), [f.root.join(CLAUDE)]);
    assert_eq!(s.doc_count(), 7);
}

#[test]
fn the_index_survives_a_restart() {
    let f = fixture();
    let cache = f.index_dir.with_file_name("sessions.json");
    let roots = std::slice::from_ref(&f.root);
    let expected = {
        let (idx, s) = f.build();
        disk::save_cache(&cache, roots, &idx).unwrap();
        hits(&s, &idx, "flaky test")
    };
    // A new process: the session index from its cache, the search index from its folder.
    let s = SearchIndex::open(&f.index_dir).unwrap();
    let mut idx = disk::load_cache(&cache, roots);
    assert_eq!(s.files(), [f.root.join(CLAUDE), f.root.join(CODEX)]);
    assert_eq!(s.doc_count(), 12);
    for p in [CLAUDE, CODEX] {
        let p = f.root.join(p);
        assert!(s.in_step(&p, idx.get(&p)));
        // Nothing is read again.
        assert_eq!(
            search::refresh_file(&p, idx.get(&p), &s).unwrap(),
            Refresh::Unchanged
        );
    }
    search::sync(roots, &mut idx, &s).unwrap();
    assert_eq!(s.doc_count(), 12);
    assert_eq!(hits(&s, &idx, "flaky test"), expected);
}

#[test]
fn a_second_writer_opens_the_index_read_only() {
    let f = fixture();
    let (idx, s) = f.build();
    let other = SearchIndex::open(&f.index_dir).unwrap();
    assert!(s.writable());
    assert!(!other.writable());
    other.set_complete(true);
    assert_eq!(hits(&other, &idx, "alembic").len(), 2);
    assert!(!other.try_writable());
    // The first one gone (a server restarting): the second takes the writer and what it
    // committed.
    drop(s);
    assert!(other.try_writable());
    assert_eq!(other.files().len(), 2);
    for p in [CLAUDE, CODEX] {
        let p = f.root.join(p);
        assert!(other.in_step(&p, idx.get(&p)));
    }
}
