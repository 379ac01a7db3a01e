//! The params side: the adapter is the caller. Each param it sends (every
//! way it sends it) against the params the document declares: optional
//! where the adapter always sends it is fine; required where it does not
//! always send it breaks; undeclared is a note, unless the document
//! refuses undeclared params; `force` undeclared is left out.

use serde_json::Value;

use super::super::model::{Document, Param};
use super::super::rules::Rule;
use super::super::schema::{SchemaReader, Unreadable};
use super::super::{Difference, Group};
use crate::hc::wire::{Method, SendParams};

/// The params side of `method`; true when `force` is to be left out.
pub(super) fn judge(
    document: &Document,
    method: Method,
    entry: &Value,
    at: &str,
    variants: &[Value],
    found: &mut Vec<Difference>,
) -> bool {
    let name = method.as_str();
    let line = |rule, group, field: &str, detail: String| {
        Difference::new(rule, group, name, &format!("params.{field}"), detail)
    };
    if document.by_position_only(entry) {
        found.push(Difference::new(
            Rule::ParamsByPosition,
            Group::ParamStructure,
            name,
            "params",
            "the document takes this method's params by position only; the adapter sends them by name".to_owned(),
        ));
    }
    let declared = match document.params(entry, at) {
        Ok(declared) => declared,
        Err(what) => {
            found.push(Difference::new(
                Rule::UnreadableNeeded,
                Group::Unreadable,
                name,
                "params",
                format!("{what}: the params the adapter sends depend on it"),
            ));
            return false;
        }
    };
    let refuses = document.refuses_undeclared_params(entry);
    let mut sent: Vec<&str> = Vec::new();
    for key in variants
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|o| o.keys())
    {
        if !sent.contains(&key.as_str()) {
            sent.push(key);
        }
    }
    let mut omits_force = false;
    for param in &sent {
        let values: Vec<&Value> = variants.iter().filter_map(|v| v.get(*param)).collect();
        let always = values.len() == variants.len();
        let force = method == Method::Send && *param == SendParams::FORCE;
        let Some(declared) = declared.iter().find(|p| p.name == *param) else {
            if force {
                omits_force = true;
                found.push(line(Rule::ForceOmitted, Group::Undeclared, param,
                    "not declared: sends to this core leave it out (false is hc's default; the adapter never sends true)".to_owned()));
            } else if refuses {
                found.push(line(Rule::ParamUndeclaredRefused, Group::Undeclared, param,
                    "sent by the adapter, not declared, and the document refuses params it does not declare: the core would refuse every call".to_owned()));
            } else {
                found.push(line(Rule::ParamUndeclared, Group::Undeclared, param,
                    "sent by the adapter, not declared by the document (a core that ignores params it does not name takes it)".to_owned()));
            }
            continue;
        };
        match takes_all(document.reader(), declared, &values) {
            Err(what) => found.push(line(
                Rule::UnreadableNeeded,
                Group::Unreadable,
                param,
                format!("{what}: a param the adapter sends depends on it"),
            )),
            Ok(Some(_)) if force && !declared.required => {
                omits_force = true;
                found.push(line(Rule::ForceOmitted, Group::WrongType, param,
                    "declared optional with a schema that cannot take false: sends to this core leave it out (false is hc's default)".to_owned()));
            }
            Ok(Some(refused)) => found.push(line(
                Rule::ParamRefusedValue,
                Group::WrongType,
                param,
                format!(
                    "declared with a schema that cannot take {}, which the adapter sends",
                    crate::escape::bounded(&refused.to_string(), 64)
                ),
            )),
            Ok(None) if declared.required && !always => found.push(line(
                Rule::ParamRequiredNotSent,
                Group::RequiredNotSent,
                param,
                "required by the document; the adapter sends it on some calls only, so the core would refuse the others".to_owned(),
            )),
            Ok(None) => {}
        }
    }
    for param in declared
        .iter()
        .filter(|p| p.required && !sent.contains(&p.name))
    {
        found.push(line(
            Rule::ParamRequiredNotSent,
            Group::RequiredNotSent,
            param.name,
            "required by the document; the adapter never sends it, so the core would refuse every call".to_owned(),
        ));
    }
    omits_force
}

/// The first of `values` the param's schema cannot take, if any (a param
/// without a schema takes anything).
fn takes_all<'v>(
    reader: SchemaReader<'_>,
    param: &Param<'_>,
    values: &[&'v Value],
) -> Result<Option<&'v Value>, Unreadable> {
    let Some(schema) = param.schema else {
        return Ok(None);
    };
    let shape = reader.shape(schema, &param.at)?;
    for value in values {
        if !reader.takes(&shape, value)? {
            return Ok(Some(value));
        }
    }
    Ok(None)
}
