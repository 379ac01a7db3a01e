//! The tools' JSON schemas: rmcp's schemars output without the integer
//! `format` names (`uint32`, `int64`, ...) that JSON Schema 2020-12 does not
//! define and that clients' validators warn about. Ranges stay as
//! `minimum` / `maximum`.

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

#[cfg(test)]
mod tests {
    use serde_json::json;

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
