//! The results side: the adapter is the reader. Each place its decoders
//! read (`wire::needs`) against what the document promises: promised
//! with the types decoded, fewer or none stated is fine; a wider type
//! breaks; not promised, it is judged by the live replies the probe saw.

use super::super::observed::Observed;
use super::super::rules::Rule;
use super::super::schema::{SchemaReader, Shape, Types, Unreadable};
use super::super::{Difference, Group};
use crate::hc::wire::Method;
use crate::hc::wire::needs::{self, READS, Reading, Step};

/// The results side of `method`: `declared` says whether the document
/// has the method, and its result schema.
pub(super) fn judge(
    reader: SchemaReader<'_>,
    method: Method,
    declared: Result<(bool, Option<Shape<'_>>), Unreadable>,
    observed: &Observed,
    found: &mut Vec<Difference>,
) {
    let name = method.as_str();
    for read in READS.iter().filter(|r| r.method == method) {
        let field = format!("result{}", dotted(read.path));
        let line = |rule, group, detail: String| Difference::new(rule, group, name, &field, detail);
        let decoded = Types::decoded(read.types);
        let view = declared
            .clone()
            .and_then(|(has, shape)| promise(reader, has, shape, read.path));
        match (read.reading, view) {
            (Reading::Needed, Err(what)) => found.push(line(
                Rule::UnreadableNeeded,
                Group::Unreadable,
                format!("{what}: a field the adapter needs depends on it"),
            )),
            (Reading::WhenPresent, Err(what)) => found.push(line(
                Rule::UnreadableOther,
                Group::Unreadable,
                format!("{what}: a field the adapter reads when present"),
            )),
            (reading, Ok((promised, types))) if promised || reading == Reading::WhenPresent => {
                if types != Types::ALL && !decoded.holds(types) {
                    let (rule, when) = match reading {
                        Reading::Needed => (Rule::FieldWider, ""),
                        Reading::WhenPresent => (Rule::OptionalWider, " when present"),
                    };
                    found.push(line(rule, Group::WrongType, format!(
                        "typed {types} there: the adapter decodes {decoded} only{when}, so a reply holding a {} would fail the call",
                        types.without(decoded)
                    )));
                }
            }
            (_, Ok(_)) => found.push(seen(method, read.path, decoded, observed, line)),
        }
    }
}

/// Whether the document promises the place at `path` of a result (`has`:
/// it has the method; `shape`: its result schema), and the types it says
/// the place takes.
fn promise(
    reader: SchemaReader<'_>,
    has: bool,
    shape: Option<Shape<'_>>,
    path: &[Step],
) -> Result<(bool, Types), Unreadable> {
    let Some(mut shape) = shape else {
        return Ok((false, Types::ALL));
    };
    let mut promised = has;
    for step in path {
        shape = match step {
            Step::Field(name) => {
                let field = reader.field(&shape, name)?;
                promised &= field.promised;
                field.shape
            }
            Step::Items => reader.items(&shape)?,
        };
    }
    Ok((promised, shape.types()))
}

/// The line for a needed field the document does not promise: a note when
/// every live reply carried it decodably, else a break.
fn seen(
    method: Method,
    path: &[Step],
    decoded: Types,
    observed: &Observed,
    line: impl Fn(Rule, Group, String) -> Difference,
) -> Difference {
    let seen = observed.seen(method, path, decoded);
    let records = path.contains(&Step::Items);
    if seen.places > 0 && seen.carried == seen.places {
        let detail = if records {
            format!(
                "not promised by the document; seen in all {} records of {} replies",
                seen.places, seen.replies
            )
        } else {
            format!(
                "not promised by the document; seen in {} replies",
                seen.places
            )
        };
        return line(Rule::FieldSeen, Group::NotPromised, detail);
    }
    let detail = match (seen.replies, method) {
        (0, Method::Send) => {
            "not promised by the document, and never seen: the probe does not send".to_owned()
        }
        (0, _) => format!("not promised by the document, and no live reply of {method} was seen"),
        _ if seen.places == 0 => {
            "not promised by the document, and no live reply had a place for it".to_owned()
        }
        _ => format!(
            "not promised by the document, and only {} of {} {} carried it as {decoded}",
            seen.carried,
            seen.places,
            if records { "records" } else { "replies" }
        ),
    };
    line(Rule::FieldNotSeen, Group::NotPromised, detail)
}

/// `path` after `result`: `.terminals[].address`, empty for the result.
fn dotted(path: &[Step]) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!(".{}", needs::path_text(path))
    }
}
