//! Long pastes in the input: shown as one marker (`[pasted 5,000 lines]`) that is deleted as a
//! unit and replaced by the pasted text when the prompt is sent, so a huge paste neither floods
//! the editor nor slows typing.

/// A paste of more lines than this becomes a marker.
pub const FOLD_LINES: usize = 20;

/// A pasted text kept aside while its marker stands in the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paste {
    /// What the input shows, e.g. `[pasted 5,000 lines]`.
    pub marker: String,
    /// The text it stands for.
    pub text: String,
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A marker for a paste of `lines` lines, unlike any marker already in `taken`.
pub fn marker(lines: usize, taken: &[Paste]) -> String {
    let base = format!("[pasted {} lines]", thousands(lines));
    let mut marker = base.clone();
    let mut n = 1;
    while taken.iter().any(|p| p.marker == marker) {
        n += 1;
        marker = format!("{} #{n}]", &base[..base.len() - 1]);
    }
    marker
}

/// The text with each marker replaced by its paste (a marker edited by hand is left as typed).
pub fn expand(text: &str, pastes: &[Paste]) -> String {
    let mut out = text.to_string();
    for p in pastes {
        if let Some(at) = out.find(&p.marker) {
            out.replace_range(at..at + p.marker.len(), &p.text);
        }
    }
    out
}

/// The paste whose marker ends exactly at character `col` of `line` (for Backspace).
pub fn ending_at(line: &str, col: usize, pastes: &[Paste]) -> Option<usize> {
    let before: String = line.chars().take(col).collect();
    pastes.iter().position(|p| before.ends_with(&p.marker))
}

/// The paste whose marker starts exactly at character `col` of `line` (for Delete).
pub fn starting_at(line: &str, col: usize, pastes: &[Paste]) -> Option<usize> {
    let after: String = line.chars().skip(col).collect();
    pastes.iter().position(|p| after.starts_with(&p.marker))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_unique_and_expand_back_to_the_paste() {
        assert_eq!(thousands(5000), "5,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
        let mut pastes = Vec::new();
        let first = marker(21, &pastes);
        pastes.push(Paste {
            marker: first.clone(),
            text: "a\nb".into(),
        });
        let second = marker(21, &pastes);
        assert_eq!(first, "[pasted 21 lines]");
        assert_eq!(second, "[pasted 21 lines #2]");
        pastes.push(Paste {
            marker: second.clone(),
            text: "c".into(),
        });
        let typed = format!("see {first} and {second}!");
        assert_eq!(expand(&typed, &pastes), "see a\nb and c!");
        assert_eq!(
            ending_at(&typed, 4 + first.chars().count(), &pastes),
            Some(0)
        );
        assert_eq!(starting_at(&typed, 4, &pastes), Some(0));
        assert_eq!(starting_at(&typed, 5, &pastes), None);
    }
}
