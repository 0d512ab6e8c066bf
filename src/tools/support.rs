//! Helpers the tool families share: running blocking work off the async runtime, result
//! fields, and decoding a file's bytes as text.

use serde_json::{Map, Value};

use super::error::ToolError;

/// Runs filesystem work off the async runtime.
pub(crate) async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    // Inside the tool-call scope: a panic in `work` is the call's error, not a crash.
    super::panic_guard::spawn_blocking(work).await?
}

/// A JSON object from `json!({...})` (always an object here).
pub(crate) fn fields(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The first `cap` bytes as UTF-8 text (a character cut at the cap is dropped), and whether
/// there was more; binary and non-UTF-8 text are refused.
pub(crate) fn decode_text(
    mut bytes: Vec<u8>,
    cap: usize,
    shown: &str,
) -> Result<(String, bool), ToolError> {
    let truncated = bytes.len() > cap;
    bytes.truncate(cap);
    if bytes.contains(&0) {
        return Err(ToolError::failed(format!(
            "`{shown}` looks like a binary file (it contains NUL bytes); only UTF-8 text can be read"
        )));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok((text, truncated)),
        // The cut may split a character; drop its partial bytes.
        Err(e) if truncated && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            Ok((String::from_utf8(bytes).unwrap_or_default(), truncated))
        }
        Err(e) => Err(ToolError::failed(format!(
            "`{shown}` is not UTF-8 text (invalid byte at offset {}); only UTF-8 text can be read",
            e.utf8_error().valid_up_to()
        ))),
    }
}
