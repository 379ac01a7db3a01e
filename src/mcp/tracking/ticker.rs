//! The one look at hc's terminals per tick that fleet waits and resource
//! subscriptions share: while anyone follows it, it lists hc (finished
//! terminals too) every `poll` and hands each look to every follower; with
//! the last follower gone it stops, so nothing polls hc while nobody
//! watches. However many waits run, hc sees one `terminal.list` a tick.

use crate::lock::held;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::watch;
use tokio::time::MissedTickBehavior;

use super::changes::Look;
use crate::app::App;
use crate::hc::wire::{MachineRecord, TerminalRecord};
use crate::hc::{CoreError, CoreId};

/// One look at hc.
#[derive(Debug)]
pub(crate) struct Sighting {
    /// The core that answered.
    pub core: CoreId,
    /// Every terminal it listed, in its order (those of machines the
    /// config does not show left out).
    pub terminals: Vec<TerminalRecord>,
    /// The machines it listed right after, shown ones only; `None` from a
    /// core without `machine.list`.
    pub machines: Option<Vec<MachineRecord>>,
    /// Wall-clock ms when the listing was asked: it shows everything known
    /// before then.
    pub asked_ms: u64,
}

impl Sighting {
    /// One look at hc now, as a wait polls: its terminals, then its
    /// machines (in that order: a machine that goes down between the two
    /// shows its terminals once more, never calls them gone).
    pub(crate) async fn now(app: &App) -> Result<Sighting, CoreError> {
        let asked_ms = wall_ms();
        let listed = app.poll_list(true).await?;
        let machines = app.poll_machines().await?;
        Ok(Sighting {
            core: listed.core.core_id.clone(),
            terminals: listed.value.terminals,
            machines,
            asked_ms,
        })
    }

    /// This look, as the changes judge it.
    pub(crate) fn look<'a>(&'a self, in_scope: &'a dyn Fn(&TerminalRecord) -> bool) -> Look<'a> {
        Look {
            terminals: &self.terminals,
            in_scope,
            machines: self.machines.as_deref(),
            listed_ms: self.asked_ms,
        }
    }
}

/// The latest look.
#[derive(Debug, Clone, Default)]
pub(crate) enum Tick {
    /// None yet.
    #[default]
    Nothing,
    Seen(Arc<Sighting>),
    /// hc could not be listed on the latest tick.
    Failed,
}

struct Shared {
    latest: watch::Sender<Tick>,
    running: Mutex<bool>,
}

/// The shared look; clones share it.
#[derive(Clone)]
pub(crate) struct Ticker {
    shared: Arc<Shared>,
    poll: Duration,
}

impl Ticker {
    /// A ticker that lists hc every `poll` while followed.
    pub(crate) fn new(poll: Duration) -> Ticker {
        Ticker {
            shared: Arc::new(Shared {
                latest: watch::Sender::new(Tick::Nothing),
                running: Mutex::new(false),
            }),
            poll,
        }
    }

    /// Every look from now on (and the latest one, already seen or not),
    /// the ticker listing hc while the receiver lives.
    pub(crate) fn follow(&self, app: &Arc<App>) -> watch::Receiver<Tick> {
        let mut running = held(&self.shared.running);
        let receiver = self.shared.latest.subscribe();
        if !*running {
            *running = true;
            // A look left from an earlier run is stale.
            self.shared.latest.send_replace(Tick::Nothing);
            tokio::spawn(run(Arc::clone(&self.shared), Arc::clone(app), self.poll));
        }
        receiver
    }
}

async fn run(shared: Arc<Shared>, app: Arc<App>, poll: Duration) {
    let mut ticks = tokio::time::interval(poll);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        {
            let mut running = held(&shared.running);
            if shared.latest.receiver_count() == 0 {
                *running = false;
                return;
            }
        }
        let tick = match Sighting::now(&app).await {
            Ok(sighting) => Tick::Seen(Arc::new(sighting)),
            Err(e) => {
                tracing::debug!(error = %e, "hc could not be listed this tick");
                Tick::Failed
            }
        };
        shared.latest.send_replace(tick);
    }
}

/// Milliseconds since the Unix epoch now.
pub(crate) fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
