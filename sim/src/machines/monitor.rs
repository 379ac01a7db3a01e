//! One machine's link, kept by its own task: connect and greet, then
//! refresh the machine's terminal records over the same connection until it
//! breaks or the machine is disconnected or removed; reconnect after a
//! break. Forwarded calls use connections of their own (`super::forward`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;

use super::link::{Answer, Link};
use super::{Machine, Want};
use crate::wire::Method;

/// How often a connected machine's records are refreshed: the lag of a
/// remote status in `terminal.list`.
const REFRESH: Duration = Duration::from_millis(100);
/// How long a connection attempt (connect and hello) may take.
const OPEN_WAIT: Duration = Duration::from_secs(2);
/// How long a refresh may take before the link counts as broken.
const LIST_WAIT: Duration = Duration::from_secs(3);
/// The pause between connection attempts while a machine is down.
const RETRY: Duration = Duration::from_millis(200);

/// Runs until the machine is removed (or the core shuts down).
pub(super) async fn run(machine: Arc<Machine>, version: String) {
    let mut want = machine.want.subscribe();
    loop {
        let wanted = *want.borrow_and_update();
        match wanted {
            Want::Removed => return,
            Want::Disconnected => {
                if want.changed().await.is_err() {
                    return;
                }
                continue;
            }
            Want::Connected => {}
        }
        let socket = machine.socket.clone();
        match tokio::time::timeout(OPEN_WAIT, Link::open(&socket, &version)).await {
            Ok(Ok((link, peer))) => {
                machine.connected(peer);
                keep(&machine, link, &mut want).await;
                machine.disconnected();
            }
            Ok(Err(_)) | Err(_) => {
                machine.attempted();
                tokio::select! {
                    () = tokio::time::sleep(RETRY) => {}
                    changed = want.changed() => if changed.is_err() { return },
                }
            }
        }
    }
}

/// Refreshes the records until the link breaks or the machine is no longer
/// wanted connected.
async fn keep(machine: &Machine, mut link: Link, want: &mut watch::Receiver<Want>) {
    let mut pause = machine.take_listing_lag();
    loop {
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            changed = want.changed() => {
                if changed.is_err() || *want.borrow() != Want::Connected {
                    return;
                }
            }
        }
        pause = REFRESH;
        let params = json!({ "include_finished": true });
        let refreshed = tokio::time::timeout(LIST_WAIT, link.call(Method::List.name(), params));
        match refreshed.await {
            Ok(Ok(Answer::Result(result))) => {
                let records = match result.get("terminals") {
                    Some(Value::Array(records)) => records.clone(),
                    _ => return,
                };
                machine.refreshed(records);
            }
            _ => return,
        }
    }
}
