//! Ctrl+R: the reverse search through earlier prompts, as a shell has it. The prompts are this
//! session's (newest first) then the archived sessions' of this folder (newest session first),
//! which arrive from the agent a moment after the search opens.

use crate::terminal_text;
use crate::tui::paste::Paste;
use crate::tui::smartcase;

/// An open reverse search.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PromptSearch {
    /// What was typed to search for.
    pub query: String,
    /// How many matches, newest first, Ctrl+R skipped.
    pub skip: usize,
    /// Whether the last Ctrl+R found nothing older (the line says so, as bash's `failing`).
    pub failing: bool,
    /// The input as it was when the search opened (Esc puts it back).
    pub draft: String,
    /// The long pastes the input held then.
    pub pastes: Vec<Paste>,
}

/// The prompts to search, newest first, each once: `session` (oldest first, as the composer
/// keeps it) then `archived` (already newest first). Every one is cleaned of escapes and control
/// characters, since a session file is text a repository could have planted.
pub fn candidates(session: &[String], archived: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // Seen ones by value, so a long history dedupes in one pass, not by rescanning `out`.
    let mut seen = std::collections::HashSet::new();
    for prompt in session.iter().rev().chain(archived) {
        let clean = terminal_text::clean(prompt);
        let clean: String = clean
            .chars()
            .filter(|c| *c == '\n' || !c.is_control())
            .collect();
        if !clean.trim().is_empty() && seen.insert(clean.clone()) {
            out.push(clean);
        }
    }
    out
}

impl PromptSearch {
    /// The match shown: the `skip`-th newest prompt holding the query (smartcase), or the
    /// oldest one when fewer match; `None` when nothing does (or nothing was typed).
    pub fn found<'a>(&self, candidates: &'a [String]) -> Option<&'a String> {
        if self.query.is_empty() {
            return None;
        }
        let mut hits = candidates
            .iter()
            .filter(|p| smartcase::matches(p, &self.query));
        let mut last = None;
        for _ in 0..=self.skip {
            match hits.next() {
                Some(hit) => last = Some(hit),
                None => break,
            }
        }
        last
    }

    /// How many prompts match.
    pub fn count(&self, candidates: &[String]) -> usize {
        if self.query.is_empty() {
            return 0;
        }
        candidates
            .iter()
            .filter(|p| smartcase::matches(p, &self.query))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_first_each_once_and_cleaned() {
        let session = vec![
            "fix a".to_string(),
            "fix b".to_string(),
            "fix a".to_string(),
        ];
        let archived = vec![
            "fix \x1b[31mred\x1b[0m\x07".to_string(),
            "fix b".to_string(),
        ];
        assert_eq!(
            candidates(&session, &archived),
            ["fix a", "fix b", "fix red"]
        );
    }

    #[test]
    fn skip_walks_to_older_matches_and_stops_at_the_oldest() {
        let all = vec![
            "Fix B".to_string(),
            "other".to_string(),
            "fix a".to_string(),
        ];
        let mut s = PromptSearch {
            query: "fix".into(),
            ..Default::default()
        };
        assert_eq!(s.found(&all).map(String::as_str), Some("Fix B"));
        s.skip = 1;
        assert_eq!(s.found(&all).map(String::as_str), Some("fix a"));
        s.skip = 5;
        assert_eq!(s.found(&all).map(String::as_str), Some("fix a"));
        s.query = "Fix".into();
        s.skip = 0;
        assert_eq!(s.count(&all), 1, "a capital matches exactly");
    }
}
