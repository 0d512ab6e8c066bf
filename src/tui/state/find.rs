//! Ctrl+F / `/find`: finding text in the conversation as it is drawn (expanded previews and
//! all). The matches are found by the layout pass, which has the drawn lines; this is what it
//! keeps between frames.

/// One match: where it is drawn in the conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The conversation line (0 is its first).
    pub line: usize,
    /// The first column, in the pane's inside.
    pub column: u16,
    /// How many columns it covers.
    pub width: u16,
}

/// An open find.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Find {
    /// What is looked for (smartcase).
    pub query: String,
    /// The matches at the last layout, in reading order.
    pub hits: Vec<Hit>,
    /// The current match (an index into `hits`).
    pub current: Option<usize>,
    /// The query changed: the next layout starts again from the newest match.
    pub fresh: bool,
    /// The current match moved: the next layout scrolls it into view.
    pub reveal: bool,
}

impl Find {
    /// A find for `query`, starting from the newest match.
    pub fn new(query: &str) -> Self {
        Self {
            query: query.to_string(),
            fresh: true,
            reveal: true,
            ..Self::default()
        }
    }

    /// `2/7`, or `0/0` with no match.
    pub fn counter(&self) -> String {
        match self.current {
            Some(i) if !self.hits.is_empty() => format!("{}/{}", i + 1, self.hits.len()),
            _ => format!("0/{}", self.hits.len()),
        }
    }

    /// Moves `delta` matches (negative: up, older), wrapping around.
    pub fn step(&mut self, delta: isize) {
        let n = self.hits.len() as isize;
        if n == 0 {
            return;
        }
        let at = self.current.map_or(n - 1, |i| i as isize);
        self.current = Some((at + delta).rem_euclid(n) as usize);
        self.reveal = true;
    }

    /// Takes the matches a layout found: the newest when the query just changed, else the
    /// current one kept (clamped when the conversation changed under it).
    pub fn set_hits(&mut self, hits: Vec<Hit>) {
        self.hits = hits;
        if self.hits.is_empty() {
            self.current = None;
        } else if self.fresh || self.current.is_none() {
            self.current = Some(self.hits.len() - 1);
        } else {
            self.current = self.current.map(|i| i.min(self.hits.len() - 1));
        }
        self.fresh = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(line: usize) -> Hit {
        Hit {
            line,
            column: 0,
            width: 1,
        }
    }

    #[test]
    fn it_starts_at_the_newest_and_steps_around() {
        let mut f = Find::new("x");
        f.set_hits(vec![hit(1), hit(5), hit(9)]);
        assert_eq!(f.counter(), "3/3");
        f.step(-1);
        assert_eq!(f.counter(), "2/3");
        f.step(2);
        assert_eq!(f.counter(), "1/3", "wraps");
        f.set_hits(vec![hit(1)]);
        assert_eq!(f.counter(), "1/1");
        f.set_hits(vec![]);
        assert_eq!(f.counter(), "0/0");
    }
}
