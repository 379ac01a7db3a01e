//! What the probe saw: the results of the live calls (the hello, the list,
//! each terminal's record and screen), kept so that the judgement can say
//! of a field the document does not promise whether every reply carried
//! it ("seen in N replies"). Bounded like the probe: one hello, one list,
//! [`super::MAX_TERMINALS`] records and screens.

use serde_json::Value;

use super::schema::Types;
use crate::hc::wire::Method;
use crate::hc::wire::needs::Step;

/// The results seen, per method.
#[derive(Debug, Default)]
pub(super) struct Observed {
    results: Vec<(Method, Value)>,
}

/// How a place fared in the replies seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Presence {
    /// Replies of the method seen.
    pub replies: usize,
    /// Places the field could be in (the replies, or for a list's records,
    /// the records in them).
    pub places: usize,
    /// Places that carried it with a type the adapter decodes.
    pub carried: usize,
}

impl Observed {
    /// Keeps the result of one live call.
    pub(super) fn add(&mut self, method: Method, result: &Value) {
        self.results.push((method, result.clone()));
    }

    /// Whether the records and screens seen said why their status held
    /// (`status_kind`, `status_msg`, `status_ms`, contract §3), in one
    /// line.
    pub(super) fn status_reasons(&self) -> String {
        let mut places = 0;
        let mut counts = [0usize; 3];
        const FIELDS: [&str; 3] = ["status_kind", "status_msg", "status_ms"];
        for (method, result) in &self.results {
            let records: Vec<&Value> = match method {
                Method::List => result
                    .get("terminals")
                    .and_then(Value::as_array)
                    .map(|t| t.iter().collect())
                    .unwrap_or_default(),
                Method::Get | Method::Read => vec![result],
                _ => Vec::new(),
            };
            for record in records {
                places += 1;
                for (count, field) in counts.iter_mut().zip(FIELDS) {
                    *count += usize::from(record.get(field).is_some_and(|v| !v.is_null()));
                }
            }
        }
        if counts.iter().all(|n| *n == 0) {
            return format!(
                "not passed on: none of {places} record(s) and screen(s) carried status_kind, status_msg or status_ms, so the tools show statuses without a reason or an age. A core passes a reason on only while a program gives one: look again while an agent is blocked"
            );
        }
        let said: Vec<String> = FIELDS
            .iter()
            .zip(counts)
            .map(|(field, n)| format!("{field} in {n}"))
            .collect();
        format!(
            "passed on ({} of {places} record(s) and screen(s)): the tools show the reason (untrusted, escaped) and the age",
            said.join(", ")
        )
    }

    /// Where `path` of `method`'s results was seen, and how often with one
    /// of `types`.
    pub(super) fn seen(&self, method: Method, path: &[Step], types: Types) -> Presence {
        let results: Vec<&Value> = self
            .results
            .iter()
            .filter(|(m, _)| *m == method)
            .map(|(_, v)| v)
            .collect();
        let replies = results.len();
        let Some((last, parent)) = path.split_last() else {
            return Presence {
                replies,
                places: replies,
                carried: results.iter().filter(|v| types.holds(Types::of(v))).count(),
            };
        };
        let mut parents = results;
        for step in parent {
            parents = parents
                .into_iter()
                .flat_map(|value| step_into(value, *step))
                .collect();
        }
        let (places, found): (usize, Vec<&Value>) = match last {
            Step::Field(name) => (
                parents.iter().filter(|p| p.is_object()).count(),
                parents.iter().filter_map(|p| p.get(*name)).collect(),
            ),
            Step::Items => {
                let items: Vec<&Value> = parents
                    .iter()
                    .filter_map(|p| p.as_array())
                    .flatten()
                    .collect();
                (items.len(), items)
            }
        };
        Presence {
            replies,
            places,
            carried: found.iter().filter(|v| types.holds(Types::of(v))).count(),
        }
    }
}

fn step_into(value: &Value, step: Step) -> Vec<&Value> {
    match step {
        Step::Field(name) => value.get(name).into_iter().collect(),
        Step::Items => value.as_array().into_iter().flatten().collect(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_field_is_counted_in_every_place_it_could_be() {
        let mut observed = Observed::default();
        observed.add(
            Method::List,
            &json!({"terminals": [{"created_ms": 1}, {"created_ms": "2"}, {}]}),
        );
        observed.add(Method::List, &json!({"terminals": [{"created_ms": 3}]}));
        let path = [
            Step::Field("terminals"),
            Step::Items,
            Step::Field("created_ms"),
        ];
        assert_eq!(
            observed.seen(Method::List, &path, Types::INTEGER),
            Presence {
                replies: 2,
                places: 4,
                carried: 2
            }
        );
        assert_eq!(observed.seen(Method::Get, &path, Types::INTEGER).places, 0);
        assert_eq!(observed.seen(Method::List, &[], Types::OBJECT).carried, 2);
    }
}
