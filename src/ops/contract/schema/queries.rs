//! What a shape says, as the judgement asks it: what an object says of
//! one of its fields (promised or not, and its schema), the schema of an
//! array's items, the names an object mentions, whether it requires one,
//! the values it lists, and whether it takes a value.

use serde_json::Value;

use super::types::Types;
use super::{Atom, SchemaReader, Shape, Unreadable, all_types, pointer_token};

/// What an object schema says of one of its fields.
#[derive(Debug, Clone)]
pub(crate) struct Field<'d> {
    /// Every alternative that can be an object lists it under
    /// `properties` or in `required`.
    pub promised: bool,
    /// Its schema (unconstrained where nothing is said of it).
    pub shape: Shape<'d>,
}

impl<'d> SchemaReader<'d> {
    /// What `shape`, read as an object, says of its field `name`.
    pub(crate) fn field(&self, shape: &Shape<'d>, name: &str) -> Result<Field<'d>, Unreadable> {
        let mut objects = 0;
        let mut promised_by_all = true;
        let mut field = Shape::nothing();
        for alternative in &shape.alternatives {
            if !all_types(alternative).holds(Types::OBJECT) {
                continue;
            }
            objects += 1;
            let mut promised = false;
            let mut this = Shape::unconstrained();
            for atom in alternative {
                let Some(map) = atom.schema.as_object() else {
                    continue;
                };
                if map
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|n| n == name))
                {
                    promised = true;
                }
                let at = format!("{}/properties/{}", atom.at, pointer_token(name));
                if let Some(schema) = map.get("properties").and_then(|p| p.get(name)) {
                    promised = true;
                    this = this.and(self.shape(schema, &at)?, &at)?;
                } else if let Some(extra) = map.get("additionalProperties") {
                    let at = format!("{}/additionalProperties", atom.at);
                    this = this.and(self.shape(extra, &at)?, &at)?;
                }
            }
            promised_by_all &= promised;
            field = field.or(this, name)?;
        }
        Ok(if objects == 0 {
            Field {
                promised: false,
                shape: Shape::unconstrained(),
            }
        } else {
            Field {
                promised: promised_by_all,
                shape: field,
            }
        })
    }

    /// Whether the document says its field `name` of `shape` is sent only
    /// in some cases (`x-when`, this project's word: the reason a status
    /// holds, a record's machine): its absence from a reply is then no
    /// difference.
    pub(crate) fn sometimes(&self, shape: &Shape<'d>, name: &str) -> bool {
        self.field(shape, name).is_ok_and(|field| {
            field
                .shape
                .alternatives
                .iter()
                .flatten()
                .any(|atom| atom.schema.get("x-when").is_some())
        })
    }

    /// The field names `shape` mentions (under `properties` or in
    /// `required`), each once, in the order met.
    pub(crate) fn names(&self, shape: &Shape<'d>) -> Vec<&'d str> {
        let mut names: Vec<&'d str> = Vec::new();
        for atom in shape.alternatives.iter().flatten() {
            let Some(map) = atom.schema.as_object() else {
                continue;
            };
            let listed = map
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|p| p.keys().map(String::as_str));
            let required = map
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str);
            for name in listed.chain(required) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }

    /// Whether every alternative of `shape` that can be an object lists
    /// `name` in `required`.
    pub(crate) fn requires(&self, shape: &Shape<'d>, name: &str) -> bool {
        let mut objects = shape
            .alternatives
            .iter()
            .filter(|a| all_types(a).holds(Types::OBJECT))
            .peekable();
        objects.peek().is_some()
            && objects.all(|alternative| {
                alternative.iter().any(|atom| {
                    atom.schema
                        .get("required")
                        .and_then(Value::as_array)
                        .is_some_and(|r| r.iter().any(|n| n == name))
                })
            })
    }

    /// The values `shape` lists (`enum`, `const`), when every alternative
    /// lists some.
    pub(crate) fn values(&self, shape: &Shape<'d>) -> Option<Vec<&'d Value>> {
        let mut values = Vec::new();
        for alternative in &shape.alternatives {
            let listed: Vec<&'d Value> = alternative
                .iter()
                .filter_map(|atom| {
                    atom.schema
                        .get("enum")
                        .and_then(Value::as_array)
                        .map(|v| v.iter().collect::<Vec<_>>())
                        .or_else(|| atom.schema.get("const").map(|c| vec![c]))
                })
                .next()?;
            values.extend(listed);
        }
        Some(values)
    }

    /// The schema of `shape`'s items, read as an array (unconstrained
    /// where nothing is said of them).
    pub(crate) fn items(&self, shape: &Shape<'d>) -> Result<Shape<'d>, Unreadable> {
        let mut items = Shape::nothing();
        for alternative in &shape.alternatives {
            if !all_types(alternative).holds(Types::ARRAY) {
                continue;
            }
            let mut this = Shape::unconstrained();
            for atom in alternative {
                if let Some(schema) = atom.schema.get("items") {
                    let at = format!("{}/items", atom.at);
                    this = this.and(self.shape(schema, &at)?, &at)?;
                }
            }
            items = items.or(this, "items")?;
        }
        Ok(if items.alternatives.is_empty() {
            Shape::unconstrained()
        } else {
            items
        })
    }

    /// Whether `value` is valid under `shape`, as far as the keywords read
    /// can tell.
    pub(crate) fn takes(&self, shape: &Shape<'d>, value: &Value) -> Result<bool, Unreadable> {
        for alternative in &shape.alternatives {
            let mut all = true;
            for atom in alternative {
                if !self.atom_takes(atom, value)? {
                    all = false;
                    break;
                }
            }
            if all {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn atom_takes(&self, atom: &Atom<'d>, value: &Value) -> Result<bool, Unreadable> {
        if !atom.types().holds(Types::of(value)) {
            return Ok(false);
        }
        let Some(map) = atom.schema.as_object() else {
            return Ok(true);
        };
        if map
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| !values.contains(value))
            || map.get("const").is_some_and(|c| c != value)
        {
            return Ok(false);
        }
        match value {
            Value::Object(fields) => {
                let required = map.get("required").and_then(Value::as_array);
                if required.is_some_and(|r| {
                    r.iter()
                        .any(|n| n.as_str().is_some_and(|n| !fields.contains_key(n)))
                }) {
                    return Ok(false);
                }
                for (name, field) in fields {
                    let (schema, at) =
                        match map.get("properties").and_then(|p| p.get(name.as_str())) {
                            Some(schema) => (
                                schema,
                                format!("{}/properties/{}", atom.at, pointer_token(name)),
                            ),
                            None => match map.get("additionalProperties") {
                                Some(extra) => (extra, format!("{}/additionalProperties", atom.at)),
                                None => continue,
                            },
                        };
                    if !self.takes(&self.shape(schema, &at)?, field)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Value::Array(items) => {
                let Some(schema) = map.get("items") else {
                    return Ok(true);
                };
                let shape = self.shape(schema, &format!("{}/items", atom.at))?;
                for item in items {
                    if !self.takes(&shape, item)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            _ => Ok(true),
        }
    }
}
