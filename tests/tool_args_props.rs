//! Property tests for tool-argument parsing: whatever the model writes, parsing never panics,
//! objects are accepted whole, and anything else is a clear error.
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

proptest! {
    #[test]
    fn arbitrary_text_never_panics(raw in ".*") {
        let _ = parse_arguments(&raw, &schema());
    }

    #[test]
    fn arbitrary_bytes_as_lossy_text_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse_arguments(&String::from_utf8_lossy(&bytes), &schema());
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
