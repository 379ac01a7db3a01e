//! Notes for correcting the model: where a document (what `hc schema`
//! prints, or a core's own) differs from the model in what the adapter
//! neither sends nor reads strictly: methods and params the model does not
//! name, result fields it names that the document lacks or types
//! otherwise, fields the document adds. Never a break (the judgement rules
//! on everything the adapter sends and needs, `judgement`). Pure: no I/O.

use super::model::Document;
use super::rules::Rule;
use super::schema::{SchemaReader, Shape, Types};
use super::{Difference, Group};
use crate::hc::wire::Method;
use crate::hc::wire::needs::{READS, path_text};

/// A step into a result, as a document names it.
#[derive(Clone, Copy)]
enum Step<'a> {
    Field(&'a str),
    Items,
}

/// A place as messages (and `wire::needs::path_text`) show it.
fn text(path: &[Step<'_>]) -> String {
    let mut text = String::new();
    for step in path {
        match step {
            Step::Field(name) if text.is_empty() => text.push_str(name),
            Step::Field(name) => {
                text.push('.');
                text.push_str(name);
            }
            Step::Items => text.push_str("[]"),
        }
    }
    text
}

/// The notes on `theirs` against `ours` (the model).
pub(super) fn notes(ours: &Document, theirs: &Document) -> Vec<Difference> {
    let mut found = Vec::new();
    let model_methods = ours.method_names();
    for method in theirs.method_names() {
        if !model_methods.contains(&method) {
            found.push(note(
                Group::Extra,
                &method,
                "",
                "a method the model does not name (the adapter never calls it)".to_owned(),
            ));
        }
    }
    for method in Method::ALL {
        let name = method.as_str();
        let (Some((mine, my_at)), Some((their, their_at))) =
            (ours.method(name), theirs.method(name))
        else {
            continue;
        };
        if let (Ok(my_params), Ok(their_params)) =
            (ours.params(mine, &my_at), theirs.params(their, &their_at))
        {
            for param in their_params {
                if !param.required && !my_params.iter().any(|p| p.name == param.name) {
                    found.push(note(
                        Group::Extra,
                        name,
                        &format!("params.{}", param.name),
                        "an optional param the model does not name (the adapter never sends it)"
                            .to_owned(),
                    ));
                }
            }
        }
        let (Ok(Some(a)), their_result) =
            (ours.result(mine, &my_at), theirs.result(their, &their_at))
        else {
            continue;
        };
        if let Ok(Some(b)) = their_result {
            let walk = Walk {
                method,
                ours: ours.reader(),
                theirs: theirs.reader(),
            };
            walk.fields(&a, &b, &mut Vec::new(), &mut found);
        }
    }
    found
}

fn note(group: Group, method: &str, field: &str, detail: String) -> Difference {
    Difference::new(Rule::Other, group, method, field, detail)
}

/// One method's result, the model's and theirs, walked together.
struct Walk<'a> {
    method: Method,
    ours: SchemaReader<'a>,
    theirs: SchemaReader<'a>,
}

impl<'a> Walk<'a> {
    fn fields(
        &self,
        a: &Shape<'a>,
        b: &Shape<'a>,
        path: &mut Vec<Step<'a>>,
        found: &mut Vec<Difference>,
    ) {
        let name = self.method.as_str();
        let theirs_names = self.theirs.names(b);
        let mine_names = self.ours.names(a);
        for field in &mine_names {
            path.push(Step::Field(field));
            let at = format!("result.{}", text(path));
            let (Ok(mine), their) = (self.ours.field(a, field), self.theirs.field(b, field)) else {
                path.pop();
                continue;
            };
            let their = match their {
                Ok(their) => their,
                Err(what) => {
                    if !judged(self.method, path) {
                        found.push(Difference::new(
                            Rule::UnreadableOther,
                            Group::Unreadable,
                            name,
                            &at,
                            what.to_string(),
                        ));
                    }
                    path.pop();
                    continue;
                }
            };
            if !judged(self.method, path) {
                let (my_types, their_types) = (mine.shape.types(), their.shape.types());
                if !their.promised {
                    found.push(note(
                        Group::Missing,
                        name,
                        &at,
                        "a field the model has (optional: the adapter does without) is not in the document".to_owned(),
                    ));
                } else if their_types != Types::ALL && their_types != my_types {
                    found.push(note(
                        Group::WrongType,
                        name,
                        &at,
                        format!("typed {their_types} there, {my_types} in the model (read leniently: another type reads as absent)"),
                    ));
                }
            }
            if their.promised {
                self.nested(&mine.shape, &their.shape, path, found);
            }
            path.pop();
        }
        for field in theirs_names {
            if !mine_names.contains(&field) {
                path.push(Step::Field(field));
                found.push(note(
                    Group::Extra,
                    name,
                    &format!("result.{}", text(path)),
                    "a field the model does not name (ignored)".to_owned(),
                ));
                path.pop();
            }
        }
    }

    /// Into the items of an array both name (a list's records).
    fn nested(
        &self,
        a: &Shape<'a>,
        b: &Shape<'a>,
        path: &mut Vec<Step<'a>>,
        found: &mut Vec<Difference>,
    ) {
        if !a.types().holds(Types::ARRAY) || a.types() == Types::ALL {
            return;
        }
        if let (Ok(ai), Ok(bi)) = (self.ours.items(a), self.theirs.items(b)) {
            path.push(Step::Items);
            self.fields(&ai, &bi, path, found);
            path.pop();
        }
    }
}

/// Whether the judgement rules on this place (the decoders read it).
fn judged(method: Method, path: &[Step<'_>]) -> bool {
    let place = text(path);
    READS
        .iter()
        .any(|r| r.method == method && path_text(r.path) == place)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_against_itself_has_no_note() {
        assert!(notes(&Document::model(), &Document::model()).is_empty());
    }
}
