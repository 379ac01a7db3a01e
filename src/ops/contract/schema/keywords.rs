//! Which JSON Schema keywords the judgement reads, which it passes over,
//! and the check that a schema object holds only those, in the forms JSON
//! Schema gives them.

use serde_json::{Map, Value};

use super::types::Types;
use super::{Unreadable, pointer_token, shown};

/// The keywords the judgement reads.
const READ: [&str; 12] = [
    "$ref",
    "type",
    "enum",
    "const",
    "nullable",
    "allOf",
    "anyOf",
    "oneOf",
    "properties",
    "required",
    "items",
    "additionalProperties",
];

/// Keywords passed over (besides every `x-` key): annotations, and bounds
/// on values that leave a field's name and JSON type as they are.
pub(super) const PASSED_OVER: [&str; 31] = [
    "description",
    "title",
    "summary",
    "examples",
    "example",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "$schema",
    "$id",
    "$anchor",
    "$defs",
    "definitions",
    "format",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "contentMediaType",
    "contentEncoding",
];

/// Every keyword of `map` is read or passed over, and those read have the
/// form JSON Schema gives them.
pub(super) fn check_keywords(map: &Map<String, Value>, at: &str) -> Result<(), Unreadable> {
    for (key, value) in map {
        let here = || format!("{at}/{}", pointer_token(key));
        if key.starts_with("x-") || PASSED_OVER.contains(&key.as_str()) {
            continue;
        }
        if !READ.contains(&key.as_str()) {
            return Err(Unreadable::new(
                &here(),
                format!("`{}` is a keyword the judgement does not read", shown(key)),
            ));
        }
        let words = |v: &Value| {
            v.as_array().is_some_and(|a| {
                a.iter()
                    .all(|w| w.as_str().is_some_and(|w| Types::named(w).is_some()))
            })
        };
        let well_formed = match key.as_str() {
            "$ref" => value.is_string(),
            "type" => value.as_str().is_some_and(|w| Types::named(w).is_some()) || words(value),
            "enum" => value.is_array(),
            "nullable" => value.is_boolean(),
            "allOf" | "anyOf" | "oneOf" => value.as_array().is_some_and(|a| !a.is_empty()),
            "properties" => value.is_object(),
            "required" => value
                .as_array()
                .is_some_and(|a| a.iter().all(Value::is_string)),
            "items" | "additionalProperties" => value.is_object() || value.is_boolean(),
            _ => true,
        };
        if !well_formed {
            return Err(Unreadable::new(
                &here(),
                format!("`{key}` is not in a form JSON Schema gives it"),
            ));
        }
    }
    Ok(())
}
