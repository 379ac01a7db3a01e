//! The one watcher behind resource subscriptions: while anyone is
//! subscribed it follows the shared look at hc (`tracking::ticker`, at
//! the poll of the server's `Pace`, handed in; one `terminal.list` a tick,
//! however many subscribers and waits), compares each subscribed
//! terminal's lifetime, status, `status_seq` and whether it finished with
//! the last tick, and sends `notifications/resources/updated` to each
//! subscriber of one that changed: at most one per terminal per the
//! pace's least gap (changes in between are told once, after the gap). With the
//! last subscriber gone it stops following; nothing polls hc while nobody
//! listens.
//!
//! Subscribers are a legacy session (`resources/subscribe` over stdio,
//! until `resources/unsubscribe` or the session ends) or a 2026-07-28
//! `subscriptions/listen` request (until it is cancelled).

use crate::lock::held;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, SubscriptionSink};
use rmcp::{ErrorData, RoleServer};

mod seats;

use super::uri::address;
use crate::app::App;
use crate::caller::Caller;
use crate::hc::wire::{TerminalRecord, TerminalStatus};
use crate::mcp::tracking::ticker::{Tick, Ticker};
pub(crate) use seats::Seat;
use seats::Seats;

/// Terminals one subscriber may watch.
const MAX_URIS: usize = 256;

/// Where a subscriber's notifications go.
#[derive(Clone)]
pub(crate) enum Sink {
    /// A legacy session's peer.
    Session(Peer<RoleServer>),
    /// A `subscriptions/listen` stream.
    Listen(SubscriptionSink),
}

struct Subscriber {
    uris: HashSet<String>,
    sink: Sink,
    /// Its place among the subscribers, given back when it goes.
    _seat: Arc<Seat>,
}

/// Who subscribes: a session (by its server's id) or one listen request.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) enum SubscriberKey {
    Session(u64),
    Listen(u64),
}

#[derive(Default)]
struct Inner {
    subscribers: HashMap<SubscriberKey, Subscriber>,
    next_listen: u64,
    polling: bool,
    /// What the last look saw of each watched terminal (`None`: no live
    /// terminal at its address): a subscriber's baseline is hc as it was
    /// when it subscribed.
    last: HashMap<String, Option<Seen>>,
}

/// The subscriptions and the watcher's state.
pub(crate) struct Watcher {
    inner: Arc<Mutex<Inner>>,
    /// Kept apart from `inner`: a subscriber dropped under `inner`'s lock
    /// gives its seat back under this one.
    seats: Arc<Mutex<Seats>>,
    ticker: Ticker,
    min_gap: Duration,
}

/// Ends a listen subscription when dropped.
pub(crate) struct Listening {
    inner: Arc<Mutex<Inner>>,
    key: SubscriberKey,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let mut inner = held(&self.inner);
        inner.subscribers.remove(&self.key);
    }
}

/// What a tick sees of one terminal: a status change shows in one of these.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Seen {
    created_ms: i64,
    status: TerminalStatus,
    status_seq: u64,
    finished: bool,
}

impl Seen {
    fn of(t: &TerminalRecord) -> Seen {
        Seen {
            created_ms: t.created_ms,
            status: t.status,
            status_seq: t.status_seq,
            finished: t.is_finished(),
        }
    }
}

impl Watcher {
    /// A watcher that follows `ticker` while someone is subscribed, telling
    /// each change of a terminal at most once per `min_gap`.
    pub(crate) fn new(ticker: Ticker, min_gap: Duration) -> Watcher {
        Watcher {
            inner: Arc::default(),
            seats: Arc::default(),
            ticker,
            min_gap,
        }
    }

    /// A place among the subscribers for one more of `caller`'s, or why
    /// there is none: taken before a listen is acknowledged, so that a
    /// refusal comes first.
    pub(crate) fn seat(&self, caller: &Caller) -> Result<Seat, ErrorData> {
        Seat::take(&self.seats, caller)
    }

    /// `resources/subscribe` of `uri` by the session `session` of `caller`.
    pub(crate) async fn subscribe(
        &self,
        app: &Arc<App>,
        session: u64,
        caller: &Caller,
        peer: Peer<RoleServer>,
        uri: &str,
    ) -> Result<(), ErrorData> {
        let key = SubscriberKey::Session(session);
        let seat = match held(&self.inner).subscribers.contains_key(&key) {
            true => None,
            false => Some(self.seat(caller)?),
        };
        let seen = look(app).await?;
        let mut inner = held(&self.inner);
        seed(&mut inner, &seen, [uri]);
        let subscriber = match (inner.subscribers.entry(key), seat) {
            (Entry::Occupied(entry), _) => entry.into_mut(),
            (Entry::Vacant(entry), Some(seat)) => entry.insert(Subscriber {
                uris: HashSet::new(),
                sink: Sink::Session(peer),
                _seat: Arc::new(seat),
            }),
            // Another subscribe of this session ended meanwhile and took
            // its seat with it: take one again.
            (Entry::Vacant(entry), None) => entry.insert(Subscriber {
                uris: HashSet::new(),
                sink: Sink::Session(peer),
                _seat: Arc::new(self.seat(caller)?),
            }),
        };
        if subscriber.uris.len() >= MAX_URIS && !subscriber.uris.contains(uri) {
            return Err(ErrorData::invalid_request(
                format!("a session watches at most {MAX_URIS} terminals"),
                None,
            ));
        }
        subscriber.uris.insert(uri.to_owned());
        self.start(&mut inner, app);
        Ok(())
    }

    /// `resources/unsubscribe` of `uri` by `session` (not subscribed is no
    /// error).
    pub(crate) fn unsubscribe(&self, session: u64, uri: &str) {
        let mut inner = held(&self.inner);
        let key = SubscriberKey::Session(session);
        if let Some(subscriber) = inner.subscribers.get_mut(&key) {
            subscriber.uris.remove(uri);
            if subscriber.uris.is_empty() {
                inner.subscribers.remove(&key);
            }
        }
    }

    /// A `subscriptions/listen` request watching `uris` in `seat` (taken
    /// before it was acknowledged), until the guard is dropped.
    pub(crate) async fn listen(
        &self,
        app: &Arc<App>,
        seat: Arc<Seat>,
        uris: Vec<String>,
        sink: SubscriptionSink,
    ) -> Result<Listening, ErrorData> {
        let seen = look(app).await?;
        let mut inner = held(&self.inner);
        seed(&mut inner, &seen, uris.iter().map(String::as_str));
        inner.next_listen += 1;
        let key = SubscriberKey::Listen(inner.next_listen);
        let uris = uris.into_iter().take(MAX_URIS).collect();
        inner.subscribers.insert(
            key,
            Subscriber {
                uris,
                sink: Sink::Listen(sink),
                _seat: seat,
            },
        );
        self.start(&mut inner, app);
        Ok(Listening {
            inner: Arc::clone(&self.inner),
            key,
        })
    }

    /// Starts the poller unless it runs.
    fn start(&self, inner: &mut Inner, app: &Arc<App>) {
        if inner.polling {
            return;
        }
        inner.polling = true;
        let ticks = self.ticker.follow(app);
        tokio::spawn(poll(Arc::clone(&self.inner), ticks, self.min_gap));
    }
}

/// One look at hc's terminals (finished ones too, as the ticker lists
/// them), by address.
async fn look(app: &App) -> Result<HashMap<String, Seen>, ErrorData> {
    let listed = app.poll_list(true).await.map_err(|e| {
        ErrorData::internal_error(format!("hc could not be listed to subscribe: {e}"), None)
    })?;
    Ok(by_address(&listed.value.terminals))
}

fn by_address(terminals: &[TerminalRecord]) -> HashMap<String, Seen> {
    terminals
        .iter()
        .map(|t| (t.address.clone(), Seen::of(t)))
        .collect()
}

/// The baseline of each of `uris` nobody watched yet: what `seen` shows.
fn seed<'a>(
    inner: &mut Inner,
    seen: &HashMap<String, Seen>,
    uris: impl IntoIterator<Item = &'a str>,
) {
    for uri in uris {
        if !inner.last.contains_key(uri)
            && let Some(address) = address(uri)
        {
            inner
                .last
                .insert(uri.to_owned(), seen.get(&address).copied());
        }
    }
}

/// The addresses someone watches; `None` (and the poller marked stopped)
/// when nobody does.
fn watched(inner: &Mutex<Inner>) -> Option<HashSet<String>> {
    let mut inner = held(inner);
    // A session whose transport closed is not listening any more.
    inner.subscribers.retain(|_, s| match &s.sink {
        Sink::Session(peer) => !peer.is_transport_closed(),
        Sink::Listen(_) => true,
    });
    if inner.subscribers.is_empty() {
        inner.polling = false;
        inner.last.clear();
        return None;
    }
    Some(
        inner
            .subscribers
            .values()
            .flat_map(|s| s.uris.iter().cloned())
            .collect(),
    )
}

async fn poll(inner: Arc<Mutex<Inner>>, mut ticks: watch::Receiver<Tick>, min_gap: Duration) {
    let mut told: HashMap<String, Instant> = HashMap::new();
    let mut owed: HashSet<String> = HashSet::new();
    // The look the ticker had when following began is no news.
    ticks.mark_unchanged();
    loop {
        if ticks.changed().await.is_err() {
            return;
        }
        let Some(uris) = watched(&inner) else { return };
        let Tick::Seen(sighting) = ticks.borrow_and_update().clone() else {
            continue;
        };
        let now = by_address(&sighting.terminals);
        {
            let mut inner = held(&inner);
            inner.last.retain(|uri, _| uris.contains(uri));
            for uri in &uris {
                let Some(address) = address(uri) else {
                    continue;
                };
                let seen = now.get(&address).copied();
                match inner.last.insert(uri.clone(), seen) {
                    Some(before) if before != seen => {
                        owed.insert(uri.clone());
                    }
                    _ => {}
                }
            }
        }
        owed.retain(|uri| uris.contains(uri));
        let due: Vec<String> = owed
            .iter()
            .filter(|uri| told.get(*uri).is_none_or(|at| at.elapsed() >= min_gap))
            .cloned()
            .collect();
        for uri in due {
            owed.remove(&uri);
            told.insert(uri.clone(), Instant::now());
            notify(&inner, &uri).await;
        }
        told.retain(|uri, _| uris.contains(uri));
    }
}

/// Tells every subscriber of `uri`.
async fn notify(inner: &Mutex<Inner>, uri: &str) {
    let sinks: Vec<(SubscriberKey, Sink)> = held(inner)
        .subscribers
        .iter()
        .filter(|(_, s)| s.uris.contains(uri))
        .map(|(key, s)| (*key, s.sink.clone()))
        .collect();
    for (key, sink) in sinks {
        let sent = match &sink {
            Sink::Session(peer) => peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .map_err(|e| e.to_string()),
            Sink::Listen(sink) => sink
                .notify_resource_updated(uri)
                .await
                .map_err(|e| e.to_string()),
        };
        if let Err(e) = sent {
            tracing::debug!(error = %e, "subscriptions: a subscriber is gone");
            held(inner).subscribers.remove(&key);
        }
    }
}
