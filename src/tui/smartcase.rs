//! Smartcase matching, as vim and ripgrep do it: a query in lower case matches any case, one
//! with a capital matches exactly. Shared by the prompt search (Ctrl+R) and the conversation's
//! find (Ctrl+F), so the two never disagree about what matches.

/// Whether `query` asks for an exact-case match (it holds a capital).
pub fn exact(query: &str) -> bool {
    query.chars().any(char::is_uppercase)
}

/// The byte ranges in `text` where `query` matches, left to right, not overlapping; none for
/// an empty query.
pub fn find_all(text: &str, query: &str) -> Vec<std::ops::Range<usize>> {
    if query.is_empty() {
        return Vec::new();
    }
    if exact(query) {
        return text
            .match_indices(query)
            .map(|(at, m)| at..at + m.len())
            .collect();
    }
    // Lower-casing may change a character's length (İ), so compare char by char on the
    // original text's boundaries instead of searching a lowered copy.
    let needle: Vec<char> = query.chars().flat_map(char::to_lowercase).collect();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let mut k = 0;
        let mut j = i;
        while j < chars.len() && k < needle.len() {
            let lowered: Vec<char> = chars[j].1.to_lowercase().collect();
            if needle.get(k..k + lowered.len()) != Some(&lowered[..]) {
                break;
            }
            k += lowered.len();
            j += 1;
        }
        if k == needle.len() {
            let end = chars.get(j).map_or(text.len(), |c| c.0);
            out.push(chars[i].0..end);
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// Whether `query` matches somewhere in `text`.
pub fn matches(text: &str, query: &str) -> bool {
    !find_all(text, query).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_case_matches_any_case_and_a_capital_only_itself() {
        assert_eq!(
            find_all("Fix the Parser, parser", "parser"),
            [8..14, 16..22]
        );
        assert_eq!(find_all("Fix the Parser, parser", "Parser"), vec![8..14]);
        assert!(find_all("abc", "").is_empty());
        assert!(matches("Grüße", "grü"));
        assert!(!matches("grüße", "Grü"));
    }
}
