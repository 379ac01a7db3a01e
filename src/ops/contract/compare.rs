//! One live reply held against the model's schema for it: fields the model
//! names that are missing, fields it does not name, fields of another
//! type, values outside its lists (a status outside the six), and
//! addresses outside the form the model documents. Whether a difference
//! breaks is the decoders' business, not the model's: a field they need
//! (`wire::needs`) missing, or of a type they cannot decode, breaks
//! (`reply-lacks-needed`); anything else is a note (`reply-other`). Pure:
//! no I/O.

use serde_json::Value;

use super::model::Document;
use super::rules::Rule;
use super::schema::{SchemaReader, Shape, Types};
use super::{Difference, Group};
use crate::hc::wire::Method;
use crate::hc::wire::needs::{READS, ReadField, Reading, path_text};

/// Where a field sits, for messages: `terminals[].title`.
fn field_path(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
    }
}

/// The differences of `value` (the result of `method`) from the model.
pub(super) fn reply(model: &Document, method: Method, value: &Value) -> Vec<Difference> {
    let mut found = Vec::new();
    let Some((entry, at)) = model.method(method.as_str()) else {
        return found;
    };
    if let Ok(Some(shape)) = model.result(entry, &at) {
        let walk = Walk {
            method,
            reader: model.reader(),
        };
        walk.walk(&shape, value, "", &mut found);
    }
    found
}

/// One reply of `method`, walked with the model's schema.
struct Walk<'d> {
    method: Method,
    reader: SchemaReader<'d>,
}

impl<'d> Walk<'d> {
    fn line(&self, rule: Rule, group: Group, at: &str, detail: String) -> Difference {
        Difference::new(rule, group, self.method.as_str(), at, detail)
    }

    /// What the adapter's decoder reads at `at` (`""`: the result).
    fn read_at(&self, at: &str) -> Option<&'static ReadField> {
        let at = if at.is_empty() { "result" } else { at };
        READS
            .iter()
            .find(|r| r.method == self.method && path_text(r.path) == at)
    }

    fn walk(&self, shape: &Shape<'d>, value: &Value, at: &str, found: &mut Vec<Difference>) {
        let allowed = shape.types();
        let actual = Types::of(value);
        if !allowed.holds(actual) {
            let breaks = self
                .read_at(at)
                .is_some_and(|read| !Types::decoded(read.types).holds(actual));
            found.push(self.line(
                if breaks {
                    Rule::ReplyLacksNeeded
                } else {
                    Rule::ReplyOther
                },
                Group::WrongType,
                at,
                format!("is {actual}, the model has {allowed}"),
            ));
            return;
        }
        if let Some(values) = self.reader.values(shape)
            && !values.contains(&value)
        {
            let group = if at.ends_with("status") {
                Group::StatusOutside
            } else {
                Group::ValueOutside
            };
            found.push(self.line(
                Rule::ReplyOther,
                group,
                at,
                format!("{} is not one of the model's values", shown(value)),
            ));
        }
        if at.ends_with("address")
            && let Some(address) = value.as_str()
            && !is_modelled_address(address)
        {
            found.push(self.line(
                Rule::ReplyOther,
                Group::AddressForm,
                at,
                format!(
                    "{} is not `t` and base 36, nor a machine's NAME/t… (the adapter takes it as an opaque address)",
                    shown(value)
                ),
            ));
        }
        match value {
            Value::Object(fields) => self.object(shape, fields, at, found),
            Value::Array(items) => {
                if let Ok(item_shape) = self.reader.items(shape) {
                    for item in items {
                        self.walk(&item_shape, item, &format!("{at}[]"), found);
                    }
                }
            }
            _ => {}
        }
    }

    fn object(
        &self,
        shape: &Shape<'d>,
        fields: &serde_json::Map<String, Value>,
        at: &str,
        found: &mut Vec<Difference>,
    ) {
        let names = self.reader.names(shape);
        for name in &names {
            let here = field_path(at, name);
            match fields.get(*name) {
                Some(v) => {
                    if let Ok(field) = self.reader.field(shape, name) {
                        self.walk(&field.shape, v, &here, found);
                    }
                }
                // Sent only in some cases (`x-when`): `why a status holds`
                // and `machines` in the report say whether it was.
                None if self.reader.sometimes(shape, name) => {}
                None if self
                    .read_at(&here)
                    .is_some_and(|r| r.reading == Reading::Needed) =>
                {
                    found.push(self.line(
                        Rule::ReplyLacksNeeded,
                        Group::Missing,
                        &here,
                        "missing: the adapter cannot read the reply without it".to_owned(),
                    ));
                }
                None => found.push(self.line(
                    Rule::ReplyOther,
                    Group::Missing,
                    &here,
                    if self.reader.requires(shape, name) {
                        "missing: the model requires it (the adapter does without)".to_owned()
                    } else {
                        "missing (the model names it; the adapter does without)".to_owned()
                    },
                )),
            }
        }
        for name in fields.keys() {
            if !names.contains(&name.as_str()) {
                found.push(self.line(
                    Rule::ReplyOther,
                    Group::Extra,
                    &field_path(at, name),
                    "present, not in the model (ignored)".to_owned(),
                ));
            }
        }
    }
}

/// The form the model documents: `t` and base 36.
/// `t` and base 36, or a machine's `NAME/t…` (contract §8: a name of
/// `a-z 0-9 - _ .`, 1 to 32 characters).
fn is_modelled_address(address: &str) -> bool {
    let local = |address: &str| {
        address.strip_prefix('t').is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        })
    };
    match address.split_once('/') {
        None => local(address),
        Some((machine, rest)) => {
            (1..=32).contains(&machine.len())
                && machine
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
                && local(rest)
        }
    }
}

/// A value as a message shows it: escaped and short.
fn shown(value: &Value) -> String {
    crate::escape::bounded(&value.to_string(), 64).into_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn found(value: Value) -> Vec<(Group, String, bool)> {
        reply(&Document::model(), Method::Get, &value)
            .into_iter()
            .map(|d| (d.group, d.field, d.breaks))
            .collect()
    }

    #[test]
    fn a_modelled_record_has_no_difference() {
        let record = json!({"address": "t1b", "created_ms": 1, "finished_ms": null,
            "exit_code": null, "status": "idle", "status_seq": 2, "title": "x", "cwd": "/",
            "program": "claude", "submit_key": "enter", "rows": 40, "cols": 120});
        assert_eq!(found(record), []);
        // A machine's terminal (contract §8) is a modelled form too.
        let remote = json!({"address": "build-2/t1b", "created_ms": 1, "status": "idle",
            "status_seq": 1, "machine": "build-2"});
        assert!(
            !found(remote)
                .iter()
                .any(|(group, ..)| *group == Group::AddressForm),
            "build-2/t1b"
        );
    }

    #[test]
    fn each_kind_of_difference_is_named_with_its_field_and_breaks_as_the_decoder_says() {
        let record = json!({"address": "pane-7", "created_ms": "1", "finished_ms": null,
            "exit_code": null, "status": "paused", "status_seq": 2, "cwd": 5,
            "program": "claude", "rows": 40, "cols": 120, "argv": ["claude"]});
        let found = found(record);
        for (group, field, breaks) in [
            (Group::AddressForm, "address", false),
            (Group::WrongType, "created_ms", true),
            (Group::WrongType, "cwd", false),
            (Group::StatusOutside, "status", false),
            (Group::Missing, "title", false),
            (Group::Missing, "submit_key", false),
            (Group::Extra, "argv", false),
        ] {
            assert!(
                found.contains(&(group, field.to_owned(), breaks)),
                "{group:?} {field} {breaks}: {found:?}"
            );
        }
        let lacking = self::found(json!({"address": "t1", "status": "idle", "status_seq": 1}));
        assert!(
            lacking.contains(&(Group::Missing, "created_ms".to_owned(), true)),
            "{lacking:?}"
        );
    }
}
