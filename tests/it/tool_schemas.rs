//! The `parameters` schemas the model sees, now generated from each built-in tool's argument
//! struct, stay what they were: the same property names, types, descriptions, defaults, limits
//! and required list. And the parsing behind them reads exactly those properties: a value of the
//! wrong type for any property of any tool is refused with a message naming it.

use std::collections::BTreeSet;
use std::sync::Arc;

use miniclaw::tools::shell::ShellSettings;
use miniclaw::tools::toolbox::{ToolboxConfig, full_registry};
use miniclaw::tools::web::WebSettings;
use miniclaw::tools::{Sandbox, ToolContext, ToolRegistry};
use serde_json::{Map, Value, json};

/// Every built-in tool's parameters as the model saw them before they were generated.
fn expected() -> Vec<(&'static str, Value)> {
    let relative_dir = json!({
        "type": "string",
        "description": "Folder path relative to the workspace; \".\" is the root.",
        "default": "."
    });
    let file_path = json!({
        "type": "string",
        "description": "File path relative to the workspace, e.g. \"notes/todo.md\"."
    });
    vec![
        (
            "list_files",
            json!({"type": "object", "properties": {"relative_dir": relative_dir}, "required": []}),
        ),
        (
            "read_text_file",
            json!({"type": "object", "properties": {"relative_path": file_path}, "required": ["relative_path"]}),
        ),
        (
            "list_directory_tree",
            json!({"type": "object", "properties": {
                "relative_dir": relative_dir,
                "max_depth": {
                    "type": "integer",
                    "description": "How many levels to show (1 = only direct children).",
                    "minimum": 1, "maximum": 10, "default": 3
                }
            }, "required": []}),
        ),
        (
            "write_text_file",
            json!({"type": "object", "properties": {
                "relative_path": file_path,
                "content": {"type": "string", "description": "The full text to write (UTF-8)."}
            }, "required": ["relative_path", "content"]}),
        ),
        (
            "append_text_file",
            json!({"type": "object", "properties": {
                "relative_path": file_path,
                "content": {"type": "string", "description": "The text to add at the end (UTF-8)."}
            }, "required": ["relative_path", "content"]}),
        ),
        (
            "replace_text_in_file",
            json!({"type": "object", "properties": {
                "relative_path": {"type": "string", "description": "File path relative to the workspace."},
                "old_text": {"type": "string", "description": "The exact text to find (not empty; whitespace matters)."},
                "new_text": {"type": "string", "description": "The text to put instead."},
                "count": {
                    "type": "integer",
                    "description": "How many occurrences to replace, from the start; 0 or absent = all.",
                    "minimum": 0
                }
            }, "required": ["relative_path", "old_text", "new_text"]}),
        ),
        (
            "search_files",
            json!({"type": "object", "properties": {
                "pattern": {"type": "string", "description": "Regular expression to find."},
                "relative_dir": {
                    "type": "string",
                    "description": "Folder (or single file) to search, relative to the workspace; \".\" is the root.",
                    "default": "."
                },
                "case_sensitive": {"type": "boolean", "description": "Match letter case exactly (default false).", "default": false},
                "max_matches": {
                    "type": "integer",
                    "description": "Most matching lines to return (default 50, at most 500).",
                    "minimum": 1, "maximum": 500
                },
                "include_ignored": {
                    "type": "boolean",
                    "description": "Also search files excluded by .gitignore/.ignore (default false).",
                    "default": false
                }
            }, "required": ["pattern"]}),
        ),
        (
            "get_current_time",
            json!({"type": "object", "properties": {
                "timezone": {"type": "string", "description": "IANA time zone name; UTC when absent.", "default": "UTC"}
            }, "required": []}),
        ),
        (
            "calculate_expression",
            json!({"type": "object", "properties": {
                "expression": {"type": "string", "description": "The expression to evaluate."}
            }, "required": ["expression"]}),
        ),
        (
            "run_shell_command",
            json!({"type": "object", "properties": {
                "command": {
                    "type": "string",
                    "enum": ["pwd", "ls", "cat", "head", "tail", "wc", "rg"],
                    "description": "The program: pwd, ls, cat, head, tail, wc or rg."
                },
                "args": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "The arguments, one item each (flags, pattern, relative paths)."
                },
                "working_dir": {
                    "type": "string",
                    "description": "A folder relative to the workspace to run in (default: the workspace)."
                }
            }, "required": ["command"]}),
        ),
        (
            "search_web",
            json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "What to search for."},
                "max_results": {"type": "integer", "description": "At most this many results (1-10, default 5)."},
                "site": {"type": "string", "description": "Only results from this site, e.g. docs.rs."}
            }, "required": ["query"]}),
        ),
        (
            "fetch_web_page",
            json!({"type": "object", "properties": {
                "url": {"type": "string", "description": "The http(s) URL."},
                "max_chars": {"type": "integer", "description": "At most this many characters of text (default 8000)."}
            }, "required": ["url"]}),
        ),
        (
            "delegate_file_analysis",
            json!({"type": "object", "properties": {
                "relative_path": {"type": "string", "description": "The file, relative to the workspace."},
                "task": {"type": "string", "description": "What to find out about it."}
            }, "required": ["relative_path", "task"]}),
        ),
    ]
}

fn registry() -> ToolRegistry {
    let config = ToolboxConfig {
        web: WebSettings::default(),
        shell: ShellSettings::default(),
        plugin_dirs: Vec::new(),
    };
    let (registry, warnings) = full_registry(&config);
    assert!(warnings.is_empty(), "{warnings:?}");
    registry
}

fn names(value: &Value) -> BTreeSet<String> {
    match value {
        Value::Object(map) => map.keys().cloned().collect(),
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        _ => BTreeSet::new(),
    }
}

fn properties(schema: &Value) -> &Map<String, Value> {
    schema["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("no properties in {schema}"))
}

#[test]
fn every_built_in_schema_matches_what_the_model_saw_before() {
    let registry = registry();
    let expected = expected();
    let covered: BTreeSet<&str> = expected.iter().map(|(name, _)| *name).collect();
    let built_in: BTreeSet<String> = registry.iter().map(|t| t.schema().name).collect();
    assert_eq!(
        built_in,
        covered.iter().map(|n| n.to_string()).collect(),
        "every built-in tool has an expected schema here"
    );
    for (name, want) in expected {
        let got = registry.get(name).map(|t| t.schema().parameters);
        let got = got.unwrap_or_else(|| panic!("{name} is not registered"));
        assert_eq!(got["type"], "object", "{name}: {got}");
        assert_eq!(names(&got["required"]), names(&want["required"]), "{name}");
        assert_eq!(
            names(&got["properties"]),
            names(&want["properties"]),
            "{name}"
        );
        assert_eq!(got.get("additionalProperties"), None, "{name}");
        for (property, want_p) in properties(&want) {
            let got_p = &got["properties"][property];
            for (key, value) in want_p.as_object().into_iter().flatten() {
                assert_eq!(&got_p[key], value, "{name}.{property}.{key}: {got_p}");
            }
            // The only addition: counts say they are non-negative, as they always were.
            for (key, value) in got_p.as_object().into_iter().flatten() {
                if want_p.get(key).is_none() {
                    assert!(
                        key == "minimum" && value == &json!(0) && want_p["type"] == "integer",
                        "{name}.{property} gained `{key}`: {got_p}"
                    );
                }
            }
        }
    }
}

/// A valid value of a property's type (for the fields a call must have).
fn valid(property: &Value) -> Value {
    match property["type"].as_str() {
        Some("integer") => json!(1),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        _ => json!("x"),
    }
}

/// A value of the wrong type, and a piece of the message it must get.
fn wrong(property: &Value) -> (Value, &'static str) {
    match property["type"].as_str() {
        Some("integer") => (json!("many"), "must be a non-negative whole number"),
        Some("boolean") => (json!(7), "must be true or false"),
        Some("array") => (json!(3), "must be an array of strings"),
        _ => (json!(5), "must be a string, not 5"),
    }
}

#[tokio::test]
async fn a_wrong_type_for_any_property_is_refused_naming_it() {
    let registry = registry();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let sandbox = Sandbox::new(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let ctx = ToolContext::standalone(Arc::new(sandbox));
    let mut checked = 0;
    for tool in registry.iter() {
        let schema = tool.schema();
        let props = properties(&schema.parameters);
        let required = names(&schema.parameters["required"]);
        for (property, spec) in props {
            let mut args: Map<String, Value> = required
                .iter()
                .map(|r| (r.clone(), valid(&props[r])))
                .collect();
            let (bad, message) = wrong(spec);
            args.insert(property.clone(), bad);
            let obs = registry
                .execute(&schema.name, &Value::Object(args).to_string(), &ctx)
                .await;
            let error = obs["error"].as_str().unwrap_or_default();
            assert_eq!(obs["ok"], false, "{}.{property}: {obs}", schema.name);
            assert!(
                error.starts_with("invalid arguments: ")
                    && error.contains(&format!("`{property}`"))
                    && error.contains(message),
                "{}.{property}: {error}",
                schema.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 25, "only {checked} properties were checked");
}

#[tokio::test]
async fn a_call_missing_required_fields_names_them_all() {
    let registry = registry();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let sandbox = Sandbox::new(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let ctx = ToolContext::standalone(Arc::new(sandbox));
    for (name, want) in expected() {
        let required: Vec<&str> = want["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if required.is_empty() {
            continue;
        }
        let obs = registry.execute(name, "{}", &ctx).await;
        assert_eq!(
            obs["error"],
            format!(
                "invalid arguments: missing required field(s): {}",
                required.join(", ")
            ),
            "{name}"
        );
    }
}
