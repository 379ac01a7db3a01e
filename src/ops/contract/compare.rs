//! One reply held against the model's schema for it: fields the model
//! names that are missing, fields it does not name, fields of another
//! type, values outside its lists (a status outside the six), and
//! addresses outside the form the model documents. Pure: no I/O.

use serde_json::Value;

use super::model::{self, Document};
use super::{Difference, Group};

/// Where a field sits, for messages: `terminals[].title`.
fn field_path(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
    }
}

/// The differences of `value` (the result of `method`) from `schema`.
pub(super) fn reply(
    model: &Document,
    method: &str,
    schema: &Value,
    value: &Value,
) -> Vec<Difference> {
    let mut found = Vec::new();
    walk(model, method, schema, value, "", &mut found);
    found
}

fn walk(
    model: &Document,
    method: &str,
    schema: &Value,
    value: &Value,
    at: &str,
    found: &mut Vec<Difference>,
) {
    let allowed = model::types(schema);
    let actual = model::type_of(value);
    if !model::type_allowed(&allowed, actual) {
        found.push(Difference::new(
            Group::WrongType,
            method,
            at,
            format!("is {actual}, the model has {}", allowed.join(" or ")),
        ));
        return;
    }
    if let Some(values) = model::allowed_values(schema)
        && !values.contains(&value)
    {
        let group = if at.ends_with("status") {
            Group::StatusOutside
        } else {
            Group::ValueOutside
        };
        found.push(Difference::new(
            group,
            method,
            at,
            format!("{} is not one of the model's values", shown(value)),
        ));
    }
    if at.ends_with("address")
        && let Some(address) = value.as_str()
        && !is_modelled_address(address)
    {
        found.push(Difference::new(
            Group::AddressForm,
            method,
            at,
            format!(
                "{} is not `t` and base 36 (the adapter takes it as an opaque address)",
                shown(value)
            ),
        ));
    }
    match value {
        Value::Object(fields) if allowed.contains(&"object") => {
            let properties = model.properties(schema);
            for (name, required, property) in &properties {
                match fields.get(*name) {
                    Some(v) => walk(model, method, property, v, &field_path(at, name), found),
                    None if *required => found.push(Difference::new(
                        Group::Missing,
                        method,
                        &field_path(at, name),
                        "missing: the model requires it".to_owned(),
                    )),
                    None => found.push(
                        Difference::new(
                            Group::Missing,
                            method,
                            &field_path(at, name),
                            "missing (the model names it; the adapter does without)".to_owned(),
                        )
                        .tolerated(),
                    ),
                }
            }
            for name in fields.keys() {
                if !properties.iter().any(|(p, ..)| p == name) {
                    found.push(Difference::new(
                        Group::Extra,
                        method,
                        &field_path(at, name),
                        "present, not in the model (ignored)".to_owned(),
                    ));
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").and_then(|s| model.resolve(s)) {
                for item in items {
                    walk(model, method, item_schema, item, &format!("{at}[]"), found);
                }
            }
        }
        _ => {}
    }
}

/// The form the model documents: `t` and base 36.
fn is_modelled_address(address: &str) -> bool {
    address.strip_prefix('t').is_some_and(|rest| {
        !rest.is_empty()
            && rest
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    })
}

/// A value as a message shows it: escaped and short.
fn shown(value: &Value) -> String {
    crate::escape::bounded(&value.to_string(), 64).into_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn groups(value: Value) -> Vec<(Group, String)> {
        let model = Document::model();
        let schema = model.result("terminal.get").unwrap();
        reply(&model, "terminal.get", schema, &value)
            .into_iter()
            .map(|d| (d.group, d.field))
            .collect()
    }

    #[test]
    fn a_modelled_record_has_no_difference() {
        let record = json!({"address": "t1b", "created_ms": 1, "finished_ms": null,
            "exit_code": null, "status": "idle", "status_seq": 2, "title": "x", "cwd": "/",
            "program": "claude", "submit_key": "enter", "rows": 40, "cols": 120});
        assert_eq!(groups(record), []);
    }

    #[test]
    fn each_kind_of_difference_is_named_with_its_field() {
        let record = json!({"address": "machine/t7", "created_ms": "1", "finished_ms": null,
            "exit_code": null, "status": "paused", "status_seq": 2, "cwd": "/",
            "program": "claude", "rows": 40, "cols": 120, "argv": ["claude"]});
        let found = groups(record);
        assert!(
            found.contains(&(Group::AddressForm, "address".into())),
            "{found:?}"
        );
        assert!(
            found.contains(&(Group::WrongType, "created_ms".into())),
            "{found:?}"
        );
        assert!(
            found.contains(&(Group::StatusOutside, "status".into())),
            "{found:?}"
        );
        assert!(
            found.contains(&(Group::Missing, "title".into())),
            "{found:?}"
        );
        assert!(
            found.contains(&(Group::Missing, "submit_key".into())),
            "{found:?}"
        );
        assert!(found.contains(&(Group::Extra, "argv".into())), "{found:?}");
    }
}
