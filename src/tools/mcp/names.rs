//! Tool names as the model sees them: `mcp__SERVER__TOOL`, cleaned to `[A-Za-z0-9_-]`, at most
//! 64 characters, unique.

use std::collections::BTreeSet;

use sha2::{Digest, Sha256};

/// The longest tool name the model API takes.
pub const MAX_NAME: usize = 64;

/// `text` with every character outside `[A-Za-z0-9_-]` replaced by `_` (empty → `_`).
pub fn clean(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "_".to_string()
    } else {
        cleaned
    }
}

/// A server's name as it stands in its tools' names: cleaned, with no `__` inside, so
/// `mcp__SERVER__TOOL` splits one way only (servers `x` and `x__y` cannot make the same name).
pub fn server_part(server: &str) -> String {
    let mut part = clean(server);
    while part.contains("__") {
        part = part.replace("__", "_");
    }
    part
}

/// The name for `tool` of the server whose cleaned name is `server`, unique among `taken`
/// (which it joins). A name that would be too long keeps its start and ends in a short hash of
/// the whole; a clash gets `_2`, `_3`, … (within the length limit).
pub fn tool_name(server: &str, tool: &str, taken: &mut BTreeSet<String>) -> String {
    let full = format!("mcp__{server}__{}", clean(tool));
    let base = if full.len() <= MAX_NAME {
        full
    } else {
        let hash = Sha256::digest(full.as_bytes());
        let tag: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
        format!("{}_{tag}", &full[..MAX_NAME - tag.len() - 1])
    };
    let mut name = base.clone();
    let mut n = 2;
    while taken.contains(&name) {
        let suffix = format!("_{n}");
        name = format!(
            "{}{suffix}",
            &base[..base.len().min(MAX_NAME - suffix.len())]
        );
        n += 1;
    }
    taken.insert(name.clone());
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_name_never_holds_the_separator() {
        assert_eq!(server_part("x__y"), "x_y");
        assert_eq!(server_part("a___b.c"), "a_b_c");
        let mut taken = BTreeSet::new();
        let one = tool_name(&server_part("x"), "y__z", &mut taken);
        let two = tool_name(&server_part("x__y"), "z", &mut taken);
        assert_ne!(one, two);
    }

    #[test]
    fn names_are_clean_short_and_unique() {
        let mut taken = BTreeSet::new();
        assert_eq!(
            tool_name("time", "get_current_time", &mut taken),
            "mcp__time__get_current_time"
        );
        assert_eq!(
            tool_name("fs", "read.file/now", &mut taken),
            "mcp__fs__read_file_now"
        );
        assert_eq!(
            tool_name("fs", "read_file?now", &mut taken),
            "mcp__fs__read_file_now_2"
        );
        assert_eq!(
            tool_name("fs", "read file now", &mut taken),
            "mcp__fs__read_file_now_3"
        );
        assert_eq!(clean("é"), "_");
        assert_eq!(clean(""), "_");
        let long = "x".repeat(100);
        let a = tool_name("srv", &long, &mut taken);
        let b = tool_name("srv", &format!("{long}y"), &mut taken);
        let c = tool_name("srv", &long, &mut taken);
        for name in [&a, &b, &c] {
            assert!(name.len() <= MAX_NAME, "{name}");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            );
        }
        assert!(a != b && a != c && b != c, "{a} {b} {c}");
    }
}
