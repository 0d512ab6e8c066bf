//! Fuzzy matching for the completion popups, with nucleo-matcher (the matcher of the Helix
//! editor): a query ranks many texts, and the matched letters of the rows shown are found for
//! highlighting.

use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// A matcher and its scratch space, kept between keystrokes (it allocates once).
#[derive(Debug, Clone)]
pub struct Fuzzy {
    matcher: Matcher,
    buf: Vec<char>,
}

impl Fuzzy {
    /// A matcher for file paths: letters after `/` score as word starts.
    pub fn paths() -> Self {
        Self::with(Config::DEFAULT.match_paths())
    }

    /// A matcher for words (command names, values).
    pub fn words() -> Self {
        let mut config = Config::DEFAULT;
        // Typing a command's first letters should bring it first.
        config.prefer_prefix = true;
        Self::with(config)
    }

    fn with(config: Config) -> Self {
        Self {
            matcher: Matcher::new(config),
            buf: Vec::new(),
        }
    }

    /// The query as one fuzzy atom: every character literal (no `^`, `$`, `!` syntax), smart
    /// case (an upper-case letter in the query makes the match case-sensitive).
    fn atom(query: &str) -> Atom {
        Atom::new(
            query,
            CaseMatching::Smart,
            Normalization::Smart,
            AtomKind::Fuzzy,
            false,
        )
    }

    /// The `candidates` (indices into `texts`) that match `query`, best first: by score, then
    /// the shorter text, then the earlier index. An empty query keeps them all, in order.
    pub fn rank(
        &mut self,
        query: &str,
        texts: &[String],
        candidates: impl IntoIterator<Item = usize>,
    ) -> Vec<usize> {
        if query.is_empty() {
            return candidates
                .into_iter()
                .filter(|&i| i < texts.len())
                .collect();
        }
        let atom = Self::atom(query);
        let mut scored: Vec<(u16, usize)> = candidates
            .into_iter()
            .filter_map(|i| {
                let text = texts.get(i)?;
                let score = atom.score(Utf32Str::new(text, &mut self.buf), &mut self.matcher)?;
                Some((score, i))
            })
            .collect();
        scored.sort_by(|(sa, a), (sb, b)| {
            sb.cmp(sa)
                .then(texts[*a].len().cmp(&texts[*b].len()))
                .then(a.cmp(b))
        });
        scored.into_iter().map(|(_, i)| i).collect()
    }

    /// Merges `more` (indices into `texts`, each matching `query`) into `ranked`, keeping the
    /// order of [`Fuzzy::rank`]; for files that arrive while the popup is open.
    pub fn merge(
        &mut self,
        query: &str,
        texts: &[String],
        ranked: &mut Vec<usize>,
        more: &[usize],
    ) {
        if query.is_empty() {
            ranked.extend_from_slice(more);
            return;
        }
        let all: Vec<usize> = ranked.iter().chain(more).copied().collect();
        *ranked = self.rank(query, texts, all);
    }

    /// The character positions in `text` of the letters `query` matched (for highlighting).
    pub fn positions(&mut self, query: &str, text: &str) -> Vec<usize> {
        if query.is_empty() {
            return Vec::new();
        }
        let mut indices = Vec::new();
        let haystack = Utf32Str::new(text, &mut self.buf);
        let ascii = haystack.is_ascii();
        Self::atom(query).indices(haystack, &mut self.matcher, &mut indices);
        indices.sort_unstable();
        indices.dedup();
        if ascii {
            return indices.into_iter().map(|i| i as usize).collect();
        }
        // Non-ASCII text is matched by grapheme: map each to the position of its first char.
        use unicode_segmentation::UnicodeSegmentation;
        let starts: Vec<usize> = text
            .graphemes(true)
            .scan(0, |at, g| {
                let here = *at;
                *at += g.chars().count();
                Some(here)
            })
            .collect();
        indices
            .into_iter()
            .filter_map(|i| starts.get(i as usize).copied())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn paths_rank_by_score_then_length_and_show_their_letters() {
        let paths = texts(&[
            "docs/readme.md",
            "src/main.rs",
            "src/tui/mod.rs",
            "benches/main_loop.rs",
            "Cargo.toml",
        ]);
        let mut f = Fuzzy::paths();
        let ranked = f.rank("main", &paths, 0..paths.len());
        assert_eq!(ranked, vec![1, 3]);
        assert_eq!(
            f.rank("", &paths, [4, 0]),
            vec![4, 0],
            "no query keeps the order"
        );
        assert_eq!(f.rank("zzz", &paths, 0..paths.len()), Vec::<usize>::new());
        assert_eq!(f.positions("smn", "src/main.rs"), vec![0, 4, 7]);
        // Smart case: an upper-case letter must match exactly.
        assert_eq!(f.rank("cargo", &paths, 0..paths.len()), vec![4]);
        assert!(f.rank("CARGO", &paths, 0..paths.len()).is_empty());
        let mut ranked = f.rank("rs", &paths, 0..2);
        f.merge("rs", &paths, &mut ranked, &[2, 3]);
        assert_eq!(ranked.len(), 3);
        assert!(ranked.contains(&3) && !ranked.contains(&0));
    }

    #[test]
    fn letters_of_wide_text_are_found_by_character() {
        let mut f = Fuzzy::paths();
        assert_eq!(f.positions("笔记", "文档/笔记.md"), vec![3, 4]);
    }
}
