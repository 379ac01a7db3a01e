//! Another OpenRPC document (what `hc schema` prints on a real install)
//! held against the model: methods missing or added, and for each method
//! the model names, params and result fields missing, added or typed
//! differently. Pure: no I/O.

use serde_json::Value;

use super::guard::{self, Fault};
use super::model::{self, Document};
use super::{Difference, Group};

/// The one writer, and its guard: the param whose absence makes a core
/// unacceptable.
const SEND: &str = "terminal.send";
const GUARD: &str = "if";

/// The differences of `theirs` from the model.
pub(super) fn documents(ours: &Document, theirs: &Document) -> Vec<Difference> {
    let mut found = Vec::new();
    let their_methods = theirs.method_names();
    for method in ours.method_names() {
        if !their_methods.contains(&method) {
            found.push(Difference::schema(
                Group::Missing,
                &method,
                "",
                "the document has no such method".to_owned(),
            ));
            continue;
        }
        params(ours, theirs, &method, &mut found);
        if let (Some(a), Some(b)) = (ours.result(&method), theirs.result(&method)) {
            fields(ours, theirs, &method, a, b, "result", &mut found);
        }
    }
    if let Err(Fault::Unsound(why)) = guard::declared(theirs) {
        found.push(
            Difference::schema(
                Group::Guard,
                SEND,
                "params.if",
                format!("the document {why}: an idle-only send to this core would go unguarded, so it is never accepted"),
            )
            .breaking(),
        );
    }
    for method in their_methods {
        if !ours.method_names().contains(&method) {
            found.push(Difference::schema(
                Group::Extra,
                &method,
                "",
                "a method the model does not name (the adapter never calls it)".to_owned(),
            ));
        }
    }
    found
}

fn params(ours: &Document, theirs: &Document, method: &str, found: &mut Vec<Difference>) {
    let (a, b) = (ours.params(method), theirs.params(method));
    for (name, required, schema) in &a {
        match b.iter().find(|(n, ..)| n == name) {
            None if method == SEND && name == GUARD => found.push(
                Difference::schema(
                    Group::Missing,
                    method,
                    "params.if",
                    "no `if` param: the document does not show the guard idle-only sends rest on, so the core must show it live (--guard-check ADDRESS) before it is accepted".to_owned(),
                )
                .tolerated(),
            ),
            None => found.push(Difference::schema(
                Group::Missing,
                method,
                &format!("params.{name}"),
                format!(
                    "a param the model has ({}, and the adapter sends it) is not in the document",
                    if *required { "required" } else { "optional" }
                ),
            )),
            Some((_, their_required, their_schema)) => {
                if required != their_required {
                    found.push(Difference::schema(
                        Group::WrongType,
                        method,
                        &format!("params.{name}"),
                        format!("required is {their_required} there, {required} in the model"),
                    ));
                }
                compare_types(
                    method,
                    &format!("params.{name}"),
                    schema,
                    their_schema,
                    found,
                );

            }
        }
    }
    for (name, required, _) in &b {
        if a.iter().any(|(n, ..)| n == name) {
            continue;
        }
        found.push(if *required {
            Difference::schema(
                Group::Extra,
                method,
                &format!("params.{name}"),
                "a required param the model does not name: the adapter never sends it, so the core would refuse every call".to_owned(),
            )
            .breaking()
        } else {
            Difference::schema(
                Group::Extra,
                method,
                &format!("params.{name}"),
                "a param the model does not name (the adapter never sends it)".to_owned(),
            )
        });
    }
}

fn fields(
    ours: &Document,
    theirs: &Document,
    method: &str,
    a: &Value,
    b: &Value,
    at: &str,
    found: &mut Vec<Difference>,
) {
    compare_types(method, at, a, b, found);
    let (mine, their) = (ours.properties(a), theirs.properties(b));
    for (name, required, schema) in &mine {
        let path = format!("{at}.{name}");
        match their.iter().find(|(n, ..)| n == name) {
            None if *required => found.push(Difference::schema(
                Group::Missing,
                method,
                &path,
                "a field the model requires is not in the document".to_owned(),
            )),
            None => found.push(
                Difference::schema(
                    Group::Missing,
                    method,
                    &path,
                    "a field the model has (optional: the adapter does without) is not in the document"
                        .to_owned(),
                )
                .tolerated(),
            ),
            Some((_, their_required, their_schema)) => {
                if *required && !their_required {
                    found.push(Difference::schema(
                        Group::WrongType,
                        method,
                        &path,
                        "the model requires it; the document makes it optional".to_owned(),
                    ));
                }
                fields(ours, theirs, method, schema, their_schema, &path, found);
            }
        }
    }
    for (name, ..) in &their {
        if !mine.iter().any(|(n, ..)| n == name) {
            found.push(Difference::schema(
                Group::Extra,
                method,
                &format!("{at}.{name}"),
                "a field the model does not name (ignored)".to_owned(),
            ));
        }
    }
    if let (Some(ai), Some(bi)) = (
        a.get("items").and_then(|s| ours.resolve(s)),
        b.get("items").and_then(|s| theirs.resolve(s)),
    ) {
        fields(ours, theirs, method, ai, bi, &format!("{at}[]"), found);
    }
}

fn compare_types(method: &str, at: &str, a: &Value, b: &Value, found: &mut Vec<Difference>) {
    let (mut mine, mut their) = (model::types(a), model::types(b));
    mine.sort_unstable();
    their.sort_unstable();
    if !mine.is_empty() && !their.is_empty() && mine != their {
        found.push(Difference::schema(
            Group::WrongType,
            method,
            at,
            format!(
                "typed {} there, {} in the model",
                their.join(" or "),
                mine.join(" or ")
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_against_itself_has_no_difference() {
        let model = Document::model();
        assert!(documents(&model, &Document::model()).is_empty());
    }

    #[test]
    fn a_changed_document_shows_what_changed() {
        let mut changed: Value = serde_json::from_str(crate::hc::wire::CONTRACT_DOCUMENT).unwrap();
        let methods = changed["methods"].as_array_mut().unwrap();
        methods.retain(|m| m["name"] != "terminal.send");
        methods.push(
            serde_json::json!({"name": "pane.report_agent", "params": [],
            "result": {"name": "r", "schema": {"type": "object"}}}),
        );
        let record = &mut changed["components"]["schemas"]["TerminalRecord"]["properties"];
        record.as_object_mut().unwrap().remove("submit_key");
        record["status_seq"] = serde_json::json!({"type": "string"});
        record["labels"] = serde_json::json!({"type": "object"});
        let theirs = Document::parse(&changed.to_string()).unwrap();
        let found: Vec<(Group, String, String)> = documents(&Document::model(), &theirs)
            .into_iter()
            .map(|d| (d.group, d.method, d.field))
            .collect();
        let has = |g: Group, m: &str, f: &str| found.contains(&(g, m.to_owned(), f.to_owned()));
        assert!(has(Group::Missing, "terminal.send", ""), "{found:?}");
        assert!(has(Group::Extra, "pane.report_agent", ""), "{found:?}");
        assert!(
            has(Group::Missing, "terminal.get", "result.submit_key"),
            "{found:?}"
        );
        assert!(
            has(Group::WrongType, "terminal.get", "result.status_seq"),
            "{found:?}"
        );
        assert!(
            has(Group::Extra, "terminal.get", "result.labels"),
            "{found:?}"
        );
        assert!(
            has(
                Group::Missing,
                "terminal.list",
                "result.terminals[].submit_key"
            ),
            "{found:?}"
        );
    }
}
