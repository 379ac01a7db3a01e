//! Asking the core: the handshake (its pins checked, the version first),
//! its own document (`rpc.discover`), the list, each terminal's record and
//! screen, and one unknown method; every reply's envelope, result and error
//! objects held against the model (`replies`, `compare`), the results kept
//! (`observed`), then the core's own document judged with them
//! (`judgement`), and last the live guard check when asked for.

use serde_json::{Value, json};

use super::model::Document;
use super::probe::{Ask, Probe};
use super::replies;
use super::report::Findings;
use super::{
    Difference, Discovery, Group, Guard, MAX_TERMINALS, Rule, Source, compare, guard, judgement,
};
use crate::hc::wire::{self, Method};

/// Asks the core each read method and the unknown one, comparing every
/// reply with the model, then judges its own document with the replies
/// seen. With `guard_check` (a terminal, and the bound of one send), the
/// live guard check runs last.
pub(super) async fn probe_core(
    model: &Document,
    mut probe: Probe,
    guard_check: Option<(&str, std::time::Duration)>,
    findings: &mut Findings,
) {
    let greeted = ask_reads(model, &mut probe, findings).await;
    judge_discovered(model, findings);
    if !greeted {
        return;
    }
    if let Some((address, send_timeout)) = guard_check
        && !findings.lost
    {
        *findings.calls.entry(Method::Send.as_str()).or_default() += 1;
        let force = !findings.omits_force;
        match guard::live(&mut probe, address, send_timeout, force).await {
            refused @ guard::Live::Refused { .. } => findings.guard = Guard::LiveCheck(refused),
            guard::Live::Ignored(what) => {
                findings.add(Difference::new(
                    Rule::GuardIgnored,
                    Group::Guard,
                    Method::Send.as_str(),
                    "params.if",
                    what,
                ));
                findings.guard = Guard::NotShown;
            }
            guard::Live::Inconclusive(why) => {
                findings.guard_notes.push(format!("the live check: {why}"));
            }
        }
    } else if findings.guard == Guard::NotShown && !findings.lost {
        findings
            .guard_notes
            .push("no live check was asked for (--guard-check ADDRESS)".to_owned());
    }
}

/// The hello, the core's document, the list, each terminal's record and
/// screen, and the unknown method; false when the hello was not answered
/// (nothing else was asked).
async fn ask_reads(model: &Document, probe: &mut Probe, findings: &mut Findings) -> bool {
    let hello = serde_json::to_value(crate::hc::conn::hello_params()).unwrap_or_default();
    let Some(result) = call(model, probe, findings, Ask::Hello, hello).await else {
        return false;
    };
    let fact = |key: &str| {
        result
            .get(key)
            .and_then(Value::as_str)
            .map(|v| crate::escape::bounded(v, 128).into_owned())
    };
    findings.version = fact("version");
    findings.raw_version = result
        .get("version")
        .and_then(Value::as_str)
        .map(str::to_owned);
    findings.core_id = fact("core_id");
    replies::check_pins(&result, findings);
    discover(probe, findings).await;
    if findings.lost {
        return true;
    }
    let listed = call(
        model,
        probe,
        findings,
        Ask::List,
        json!({"include_finished": true}),
    )
    .await;
    let addresses: Vec<String> = listed
        .as_ref()
        .and_then(|l| l.get("terminals"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("address").and_then(Value::as_str))
        .filter(|a| wire::check_address(a).is_ok())
        .take(MAX_TERMINALS)
        .map(str::to_owned)
        .collect();
    for address in &addresses {
        if findings.lost {
            return true;
        }
        findings.terminals += 1;
        let _ = call(
            model,
            probe,
            findings,
            Ask::Get,
            json!({"address": address}),
        )
        .await;
        if findings.lost {
            return true;
        }
        let params = json!({"address": address, "lines": 0});
        let _ = call(model, probe, findings, Ask::Read, params).await;
    }
    if !findings.lost {
        machines(probe, findings).await;
    }
    if !findings.lost {
        unknown_method(probe, findings).await;
    }
    true
}

/// The core's own document, judged with the replies the probe saw: its
/// lines, whether it declares the guard, whether its sends leave `force`
/// out.
fn judge_discovered(model: &Document, findings: &mut Findings) {
    let Some(theirs) = findings.discovered.take() else {
        return;
    };
    let judged = judgement::judge(model, &theirs, &findings.observed);
    for difference in judged.differences {
        findings.add(difference.in_document(Source::Discovered));
    }
    match judged.guard {
        Ok(()) => findings.guard = Guard::Document,
        Err(fault) => findings
            .guard_notes
            .push(format!("its own document {}", fault.why())),
    }
    findings.omits_force = judged.omits_force;
}

/// One call: the reply's envelope and result held against the model. The
/// result, when there is one.
async fn call(
    model: &Document,
    probe: &mut Probe,
    findings: &mut Findings,
    ask: Ask,
    params: Value,
) -> Option<Value> {
    let method = ask.method();
    *findings.calls.entry(method).or_default() += 1;
    let (id, received) = probe.ask(ask, params).await;
    let reply = replies::received_json(method, received, findings)?;
    let result = replies::envelope(method, id, reply, findings)?;
    match result {
        Ok(result) => {
            if let Some(read) = ask.read() {
                for difference in compare::reply(model, read, &result) {
                    findings.add(difference);
                }
                findings.observed.add(read, &result);
            }
            Some(result)
        }
        Err(error) => {
            replies::error_object(method, &error, None, findings);
            None
        }
    }
}

/// The core's own document, when it gives one: kept to be judged once
/// the replies are seen, its digest kept for `--accept`. A core that
/// answers with an error does not describe itself, and is judged on the
/// observed shapes alone.
async fn discover(probe: &mut Probe, findings: &mut Findings) {
    let method = Ask::Discover.method();
    *findings.calls.entry(method).or_default() += 1;
    let (id, received) = probe.ask(Ask::Discover, json!({})).await;
    let Some(reply) = replies::received_json(method, received, findings) else {
        return;
    };
    match replies::envelope(method, id, reply, findings) {
        Some(Ok(document)) => {
            let sha256 = crate::hc::document_sha256(&document);
            match Document::from_value(document) {
                Ok(theirs) => {
                    findings.discovered = Some(theirs);
                    findings.discovery = Discovery::Described { sha256 };
                }
                Err(why) => findings.add(Difference::new(
                    Rule::NotOpenRpc,
                    Group::Unreadable,
                    method,
                    "",
                    format!("the result is {why}: the core claims to describe itself, and cannot be read"),
                )),
            }
        }
        Some(Err(error)) => {
            let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
            findings.discovery = Discovery::NotOffered(code);
            findings
                .guard_notes
                .push("it does not describe itself (no rpc.discover document)".to_owned());
        }
        None => {}
    }
}

/// What `machine.list` answers (contract §8, a model): said in one line,
/// never a difference (a core without machines is a core without it).
async fn machines(probe: &mut Probe, findings: &mut Findings) {
    let method = Ask::Machines.method();
    *findings.calls.entry(method).or_default() += 1;
    let (id, received) = probe.ask(Ask::Machines, json!({})).await;
    let Some(reply) = replies::received_json(method, received, findings) else {
        return;
    };
    findings.machines = Some(match replies::envelope(method, id, reply, findings) {
        Some(Ok(result)) => match serde_json::from_value::<wire::MachineListResult>(result) {
            Ok(listed) => {
                let (machines, unreadable) = wire::read_machines(listed);
                let names: Vec<String> = machines
                    .iter()
                    .map(|m| format!("{} {}", crate::escape::printable(&m.name), m.state))
                    .collect();
                format!(
                    "machine.list answered {} machine(s){}{} (contract §8's model: read one entry at a time)",
                    machines.len(),
                    if names.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", names.join(", "))
                    },
                    if unreadable > 0 {
                        format!("; {unreadable} entry(ies) unreadable or named twice")
                    } else {
                        String::new()
                    }
                )
            }
            Err(e) => format!(
                "machine.list answered in another shape than contract §8's model ({}): the adapter shows no machines of this core, and sends nothing to a NAME/tN terminal",
                crate::escape::bounded(&e.to_string(), 200)
            ),
        },
        Some(Err(error)) => format!(
            "machine.list not offered (error {}): this core adds no machines, as far as the adapter can tell",
            error
                .get("code")
                .and_then(Value::as_i64)
                .map_or("?".to_owned(), |c| c.to_string())
        ),
        None => return,
    });
}

/// The error a core gives for a method it does not have.
async fn unknown_method(probe: &mut Probe, findings: &mut Findings) {
    let method = Ask::Unknown.method();
    *findings.calls.entry(method).or_default() += 1;
    let (id, received) = probe.ask(Ask::Unknown, json!({})).await;
    let Some(reply) = replies::received_json(method, received, findings) else {
        return;
    };
    match replies::envelope(method, id, reply, findings) {
        Some(Err(error)) => {
            const METHOD_NOT_FOUND: i64 = -32601;
            replies::error_object(method, &error, Some(METHOD_NOT_FOUND), findings);
        }
        Some(Ok(_)) => findings.add(Difference::new(
            Rule::ErrorShape,
            Group::ErrorShape,
            method,
            "",
            "a method no core has was answered with a result".to_owned(),
        )),
        None => {}
    }
}
