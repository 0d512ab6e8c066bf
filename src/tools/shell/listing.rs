//! Hidden names kept out of what a command prints. `ls` prints names only, so every line that
//! names something `hidden` hides is left out (an entry, a link's target, an `ls -R` section
//! with everything in it); error messages (stderr) are filtered the same way. File contents are
//! never filtered: the argument checks and the confinement already keep hidden files unread.

use crate::tools::hidden;

/// Characters `ls` adds after a name (`-F`, `-p`) or a section header (`dir:`).
const DECORATIONS: [char; 6] = ['/', '*', '@', '=', '|', ':'];

/// Whether any word of `line` is, or is a path through, a hidden name. Judged without knowing
/// the folder, so MiniClaw's own names count at any depth; a name with spaces is judged by each
/// word, which can only leave out more.
pub fn names_hidden(line: &str) -> bool {
    line.split_whitespace().any(|word| {
        word.trim_end_matches(DECORATIONS)
            .split('/')
            .any(|part| hidden::name_hidden_anywhere(part.trim_matches(['\'', '"'])))
    })
}

/// Reads `ls` output line by line and says which lines to keep. `ls -R` and several folders
/// print sections (`dir:` then its entries, then a blank line): a hidden folder's section goes
/// whole.
#[derive(Debug)]
pub struct ListingFilter {
    /// Inside the section of a hidden folder.
    in_hidden: bool,
    /// At the first line of the output or of a section, where a header may stand.
    at_start: bool,
}

impl Default for ListingFilter {
    fn default() -> Self {
        Self {
            in_hidden: false,
            at_start: true,
        }
    }
}

impl ListingFilter {
    /// Whether to keep `line` (without its line break).
    pub fn keep(&mut self, line: &str) -> bool {
        if line.is_empty() {
            let ended_hidden = self.in_hidden;
            self.in_hidden = false;
            self.at_start = true;
            return !ended_hidden;
        }
        let header = self.at_start && line.ends_with(':');
        self.at_start = false;
        if header {
            self.in_hidden = names_hidden(line);
            return !self.in_hidden;
        }
        !self.in_hidden && !names_hidden(line)
    }
}

/// `text` without the lines `keep` refuses; line breaks are kept as they were.
pub fn filter_lines(text: &str, mut keep: impl FnMut(&str) -> bool) -> String {
    text.split_inclusive('\n')
        .filter(|line| keep(line.trim_end_matches(['\n', '\r'])))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(text: &str) -> String {
        let mut filter = ListingFilter::default();
        filter_lines(text, |l| filter.keep(l))
    }

    #[test]
    fn long_listings_lose_hidden_entries_and_links_to_them() {
        let text = "total 8\n\
            drwxr-xr-x 2 u u 4096 Jan  1 00:00 .\n\
            -rw-r--r-- 1 u u   20 Jan  1 00:00 .ENV.local\n\
            -rw-r--r-- 1 u u   20 Jan  1 00:00 a.txt\n\
            -rw-r--r-- 1 u u   20 Jan  1 00:00 history.json.lock\n\
            lrwxrwxrwx 1 u u    4 Jan  1 00:00 link -> ./.env\n\
            drwxr-xr-x 3 u u 4096 Jan  1 00:00 .miniclaw/\n";
        assert_eq!(
            listing(text),
            "total 8\ndrwxr-xr-x 2 u u 4096 Jan  1 00:00 .\n\
             -rw-r--r-- 1 u u   20 Jan  1 00:00 a.txt\n"
        );
    }

    #[test]
    fn a_hidden_folders_recursive_section_goes_whole() {
        let text = ".:\na.txt\n.miniclaw\nsub\n\n./.miniclaw:\nsessions\n\n\
            ./.miniclaw/sessions:\nx.json\n\n./sub:\nb.txt\n";
        assert_eq!(listing(text), ".:\na.txt\nsub\n\n./sub:\nb.txt\n");
    }

    #[test]
    fn ordinary_names_stay() {
        for line in [
            "my.env.txt",
            "environment",
            "history.jsonl",
            "notes about env",
        ] {
            assert!(!names_hidden(line), "{line}");
        }
        for line in [".env", "sub/.Env:", "'.env.local'", "1234 history.json"] {
            assert!(names_hidden(line), "{line}");
        }
    }
}
