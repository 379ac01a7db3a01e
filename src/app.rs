//! What every tool call shares below the tools: the core client, the audit
//! record and the config in force. The config is one immutable snapshot ([`Loaded`]),
//! swapped whole on reload and read once per call, so a call never sees
//! half of one config and half of another.

use std::sync::{Arc, RwLock};

use crate::audit::Audit;
use crate::config::{Config, ConfigError, Hidden, MachineScope, TerminalLifetime};
use crate::hc::client::Answer;
use crate::hc::wire::{MachineRecord, TerminalRecord};
use crate::hc::{CoreError, HcClient, Listing, MachineListing};

/// The config a call sees.
#[derive(Debug)]
pub enum Loaded {
    /// The last load was valid: it decides everything.
    Valid(Arc<Config>),
    /// The last reload found an invalid file: sends are refused until a
    /// valid one is loaded; reads go on under the last valid config.
    Refused {
        /// What the reload found wrong with the file.
        why: Arc<ConfigError>,
        /// The last valid config, which still governs reads and waits.
        last_valid: Arc<Config>,
    },
}

impl Loaded {
    /// The config that governs reads (and waits).
    pub fn config(&self) -> &Arc<Config> {
        match self {
            Loaded::Valid(config)
            | Loaded::Refused {
                last_valid: config, ..
            } => config,
        }
    }

    /// The config that decides sends (and what is approved), or why sends
    /// are off.
    pub fn for_sends(&self) -> Result<&Arc<Config>, &Arc<ConfigError>> {
        match self {
            Loaded::Valid(config) => Ok(config),
            Loaded::Refused { why, .. } => Err(why),
        }
    }
}

/// What every tool call shares: the core client, the audit record and the
/// config in force. One per process.
pub struct App {
    client: HcClient,
    audit: Audit,
    loaded: RwLock<Arc<Loaded>>,
}

impl App {
    /// The app with `config` in force, a core client of its socket and timeout,
    /// and `audit`.
    pub fn new(config: Config, audit: Audit) -> App {
        App {
            client: config.hc_client(),
            audit,
            loaded: RwLock::new(Arc::new(Loaded::Valid(Arc::new(config)))),
        }
    }

    /// The client of hc's socket (socket and timeout are fixed at start).
    pub fn client(&self) -> &HcClient {
        &self.client
    }

    /// Where send attempts are recorded.
    pub fn audit(&self) -> &Audit {
        &self.audit
    }

    /// The config in force for a call that starts now.
    pub fn loaded(&self) -> Arc<Loaded> {
        Arc::clone(&crate::lock::read(&self.loaded))
    }

    /// Makes `config` the one in force for calls that start after this,
    /// lifting any refusal.
    pub fn replace_config(&self, config: Config) {
        self.client.accept(config.acceptance());
        self.swap(Loaded::Valid(Arc::new(config)));
    }

    /// Records that a reload found an invalid config: sends stop until a
    /// valid one is loaded.
    pub fn refuse_sends(&self, why: ConfigError) {
        let last_valid = Arc::clone(self.loaded().config());
        self.swap(Loaded::Refused {
            why: Arc::new(why),
            last_valid,
        });
    }

    /// The live terminals approved now (an entry for their core and
    /// lifetime in the config in force), in hc's order; `None` when the
    /// config in force is invalid, so that nothing counts as approved.
    pub(crate) async fn approved_live(&self) -> Result<Option<Vec<TerminalRecord>>, CoreError> {
        let loaded = self.loaded();
        let Ok(config) = loaded.for_sends() else {
            return Ok(None);
        };
        let listed = self.list(false).await?;
        let core = &listed.core.core_id;
        Ok(Some(
            listed
                .value
                .terminals
                .into_iter()
                .filter(|t| !t.is_finished())
                .filter(|t| {
                    config.is_send_approved(
                        core,
                        &TerminalLifetime {
                            address: t.address.clone(),
                            created_ms: t.created_ms,
                        },
                    )
                })
                .collect(),
        ))
    }

    /// What hc lists (reads' share of the pool), without the terminals of
    /// machines the config in force does not show.
    pub(crate) async fn list(&self, include_finished: bool) -> Result<Answer<Listing>, CoreError> {
        let mut listed = self.client.list(include_finished).await?;
        shown_only(self.loaded().config().machines(), &mut listed.value);
        Ok(listed)
    }

    /// [`App::list`], as the poll of a wait (waits' share of the pool).
    pub(crate) async fn poll_list(
        &self,
        include_finished: bool,
    ) -> Result<Answer<Listing>, CoreError> {
        let mut listed = self.client.polls().list(include_finished).await?;
        shown_only(self.loaded().config().machines(), &mut listed.value);
        Ok(listed)
    }

    /// The machines hc lists that the config in force shows (reads'
    /// share); `None` from a core without `machine.list`.
    pub(crate) async fn machines(&self) -> Result<Option<Vec<MachineRecord>>, CoreError> {
        let listed = self.client.machines().await?;
        Ok(self.shown_machines(listed.value))
    }

    /// [`App::machines`], as the poll of a wait.
    pub(crate) async fn poll_machines(&self) -> Result<Option<Vec<MachineRecord>>, CoreError> {
        let listed = self.client.polls().machines().await?;
        Ok(self.shown_machines(listed.value))
    }

    fn shown_machines(&self, listing: Option<MachineListing>) -> Option<Vec<MachineRecord>> {
        let loaded = self.loaded();
        let scope = loaded.config().machines();
        listing.map(|listing| {
            listing
                .machines
                .into_iter()
                .filter(|m| scope.shows(Some(&m.name)))
                .collect()
        })
    }

    /// `Ok` when the terminal at `address` is shown by the config in force
    /// (this core's own always are), else why not: checked before any hc
    /// call about it.
    pub(crate) fn check_shown(&self, address: &str) -> Result<(), Hidden> {
        self.loaded().config().machines().check(address)
    }

    fn swap(&self, loaded: Loaded) {
        *crate::lock::write(&self.loaded) = Arc::new(loaded);
    }
}

/// Keeps of `listing` only the terminals `scope` shows (an unreadable
/// record too, when its address names a hidden machine).
fn shown_only(scope: &MachineScope, listing: &mut Listing) {
    listing
        .terminals
        .retain(|t| scope.shows(t.machine.as_deref()));
    let before = listing.unreadable.len();
    listing
        .unreadable
        .retain(|u| u.address.as_deref().is_none_or(|a| scope.shows_address(a)));
    listing.unreadable_count -= before - listing.unreadable.len();
}
