//! Keeping observations small enough for the model: the longest texts are cut, head and tail kept.

use serde_json::Value;

/// An observation longer than this (in bytes of JSON) has its longest texts shortened.
pub const OBSERVATION_CAP: usize = 256 * 1024;

/// Shortens the longest strings of `value` (keeping head and tail, noting the cut) until its JSON
/// text is at most `cap` bytes, and marks it `"observation_truncated": true`.
pub fn cap_observation(value: &mut Value, cap: usize) {
    let mut size = value.to_string().len();
    if size <= cap {
        return;
    }
    for _ in 0..64 {
        let Some(longest) = longest_string(value) else {
            break;
        };
        let len = longest.len();
        let excess = size.saturating_sub(cap).saturating_add(200);
        let keep = len.saturating_sub(excess) / 2;
        let head = floor_char_boundary(longest, keep);
        let tail = ceil_char_boundary(longest, len - keep);
        let cut = format!(
            "{}\n…[{} bytes cut: the output was too long]…\n{}",
            &longest[..head],
            tail - head,
            &longest[tail..]
        );
        *longest = cut;
        size = value.to_string().len();
        if size <= cap {
            break;
        }
    }
    if let Value::Object(map) = value {
        map.insert("observation_truncated".into(), Value::Bool(true));
    }
}

fn longest_string(value: &mut Value) -> Option<&mut String> {
    match value {
        Value::String(s) => Some(s),
        Value::Array(items) => items
            .iter_mut()
            .filter_map(longest_string)
            .max_by_key(|s| s.len()),
        Value::Object(map) => map
            .values_mut()
            .filter_map(longest_string)
            .max_by_key(|s| s.len()),
        _ => None,
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_huge_observation_is_cut_to_the_cap_keeping_head_and_tail() {
        let big = format!("HEAD{}TAIL", "数".repeat(3_000_000));
        let mut v = json!({"ok": true, "tool": "t", "stdout": big, "exit_code": 0});
        cap_observation(&mut v, OBSERVATION_CAP);
        let text = v.to_string();
        assert!(text.len() <= OBSERVATION_CAP, "{}", text.len());
        let out = v["stdout"].as_str().unwrap();
        assert!(out.starts_with("HEAD") && out.ends_with("TAIL"));
        assert!(out.contains("bytes cut"));
        assert_eq!(v["observation_truncated"], true);
        assert_eq!(v["exit_code"], 0);
    }

    #[test]
    fn a_small_observation_is_left_alone() {
        let mut v = json!({"ok": true, "tool": "t", "text": "short"});
        let before = v.clone();
        cap_observation(&mut v, OBSERVATION_CAP);
        assert_eq!(v, before);
    }
}
