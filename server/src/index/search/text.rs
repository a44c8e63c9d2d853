//! Words and snippets for the search index (issue 26): one analyzer for the indexed text and
//! the query, and the snippet of a hit with its matches marked.
//!
//! Words: runs of letters and digits (Unicode `char::is_alphanumeric`), each Han, Hiragana or
//! Katakana character a word of its own (those scripts write no spaces; a query of several
//! such characters is then a phrase of them), lower-cased (Unicode) and folded to ASCII where
//! a Latin letter has an accent (`Résumé` = `resume`); words longer than
//! [`MAX_WORD_BYTES`] are dropped (hashes, base64 fragments).

use tantivy::tokenizer::{
    AsciiFoldingFilter, LowerCaser, RemoveLongFilter, TextAnalyzer, Token, TokenStream, Tokenizer,
};

/// Longest word indexed, in bytes.
pub const MAX_WORD_BYTES: usize = 64;

/// The name the analyzer is registered under in the index.
pub const ANALYZER: &str = "transcript";

/// The analyzer of indexed text and queries.
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(Words::default())
        .filter(RemoveLongFilter::limit(MAX_WORD_BYTES))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

/// The words of `text` as the index sees them: `(normalised word, byte range in text)`.
pub fn words(text: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let mut a = analyzer();
    let mut s = a.token_stream(text);
    let mut out = Vec::new();
    while s.advance() {
        let t = s.token();
        out.push((t.text.clone(), t.offset_from..t.offset_to));
    }
    out
}

/// True for a character that is a word by itself (scripts written without spaces).
fn single(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xF900..=0xFAFF    // CJK Compatibility Ideographs
        | 0x20000..=0x2FA1F) // CJK Extensions B–F, compatibility supplement
}

/// The tokenizer: runs of alphanumeric characters, a single-script character alone.
#[derive(Clone, Default)]
pub struct Words {
    token: Token,
}

/// The token stream of [`Words`].
pub struct WordStream<'a> {
    text: &'a str,
    at: usize,
    token: &'a mut Token,
}

impl Tokenizer for Words {
    type TokenStream<'a> = WordStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordStream<'a> {
        self.token.reset();
        WordStream {
            text,
            at: 0,
            token: &mut self.token,
        }
    }
}

impl TokenStream for WordStream<'_> {
    fn advance(&mut self) -> bool {
        self.token.text.clear();
        self.token.position = self.token.position.wrapping_add(1);
        let rest = &self.text[self.at..];
        let mut start = None;
        for (i, c) in rest.char_indices() {
            let at = self.at + i;
            match start {
                None if single(c) => {
                    let end = at + c.len_utf8();
                    return self.emit(at, end);
                }
                None if c.is_alphanumeric() => start = Some(at),
                None => {}
                Some(s) if single(c) || !c.is_alphanumeric() => return self.emit(s, at),
                Some(_) => {}
            }
        }
        match start {
            Some(s) => self.emit(s, self.text.len()),
            None => {
                self.at = self.text.len();
                false
            }
        }
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

impl WordStream<'_> {
    fn emit(&mut self, from: usize, to: usize) -> bool {
        self.token.offset_from = from;
        self.token.offset_to = to;
        self.token.text.push_str(&self.text[from..to]);
        self.at = to;
        true
    }
}

/// A snippet of a hit's text: one line, the matched words marked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Snippet {
    /// At most about [`SNIPPET_CHARS`] characters around the first match; line breaks and
    /// tabs shown as spaces; `…` where the text goes on before or after.
    pub text: String,
    /// The matches: byte ranges in `text` (UTF-8), in order, not overlapping.
    pub matches: Vec<std::ops::Range<usize>>,
}

/// Characters of a snippet.
pub const SNIPPET_CHARS: usize = 160;
/// Characters kept before the first match.
const BEFORE_CHARS: usize = 40;

/// What the snippet marks: the query's parts (a word, or words that must follow each other:
/// a quoted phrase, or a word such as `app.py` that splits), the last word of the last part a
/// prefix when `prefix`; and all the words of the query in a row as one phrase.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    /// The parts, each its words in order.
    pub parts: Vec<Vec<String>>,
    /// The last word matches any word it starts.
    pub prefix: bool,
}

impl Marks {
    /// Whether `words` from `at` on hold `seq` (`last_prefix`: its last word a prefix).
    fn run_at(words: &[(String, Range)], at: usize, seq: &[String], last_prefix: bool) -> bool {
        at + seq.len() <= words.len()
            && seq.iter().enumerate().all(|(k, w)| {
                let have = &words[at + k].0;
                if last_prefix && k + 1 == seq.len() {
                    have.starts_with(w.as_str())
                } else {
                    have == w
                }
            })
    }

    /// Every run of `words` matching one part: (first word, word count).
    fn runs(&self, words: &[(String, Range)]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for i in 0..words.len() {
            for (pi, p) in self.parts.iter().enumerate() {
                let pre = self.prefix && pi + 1 == self.parts.len();
                if !p.is_empty() && Self::run_at(words, i, p, pre) {
                    out.push((i, p.len()));
                }
            }
        }
        out
    }
}

type Range = std::ops::Range<usize>;

/// The snippet of `text` for `marks`: from a little before the query's phrase (its first
/// occurrence), else before the first part that matches (the start when that is near), every
/// match inside marked (a phrase or a part of several words as one range).
pub fn snippet(text: &str, marks: &Marks) -> Snippet {
    let ws = words(text);
    let all: Vec<String> = marks.parts.iter().flatten().cloned().collect();
    let phrase = (all.len() > 1)
        .then(|| (0..ws.len()).find(|&i| Marks::run_at(&ws, i, &all, marks.prefix)))
        .flatten();
    let runs = marks.runs(&ws);
    let first = phrase.or_else(|| runs.first().map(|r| r.0));
    let anchor = first.map_or(0, |i| ws[i].1.start);
    // Near the start: from the start.
    let near = text[..anchor].chars().count() + BEFORE_CHARS <= SNIPPET_CHARS;
    let anchor = if near { 0 } else { anchor };
    // Start: up to BEFORE_CHARS characters before the anchor, at a word start when one is near.
    let mut start = anchor;
    for (k, (i, _)) in text[..anchor].char_indices().rev().enumerate() {
        if k >= BEFORE_CHARS {
            break;
        }
        start = i;
    }
    if start > 0 {
        if let Some(sp) = text[start..anchor].find(char::is_whitespace) {
            start += sp + 1;
        }
        start = start.min(anchor);
        while !text.is_char_boundary(start) {
            start += 1;
        }
    }
    let end = text[start..]
        .char_indices()
        .nth(SNIPPET_CHARS)
        .map_or(text.len(), |(i, _)| start + i);
    let mut ranges: Vec<Range> = Vec::new();
    let candidates = phrase
        .map(|p| (p, all.len()))
        .into_iter()
        .chain(runs.iter().copied());
    for (i, n) in candidates {
        let r = ws[i].1.start..ws[i + n - 1].1.end;
        if r.start >= start
            && r.end <= end
            && !ranges.iter().any(|x| x.start < r.end && r.start < x.end)
        {
            ranges.push(r);
        }
    }
    ranges.sort_by_key(|r| r.start);
    let lead = if start > 0 { "…" } else { "" };
    let mut out = String::with_capacity(end - start + 8);
    out.push_str(lead);
    for c in text[start..end].chars() {
        out.push(if c == '\n' || c == '\r' || c == '\t' {
            ' '
        } else {
            c
        });
    }
    if end < text.len() {
        out.push('…');
    }
    let shift = lead.len();
    Snippet {
        text: out,
        matches: ranges
            .into_iter()
            .map(|r| r.start - start + shift..r.end - start + shift)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(text: &str) -> Vec<String> {
        words(text).into_iter().map(|(w, _)| w).collect()
    }

    #[test]
    fn words_are_unicode_lower_case_and_folded() {
        assert_eq!(
            ws("Fix the FLAKY_test in src/app.py — Résumé, STRASSE Ærø"),
            [
                "fix", "the", "flaky", "test", "in", "src", "app", "py", "resume", "strasse",
                "aero"
            ]
        );
        // Han and Kana characters are words of their own; Hangul words are runs.
        assert_eq!(
            ws("修复测试 テスト 한국어 test"),
            ["修", "复", "测", "试", "テ", "ス", "ト", "한국어", "test"]
        );
        let long = "a".repeat(MAX_WORD_BYTES + 1);
        assert_eq!(ws(&format!("x {long} y")), ["x", "y"]);
    }

    fn marked(s: &Snippet) -> String {
        let mut out = String::new();
        let mut at = 0;
        for r in &s.matches {
            out.push_str(&s.text[at..r.start]);
            out.push('[');
            out.push_str(&s.text[r.clone()]);
            out.push(']');
            at = r.end;
        }
        out.push_str(&s.text[at..]);
        out
    }

    fn marks(words: &[&str], prefix: bool) -> Marks {
        Marks {
            parts: words.iter().map(|w| vec![w.to_string()]).collect(),
            prefix,
        }
    }

    #[test]
    fn snippets_mark_the_phrase_and_the_words() {
        let text = "We looked at it.\nThe Flaky test fails on CI; a flaky runner, maybe.";
        assert_eq!(
            marked(&snippet(text, &marks(&["flaky", "test"], false))),
            "We looked at it. The [Flaky test] fails on CI; a [flaky] runner, maybe."
        );
        // Prefix on the last word.
        assert_eq!(
            marked(&snippet(text, &marks(&["fla"], true))),
            "We looked at it. The [Flaky] test fails on CI; a [flaky] runner, maybe."
        );
        // A long text: cut around the first match, `…` at both ends.
        let long = format!("{} needle {}", "word ".repeat(100), "tail ".repeat(100));
        let s = snippet(&long, &marks(&["needle"], false));
        assert_eq!(s.text.chars().count(), SNIPPET_CHARS + 2);
        assert!(s.text.starts_with("…word word"), "{}", s.text);
        assert_eq!(&s.text[s.matches[0].clone()], "needle");
        assert_eq!(s.matches.len(), 1);
        // Unicode: offsets are bytes of the snippet.
        let s = snippet("Ein Straßenfest — Résumé prêt", &marks(&["resume"], false));
        assert_eq!(marked(&s), "Ein Straßenfest — [Résumé] prêt");
    }
}
