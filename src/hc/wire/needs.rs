//! What the adapter's decoders need of each result, as data: the fields
//! they cannot do without ([`Reading::Needed`]), those they read when
//! present and fail on in another type ([`Reading::WhenPresent`]), and the
//! JSON types they decode there. `inspect-core --check-contract` judges a
//! core's own document by this table, never by the model's `required`
//! lists; the tests below hold it to the decoders themselves (each needed
//! field removed, each JSON type tried), so the two cannot drift. Fields
//! read leniently (a record's `title`, `cwd`…: another type reads as
//! absent) are not listed: nothing about them can make a call fail.

use super::Method;

/// A JSON type, as JSON Schema names it (`number` being whole or not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// A whole number.
    Integer,
    /// Any number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// One step from a result into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The field of that name.
    Field(&'static str),
    /// Each item of an array.
    Items,
}

/// How a decoder takes a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// It fails without it, or with it of a type it cannot decode.
    Needed,
    /// It does without it, but fails on it of a type it cannot decode.
    WhenPresent,
}

/// One place of a result a decoder reads, and how.
#[derive(Debug, Clone, Copy)]
pub struct ReadField {
    /// The method whose result it is in.
    pub method: Method,
    /// The way from the result to it; empty for the result itself.
    pub path: &'static [Step],
    /// Whether the decoder needs it.
    pub reading: Reading,
    /// The JSON types the decoder takes there.
    pub types: &'static [JsonType],
}

use JsonType::{Array, Boolean, Integer, Null, Object, String as Text};
use Reading::{Needed, WhenPresent};
use Step::{Field, Items};

const fn needed(method: Method, path: &'static [Step], types: &'static [JsonType]) -> ReadField {
    ReadField {
        method,
        path,
        reading: Needed,
        types,
    }
}

const fn when_present(
    method: Method,
    path: &'static [Step],
    types: &'static [JsonType],
) -> ReadField {
    ReadField {
        method,
        path,
        reading: WhenPresent,
        types,
    }
}

/// What `Hello`, `ListResult` with its records, `TerminalRecord`,
/// `ReadResult` and `SendResult` read. A list's records are read one by
/// one (one unreadable record hides no other), but a list whose records
/// all lack a needed field shows no terminal at all, so those fields are
/// needed too.
pub const READS: [ReadField; 35] = [
    needed(Method::Hello, &[], &[Object]),
    needed(Method::Hello, &[Field("core_id")], &[Text]),
    needed(Method::Hello, &[Field("version")], &[Text]),
    needed(Method::Hello, &[Field("generation")], &[Integer]),
    needed(Method::Hello, &[Field("framing")], &[Text]),
    when_present(Method::Hello, &[Field("pid")], &[Integer, Null]),
    when_present(Method::Hello, &[Field("started_ms")], &[Integer, Null]),
    needed(Method::List, &[], &[Object]),
    needed(Method::List, &[Field("terminals")], &[Array]),
    needed(Method::List, &[Field("terminals"), Items], &[Object]),
    needed(
        Method::List,
        &[Field("terminals"), Items, Field("address")],
        &[Text],
    ),
    needed(
        Method::List,
        &[Field("terminals"), Items, Field("created_ms")],
        &[Integer],
    ),
    needed(
        Method::List,
        &[Field("terminals"), Items, Field("status")],
        &[Text],
    ),
    needed(
        Method::List,
        &[Field("terminals"), Items, Field("status_seq")],
        &[Integer],
    ),
    needed(Method::Get, &[], &[Object]),
    needed(Method::Get, &[Field("address")], &[Text]),
    needed(Method::Get, &[Field("created_ms")], &[Integer]),
    needed(Method::Get, &[Field("status")], &[Text]),
    needed(Method::Get, &[Field("status_seq")], &[Integer]),
    needed(Method::Read, &[], &[Object]),
    needed(Method::Read, &[Field("address")], &[Text]),
    needed(Method::Read, &[Field("created_ms")], &[Integer]),
    needed(Method::Read, &[Field("text")], &[Text]),
    needed(Method::Read, &[Field("complete")], &[Boolean]),
    needed(Method::Read, &[Field("status")], &[Text]),
    needed(Method::Read, &[Field("status_seq")], &[Integer]),
    when_present(Method::Read, &[Field("rows")], &[Integer, Null]),
    when_present(Method::Read, &[Field("cols")], &[Integer, Null]),
    needed(Method::Send, &[], &[Object]),
    needed(Method::Send, &[Field("address")], &[Text]),
    needed(Method::Send, &[Field("created_ms")], &[Integer]),
    needed(Method::Send, &[Field("accepted")], &[Boolean]),
    needed(Method::Send, &[Field("status")], &[Text]),
    needed(Method::Send, &[Field("status_seq")], &[Integer]),
    when_present(Method::Send, &[Field("started")], &[Boolean]),
];

/// A place as messages show it: `terminals[].created_ms`, `result` for the
/// result itself.
pub fn path_text(path: &[Step]) -> std::string::String {
    let mut text = std::string::String::new();
    for step in path {
        match step {
            Field(name) if text.is_empty() => text.push_str(name),
            Field(name) => {
                text.push('.');
                text.push_str(name);
            }
            Items => text.push_str("[]"),
        }
    }
    if text.is_empty() {
        text.push_str("result");
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::{Hello, ListResult, ReadResult, SendResult, TerminalRecord, read_records};
    use super::*;

    const ALL: [JsonType; 7] = [
        Null,
        Boolean,
        Integer,
        JsonType::Number,
        Text,
        Array,
        Object,
    ];

    /// A value of `t` (a number that is not whole for `Number`).
    fn sample(t: JsonType) -> Value {
        match t {
            Null => Value::Null,
            Boolean => json!(true),
            Integer => json!(7),
            JsonType::Number => json!(1.5),
            Text => json!("t1"),
            Array => json!([]),
            Object => json!({}),
        }
    }

    fn taken(types: &[JsonType], t: JsonType) -> bool {
        types.contains(&t) || (t == Integer && types.contains(&JsonType::Number))
    }

    /// Whether the adapter's decoder reads `value` as `method`'s result
    /// (a list: every record readable).
    fn decodes(method: Method, value: &Value) -> bool {
        let v = value.clone();
        match method {
            Method::Hello => serde_json::from_value::<Hello>(v).is_ok(),
            Method::List => serde_json::from_value::<ListResult>(v)
                .is_ok_and(|listed| read_records(listed).2 == 0),
            Method::Get => serde_json::from_value::<TerminalRecord>(v).is_ok(),
            Method::Read => serde_json::from_value::<ReadResult>(v).is_ok(),
            Method::Send => serde_json::from_value::<SendResult>(v).is_ok(),
            Method::Discover | Method::MachineList => unreachable!("not in the table"),
        }
    }

    /// The place at `path` in `value`, made on the way (one item per array).
    fn place<'v>(value: &'v mut Value, path: &[Step]) -> &'v mut Value {
        let mut here = value;
        for step in path {
            here = match step {
                Field(name) => {
                    if !here.is_object() {
                        *here = json!({});
                    }
                    here.as_object_mut()
                        .unwrap()
                        .entry(*name)
                        .or_insert(Value::Null)
                }
                Items => {
                    if here.as_array().is_none_or(Vec::is_empty) {
                        *here = json!([{}]);
                    }
                    &mut here.as_array_mut().unwrap()[0]
                }
            };
        }
        here
    }

    /// The smallest result of `method` its decoder reads: every needed
    /// field, of its first type.
    fn minimal(method: Method) -> Value {
        let mut value = json!({});
        for field in READS
            .iter()
            .filter(|f| f.method == method && f.reading == Needed)
        {
            let here = place(&mut value, field.path);
            // A list's `terminals` and its first record are made on the way.
            let made = matches!(
                (field.types[0], &*here),
                (Object, Value::Object(_)) | (Array, Value::Array(_))
            );
            if !made {
                *here = sample(field.types[0]);
            }
        }
        value
    }

    fn without(mut value: Value, path: &[Step]) -> Value {
        let (last, parent) = path.split_last().unwrap();
        let Field(name) = last else {
            *place(&mut value, parent) = json!([]);
            return value;
        };
        place(&mut value, parent)
            .as_object_mut()
            .unwrap()
            .remove(*name);
        value
    }

    #[test]
    fn the_table_is_what_the_decoders_need() {
        for method in Method::ALL {
            let minimal = minimal(method);
            assert!(decodes(method, &minimal), "{method}: {minimal}");
            for field in READS.iter().filter(|f| f.method == method) {
                let at = path_text(field.path);
                if field.reading == Needed
                    && !field.path.is_empty()
                    && field.path.last() != Some(&Items)
                {
                    let lacking = without(minimal.clone(), field.path);
                    assert!(
                        !decodes(method, &lacking),
                        "{method} {at} is needed: {lacking}"
                    );
                }
                for t in ALL {
                    let mut value = minimal.clone();
                    let here = place(&mut value, field.path);
                    if !(t == Object && here.is_object()) {
                        *here = sample(t);
                    }
                    assert_eq!(
                        decodes(method, &value),
                        taken(field.types, t),
                        "{method} {at} as {t:?}: {value}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_other_field_the_model_names_is_read_leniently() {
        let model: Value = serde_json::from_str(super::super::CONTRACT_DOCUMENT).unwrap();
        let record = &model["components"]["schemas"]["TerminalRecord"]["properties"];
        let screen = model["methods"][3]["result"]["schema"]["properties"].clone();
        for (method, properties, under) in [
            (Method::Get, record.clone(), &[][..]),
            (
                Method::List,
                record.clone(),
                &[Field("terminals"), Items][..],
            ),
            (Method::Read, screen, &[][..]),
        ] {
            for name in properties.as_object().unwrap().keys() {
                let listed = READS.iter().any(|f| {
                    f.method == method
                        && f.path.len() == under.len() + 1
                        && matches!(f.path.last(), Some(Field(n)) if n == name)
                });
                if listed {
                    continue;
                }
                for t in ALL {
                    let mut value = minimal(method);
                    let parent = place(&mut value, under).as_object_mut().unwrap();
                    parent.insert(name.clone(), sample(t));
                    assert!(
                        decodes(method, &value),
                        "{method} {name} as {t:?} breaks the decoder"
                    );
                }
            }
        }
    }
}
