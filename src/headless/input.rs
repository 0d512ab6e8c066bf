//! Where a headless prompt comes from: `-p PROMPT`, or stdin (`-p -`, or piped in without `-p`).

use std::io::Read;

/// The largest prompt read from stdin: 10 MB. Far more than any context window holds, so no real
/// prompt meets it, while a mistaken `cat big.iso |` ends with a message instead of filling memory.
pub const MAX_STDIN_PROMPT_BYTES: u64 = 10 * 1024 * 1024;

/// Why a headless run cannot get its prompt; each says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    /// `-p ""`, or a prompt of blanks.
    #[error("the prompt given to --print is empty")]
    EmptyArgument,
    /// Nothing (or only blanks) came on stdin.
    #[error(
        "the prompt read from stdin is empty: pipe one in (echo 'your question' | miniclaw-tui) or pass -p PROMPT"
    )]
    EmptyStdin,
    /// More than [`MAX_STDIN_PROMPT_BYTES`] came on stdin.
    #[error(
        "the prompt on stdin is larger than {} MB: put the material in a file in the workspace and ask the model to read it",
        MAX_STDIN_PROMPT_BYTES / (1024 * 1024)
    )]
    StdinTooLarge,
    /// Stdin did not hold UTF-8 text.
    #[error("the prompt on stdin is not UTF-8 text (invalid byte at offset {0})")]
    StdinNotText(usize),
    /// Reading stdin failed.
    #[error("could not read the prompt from stdin: {0}")]
    Read(#[from] std::io::Error),
}

/// Where the prompt of a headless run comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptSource {
    /// `-p PROMPT`.
    Argument(String),
    /// `-p -`, or stdin piped in without `-p`.
    Stdin,
}

/// Whether to run headless, and with which prompt: `-p -` reads stdin; `-p PROMPT` is the
/// prompt; no `-p` with stdin not a terminal (a pipe, a file) reads stdin too, since the screen
/// could not be driven from it anyway. `None`: the full-screen UI, or `--list-tools`, which wins.
pub fn prompt_source(
    print: Option<&str>,
    list_tools: bool,
    stdin_is_terminal: bool,
) -> Option<PromptSource> {
    match print {
        _ if list_tools => None,
        Some("-") => Some(PromptSource::Stdin),
        Some(prompt) => Some(PromptSource::Argument(prompt.to_string())),
        None if stdin_is_terminal => None,
        None => Some(PromptSource::Stdin),
    }
}

/// The prompt from `source`, reading stdin (`reader`) when it says so: at most `cap` bytes of
/// UTF-8, with the line ends after it dropped (`echo` adds one). Blank is an error.
pub fn read_prompt(
    source: PromptSource,
    reader: impl Read,
    cap: u64,
) -> Result<String, HeadlessError> {
    let prompt = match source {
        PromptSource::Argument(prompt) if prompt.trim().is_empty() => {
            return Err(HeadlessError::EmptyArgument);
        }
        PromptSource::Argument(prompt) => return Ok(prompt),
        PromptSource::Stdin => {
            let mut bytes = Vec::new();
            // One byte past the cap tells that there is more.
            reader.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
            if bytes.len() as u64 > cap {
                return Err(HeadlessError::StdinTooLarge);
            }
            String::from_utf8(bytes)
                .map_err(|e| HeadlessError::StdinNotText(e.utf8_error().valid_up_to()))?
        }
    };
    let prompt = prompt.trim_end_matches(['\n', '\r']);
    if prompt.trim().is_empty() {
        return Err(HeadlessError::EmptyStdin);
    }
    Ok(prompt.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_follows_the_flag_then_the_terminal() {
        assert_eq!(
            prompt_source(Some("hi"), false, true),
            Some(PromptSource::Argument("hi".into()))
        );
        assert_eq!(
            prompt_source(Some("-"), false, true),
            Some(PromptSource::Stdin)
        );
        assert_eq!(prompt_source(None, false, false), Some(PromptSource::Stdin));
        assert_eq!(prompt_source(None, false, true), None);
        assert_eq!(prompt_source(None, true, false), None, "--list-tools");
        assert_eq!(
            prompt_source(Some("hi"), true, true),
            None,
            "--list-tools wins"
        );
    }

    #[test]
    fn stdin_is_read_whole_without_its_last_line_end() {
        let read = |text: &[u8]| read_prompt(PromptSource::Stdin, text, 100);
        assert_eq!(read(b"  two\nlines\r\n\n").unwrap(), "  two\nlines");
        assert!(matches!(read(b""), Err(HeadlessError::EmptyStdin)));
        assert!(matches!(read(b" \n\t\n"), Err(HeadlessError::EmptyStdin)));
        assert!(matches!(
            read(b"ab\xffcd"),
            Err(HeadlessError::StdinNotText(2))
        ));
        let argument = |p: &str| read_prompt(PromptSource::Argument(p.into()), &b"unused"[..], 100);
        assert_eq!(argument("as given\n").unwrap(), "as given\n");
        assert!(matches!(argument(" "), Err(HeadlessError::EmptyArgument)));
    }

    #[test]
    fn stdin_larger_than_the_cap_is_refused() {
        let text = [b'a'; 101];
        assert!(matches!(
            read_prompt(PromptSource::Stdin, &text[..], 100),
            Err(HeadlessError::StdinTooLarge)
        ));
        assert_eq!(
            read_prompt(PromptSource::Stdin, &text[..100], 100)
                .unwrap()
                .len(),
            100
        );
        assert!(HeadlessError::StdinTooLarge.to_string().contains("10 MB"));
    }
}
