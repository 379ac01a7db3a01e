//! The tools' JSON schemas: rmcp's schemars output without the integer
//! `format` names (`uint32`, `int64`, ...) that JSON Schema 2020-12 does not
//! define and that clients' validators warn about (ranges stay as
//! `minimum` / `maximum`), and with every nullable `"type": [T, "null"]`
//! written as `anyOf` branches of one `type` each: the same values are
//! valid, and clients that map tool schemas onto a single-`type` dialect
//! (the OpenAPI subset of some model providers) can read them. A closed
//! set of strings is an `enum`, whether or not its variants carry doc
//! comments: schemars renders documented variants as a `oneOf` of
//! constants, which hosts show worse, so that becomes an `enum` here and
//! the type's own doc says what the values mean.

use std::sync::Arc;

use rmcp::handler::server::tool::{schema_for_input, schema_for_output};
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde_json::Value;

pub(crate) fn input<T: JsonSchema + std::any::Any>() -> Arc<JsonObject> {
    clean(&schema_for_input::<T>().expect("tool arguments are JSON objects"))
}

pub(crate) fn output<T: JsonSchema + std::any::Any>() -> Arc<JsonObject> {
    clean(&schema_for_output::<T>())
}

fn clean(schema: &JsonObject) -> Arc<JsonObject> {
    let mut value = Value::Object(schema.clone());
    strip_int_formats(&mut value);
    constants_to_enum(&mut value);
    split_type_lists(&mut value);
    match value {
        Value::Object(object) => Arc::new(object),
        _ => unreachable!("a schema object stays an object"),
    }
}

fn strip_int_formats(value: &mut Value) {
    match value {
        Value::Object(object) => {
            let is_int_format = object
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| f.starts_with("int") || f.starts_with("uint"));
            if is_int_format {
                object.remove("format");
            }
            object.values_mut().for_each(strip_int_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_int_formats),
        _ => {}
    }
}

/// Rewrites a `oneOf` whose every branch is one string constant (with its
/// description) as `"type": "string", "enum": [...]`: the same values are
/// valid; the branches' descriptions go, the type's own stays.
fn constants_to_enum(value: &mut Value) {
    match value {
        Value::Object(object) => {
            object.values_mut().for_each(constants_to_enum);
            let Some(Value::Array(branches)) = object.get("oneOf") else {
                return;
            };
            let constant = |branch: &Value| -> Option<Value> {
                let branch = branch.as_object()?;
                let only_known = branch
                    .keys()
                    .all(|k| matches!(k.as_str(), "type" | "const" | "description"));
                let typed = branch.get("type").is_none_or(|t| t == "string");
                let constant = branch.get("const").filter(|c| c.is_string())?;
                (only_known && typed).then(|| constant.clone())
            };
            let Some(values) = branches.iter().map(constant).collect::<Option<Vec<_>>>() else {
                return;
            };
            object.remove("oneOf");
            object.insert("type".to_owned(), Value::String("string".to_owned()));
            object.insert("enum".to_owned(), Value::Array(values));
        }
        Value::Array(items) => items.iter_mut().for_each(constants_to_enum),
        _ => {}
    }
}

/// Keywords that say what a value is (and stay beside `anyOf`), rather than
/// what a value of one type must satisfy (and move into its branch).
const ANNOTATIONS: [&str; 8] = [
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Rewrites each `"type": [A, B, ...]` as `"anyOf": [{"type": A, ...}, ...]`:
/// the type's constraints go into every branch but `null`'s (where they
/// never applied), annotations and `enum`/`const` (which constrain every
/// branch alike) stay outside.
fn split_type_lists(value: &mut Value) {
    match value {
        Value::Object(object) => {
            object.values_mut().for_each(split_type_lists);
            let Some(Value::Array(types)) = object.get("type").cloned() else {
                return;
            };
            if object.contains_key("anyOf") {
                return;
            }
            object.remove("type");
            let keep_outside =
                |key: &str| ANNOTATIONS.contains(&key) || matches!(key, "enum" | "const");
            let constraints: JsonObject = object
                .iter()
                .filter(|(key, _)| !keep_outside(key))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            object.retain(|key, _| keep_outside(key));
            let branches = types
                .into_iter()
                .map(|kind| {
                    let mut branch = JsonObject::new();
                    if kind != "null" {
                        branch.extend(constraints.clone());
                    }
                    branch.insert("type".to_owned(), kind);
                    Value::Object(branch)
                })
                .collect();
            object.insert("anyOf".to_owned(), Value::Array(branches));
        }
        Value::Array(items) => items.iter_mut().for_each(split_type_lists),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn a_one_of_of_string_constants_becomes_an_enum_and_nothing_else_does() {
        let mut closed = json!({"description": "d", "oneOf": [
            {"description": "first", "type": "string", "const": "a"},
            {"type": "string", "const": "b"},
        ]});
        super::constants_to_enum(&mut closed);
        assert_eq!(
            closed,
            json!({"description": "d", "type": "string", "enum": ["a", "b"]})
        );
        let open = json!({"oneOf": [
            {"type": "string", "const": "a"},
            {"type": "object", "properties": {}},
        ]});
        let mut kept = open.clone();
        super::constants_to_enum(&mut kept);
        assert_eq!(kept, open);
    }

    #[test]
    fn a_type_list_becomes_branches_that_accept_exactly_the_same_values() {
        let before = json!({
            "type": "object",
            "properties": {
                "limit": {"description": "how many", "type": ["integer", "null"], "minimum": 1, "maximum": 100, "default": null},
                "cursor": {"type": ["string", "null"], "maxLength": 8},
                "mode": {"type": ["string", "null"], "enum": ["a", "b", null]}
            }
        });
        let mut after = before.clone();
        super::split_type_lists(&mut after);
        assert_eq!(
            after["properties"]["limit"],
            json!({"description": "how many", "default": null, "anyOf": [
                {"type": "integer", "minimum": 1, "maximum": 100},
                {"type": "null"}
            ]})
        );
        assert!(!after.to_string().contains(r#""type":["#), "{after}");
        let (old, new) = (
            jsonschema::validator_for(&before).unwrap(),
            jsonschema::validator_for(&after).unwrap(),
        );
        for instance in [
            json!({}),
            json!({"limit": null, "cursor": null, "mode": null}),
            json!({"limit": 1, "cursor": "abc", "mode": "a"}),
            json!({"limit": 0}),
            json!({"limit": 101}),
            json!({"limit": "1"}),
            json!({"limit": 2.5}),
            json!({"cursor": "too long a cursor"}),
            json!({"cursor": 7}),
            json!({"mode": "c"}),
        ] {
            assert_eq!(
                old.is_valid(&instance),
                new.is_valid(&instance),
                "{instance} judged apart"
            );
        }
    }

    #[test]
    fn integer_formats_go_and_everything_else_stays() {
        let mut schema = json!({
            "properties": {
                "limit": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 100},
                "at": {"type": "string", "format": "date-time"},
                "list": {"items": [{"format": "int64"}]}
            }
        });
        super::strip_int_formats(&mut schema);
        assert_eq!(
            schema,
            json!({
                "properties": {
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                    "at": {"type": "string", "format": "date-time"},
                    "list": {"items": [{}]}
                }
            })
        );
    }
}
