//! What a call showed while it ran, kept (its last few KiB) so that a call interrupted by the
//! person tells the model what had come by then, not only that it stopped.

use std::sync::{Arc, Mutex};

/// How much of a call's live output is kept for the model: the tail, as in a terminal.
pub const KEPT_BYTES: usize = 4 * 1024;

/// A call's live output as it came, shared by its context's clones.
#[derive(Clone, Debug, Default)]
pub struct Shown(Arc<Mutex<Tail>>);

#[derive(Debug, Default)]
struct Tail {
    text: String,
    /// Bytes that came before `text` and were let go.
    dropped: usize,
}

impl Shown {
    /// Keeps `piece` (the oldest output goes once more than [`KEPT_BYTES`] came).
    pub fn push(&self, piece: &str) {
        let Ok(mut tail) = self.0.lock() else {
            return;
        };
        tail.text.push_str(piece);
        if tail.text.len() > KEPT_BYTES {
            let mut cut = tail.text.len() - KEPT_BYTES;
            while !tail.text.is_char_boundary(cut) {
                cut += 1;
            }
            tail.text.drain(..cut);
            tail.dropped += cut;
        }
    }

    /// What came (its tail) and how many bytes before it were let go; `None` if nothing came.
    pub fn so_far(&self) -> Option<(String, usize)> {
        let tail = self.0.lock().ok()?;
        (!tail.text.is_empty()).then(|| (tail.text.clone(), tail.dropped))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_kept_on_a_character_boundary() {
        let shown = Shown::default();
        assert_eq!(shown.so_far(), None);
        shown.push("first\n");
        assert_eq!(shown.so_far(), Some(("first\n".into(), 0)));
        let long = "é".repeat(KEPT_BYTES);
        shown.clone().push(&long);
        let (text, dropped) = shown.so_far().unwrap();
        assert!(text.len() <= KEPT_BYTES && text.len() >= KEPT_BYTES - 1);
        assert!(text.chars().all(|c| c == 'é'));
        assert_eq!(dropped + text.len(), 6 + long.len());
    }
}
