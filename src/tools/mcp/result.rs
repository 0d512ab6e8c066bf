//! A `tools/call` result as the fields of MiniClaw's usual `{"ok": ..., "tool": ...}` shape.
//!
//! Read from the result's JSON form (the protocol's, stable across SDK versions): text blocks
//! become `text`, `structuredContent` becomes `structured_content`, images and audio become a
//! note with their type and size (the model takes no pictures), embedded resources give their
//! text or a note, links their address. `isError` makes the call an error with the text.

use serde_json::{Map, Value, json};

use super::error::McpError;

/// The fields of a successful call, or the tool's own error.
pub fn interpret(result: &Value) -> Result<Map<String, Value>, McpError> {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut texts: Vec<String> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut resources: Vec<Value> = Vec::new();
    for block in blocks {
        read_block(block, &mut texts, &mut notes, &mut resources);
    }
    let text = texts.join("\n");
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let message = if text.trim().is_empty() {
            "the tool reported an error without saying which".to_string()
        } else {
            text
        };
        return Err(McpError::ToolFailed(message));
    }
    let mut fields = Map::new();
    if !texts.is_empty() {
        fields.insert("text".into(), Value::String(text));
    }
    if let Some(structured) = result.get("structuredContent") {
        fields.insert("structured_content".into(), structured.clone());
    }
    if !resources.is_empty() {
        fields.insert("resources".into(), Value::Array(resources));
    }
    if !notes.is_empty() {
        fields.insert("notes".into(), json!(notes));
    }
    if fields.is_empty() {
        fields.insert("text".into(), Value::String(String::new()));
    }
    Ok(fields)
}

fn read_block(
    block: &Value,
    texts: &mut Vec<String>,
    notes: &mut Vec<String>,
    resources: &mut Vec<Value>,
) {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    let mime = block
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or("unknown type");
    match kind {
        "text" => texts.push(str_field(block, "text")),
        "image" | "audio" => notes.push(format!(
            "{kind} ({mime}, {}) returned; not shown to the model",
            size_text(base64_len(&str_field(block, "data")))
        )),
        "resource" => {
            let resource = block.get("resource").unwrap_or(&Value::Null);
            let uri = str_field(resource, "uri");
            match resource.get("text").and_then(Value::as_str) {
                Some(text) => resources.push(json!({"uri": uri, "text": text})),
                None => {
                    let mime = resource
                        .get("mimeType")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown type");
                    let size = size_text(base64_len(&str_field(resource, "blob")));
                    notes.push(format!(
                        "resource {uri} ({mime}, {size}) returned; not shown to the model"
                    ));
                }
            }
        }
        "resource_link" => {
            let mut link = Map::new();
            for key in ["uri", "name", "description", "mimeType"] {
                if let Some(v) = block.get(key) {
                    link.insert(key.to_string(), v.clone());
                }
            }
            resources.push(Value::Object(link));
        }
        other => notes.push(format!(
            "a `{other}` content block was returned; not shown to the model"
        )),
    }
}

fn str_field(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The decoded size of base64 text, without decoding it.
fn base64_len(data: &str) -> usize {
    let data = data.trim_end_matches('=');
    data.len() * 3 / 4
}

fn size_text(bytes: usize) -> String {
    if bytes < 10 * 1024 {
        format!("{bytes} bytes")
    } else {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_structured_images_and_resources() {
        let result = json!({
            "content": [
                {"type": "text", "text": "line 1"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "text", "text": "line 2"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "A"}},
                {"type": "resource", "resource": {"uri": "file:///b", "blob": "AAAA", "mimeType": "application/gzip"}},
                {"type": "resource_link", "uri": "file:///c", "name": "c"}
            ],
            "structuredContent": {"sum": 3}
        });
        let fields = interpret(&result).unwrap();
        assert_eq!(fields["text"], "line 1\nline 2");
        assert_eq!(fields["structured_content"], json!({"sum": 3}));
        assert_eq!(
            fields["resources"][0],
            json!({"uri": "file:///a", "text": "A"})
        );
        assert_eq!(fields["resources"][1]["uri"], "file:///c");
        let notes = fields["notes"].to_string();
        assert!(notes.contains("image (image/png, 8 bytes)"), "{notes}");
        assert!(
            notes.contains("resource file:///b (application/gzip, 3 bytes)"),
            "{notes}"
        );
    }

    #[test]
    fn is_error_is_the_calls_error() {
        let result =
            json!({"content": [{"type": "text", "text": "no such file"}], "isError": true});
        assert_eq!(interpret(&result).unwrap_err().to_string(), "no such file");
        let empty = interpret(&json!({"content": []})).unwrap();
        assert_eq!(empty["text"], "");
    }
}
