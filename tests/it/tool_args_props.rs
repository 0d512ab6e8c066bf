//! Property tests for tool-argument parsing: whatever the model writes, parsing never panics,
//! objects holding the required field are accepted whole, and anything else is an error that
//! says why (not JSON, not an object, a missing field).
//! Run with more cases: `PROPTEST_CASES=100000 cargo test --test tool_args_props`.

use miniclaw::tools::registry::parse_arguments;
use proptest::prelude::*;
use serde_json::{Value, json};

fn schema() -> Value {
    json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        ".*".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,3}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Text a model might send: anything, whole JSON values, and JSON cut short or padded.
fn argument_text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".*",
        json_value().prop_map(|v| v.to_string()),
        (json_value(), any::<prop::sample::Index>()).prop_map(|(v, cut)| {
            let text = v.to_string();
            let at = cut.index(text.len() + 1);
            // Cut on a character boundary: the text stays valid UTF-8.
            let at = (0..=at)
                .rev()
                .find(|i| text.is_char_boundary(*i))
                .unwrap_or(0);
            text[..at].to_string()
        }),
        (json_value(), "[ \t\r\n]{0,3}").prop_map(|(v, pad)| format!("{pad}{v}{pad}")),
    ]
}

/// What `parse_arguments` must make of `raw`, judged by serde_json's own reading of the text:
/// the object back when it holds a non-null `a`, else an invalid-arguments error that says why.
fn check_outcome(raw: &str) -> Result<(), TestCaseError> {
    let result = parse_arguments(raw, &schema());
    let trimmed = raw.trim();
    let value = if trimmed.is_empty() {
        Ok(Value::Object(serde_json::Map::new()))
    } else {
        serde_json::from_str::<Value>(trimmed)
    };
    let why = match value {
        Err(_) => "the arguments are not valid JSON",
        Ok(Value::Object(m)) if m.get("a").is_some_and(|a| !a.is_null()) => {
            prop_assert_eq!(result.ok(), Some(m));
            return Ok(());
        }
        Ok(Value::Object(_)) => "missing required field(s): a",
        Ok(_) => "the arguments must be a JSON object",
    };
    let error = match result {
        Ok(parsed) => {
            return Err(TestCaseError::fail(format!(
                "{raw:?} was accepted: {parsed:?}"
            )));
        }
        Err(e) => e.to_string(),
    };
    prop_assert!(
        error.starts_with(&format!("invalid arguments: {why}")),
        "{:?}: {}",
        raw,
        error
    );
    Ok(())
}

proptest! {
    #![proptest_config(crate::proptest_config(256))]

    #[test]
    fn any_text_is_parsed_or_refused_with_the_reason(raw in argument_text()) {
        check_outcome(&raw)?;
    }

    #[test]
    fn arbitrary_bytes_as_lossy_text_are_parsed_or_refused_with_the_reason(
        bytes in prop::collection::vec(any::<u8>(), 0..256)
    ) {
        check_outcome(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn an_object_with_the_required_field_is_accepted_as_is(v in json_value(), a in ".*") {
        let mut obj = match v { Value::Object(m) => m, _ => serde_json::Map::new() };
        obj.insert("a".into(), Value::String(a));
        let parsed = parse_arguments(&Value::Object(obj.clone()).to_string(), &schema()).unwrap();
        prop_assert_eq!(parsed, obj);
    }

    #[test]
    fn non_objects_and_missing_fields_are_errors_that_say_why(v in json_value()) {
        let text = v.to_string();
        match &v {
            Value::Object(m) if m.get("a").is_some_and(|x| !x.is_null()) => {
                prop_assert!(parse_arguments(&text, &schema()).is_ok());
            }
            Value::Object(_) => {
                let e = parse_arguments(&text, &schema()).unwrap_err().to_string();
                prop_assert!(e.contains("missing required field(s): a"), "{}", e);
            }
            _ => {
                let e = parse_arguments(&text, &schema()).unwrap_err().to_string();
                prop_assert!(e.contains("must be a JSON object"), "{}", e);
            }
        }
    }
}
