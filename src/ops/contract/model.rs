//! An OpenRPC document as the checker reads it: the modelled contract
//! (`hc-0.1.15.openrpc.json`, the one `wire` mirrors), a core's own
//! (`rpc.discover`) or another (`hc schema`). Its methods, each method's
//! params (content descriptors, `$ref`s into `#/components/…` followed),
//! result, `paramStructure`, and whether it refuses params it does not
//! declare ([`UNDECLARED_PARAMS`]). Schemas are read by `schema`.

use serde_json::Value;

use super::schema::{SchemaReader, Shape, Unreadable};

/// The extension by which a document says a method (on the method) or
/// every method (at the document's top) refuses params it does not
/// declare: `"x-additional-params": false`. OpenRPC has no word for it,
/// and a by-name call's params are no JSON Schema object that
/// `additionalProperties` could close.
pub(crate) const UNDECLARED_PARAMS: &str = "x-additional-params";

/// An OpenRPC document, parsed.
pub(super) struct Document {
    root: Value,
}

/// One param of a method (a content descriptor).
#[derive(Debug, Clone)]
pub(super) struct Param<'d> {
    pub name: &'d str,
    /// `required` (OpenRPC's default is false).
    pub required: bool,
    /// `deprecated` on the descriptor or its schema.
    pub deprecated: bool,
    pub schema: Option<&'d Value>,
    /// Where its schema sits, for messages.
    pub at: String,
}

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

    /// The reader of this document's schemas.
    pub(super) fn reader(&self) -> SchemaReader<'_> {
        SchemaReader::new(&self.root)
    }

    /// Each entry of `methods`, followed through `$ref`: the method and
    /// where it sits, or why it cannot be read.
    fn entries(&self) -> impl Iterator<Item = Result<(&Value, String), Unreadable>> {
        let reader = self.reader();
        self.root["methods"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(move |(i, entry)| reader.follow(entry, &format!("#/methods/{i}")))
    }

    /// Entries of `methods` that cannot be read (a `$ref` that leads
    /// nowhere, say).
    pub(super) fn unreadable_methods(&self) -> Vec<Unreadable> {
        self.entries().filter_map(Result::err).collect()
    }

    /// The methods it names, in its order.
    pub(super) fn method_names(&self) -> Vec<String> {
        self.entries()
            .filter_map(Result::ok)
            .filter_map(|(m, _)| m.get("name").and_then(Value::as_str).map(str::to_owned))
            .collect()
    }

    /// Every method the document names `name` (a sound one names each
    /// once), with where it sits.
    pub(super) fn methods_named(&self, name: &str) -> Vec<(&Value, String)> {
        self.entries()
            .filter_map(Result::ok)
            .filter(|(m, _)| m.get("name").and_then(Value::as_str) == Some(name))
            .collect()
    }

    /// The first method named `name`.
    pub(super) fn method(&self, name: &str) -> Option<(&Value, String)> {
        self.methods_named(name).into_iter().next()
    }

    /// The params of `method` (at `at`).
    pub(super) fn params<'d>(
        &'d self,
        method: &'d Value,
        at: &str,
    ) -> Result<Vec<Param<'d>>, Unreadable> {
        let Some(params) = method.get("params") else {
            return Ok(Vec::new());
        };
        let Some(params) = params.as_array() else {
            return Err(Unreadable::new(
                &format!("{at}/params"),
                "`params` is not a list",
            ));
        };
        let reader = self.reader();
        params
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                let (param, at) = reader.follow(entry, &format!("{at}/params/{i}"))?;
                let Some(name) = param.get("name").and_then(Value::as_str) else {
                    return Err(Unreadable::new(&at, "a param without a name"));
                };
                let schema = param.get("schema");
                let deprecated = |v: Option<&Value>| {
                    v.and_then(|v| v.get("deprecated")) == Some(&Value::Bool(true))
                };
                Ok(Param {
                    name,
                    required: param.get("required") == Some(&Value::Bool(true)),
                    deprecated: deprecated(Some(param)) || deprecated(schema),
                    schema,
                    at: format!("{at}/schema"),
                })
            })
            .collect()
    }

    /// The result schema of `method` (at `at`), read out; none when it
    /// declares no result.
    pub(super) fn result<'d>(
        &'d self,
        method: &'d Value,
        at: &str,
    ) -> Result<Option<Shape<'d>>, Unreadable> {
        let Some(result) = method.get("result") else {
            return Ok(None);
        };
        let reader = self.reader();
        let (result, at) = reader.follow(result, &format!("{at}/result"))?;
        match result.get("schema") {
            Some(schema) => Ok(Some(reader.shape(schema, &format!("{at}/schema"))?)),
            None => Ok(None),
        }
    }

    /// Whether `method` takes its params by position only: the adapter
    /// sends them by name.
    pub(super) fn by_position_only(&self, method: &Value) -> bool {
        method.get("paramStructure").and_then(Value::as_str) == Some("by-position")
    }

    /// Whether `method` refuses params it does not declare: the document
    /// says so ([`UNDECLARED_PARAMS`] false), on it or at its top.
    pub(super) fn refuses_undeclared_params(&self, method: &Value) -> bool {
        let refused = |v: &Value| v.get(UNDECLARED_PARAMS) == Some(&Value::Bool(false));
        refused(method) || refused(&self.root)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

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
        let (get, at) = model.method("terminal.get").unwrap();
        let record = model.result(get, &at).unwrap().unwrap();
        let reader = model.reader();
        for name in ["address", "created_ms", "status", "status_seq"] {
            assert!(reader.field(&record, name).unwrap().promised, "{name}");
        }
    }

    #[test]
    fn params_and_results_may_be_references_and_methods_too() {
        let doc = Document::from_value(json!({
            "x-additional-params": false,
            "methods": [{"$ref": "#/x-methods/get"}],
            "x-methods": {"get": {"name": "terminal.get", "paramStructure": "by-position",
                "params": [{"$ref": "#/components/contentDescriptors/Address"}],
                "result": {"$ref": "#/components/contentDescriptors/Record"}}},
            "components": {"contentDescriptors": {
                "Address": {"name": "address", "required": true, "schema": {"type": "string"}},
                "Record": {"name": "record", "schema": {"required": ["address"]}}}}
        }))
        .unwrap();
        let (get, at) = doc.method("terminal.get").unwrap();
        let params = doc.params(get, &at).unwrap();
        assert_eq!((params[0].name, params[0].required), ("address", true));
        let record = doc.result(get, &at).unwrap().unwrap();
        assert!(doc.reader().field(&record, "address").unwrap().promised);
        assert!(doc.by_position_only(get) && doc.refuses_undeclared_params(get));
        let broken = Document::from_value(json!({"methods": [{"$ref": "#/nowhere"}]})).unwrap();
        assert!(broken.method_names().is_empty());
        assert_eq!(broken.unreadable_methods().len(), 1);
    }
}
