//! A set of JSON types, as a schema allows them and as a decoder takes
//! them.

use std::fmt;

use serde_json::Value;

use crate::hc::wire::needs::JsonType;

/// A set of JSON types; numbers split into whole ones (`integer`) and the
/// rest, so that `number` is both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Types(u8);

impl Types {
    pub(crate) const NONE: Types = Types(0);
    pub(crate) const NULL: Types = Types(1);
    pub(crate) const BOOLEAN: Types = Types(1 << 1);
    pub(crate) const INTEGER: Types = Types(1 << 2);
    /// Numbers that are not whole.
    pub(crate) const FRACTION: Types = Types(1 << 3);
    pub(crate) const NUMBER: Types = Types(Types::INTEGER.0 | Types::FRACTION.0);
    pub(crate) const STRING: Types = Types(1 << 4);
    pub(crate) const ARRAY: Types = Types(1 << 5);
    pub(crate) const OBJECT: Types = Types(1 << 6);
    pub(crate) const ALL: Types = Types(0x7f);

    /// The types a `type` word names.
    pub(crate) fn named(name: &str) -> Option<Types> {
        Some(match name {
            "null" => Types::NULL,
            "boolean" => Types::BOOLEAN,
            "integer" => Types::INTEGER,
            "number" => Types::NUMBER,
            "string" => Types::STRING,
            "array" => Types::ARRAY,
            "object" => Types::OBJECT,
            _ => return None,
        })
    }

    /// The type of `value` (a whole number is an integer, `1.0` too).
    pub(crate) fn of(value: &Value) -> Types {
        match value {
            Value::Null => Types::NULL,
            Value::Bool(_) => Types::BOOLEAN,
            Value::Number(n) if n.is_i64() || n.is_u64() => Types::INTEGER,
            Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => Types::INTEGER,
            Value::Number(_) => Types::FRACTION,
            Value::String(_) => Types::STRING,
            Value::Array(_) => Types::ARRAY,
            Value::Object(_) => Types::OBJECT,
        }
    }

    /// The types a decoder takes, as `wire::needs` lists them.
    pub(crate) fn decoded(types: &[JsonType]) -> Types {
        types
            .iter()
            .map(|t| match t {
                JsonType::Null => Types::NULL,
                JsonType::Boolean => Types::BOOLEAN,
                JsonType::Integer => Types::INTEGER,
                JsonType::Number => Types::NUMBER,
                JsonType::String => Types::STRING,
                JsonType::Array => Types::ARRAY,
                JsonType::Object => Types::OBJECT,
            })
            .fold(Types::NONE, Types::or)
    }

    pub(crate) fn or(self, other: Types) -> Types {
        Types(self.0 | other.0)
    }

    pub(crate) fn and(self, other: Types) -> Types {
        Types(self.0 & other.0)
    }

    /// Every type of `other` is one of these.
    pub(crate) fn holds(self, other: Types) -> bool {
        other.0 & !self.0 == 0
    }

    /// These types without `other`'s.
    pub(crate) fn without(self, other: Types) -> Types {
        Types(self.0 & !other.0)
    }

    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for Types {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Types::ALL {
            return f.write_str("any type");
        }
        if self.is_empty() {
            return f.write_str("nothing");
        }
        let number = if self.holds(Types::NUMBER) {
            Some("number")
        } else if self.holds(Types::INTEGER) {
            Some("integer")
        } else if self.holds(Types::FRACTION) {
            Some("number that is not whole")
        } else {
            None
        };
        let names: Vec<&str> = [
            self.holds(Types::NULL).then_some("null"),
            self.holds(Types::BOOLEAN).then_some("boolean"),
            number,
            self.holds(Types::STRING).then_some("string"),
            self.holds(Types::ARRAY).then_some("array"),
            self.holds(Types::OBJECT).then_some("object"),
        ]
        .into_iter()
        .flatten()
        .collect();
        f.write_str(&names.join(" or "))
    }
}
