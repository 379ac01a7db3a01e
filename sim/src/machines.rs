//! Machines (contract §8, a model from public clients): the other cores
//! this core added, each reached over a real hc connection. A connected
//! machine's terminals are listed as `NAME/tN` with `machine: NAME` (from
//! records its link refreshes every 100 ms), and `terminal.get/read/send`
//! on them are forwarded to that core, which applies its own rules; this
//! core only refuses what cannot be forwarded (`machine_unavailable`) and
//! says when a forwarded call was cut (`machine_lost`). A name is not an
//! identity: the control socket can remove a machine and add another core
//! under the same name, and a forwarded call goes only to the core whose
//! hello matches the one `machine.list` shows.

mod forward;
mod link;
mod monitor;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;

use crate::clock::unix_ms;
use crate::wire::RpcError;
use link::Peer;

/// The longest machine name (contract §8).
const MAX_NAME_CHARS: usize = 32;
/// How long a start (or `machine.add`) waits for each machine's first
/// connection attempt, so a ready core shows its machines connected.
const SETTLE_WAIT: Duration = Duration::from_secs(5);
/// How long a forwarded call may take to connect and greet the machine.
const OPEN_WAIT: Duration = Duration::from_secs(2);

/// `--machine NAME=SOCKET`: a machine to add at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineSpec {
    pub name: String,
    pub socket: PathBuf,
}

impl std::str::FromStr for MachineSpec {
    type Err = String;

    fn from_str(spec: &str) -> Result<MachineSpec, String> {
        let (name, socket) = spec
            .split_once('=')
            .ok_or_else(|| format!("`{spec}` is not NAME=SOCKET"))?;
        check_name(name)?;
        if socket.is_empty() {
            return Err(format!("machine `{name}` has no socket path"));
        }
        Ok(MachineSpec {
            name: name.to_owned(),
            socket: PathBuf::from(socket),
        })
    }
}

/// A machine name is 1–32 characters of `a-z 0-9 - _ .`.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c);
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS || !name.chars().all(allowed) {
        return Err(format!(
            "machine name `{name}`: use 1–{MAX_NAME_CHARS} characters of a-z 0-9 - _ ."
        ));
    }
    Ok(())
}

/// A machine's connection state as `machine.list` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Connected,
    Connecting,
    Disconnected,
}

impl State {
    fn name(self) -> &'static str {
        match self {
            State::Connected => "connected",
            State::Connecting => "connecting",
            State::Disconnected => "disconnected",
        }
    }
}

/// What the operator asked of a machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Connected,
    Disconnected,
    Removed,
}

/// What this core knows of a machine now.
#[derive(Debug)]
struct Shown {
    state: State,
    since_ms: u64,
    peer: Option<Peer>,
    /// The machine's own records (its addresses), finished ones included.
    records: Vec<Value>,
}

/// One machine: its socket, what is shown of it, and the signals its
/// link task and forwarded calls watch.
pub(crate) struct Machine {
    name: String,
    socket: PathBuf,
    shown: Mutex<Shown>,
    want: watch::Sender<Want>,
    /// Bumped whenever the link goes: forwarded calls in flight are cut.
    cut: watch::Sender<u64>,
    /// Connection attempts so far (for the start-up wait).
    attempts: watch::Sender<u64>,
    /// How long the next connection shows `connected` before the
    /// machine's terminals are listed (control `machine.connect`).
    listing_lag: Mutex<Duration>,
}

impl Machine {
    fn new(spec: &MachineSpec) -> Machine {
        Machine {
            name: spec.name.clone(),
            socket: spec.socket.clone(),
            shown: Mutex::new(Shown {
                state: State::Connecting,
                since_ms: unix_ms(),
                peer: None,
                records: Vec::new(),
            }),
            want: watch::Sender::new(Want::Connected),
            cut: watch::Sender::new(0),
            attempts: watch::Sender::new(0),
            listing_lag: Mutex::new(Duration::ZERO),
        }
    }

    fn shown(&self) -> MutexGuard<'_, Shown> {
        self.shown
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn connected(&self, peer: Peer) {
        if *self.want.borrow() == Want::Connected {
            let mut shown = self.shown();
            shown.state = State::Connected;
            shown.since_ms = unix_ms();
            shown.peer = Some(peer);
        }
        self.attempted();
    }

    /// The lag before the first listing of this connection, once.
    fn take_listing_lag(&self) -> Duration {
        std::mem::take(
            &mut self
                .listing_lag
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }

    fn attempted(&self) {
        self.attempts.send_modify(|attempts| *attempts += 1);
    }

    fn refreshed(&self, records: Vec<Value>) {
        let mut shown = self.shown();
        if shown.state == State::Connected {
            shown.records = records;
        }
    }

    /// The link is gone (broken, or disconnected by the operator): calls in
    /// flight are cut and the machine's records are no longer listed.
    fn disconnected(&self) {
        {
            let mut shown = self.shown();
            if shown.state != State::Disconnected {
                shown.state = State::Disconnected;
                shown.since_ms = unix_ms();
            }
            shown.peer = None;
            shown.records.clear();
        }
        self.cut.send_modify(|cut| *cut += 1);
    }

    /// The `machine.list` entry: `core_id` and `version` only while
    /// connected.
    fn entry(&self) -> Value {
        let shown = self.shown();
        let mut entry = json!({
            "name": self.name,
            "state": shown.state.name(),
            "since_ms": shown.since_ms,
        });
        if let Some(peer) = &shown.peer {
            entry["core_id"] = json!(peer.core_id);
            entry["version"] = json!(peer.version);
        }
        entry
    }
}

/// The machines of one core.
pub struct Machines {
    machines: Mutex<BTreeMap<String, Arc<Machine>>>,
    /// Entries listed for machines this core only plays (the evidence
    /// core's `machine`, whose terminal runs here): listed, never linked.
    played: Mutex<Vec<Value>>,
    /// The version this core greets machines as.
    version: String,
}

impl Machines {
    pub(crate) fn new(version: &str) -> Machines {
        Machines {
            machines: Mutex::default(),
            played: Mutex::default(),
            version: version.to_owned(),
        }
    }

    fn map(&self) -> MutexGuard<'_, BTreeMap<String, Arc<Machine>>> {
        self.machines
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn get(&self, name: &str) -> Option<Arc<Machine>> {
        self.map().get(name).cloned()
    }

    /// Adds a machine and waits (up to 5 s) for its first connection
    /// attempt. Must run inside the core's runtime.
    pub(crate) async fn add(&self, spec: &MachineSpec) -> Result<Value, RpcError> {
        check_name(&spec.name).map_err(RpcError::invalid_params)?;
        let machine = {
            let mut map = self.map();
            if map.contains_key(&spec.name) {
                return Err(RpcError::invalid_params(format!(
                    "machine `{}` exists; remove it first",
                    spec.name
                )));
            }
            let machine = Arc::new(Machine::new(spec));
            map.insert(spec.name.clone(), Arc::clone(&machine));
            machine
        };
        tokio::spawn(monitor::run(Arc::clone(&machine), self.version.clone()));
        let mut attempts = machine.attempts.subscribe();
        let _ = tokio::time::timeout(SETTLE_WAIT, attempts.wait_for(|&n| n > 0)).await;
        Ok(machine.entry())
    }

    /// Disconnects a machine: its link is closed, calls in flight cut, and
    /// it stays disconnected until `connect`.
    pub(crate) fn disconnect(&self, name: &str) -> Result<Value, RpcError> {
        let machine = self.known(name)?;
        machine.want.send_replace(Want::Disconnected);
        machine.disconnected();
        Ok(machine.entry())
    }

    /// Lets a disconnected machine connect again; returns once it is
    /// connected, or after the first attempt failed. For `lag` after it
    /// connects, the machine shows `connected` with no terminals listed.
    pub(crate) async fn connect(&self, name: &str, lag: Duration) -> Result<Value, RpcError> {
        let machine = self.known(name)?;
        if *machine.want.borrow() != Want::Connected {
            *machine
                .listing_lag
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) = lag;
            {
                let mut shown = machine.shown();
                shown.state = State::Connecting;
                shown.since_ms = unix_ms();
            }
            let mut attempts = machine.attempts.subscribe();
            attempts.borrow_and_update();
            machine.want.send_replace(Want::Connected);
            let _ = tokio::time::timeout(SETTLE_WAIT, attempts.changed()).await;
        }
        Ok(machine.entry())
    }

    /// Removes a machine: its name becomes free for another core.
    pub(crate) fn remove(&self, name: &str) -> Result<Value, RpcError> {
        let machine = self
            .map()
            .remove(name)
            .ok_or_else(|| unknown_machine(name))?;
        machine.want.send_replace(Want::Removed);
        machine.disconnected();
        Ok(machine.entry())
    }

    /// Ends every link (the core is shutting down).
    pub(crate) fn stop(&self) {
        for machine in std::mem::take(&mut *self.map()).into_values() {
            machine.want.send_replace(Want::Removed);
            machine.disconnected();
        }
    }

    fn known(&self, name: &str) -> Result<Arc<Machine>, RpcError> {
        self.get(name).ok_or_else(|| unknown_machine(name))
    }

    /// Lists `entry` as a machine this core plays (`--evidence`).
    pub(crate) fn play(&self, entry: Value) {
        self.played
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(entry);
    }

    /// The `machine.list` result, sorted by name.
    pub(crate) fn list(&self) -> Value {
        let mut machines: Vec<Value> = self.map().values().map(|machine| machine.entry()).collect();
        machines.extend(
            self.played
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .iter()
                .cloned(),
        );
        machines.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        json!({ "machines": machines })
    }

    /// The records of every connected machine, as this core lists them:
    /// `NAME/tN`, `machine: NAME`, the rest as that core reports it. A
    /// machine's own machines are not listed again.
    pub(crate) fn records(&self, include_finished: bool) -> Vec<Value> {
        let machines: Vec<_> = self.map().values().cloned().collect();
        let mut listed = Vec::new();
        for machine in machines {
            let shown = machine.shown();
            if shown.state != State::Connected {
                continue;
            }
            for record in &shown.records {
                let Some(address) = record.get("address").and_then(Value::as_str) else {
                    continue;
                };
                let nested = address.contains('/')
                    || record
                        .get("machine")
                        .is_some_and(|machine| !machine.is_null());
                let finished = record.get("finished_ms").is_some_and(|ms| !ms.is_null());
                if nested || (finished && !include_finished) {
                    continue;
                }
                let mut record = record.clone();
                record["address"] = json!(format!("{}/{address}", machine.name));
                record["machine"] = json!(machine.name);
                listed.push(record);
            }
        }
        listed
    }
}

fn unknown_machine(name: &str) -> RpcError {
    RpcError::invalid_params(format!("no machine `{name}` on this core"))
}
