//! The faults in force (replaceable at run time) and the plan they make
//! for one call: every matching content rewrite, then the first matching
//! delivery fault in configuration order.

use std::sync::Mutex;

use serde_json::Value;

use super::{Fault, FaultKind, ID_MISMATCH_OFFSET, WRONG_FRAMING, WRONG_GENERATION, WRONG_VERSION};
use crate::wire::{Method, RpcError, hello_fields};

/// The faults in force; replaceable at run time.
#[derive(Debug, Default)]
pub struct FaultSet {
    faults: Mutex<Vec<Fault>>,
}

/// What the faults in force do to one call's reply: every matching rewrite,
/// then the first matching delivery fault (in configuration order).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Plan {
    rewrites: Vec<FaultKind>,
    /// The fault that changes how the reply is delivered, if one applies.
    pub delivery: Option<FaultKind>,
}

impl FaultSet {
    /// The set of `faults`, in force from now.
    pub fn new(faults: Vec<Fault>) -> Self {
        FaultSet {
            faults: Mutex::new(faults),
        }
    }

    /// Puts `faults` in force instead of the ones before (control `set_faults`).
    pub fn replace(&self, faults: Vec<Fault>) {
        *self
            .faults
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = faults;
    }

    /// The plan for a call of `method` (`None`: a method hc does not have,
    /// which only method-less faults match).
    pub fn plan(&self, method: Option<Method>) -> Plan {
        let faults = self
            .faults
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut plan = Plan::default();
        for fault in faults
            .iter()
            .filter(|fault| fault.method.is_none() || fault.method == method)
        {
            if fault.kind.rewrites() {
                plan.rewrites.push(fault.kind);
            } else if plan.delivery.is_none() {
                plan.delivery = Some(fault.kind);
            }
        }
        plan
    }
}

impl Plan {
    /// Applies the rewrites to a reply; the `wrong-*` ones touch only a
    /// successful `hc.hello` result.
    pub fn rewrite(
        &self,
        method: Option<Method>,
        id: &mut Value,
        reply: &mut Result<Value, RpcError>,
    ) {
        for kind in &self.rewrites {
            let hello = match reply {
                Ok(Value::Object(result)) if method == Some(Method::Hello) => Some(result),
                _ => None,
            };
            match (kind, hello) {
                (FaultKind::WrongVersion, Some(result)) => {
                    result.insert(hello_fields::VERSION.into(), WRONG_VERSION.into());
                }
                (FaultKind::WrongGeneration, Some(result)) => {
                    result.insert(hello_fields::GENERATION.into(), WRONG_GENERATION.into());
                }
                (FaultKind::WrongFraming, Some(result)) => {
                    result.insert(hello_fields::FRAMING.into(), WRONG_FRAMING.into());
                }
                (FaultKind::IdMismatch, _) => *id = mismatched(id),
                _ => {}
            }
        }
    }
}

fn mismatched(id: &Value) -> Value {
    match id {
        Value::Number(number) => match number.as_i64() {
            Some(n) => n.wrapping_add(ID_MISMATCH_OFFSET).into(),
            None => format!("{number}-mismatch").into(),
        },
        Value::String(text) => format!("{text}-mismatch").into(),
        _ => ID_MISMATCH_OFFSET.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wrong_version_rewrites_only_the_hello_result() {
        let set = FaultSet::new(vec!["wrong-version".parse().unwrap()]);
        let mut id = json!(1);
        let mut reply = Ok(json!({ "version": "0.1.15" }));
        set.plan(Some(Method::Hello))
            .rewrite(Some(Method::Hello), &mut id, &mut reply);
        assert_eq!(reply.unwrap()["version"], WRONG_VERSION);
        let mut reply = Ok(json!({ "version": "0.1.15" }));
        set.plan(Some(Method::List))
            .rewrite(Some(Method::List), &mut id, &mut reply);
        assert_eq!(reply.unwrap()["version"], "0.1.15");
    }

    #[test]
    fn a_method_fault_leaves_other_methods_alone() {
        let set = FaultSet::new(vec!["no-reply:terminal.send".parse().unwrap()]);
        assert_eq!(
            set.plan(Some(Method::Send)).delivery,
            Some(FaultKind::NoReply)
        );
        assert_eq!(set.plan(Some(Method::Hello)).delivery, None);
    }

    #[test]
    fn id_mismatch_moves_numbers_and_strings() {
        assert_eq!(mismatched(&json!(7)), json!(1007));
        assert_eq!(mismatched(&json!("a")), json!("a-mismatch"));
    }
}
