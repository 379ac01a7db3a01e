//! The modelled contract as the checker reads it: the OpenRPC document
//! `hc-0.1.15.openrpc.json` (the one `wire` mirrors), or another one (an
//! `hc schema` output), with local `$ref`s resolved. Only the JSON Schema
//! words that document uses are read: `type`, `properties`, `required`,
//! `items`, `enum`, `const`, `$ref`.

use serde_json::Value;

/// An OpenRPC document, parsed.
pub(super) struct Document {
    root: Value,
}

/// How deep `$ref`s are followed before a schema is taken as unreadable.
const MAX_REF_DEPTH: usize = 16;

impl Document {
    /// The modelled contract.
    pub(super) fn model() -> Document {
        Document::parse(crate::hc::wire::CONTRACT_DOCUMENT).expect("the model is valid JSON")
    }

    pub(super) fn parse(text: &str) -> Result<Document, String> {
        let root: Value =
            serde_json::from_str(text).map_err(|e| format!("not a JSON document ({e})"))?;
        Document::from_value(root)
    }

    /// A document already read as JSON (a core's `rpc.discover` result).
    pub(super) fn from_value(root: Value) -> Result<Document, String> {
        if !root.get("methods").is_some_and(Value::is_array) {
            return Err("not an OpenRPC document: it has no `methods` array".to_owned());
        }
        Ok(Document { root })
    }

    /// The methods it names, in its order.
    pub(super) fn method_names(&self) -> Vec<String> {
        self.methods()
            .filter_map(|m| m.get("name").and_then(Value::as_str).map(str::to_owned))
            .collect()
    }

    fn methods(&self) -> impl Iterator<Item = &Value> {
        self.root["methods"].as_array().into_iter().flatten()
    }

    /// Every method the document names `name` (a sound one names each
    /// once).
    pub(super) fn methods_named(&self, name: &str) -> Vec<&Value> {
        self.methods()
            .filter(|m| m.get("name").and_then(Value::as_str) == Some(name))
            .collect()
    }

    fn method(&self, name: &str) -> Option<&Value> {
        self.methods()
            .find(|m| m.get("name").and_then(Value::as_str) == Some(name))
    }

    /// The result schema of `method`, `$ref`s resolved at its top.
    pub(super) fn result(&self, method: &str) -> Option<&Value> {
        let schema = self.method(method)?.get("result")?.get("schema")?;
        self.resolve(schema)
    }

    /// The params of `method`: (name, required, schema).
    pub(super) fn params(&self, method: &str) -> Vec<(String, bool, &Value)> {
        let Some(params) = self
            .method(method)
            .and_then(|m| m.get("params"))
            .and_then(Value::as_array)
        else {
            return Vec::new();
        };
        params
            .iter()
            .filter_map(|p| {
                let name = p.get("name")?.as_str()?.to_owned();
                let required = p.get("required").and_then(Value::as_bool).unwrap_or(false);
                let schema = p.get("schema").and_then(|s| self.resolve(s))?;
                Some((name, required, schema))
            })
            .collect()
    }

    /// `schema` with any chain of local `$ref`s followed.
    pub(super) fn resolve<'a>(&'a self, mut schema: &'a Value) -> Option<&'a Value> {
        for _ in 0..MAX_REF_DEPTH {
            let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
                return Some(schema);
            };
            schema = self.root.pointer(reference.strip_prefix('#')?)?;
        }
        None
    }

    /// Whether a value may be `value` under `schema`, as far as the words
    /// the checker reads can tell: `$ref` followed, `allOf` all of,
    /// `anyOf`/`oneOf` any of, `enum`/`const`, and `type` (a word or a
    /// list); a schema that says nothing of it takes it. A `$ref` that
    /// leads nowhere, or deeper than the bound, takes nothing.
    pub(super) fn takes_value(&self, schema: &Value, value: &Value) -> bool {
        self.takes_within(schema, value, MAX_REF_DEPTH)
    }

    fn takes_within(&self, schema: &Value, value: &Value, depth: usize) -> bool {
        if depth == 0 {
            return false;
        }
        let Some(schema) = self.resolve(schema) else {
            return false;
        };
        if schema == &Value::Bool(false) {
            return false;
        }
        let branches = |key: &str| schema.get(key).and_then(Value::as_array);
        if let Some(all) = branches("allOf")
            && !all.iter().all(|s| self.takes_within(s, value, depth - 1))
        {
            return false;
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(any) = branches(key)
                && !any.iter().any(|s| self.takes_within(s, value, depth - 1))
            {
                return false;
            }
        }
        if let Some(values) = allowed_values(schema)
            && !values.contains(&value)
        {
            return false;
        }
        type_allowed(&types(schema), type_of(value))
    }

    /// The properties of an object schema: (name, required, schema).
    pub(super) fn properties<'a>(&'a self, schema: &'a Value) -> Vec<(&'a str, bool, &'a Value)> {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return Vec::new();
        };
        properties
            .iter()
            .filter_map(|(name, s)| {
                Some((
                    name.as_str(),
                    required.contains(&name.as_str()),
                    self.resolve(s)?,
                ))
            })
            .collect()
    }
}

/// The JSON type names a schema allows (`type`, a word or a list); empty
/// when it does not say.
pub(super) fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The JSON type name of `value` ("integer" for whole numbers).
pub(super) fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether a value of JSON type `found` is one of `allowed` (an integer is
/// a number too).
pub(super) fn type_allowed(allowed: &[&str], found: &str) -> bool {
    allowed.is_empty()
        || allowed.contains(&found)
        || (found == "integer" && allowed.contains(&"number"))
}

/// A schema's allowed values (`enum`, or `const` as one), if it lists them.
pub(super) fn allowed_values(schema: &Value) -> Option<Vec<&Value>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(values.iter().collect());
    }
    schema.get("const").map(|c| vec![c])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_names_the_five_methods_and_resolves_its_refs() {
        let model = Document::model();
        assert_eq!(
            model.method_names(),
            [
                "hc.hello",
                "terminal.list",
                "terminal.get",
                "terminal.read",
                "terminal.send"
            ]
        );
        let record = model.result("terminal.get").unwrap();
        let required: Vec<&str> = model
            .properties(record)
            .into_iter()
            .filter(|(_, required, _)| *required)
            .map(|(name, ..)| name)
            .collect();
        assert_eq!(required, ["address", "created_ms", "status", "status_seq"]);
    }
}
