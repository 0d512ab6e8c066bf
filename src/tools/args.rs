//! Tool arguments from one source. Each built-in tool declares its arguments as a serde struct
//! deriving `JsonSchema` (its doc comments become the descriptions): the generated JSON Schema is
//! the `parameters` the model sees, and the same schema drives the checks that give clear
//! messages before serde reads the struct. Schema and parsing cannot drift apart.
//!
//! What the checks accept, as the model writes it: `null` for an absent field, quoted numbers
//! (`"5"`) for counts, `"true"`/`"false"` for flags, and one string for a list of strings.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::error::ToolError;

/// How an argument is checked, read from its schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A string.
    Text,
    /// A non-negative whole number (an unsigned integer field).
    Count,
    /// A boolean.
    Flag,
    /// A list of strings.
    TextList,
    /// Anything else: serde alone reads it.
    Other,
}

/// The `parameters` schema of the arguments `T`, as the model sees it: an object of properties
/// with their types and descriptions, and the required ones (optional fields are not nullable
/// there; the model leaves them out).
pub fn parameters_of<T: JsonSchema>() -> Value {
    let mut schema = generated::<T>();
    if let Value::Object(root) = &mut schema {
        // The tool has its own name and description; the struct's would only repeat them.
        for key in ["$schema", "title", "description"] {
            root.remove(key);
        }
        if let Some(Value::Object(properties)) = root.get_mut("properties") {
            properties.values_mut().for_each(tidy_property);
        }
        root.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        root.entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
    }
    schema
}

/// Reads a call's arguments into `T`. Each property of `T`'s schema is checked against its type
/// first, so a wrong value gets a message naming the field (e.g. "`relative_path` must be a
/// string, not 5") instead of serde's; then serde reads the struct.
pub fn parse_args<T: DeserializeOwned + JsonSchema>(
    mut args: Map<String, Value>,
) -> Result<T, ToolError> {
    let schema = generated::<T>();
    // Models write `null` for "not given"; serde's defaults then apply.
    args.retain(|_, value| !value.is_null());
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (key, property) in properties {
            if let Some(value) = args.get_mut(key) {
                check_value(key, kind_of(property), value)?;
            }
        }
    }
    let required = schema.get("required").and_then(Value::as_array);
    for key in required.into_iter().flatten().filter_map(Value::as_str) {
        if !args.contains_key(key) {
            return Err(invalid(format!("`{key}` is required")));
        }
    }
    serde_json::from_value(Value::Object(args)).map_err(|e| invalid(e.to_string()))
}

/// The default folder of the tools that take one: the workspace root.
pub fn workspace_root() -> String {
    ".".to_string()
}

/// Saturating conversion of a count to `usize` (a count past `usize::MAX` means "all").
pub fn to_usize(count: u64) -> usize {
    usize::try_from(count).unwrap_or(usize::MAX)
}

/// The schema schemars derives for `T` (for deserialising: what a call may send).
fn generated<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// A property as the model sees it: `"type": "string"` instead of `["string", "null"]` for an
/// optional field, no Rust number format, and a doc comment's line breaks as spaces.
fn tidy_property(property: &mut Value) {
    let Value::Object(p) = property else {
        return;
    };
    let non_null: Vec<Value> = match p.get("type") {
        Some(Value::Array(types)) => types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    if let [single] = non_null.as_slice() {
        p.insert("type".into(), single.clone());
    }
    p.remove("format");
    if let Some(Value::String(description)) = p.get_mut("description") {
        *description = description.replace('\n', " ");
    }
}

/// How a property of the generated schema is checked.
fn kind_of(property: &Value) -> Kind {
    let types: Vec<&str> = match property.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let main = types.iter().copied().find(|t| *t != "null");
    let format = property.get("format").and_then(Value::as_str).unwrap_or("");
    match main {
        Some("string") => Kind::Text,
        Some("integer") if format.starts_with("uint") => Kind::Count,
        Some("boolean") => Kind::Flag,
        Some("array")
            if property
                .get("items")
                .and_then(|items| items.get("type"))
                .and_then(Value::as_str)
                == Some("string") =>
        {
            Kind::TextList
        }
        _ => Kind::Other,
    }
}

/// Checks one value against its kind, turning the forms models write (`"5"`, `"true"`, one
/// string for a list) into the value serde expects.
fn check_value(key: &str, kind: Kind, value: &mut Value) -> Result<(), ToolError> {
    match kind {
        Kind::Text if !value.is_string() => {
            Err(invalid(format!("`{key}` must be a string, not {value}")))
        }
        Kind::Count => {
            let count = match &*value {
                Value::Number(n) => n.as_u64(),
                // Models sometimes quote numbers; accept "5".
                Value::String(s) => s.trim().parse::<u64>().ok(),
                other => return Err(invalid(format!("`{key}` must be a number, not {other}"))),
            };
            let Some(count) = count else {
                return Err(invalid(format!(
                    "`{key}` must be a non-negative whole number"
                )));
            };
            *value = Value::from(count);
            Ok(())
        }
        Kind::Flag => {
            let flag = match &*value {
                Value::Bool(b) => *b,
                Value::String(s) if s == "true" || s == "false" => s == "true",
                other => {
                    return Err(invalid(format!(
                        "`{key}` must be true or false, not {other}"
                    )));
                }
            };
            *value = Value::Bool(flag);
            Ok(())
        }
        Kind::TextList => {
            let items = match std::mem::take(value) {
                Value::String(s) => vec![Value::String(s)],
                Value::Array(items) => items
                    .into_iter()
                    .map(|item| match item {
                        Value::String(s) => Ok(Value::String(s)),
                        Value::Number(n) => Ok(Value::String(n.to_string())),
                        other => Err(invalid(format!(
                            "every item of `{key}` must be a string, not {other}"
                        ))),
                    })
                    .collect::<Result<_, _>>()?,
                other => {
                    return Err(invalid(format!(
                        "`{key}` must be an array of strings, not {other}"
                    )));
                }
            };
            *value = Value::Array(items);
            Ok(())
        }
        Kind::Text | Kind::Other => Ok(()),
    }
}

fn invalid(message: String) -> ToolError {
    ToolError::InvalidArguments(message)
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::{Map, Value, json};

    use super::*;

    /// Arguments of every kind.
    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Sample {
        /// A path.
        path: String,
        /// How many,
        /// at most.
        count: Option<u64>,
        /// Whether.
        #[serde(default)]
        flag: bool,
        /// Items.
        items: Option<Vec<String>>,
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    fn error(value: Value) -> String {
        match parse_args::<Sample>(object(value)) {
            Ok(parsed) => format!("unexpectedly parsed: {parsed:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_model_sees_plain_types_descriptions_and_the_required_list() {
        let schema = parameters_of::<Sample>();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["path"]));
        assert_eq!(schema["properties"]["count"]["type"], "integer");
        assert_eq!(
            schema["properties"]["count"]["description"],
            "How many, at most."
        );
        assert_eq!(schema["properties"]["count"].get("format"), None);
        assert_eq!(schema["properties"]["flag"]["default"], false);
        assert_eq!(schema["properties"]["items"]["type"], "array");
        assert_eq!(schema["properties"]["items"]["items"]["type"], "string");
        assert_eq!(schema.get("title"), None);
        assert_eq!(schema.get("additionalProperties"), None);
    }

    #[test]
    fn the_forms_models_write_are_accepted() {
        let parsed: Sample = parse_args(object(json!({
            "path": "a", "count": "5", "flag": "true", "items": "one", "extra": 1
        })))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            parsed,
            Sample {
                path: "a".into(),
                count: Some(5),
                flag: true,
                items: Some(vec!["one".into()]),
            }
        );
        let nulls: Sample = parse_args(object(
            json!({"path": "a", "count": null, "items": [1, "x"]}),
        ))
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(nulls.count, None);
        assert_eq!(nulls.items, Some(vec!["1".into(), "x".into()]));
    }

    #[test]
    fn wrong_values_get_messages_naming_the_field() {
        assert_eq!(
            error(json!({"path": 5})),
            "invalid arguments: `path` must be a string, not 5"
        );
        assert_eq!(error(json!({})), "invalid arguments: `path` is required");
        assert_eq!(
            error(json!({"path": "a", "count": -1})),
            "invalid arguments: `count` must be a non-negative whole number"
        );
        assert_eq!(
            error(json!({"path": "a", "count": "many"})),
            "invalid arguments: `count` must be a non-negative whole number"
        );
        assert_eq!(
            error(json!({"path": "a", "count": [1]})),
            "invalid arguments: `count` must be a number, not [1]"
        );
        assert_eq!(
            error(json!({"path": "a", "flag": "yes"})),
            "invalid arguments: `flag` must be true or false, not \"yes\""
        );
        assert_eq!(
            error(json!({"path": "a", "items": [{}]})),
            "invalid arguments: every item of `items` must be a string, not {}"
        );
        assert_eq!(
            error(json!({"path": "a", "items": 3})),
            "invalid arguments: `items` must be an array of strings, not 3"
        );
    }

    #[test]
    fn counts_past_usize_saturate() {
        assert_eq!(to_usize(7), 7);
        assert_eq!(
            to_usize(u64::MAX),
            usize::try_from(u64::MAX).unwrap_or(usize::MAX)
        );
    }
}
