//! JSON Schema as the judgement reads it, inside one OpenRPC document:
//! local `$ref`s followed (`#/components/schemas/…`,
//! `#/components/contentDescriptors/…`, anywhere in the document) with a
//! depth bound and cycle detection, `allOf` as all of, `anyOf` and `oneOf`
//! as any of, `type` as a word or a list, OpenAPI's `nullable`, `enum` and
//! `const`, and an object's `properties`, `required` and
//! `additionalProperties`, an array's `items`. Annotations and value bounds
//! (`keywords`: `description`, `examples`, `x-` keys, `minimum`,
//! `maxLength`, `pattern`, `format`, …) are passed over: they change
//! neither which fields a value has nor which JSON types they take.
//! Anything else (a keyword not listed, a `$ref` to another file or to
//! nothing, a cycle, nesting past [`MAX_DEPTH`]) is [`Unreadable`], with
//! where it sits: never guessed. Pure: no I/O.
//!
//! By noun: `types` is a set of JSON types, `keywords` what is read and
//! what passed over, `queries` what a shape says (a field, its items,
//! whether it takes a value); here, reading a schema out into a shape.

mod keywords;
mod queries;
mod types;

use std::fmt;

use serde_json::Value;

use keywords::check_keywords;
pub(crate) use types::Types;

/// Schemas nested (a `$ref`, an `allOf` branch…) at most before a schema
/// is taken as unreadable: deep enough for any generated document, short
/// enough that a hostile one cannot make the check work for long.
pub(crate) const MAX_DEPTH: usize = 16;
/// Alternatives one schema may read as (every `anyOf` multiplies them)
/// before it is taken as unreadable, for the same reason.
const MAX_ALTERNATIVES: usize = 64;
/// Schema objects read for one schema at most (a `$ref` met twice is read
/// twice): within the depth bound, `allOf`s of `allOf`s could otherwise
/// make a small hostile document cost millions of reads.
const MAX_SCHEMAS_READ: usize = 4096;

/// A part of a document the judgement cannot read, and where it sits (a
/// JSON pointer into the document, `#/components/schemas/Record/not`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Unreadable {
    pub at: String,
    pub why: String,
}

impl Unreadable {
    pub(super) fn new(at: &str, why: impl Into<String>) -> Unreadable {
        Unreadable {
            at: crate::escape::bounded(at, 160).into_owned(),
            why: why.into(),
        }
    }
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.why)
    }
}

/// One schema object (or `true`/`false`) as met, and where.
#[derive(Debug, Clone)]
struct Atom<'d> {
    at: String,
    schema: &'d Value,
}

impl Atom<'_> {
    /// The JSON types this schema alone takes (its own `type`, `nullable`,
    /// `enum`, `const`; combinators are other atoms).
    fn types(&self) -> Types {
        let Some(map) = self.schema.as_object() else {
            return if self.schema == &Value::Bool(false) {
                Types::NONE
            } else {
                Types::ALL
            };
        };
        let mut types = match map.get("type") {
            Some(Value::String(word)) => Types::named(word).unwrap_or(Types::NONE),
            Some(Value::Array(words)) => words
                .iter()
                .filter_map(Value::as_str)
                .filter_map(Types::named)
                .fold(Types::NONE, Types::or),
            _ => Types::ALL,
        };
        if map.contains_key("type") && map.get("nullable") == Some(&Value::Bool(true)) {
            types = types.or(Types::NULL);
        }
        if let Some(values) = map.get("enum").and_then(Value::as_array) {
            types = types.and(values.iter().map(Types::of).fold(Types::NONE, Types::or));
        }
        if let Some(value) = map.get("const") {
            types = types.and(Types::of(value));
        }
        types
    }
}

/// A schema read out: any one of its alternatives holds, and each
/// alternative is schemas that all hold. One empty alternative is a schema
/// that says nothing; none at all, one nothing satisfies.
#[derive(Debug, Clone)]
pub(super) struct Shape<'d> {
    alternatives: Vec<Vec<Atom<'d>>>,
}

impl<'d> Shape<'d> {
    /// A schema that says nothing.
    pub(super) fn unconstrained() -> Shape<'d> {
        Shape {
            alternatives: vec![Vec::new()],
        }
    }

    fn nothing() -> Shape<'d> {
        Shape {
            alternatives: Vec::new(),
        }
    }

    /// Both this and `other` hold.
    fn and(self, other: Shape<'d>, at: &str) -> Result<Shape<'d>, Unreadable> {
        let mut alternatives = Vec::new();
        for mine in &self.alternatives {
            for theirs in &other.alternatives {
                if alternatives.len() == MAX_ALTERNATIVES {
                    return Err(too_many(at));
                }
                alternatives.push(mine.iter().chain(theirs).cloned().collect());
            }
        }
        Ok(Shape { alternatives })
    }

    /// This or `other` holds.
    fn or(mut self, other: Shape<'d>, at: &str) -> Result<Shape<'d>, Unreadable> {
        self.alternatives.extend(other.alternatives);
        if self.alternatives.len() > MAX_ALTERNATIVES {
            return Err(too_many(at));
        }
        Ok(self)
    }

    /// The JSON types a value under this schema may have.
    pub(super) fn types(&self) -> Types {
        self.alternatives
            .iter()
            .map(|alternative| all_types(alternative))
            .fold(Types::NONE, Types::or)
    }
}

fn too_many(at: &str) -> Unreadable {
    Unreadable::new(
        at,
        format!(
            "reads as more than {MAX_ALTERNATIVES} alternatives (anyOf/oneOf within each other)"
        ),
    )
}

fn all_types(alternative: &[Atom<'_>]) -> Types {
    alternative
        .iter()
        .map(Atom::types)
        .fold(Types::ALL, Types::and)
}

/// Where one reading of a schema is: the `$ref`s it is inside (to see a
/// cycle), and how many more schema objects it may read.
struct Walk<'b> {
    refs: Vec<String>,
    budget: &'b mut usize,
}

/// Reads the schemas of one document.
#[derive(Debug, Clone, Copy)]
pub(super) struct SchemaReader<'d> {
    root: &'d Value,
}

impl<'d> SchemaReader<'d> {
    pub(super) fn new(root: &'d Value) -> SchemaReader<'d> {
        SchemaReader { root }
    }

    /// What a local `$ref` points at.
    pub(super) fn pointer(&self, reference: &str, at: &str) -> Result<&'d Value, Unreadable> {
        let Some(pointer) = reference.strip_prefix('#') else {
            return Err(Unreadable::new(
                at,
                format!("`$ref` {} points outside this document", shown(reference)),
            ));
        };
        self.root.pointer(pointer).ok_or_else(|| {
            Unreadable::new(
                at,
                format!("`$ref` {} leads nowhere in the document", shown(reference)),
            )
        })
    }

    /// `value` (a content descriptor, a method: anything that may be a
    /// reference object) with its chain of `$ref`s followed, and where it
    /// was found.
    pub(super) fn follow(
        &self,
        mut value: &'d Value,
        at: &str,
    ) -> Result<(&'d Value, String), Unreadable> {
        let mut at = at.to_owned();
        let mut seen: Vec<&str> = Vec::new();
        while let Some(reference) = value.get("$ref") {
            let Some(reference) = reference.as_str() else {
                return Err(Unreadable::new(&at, "`$ref` is not a string"));
            };
            if seen.contains(&reference) {
                return Err(cycle(&at, reference));
            }
            if seen.len() == MAX_DEPTH {
                return Err(Unreadable::new(
                    &at,
                    format!("`$ref`s chained past {MAX_DEPTH} links"),
                ));
            }
            seen.push(reference);
            value = self.pointer(reference, &at)?;
            at = reference.to_owned();
        }
        Ok((value, at))
    }

    /// `schema` read out.
    pub(super) fn shape(&self, schema: &'d Value, at: &str) -> Result<Shape<'d>, Unreadable> {
        let mut budget = MAX_SCHEMAS_READ;
        let mut walk = Walk {
            refs: Vec::new(),
            budget: &mut budget,
        };
        self.expand(schema, at.to_owned(), &mut walk, 0)
    }

    fn expand(
        &self,
        schema: &'d Value,
        at: String,
        walk: &mut Walk<'_>,
        depth: usize,
    ) -> Result<Shape<'d>, Unreadable> {
        if *walk.budget == 0 {
            return Err(Unreadable::new(
                &at,
                format!("takes more than {MAX_SCHEMAS_READ} schema objects to read"),
            ));
        }
        *walk.budget -= 1;
        if depth > MAX_DEPTH {
            return Err(Unreadable::new(
                &at,
                format!("schemas nested past {MAX_DEPTH} levels"),
            ));
        }
        let map = match schema {
            Value::Bool(_) => {
                return Ok(Shape {
                    alternatives: vec![vec![Atom { at, schema }]],
                });
            }
            Value::Object(map) => map,
            _ => {
                return Err(Unreadable::new(
                    &at,
                    "is not a schema (an object, true or false)",
                ));
            }
        };
        check_keywords(map, &at)?;
        let mut shape = Shape {
            alternatives: vec![vec![Atom {
                at: at.clone(),
                schema,
            }]],
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            if walk.refs.iter().any(|r| r == reference) {
                return Err(cycle(&at, reference));
            }
            let target = self.pointer(reference, &at)?;
            walk.refs.push(reference.to_owned());
            let inner = self.expand(target, reference.to_owned(), walk, depth + 1);
            walk.refs.pop();
            shape = shape.and(inner?, &at)?;
        }
        if let Some(branches) = map.get("allOf").and_then(Value::as_array) {
            for (i, branch) in branches.iter().enumerate() {
                let inner = self.expand(branch, format!("{at}/allOf/{i}"), walk, depth + 1)?;
                shape = shape.and(inner, &at)?;
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = map.get(key).and_then(Value::as_array) {
                let mut union = Shape::nothing();
                for (i, branch) in branches.iter().enumerate() {
                    let inner = self.expand(branch, format!("{at}/{key}/{i}"), walk, depth + 1)?;
                    union = union.or(inner, &at)?;
                }
                shape = shape.and(union, &at)?;
            }
        }
        Ok(shape)
    }
}

fn cycle(at: &str, reference: &str) -> Unreadable {
    Unreadable::new(
        at,
        format!(
            "`$ref` {} leads back to a schema it came from (a cycle)",
            shown(reference)
        ),
    )
}

/// A name as a JSON pointer token (`~` and `/` escaped).
fn pointer_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// A document's word as a message shows it: escaped and short.
fn shown(text: &str) -> String {
    crate::escape::bounded(text, 80).into_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn types_of(document: &Value, schema: &Value) -> Result<Types, Unreadable> {
        Ok(SchemaReader::new(document).shape(schema, "#")?.types())
    }

    #[test]
    fn types_read_words_lists_nullable_enum_const_and_combinators() {
        let doc = json!({"components": {"schemas": {"Ms": {"type": "integer"}}}});
        let cases = [
            (json!({"type": "string"}), Types::STRING),
            (
                json!({"type": ["integer", "null"]}),
                Types::INTEGER.or(Types::NULL),
            ),
            (
                json!({"type": "string", "nullable": true}),
                Types::STRING.or(Types::NULL),
            ),
            (
                json!({"enum": ["idle", null]}),
                Types::STRING.or(Types::NULL),
            ),
            (json!({"const": 3}), Types::INTEGER),
            (json!({"type": "number"}), Types::NUMBER),
            (json!({"$ref": "#/components/schemas/Ms"}), Types::INTEGER),
            (
                json!({"allOf": [{"type": ["integer", "string"]}, {"type": "integer"}]}),
                Types::INTEGER,
            ),
            (
                json!({"anyOf": [{"$ref": "#/components/schemas/Ms"}, {"type": "null"}]}),
                Types::INTEGER.or(Types::NULL),
            ),
            (
                json!({"description": "d", "x-rust": "u64", "minimum": 0}),
                Types::ALL,
            ),
            (json!(true), Types::ALL),
            (json!(false), Types::NONE),
        ];
        for (schema, expected) in cases {
            assert_eq!(types_of(&doc, &schema), Ok(expected), "{schema}");
        }
    }

    #[test]
    fn what_cannot_be_read_is_named_with_its_place_never_guessed() {
        let doc = json!({"components": {"schemas": {
            "A": {"$ref": "#/components/schemas/B"},
            "B": {"allOf": [{"$ref": "#/components/schemas/A"}]},
        }}});
        let cases = [
            (json!({"not": {"type": "null"}}), "#/not", "does not read"),
            (
                json!({"$ref": "other.json#/X"}),
                "#",
                "outside this document",
            ),
            (
                json!({"$ref": "#/components/schemas/None"}),
                "#",
                "leads nowhere",
            ),
            (
                json!({"$ref": "#/components/schemas/A"}),
                "#/components/schemas/B/allOf/0",
                "a cycle",
            ),
            (json!({"type": "text"}), "#/type", "not in a form"),
            (
                json!({"items": [{"type": "string"}]}),
                "#/items",
                "not in a form",
            ),
        ];
        for (schema, at, why) in cases {
            let found = types_of(&doc, &schema).expect_err(&schema.to_string());
            assert!(found.at.starts_with(at), "{schema}: {found}");
            assert!(found.why.contains(why), "{schema}: {found}");
        }
        let mut deep = json!({"components": {"schemas": {}}});
        for i in 0..=MAX_DEPTH + 1 {
            deep["components"]["schemas"][format!("S{i}")] =
                json!({"$ref": format!("#/components/schemas/S{}", i + 1)});
        }
        deep["components"]["schemas"][format!("S{}", MAX_DEPTH + 2)] = json!({"type": "string"});
        let found = types_of(&deep, &json!({"$ref": "#/components/schemas/S0"})).unwrap_err();
        assert!(found.why.contains("nested past"), "{found}");
        // 4 to the 7th: past the reading budget, within the depth bound.
        let mut doubling = json!({"components": {"schemas": {"S7": {"type": "string"}}}});
        for i in 0..7 {
            let next = format!("#/components/schemas/S{}", i + 1);
            doubling["components"]["schemas"][format!("S{i}")] =
                json!({"allOf": [{"$ref": next}, {"$ref": next}, {"$ref": next}, {"$ref": next}]});
        }
        let found = types_of(&doubling, &json!({"$ref": "#/components/schemas/S0"})).unwrap_err();
        assert!(found.why.contains("schema objects"), "{found}");
        let wide = json!({"allOf": [
            {"anyOf": [true, true, true, true]}, {"anyOf": [true, true, true, true]},
            {"anyOf": [true, true, true, true]}, {"anyOf": [true, true, true, true]}]});
        assert!(
            types_of(&json!({}), &wide)
                .unwrap_err()
                .why
                .contains("alternatives")
        );
    }

    #[test]
    fn a_field_is_promised_by_properties_or_required_through_every_combinator() {
        let doc = json!({"components": {"schemas": {
            "Lifetime": {"type": "object", "required": ["address", "created_ms"],
                "properties": {"address": {"type": "string"}}},
        }}});
        let reader = SchemaReader::new(&doc);
        let field = |schema: Value, name: &str| {
            let shape = reader.shape(Box::leak(Box::new(schema)), "#").unwrap();
            let field = reader.field(&shape, name).unwrap();
            (field.promised, field.shape.types())
        };
        let terse = json!({"type": "object", "required": ["created_ms"]});
        assert_eq!(field(terse.clone(), "created_ms"), (true, Types::ALL));
        assert!(!field(terse, "status").0);
        let refs = json!({"allOf": [{"$ref": "#/components/schemas/Lifetime"},
            {"properties": {"created_ms": {"type": ["integer", "string"]}}}]});
        assert_eq!(field(refs.clone(), "address"), (true, Types::STRING));
        assert_eq!(
            field(refs, "created_ms"),
            (true, Types::INTEGER.or(Types::STRING))
        );
        let either = json!({"oneOf": [{"required": ["a"]}, {"properties": {"b": {}}}]});
        assert!(!field(either, "a").0, "only one branch promises it");
        let nullable = json!({"type": ["object", "null"], "required": ["a"]});
        assert!(field(nullable, "a").0);
        let list = json!({"properties": {"terminals": {"type": "array",
            "items": {"$ref": "#/components/schemas/Lifetime"}}}});
        let shape = reader.shape(Box::leak(Box::new(list)), "#").unwrap();
        let terminals = reader.field(&shape, "terminals").unwrap();
        let items = reader.items(&terminals.shape).unwrap();
        assert!(reader.field(&items, "created_ms").unwrap().promised);
    }

    #[test]
    fn takes_checks_types_values_and_object_members() {
        let doc = json!({"components": {"schemas": {"Client": {"type": "object",
            "required": ["name", "version"], "additionalProperties": false,
            "properties": {"name": {"type": "string"}, "version": {"type": "string"}}}}}});
        let reader = SchemaReader::new(&doc);
        let takes = |schema: Value, value: Value| {
            let shape = reader.shape(Box::leak(Box::new(schema)), "#").unwrap();
            reader.takes(&shape, &value).unwrap()
        };
        let client = json!({"$ref": "#/components/schemas/Client"});
        assert!(takes(client.clone(), json!({"name": "a", "version": "1"})));
        assert!(!takes(client.clone(), json!({"name": "a"})));
        assert!(!takes(
            client,
            json!({"name": "a", "version": "1", "pid": 1})
        ));
        assert!(takes(
            json!({"oneOf": [{"const": "idle"}, {"const": "working"}]}),
            json!("idle")
        ));
        assert!(!takes(json!({"enum": ["working"]}), json!("idle")));
        assert!(
            takes(json!({"type": "integer", "minimum": 5}), json!(0)),
            "bounds are not read"
        );
        assert!(takes(json!({"type": "number"}), json!(1)));
        assert!(!takes(json!({"type": "integer"}), json!(1.5)));
    }
}
