//! The session index (issue 7) on a temporary root holding a copy of `../shared/corpus`:
//! titles, projects, counts, parent / children, an append read from the last turn, a deleted
//! file, the warm-start cache.

use std::path::{Path, PathBuf};

use transcript_ls::analysis;
use transcript_ls::formats;
use transcript_ls::index::disk::{self, Refresh};
use transcript_ls::index::{SessionIndex, SessionQuery, summary};
use transcript_ls::model::{Format, TitleSource};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
}

/// Copies every `.jsonl` and `.meta.json` of the corpus into `root`, keeping relative paths.
fn copy_corpus(root: &Path) -> Vec<PathBuf> {
    let src = corpus();
    let mut out = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".jsonl") || name.ends_with(".meta.json") {
                let dst = root.join(p.strip_prefix(&src).unwrap());
                std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
                std::fs::copy(&p, &dst).unwrap();
                // One modification time for every copy: sessions without timestamps (Mistral
                // Vibe's) are ordered by it, and then by path, not by the order of the copy.
                std::fs::File::options()
                    .write(true)
                    .open(&dst)
                    .unwrap()
                    .set_modified(
                        std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_780_000_000),
                    )
                    .unwrap();
                if name.ends_with(".jsonl") {
                    out.push(dst);
                }
            }
        }
    }
    out.sort();
    out
}

fn build(root: &Path) -> SessionIndex {
    let mut idx = SessionIndex::new();
    for p in disk::scan_roots(&[root.to_path_buf()]) {
        let r = disk::update(&mut idx, &p).unwrap();
        assert!(matches!(r, Refresh::Whole(_)), "{}", p.display());
    }
    idx
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap().to_string_lossy().into_owned()
}

#[test]
fn every_corpus_file_agrees_with_the_full_reader() {
    if !corpus().is_dir() {
        panic!("../shared/corpus is missing");
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let files = copy_corpus(root);
    assert!(files.len() >= 40, "{}", files.len());
    let idx = build(root);
    assert_eq!(idx.file_count(), files.len());
    for p in &files {
        let e = idx.get(p).unwrap();
        let text = std::fs::read_to_string(p).unwrap();
        let t = formats::read(&text);
        assert_eq!(e.format, t.format(), "{}", p.display());
        assert_eq!(e.bytes, text.len() as u64);
        assert_eq!(
            e.project.as_deref(),
            t.meta.cwd.as_deref(),
            "{}",
            p.display()
        );
        assert_eq!(
            e.title.as_deref(),
            t.meta.title.as_deref(),
            "{}",
            p.display()
        );
        if t.format() != Format::Unknown {
            let a = analysis::analyze(&t, &text, &analysis::Options::default());
            assert_eq!(e.turns, a.turn_count, "{}", p.display());
            assert_eq!(e.symbols.len(), a.turn_count, "{}", p.display());
        }
    }
}

#[test]
fn sessions_list_titles_projects_counts_and_links() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_corpus(root);
    let idx = build(root);
    let all = idx.sessions(
        &SessionQuery {
            limit: Some(1000),
            ..SessionQuery::default()
        },
        0,
    );
    let shown: Vec<String> = all
        .iter()
        .map(|s| {
            format!(
                "{} | {} | {} ({}) | {} | {} turns | {} .. {} | parent {} | children [{}]",
                rel(root, &s.path),
                s.format,
                s.title,
                s.title_source,
                s.project.as_deref().unwrap_or("-"),
                s.turns,
                s.started.as_deref().unwrap_or("-"),
                s.ended.as_deref().unwrap_or("-"),
                s.parent.as_deref().map_or("-".into(), |p| rel(root, p)),
                s.children
                    .iter()
                    .map(|c| rel(root, c))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    insta::assert_yaml_snapshot!("corpus_sessions", shown);

    // Newest first.
    let ends: Vec<&str> = all.iter().filter_map(|s| s.ended.as_deref()).collect();
    let mut sorted = ends.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(ends, sorted);

    // The spotter session and its two sub-agent files, both ways.
    let main = all
        .iter()
        .find(|s| {
            s.path
                .ends_with("258c7280-ae70-4798-800f-63464d01a85d.jsonl")
        })
        .unwrap();
    let kids: Vec<String> = main
        .children
        .iter()
        .map(|c| c.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(kids, ["agent-a881341.jsonl", "agent-acompact-fffbd0.jsonl"]);
    let kid = all
        .iter()
        .find(|s| s.path.ends_with("agent-a881341.jsonl"))
        .unwrap();
    assert_eq!(kid.parent.as_deref(), Some(main.path.as_path()));

    // Fuzzy search on the first prompt / title, and by project.
    let q = |query: &str, project: Option<&str>| {
        idx.sessions(
            &SessionQuery {
                query: Some(query.into()),
                project: project.map(Into::into),
                limit: Some(3),
            },
            0,
        )
    };
    let hit = q("spotter", None);
    assert!(!hit.is_empty());
    let proj = main.project.clone().unwrap();
    let in_proj = idx.sessions(
        &SessionQuery {
            project: Some(proj.clone()),
            limit: Some(1000),
            ..SessionQuery::default()
        },
        0,
    );
    assert!(in_proj.iter().all(|s| s.project.as_deref() == Some(&proj)));
    assert!(in_proj.iter().any(|s| s.path == main.path));
}

/// Titles: `custom-title` > `ai-title` > a summary whose leaf is in the file > first prompt;
/// Codex thread name.
#[test]
fn titles_follow_their_ranks() {
    let user = |uuid: &str, text: &str| {
        format!(
            r#"{{"type":"user","uuid":"{uuid}","parentUuid":null,"sessionId":"S","timestamp":"2026-11-30T10:00:00.000Z","cwd":"/home/me/app","isSidechain":false,"message":{{"role":"user","content":"{text}"}}}}"#
        )
    };
    let cases: Vec<(Vec<String>, &str, &str)> = vec![
        (
            vec![user("u1", "Fix the failing test")],
            "Fix the failing test",
            "prompt",
        ),
        (
            vec![
                r#"{"type":"summary","summary":"Login bug hunt","leafUuid":"u1"}"#.into(),
                user("u1", "Fix the failing test"),
            ],
            "Login bug hunt",
            "summary",
        ),
        (
            vec![
                r#"{"type":"summary","summary":"Elsewhere","leafUuid":"zz"}"#.into(),
                user("u1", "Fix the failing test"),
            ],
            "Fix the failing test",
            "prompt",
        ),
        (
            vec![
                user("u1", "Fix the failing test"),
                r#"{"type":"ai-title","sessionId":"S","aiTitle":"Repair CI"}"#.into(),
            ],
            "Repair CI",
            "ai-title",
        ),
        (
            vec![
                r#"{"type":"custom-title","sessionId":"S","customTitle":"My title"}"#.into(),
                user("u1", "Fix the failing test"),
                r#"{"type":"ai-title","sessionId":"S","aiTitle":"Repair CI"}"#.into(),
            ],
            "My title",
            "custom-title",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut idx = SessionIndex::new();
    for (i, (lines, title, source)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("s{i}.jsonl"));
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        disk::update(&mut idx, &p).unwrap();
        let s = idx
            .sessions(&SessionQuery::default(), 0)
            .into_iter()
            .find(|s| s.path == p)
            .unwrap();
        assert_eq!(
            (s.title.as_str(), s.title_source),
            (*title, *source),
            "case {i}"
        );
        assert_eq!(s.project.as_deref(), Some("/home/me/app"));
        assert_eq!(s.started.as_deref(), Some("2026-11-30T10:00:00.000Z"));
        assert_eq!(s.turns, 1);
    }
    // Codex: the thread name.
    let codex = corpus()
        .join("jazzyalex__agent-sessions/Resources/Fixtures/stage0/agents/codex/small.jsonl");
    let e = summary::read_whole(&std::fs::read_to_string(codex).unwrap());
    assert_eq!(e.title.as_deref(), Some("[trimmed for fixture]"));
    assert_eq!(e.title_source, Some(TitleSource::ThreadName));
}

/// An append is read from the last turn's opening line and gives the same entry as reading the
/// whole file; a rewrite (same size or shorter) is read whole.
#[test]
fn appends_are_read_from_the_last_turn_and_match_a_cold_read() {
    let dir = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let files = copy_corpus(src.path());
    let mut checked = 0;
    let mut tails = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        if formats::read(&text).format() == Format::Unknown {
            continue;
        }
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        if lines.len() < 6 {
            continue;
        }
        let mut cuts = vec![lines.len() / 3, 2 * lines.len() / 3];
        // Codex: also cut around every task start and prompt copy (the records a tail read
        // must meet again), at most 40 per file.
        if formats::read(&text).format() == Format::Codex {
            for (i, l) in lines.iter().enumerate().skip(1) {
                if (l.contains(r#""type":"task_started""#)
                    || l.contains(r#""type":"user_message""#))
                    && cuts.len() < 42
                {
                    cuts.extend([i, i + 1]);
                }
            }
        }
        cuts.retain(|&c| c > 0 && c < lines.len());
        cuts.sort_unstable();
        cuts.dedup();
        for cut in cuts {
            let head: String = lines[..cut].concat();
            let p = dir.path().join("live.jsonl");
            std::fs::write(&p, &head).unwrap();
            let mut idx = SessionIndex::new();
            disk::update(&mut idx, &p).unwrap();
            let before = idx.get(&p).unwrap().clone();
            std::fs::write(&p, &text).unwrap();
            let r = disk::update(&mut idx, &p).unwrap();
            // Claude Code: read from the last turn; other formats whole (the Codex reader pairs
            // records across a turn's start).
            // Claude Code and Codex: read from the last turn; the other agents whole (the
            // registry's `tail_readable`).
            match (summary::tail_readable(before.format), r) {
                (true, Refresh::Tail { read, .. }) => {
                    assert!(matches!(before.format, Format::ClaudeCode | Format::Codex));
                    assert_eq!(read, text.len() as u64 - before.tail.offset);
                    tails += 1;
                }
                (false, Refresh::Whole(_)) => {}
                (_, r) => panic!("{} cut {cut}: {r:?}", f.display()),
            }
            let mut cold = summary::read_whole(&text);
            let got = idx.get(&p).unwrap();
            cold.bytes = got.bytes;
            cold.modified_ms = got.modified_ms;
            assert_eq!(got, &cold, "{} cut at line {cut}", f.display());
            assert_eq!(
                disk::update(&mut idx, &p).unwrap(),
                Refresh::Unchanged,
                "{}",
                f.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 50, "{checked}");
    assert!(
        tails >= 80,
        "{tails} of {checked} appends read from the last turn"
    );

    // A Codex rollout: a new task appended is read from the records before its prompt, not
    // the whole file.
    let codex = files
        .iter()
        .find(|f| f.to_string_lossy().contains("02-flicker-start-session"))
        .unwrap();
    let p = dir.path().join("rollout.jsonl");
    std::fs::copy(codex, &p).unwrap();
    let mut idx = SessionIndex::new();
    disk::update(&mut idx, &p).unwrap();
    let before = idx.get(&p).unwrap().clone();
    let turns = before.turns;
    // The tail starts at the records just before the last turn's prompt (its task start and
    // the previous task's completion records).
    let last_start = before.symbols.last().unwrap().start_line;
    assert!(
        before.tail.offset > 0 && (last_start - 5..last_start).contains(&before.tail.line),
        "{:?}, last turn at line {last_start}",
        before.tail
    );
    let ts = "2026-04-08T23:00:00.000Z";
    let added = [
        format!(r#"{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"task_started","turn_id":"t-new"}}}}"#),
        format!(r#"{{"timestamp":"{ts}","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"Now add a test"}}]}}}}"#),
        format!(r#"{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"user_message","message":"Now add a test","images":[]}}}}"#),
    ]
    .join("\n")
        + "\n";
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    use std::io::Write;
    f.write_all(added.as_bytes()).unwrap();
    drop(f);
    let len = std::fs::metadata(&p).unwrap().len();
    let Refresh::Tail { read, .. } = disk::update(&mut idx, &p).unwrap() else {
        panic!("not a tail read");
    };
    assert_eq!(read, len - before.tail.offset);
    let e = idx.get(&p).unwrap().clone();
    assert_eq!((e.turns, e.last_turn_open), (turns + 1, true));
    assert_eq!(&*e.symbols.last().unwrap().title, "Now add a test");
    let mut cold = summary::read_whole(&std::fs::read_to_string(&p).unwrap());
    cold.bytes = e.bytes;
    cold.modified_ms = e.modified_ms;
    assert_eq!(e, cold);

    // The spotter session: appending a line reads only its last turn.
    let spotter = files
        .iter()
        .find(|f| f.ends_with("258c7280-ae70-4798-800f-63464d01a85d.jsonl"))
        .unwrap();
    let p = dir.path().join("spotter.jsonl");
    std::fs::copy(spotter, &p).unwrap();
    let mut idx = SessionIndex::new();
    disk::update(&mut idx, &p).unwrap();
    let turns = idx.get(&p).unwrap().turns;
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    writeln!(
        f,
        r#"{{"type":"user","uuid":"appended-1","parentUuid":null,"sessionId":"x","timestamp":"2027-01-01T00:00:00.000Z","isSidechain":false,"message":{{"role":"user","content":"One more thing: update the changelog"}}}}"#
    )
    .unwrap();
    drop(f);
    let len = std::fs::metadata(&p).unwrap().len();
    let Refresh::Tail { read, .. } = disk::update(&mut idx, &p).unwrap() else {
        panic!("not a tail read");
    };
    assert!(read < len / 10, "read {read} of {len}");
    let e = idx.get(&p).unwrap();
    assert_eq!(e.turns, turns + 1);
    assert!(e.last_turn_open);
    assert_eq!(e.ended_ms, Some(1_798_761_600_000));
    let last = e.symbols.last().unwrap();
    assert_eq!(
        (last.n, &*last.title),
        (turns + 1, "One more thing: update the changelog")
    );

    // Rewritten with the same length: read whole.
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, text.replace("changelog", "CHANGELOG")).unwrap();
    let r = disk::update(&mut idx, &p).unwrap();
    assert!(matches!(r, Refresh::Whole(_)), "{r:?}");
    assert_eq!(
        &*idx.get(&p).unwrap().symbols.last().unwrap().title,
        "One more thing: update the CHANGELOG"
    );
    // Deleted: gone from the index.
    std::fs::remove_file(&p).unwrap();
    assert_eq!(disk::update(&mut idx, &p).unwrap(), Refresh::Gone);
    assert!(idx.get(&p).is_none());
}

#[test]
fn the_cache_gives_a_warm_start_with_nothing_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    copy_corpus(&root);
    let roots = vec![root.clone()];
    let idx = build(&root);
    let cache = dir.path().join("cache/sessions.json");
    disk::save_cache(&cache, &roots, &idx).unwrap();
    let mut warm = disk::load_cache(&cache, &roots);
    assert_eq!(warm.file_count(), idx.file_count());
    for p in disk::scan_roots(&roots) {
        assert_eq!(disk::update(&mut warm, &p).unwrap(), Refresh::Unchanged);
    }
    assert_eq!(
        warm.sessions(&SessionQuery::default(), 0),
        idx.sessions(&SessionQuery::default(), 0)
    );
    // Another set of roots does not use it.
    assert_eq!(
        disk::load_cache(&cache, &[dir.path().to_path_buf()]).file_count(),
        0
    );
}

/// Issue 22 item 3: the index keeps the files each turn changed (path, turn, action, counts,
/// the turn's opening line and time), and an append keeps the turns before the tail and
/// re-reads the last one.
#[test]
fn the_index_keeps_each_turns_changed_files() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/rules/changes-claude.jsonl"),
    )
    .unwrap();
    let e = summary::read_whole(&text);
    let show = |e: &transcript_ls::index::SessionEntry| -> Vec<String> {
        e.changes
            .iter()
            .map(|c| {
                format!(
                    "{} turn {} {:?} +{} -{} line {} ms {:?}",
                    c.path, c.turn, c.action, c.added, c.removed, c.line, c.ms
                )
            })
            .collect()
    };
    let got = show(&e);
    assert_eq!(got.len(), 3, "{got:#?}");
    assert!(
        got[0].starts_with("/home/user/project/src/calc.rs turn 1 Modified +2 -2 line 0 ms Some("),
        "{got:#?}"
    );
    assert!(
        got[1].starts_with("/home/user/project/tests/calc_test.rs turn 1 Created +6 -0 line 0 "),
        "{got:#?}"
    );
    assert!(
        got[2].starts_with("/home/user/project/src/calc.rs turn 2 Modified +1 -1 line "),
        "{got:#?}"
    );
    assert_eq!(e.changes[2].line, e.symbols[1].start_line);
    // Read again from the last turn after an append: the same list.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.jsonl");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    std::fs::write(&p, lines[..lines.len() - 1].concat()).unwrap();
    let mut idx = SessionIndex::new();
    disk::update(&mut idx, &p).unwrap();
    std::fs::write(&p, &text).unwrap();
    assert!(matches!(
        disk::update(&mut idx, &p).unwrap(),
        Refresh::Tail { .. }
    ));
    assert_eq!(show(idx.get(&p).unwrap()), got);
}

/// Issue 25 item 2 in the index: a file written again with `O_TRUNC` and one longer write
/// that keeps its last turn's opening line but not its first prompt is read whole (it was
/// taken for an append: the entry kept the old first prompt and title); the entry equals a
/// cold read of the new file. An append after it is read from the last turn again.
#[test]
fn a_head_rewritten_longer_is_read_whole() {
    let demo = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl"),
    )
    .unwrap();
    let line_start = |n: usize| {
        demo.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(n - 1)
            .map(|(i, _)| i + 1)
            .unwrap()
    };
    let (cut1, cut2) = (line_start(60), line_start(80));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.jsonl");
    std::fs::write(&p, &demo[..cut1]).unwrap();
    let mut idx = SessionIndex::new();
    assert!(matches!(
        disk::update(&mut idx, &p).unwrap(),
        Refresh::Whole(_)
    ));
    let first = idx.get(&p).unwrap().first_prompt.clone().unwrap();
    assert!(first.contains("returns a 500"), "{first}");
    let at = demo
        .windows(13)
        .position(|w| w == b"returns a 500")
        .unwrap()
        + 10;
    let mut now = demo[..cut2].to_vec();
    now[at..at + 3].copy_from_slice(b"404");
    std::fs::write(&p, &now).unwrap(); // O_TRUNC, one write
    assert!(matches!(
        disk::update(&mut idx, &p).unwrap(),
        Refresh::Whole(_)
    ));
    let e = idx.get(&p).unwrap().clone();
    let mut cold = summary::read_whole(std::str::from_utf8(&now).unwrap());
    cold.bytes = e.bytes;
    cold.modified_ms = e.modified_ms;
    assert_eq!(e, cold);
    assert!(e.first_prompt.as_deref().unwrap().contains("returns a 404"));
    // A plain append is still read from the last turn, and matches a cold read.
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(&demo[cut2..]).unwrap();
    }
    now.extend_from_slice(&demo[cut2..]);
    assert!(matches!(
        disk::update(&mut idx, &p).unwrap(),
        Refresh::Tail { .. }
    ));
    let e = idx.get(&p).unwrap().clone();
    let mut cold = summary::read_whole(std::str::from_utf8(&now).unwrap());
    cold.bytes = e.bytes;
    cold.modified_ms = e.modified_ms;
    assert_eq!(e, cold);
}
