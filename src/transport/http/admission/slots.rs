//! Connection slots, split by whether a connection has proven itself.
//!
//! Nothing at accept time tells an authorised client from a flood of idle
//! sockets, so every connection starts *unproven* and becomes *proven* when
//! one of its requests passes the bearer check. The accept loop never stops
//! accepting (a stopped loop leaves an authorised client's connection in
//! the kernel's backlog behind the flood); instead, unproven connections
//! share [`Bounds::share`] slots, and a newcomer to a full share pushes out the
//! oldest *idle* unproven connection (no request being served, no unread
//! bytes in its socket) that has had [`GRACE`] to send its request. When
//! none has, the share stretches, up to [`Bounds::hard`]; there, the
//! oldest idle one goes whatever its age, and only if every unproven
//! connection is busy is the newcomer closed at once. A client that sends
//! its request as it connects (as every real one does) is therefore never
//! cut before it is answered, while idle sockets hold slots only until a
//! newer connection needs them (or the header read timeout closes them).
//! Proven connections are never pushed out: only token holders make them,
//! and each is closed once idle for the header read timeout. Both bounds
//! shrink when the process may open few descriptors (`Bounds`), and when
//! descriptors run out all the same the accept loop pushes out the oldest
//! idle unproven connection ([`Slots::shed_idle`]).
//!
//! A connection whose request waits on the identity provider (an opaque
//! token being introspected, an unknown kid's key set being fetched) has
//! proven nothing either, so it counts as idle too: a crowd of made-up
//! tokens and a slow IdP never hold slots an authorised client needs.
//! When, at the bound, not one unproven connection is idle, a newcomer
//! still gets one of [`Bounds::reserve`] slots, on which only a credential
//! checked without the IdP (the static token, a JWT whose key is known)
//! is accepted: anything else there is refused at once (503).
//!
//! A refused connection is idle from the moment it is refused, whatever
//! its socket holds (its body is never read), so it is first in line too.
//! While unproven connections fill their share, its socket is also *parked*
//! after the answer rather than closed ([`Slot::park`]): a crowd that is
//! refused and replaced as it closes would otherwise reconnect as fast as it
//! is answered and keep the kernel's accept queue full, and an authorised
//! client's connection would wait a second for its dropped SYN to be sent
//! again (measured: 25 of 32 not served within 1 s beside 1,200 such
//! sockets). Parked, the crowd waits until a newcomer pushes one of its
//! sockets out (at the bound, a parked socket, answered already, goes
//! before any connection still owed an answer).

use crate::lock::held;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::socket::{bytes_waiting, reset_on_close};

/// Unproven connections kept while an idle one can be pushed out, when
/// descriptors allow.
pub(crate) const UNPROVEN_SLOTS: usize = 256;
/// Unproven connections at most (bounds memory under a flood).
pub(crate) const UNPROVEN_HARD_LIMIT: usize = 4 * UNPROVEN_SLOTS;
/// How long the accept loop waits for pushed-out connections to close
/// when, counting them, the descriptors for connections are all in use.
const LEAVING_WAIT: Duration = Duration::from_millis(100);
/// Descriptors kept for all but unproven connections (the pool, the
/// listener, logs, authorised clients), at most half the limit.
const RESERVED_FDS: u64 = 64;
/// How long a new connection has to send its request before, idle, it is
/// first in line to make room. A real client writes as it connects.
pub(crate) const GRACE: Duration = Duration::from_millis(250);
/// Slots past the bound for a newcomer when no unproven connection can be
/// pushed out; only a credential checked without the IdP is accepted there.
pub(crate) const RESERVE_SLOTS: usize = 32;

/// How many unproven connections may be open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// Kept while an idle one past its grace can be pushed out.
    pub share: usize,
    /// At most, reserve slots aside.
    pub hard: usize,
    /// Past `hard`, for credentials checked without the IdP only.
    pub reserve: usize,
    /// Unproven connections, open or pushed out and still closing, that
    /// the descriptors allow; at least `hard + reserve`.
    pub capacity: usize,
}

impl Bounds {
    /// The bounds for a process that may open `fd_limit` descriptors: each
    /// connection holds one, and some are kept for everything else.
    pub(crate) fn for_descriptors(fd_limit: u64) -> Bounds {
        let reserved = RESERVED_FDS.min(fd_limit / 2);
        let capacity = usize::try_from(fd_limit - reserved).unwrap_or(usize::MAX);
        let reserve = (capacity / 32).clamp(1, RESERVE_SLOTS);
        let hard = (capacity - reserve.min(capacity)).clamp(4, UNPROVEN_HARD_LIMIT);
        Bounds {
            share: (hard / 4).max(1),
            hard,
            reserve,
            capacity: capacity.max(hard + reserve),
        }
    }
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            share: UNPROVEN_SLOTS,
            hard: UNPROVEN_HARD_LIMIT,
            reserve: RESERVE_SLOTS,
            capacity: usize::MAX,
        }
    }
}

#[derive(Default)]
pub(crate) struct Slots {
    inner: Mutex<Inner>,
    limits: Bounds,
    /// Signalled whenever a connection's slot is released.
    released: Notify,
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    /// Oldest first.
    unproven: VecDeque<Arc<State>>,
    /// Pushed out, but still holding descriptors until their task ends.
    leaving: usize,
    proven: usize,
}

/// What the slots know of one connection.
struct State {
    id: u64,
    accepted: Instant,
    /// The connection's socket (the same descriptor hyper serves), to see
    /// whether bytes wait on it; a parked one stays open through it.
    socket: Arc<TcpStream>,
    /// A request of this connection is being served.
    busy: AtomicBool,
    /// A request of this connection was refused: it is read no further.
    refused: AtomicBool,
    /// Refused, answered, and held open only to slow its client down.
    parked: AtomicBool,
    /// Its request waits on the identity provider: it has proven nothing.
    waiting_on_idp: AtomicBool,
    /// Admitted past the bound: only a credential checked without the IdP
    /// is accepted on it.
    reserve: bool,
    /// Cancelled when the connection is pushed out.
    evicted: CancellationToken,
}

impl Inner {
    /// Pushes out the unproven connection at `at`: it closes with a reset
    /// (an idle socket that never sent a request is owed no orderly close,
    /// and leaves no TIME_WAIT behind under a flood's churn).
    fn push_out(&mut self, at: usize) {
        let idle = self
            .unproven
            .remove(at)
            .expect("a connection at that place");
        reset_on_close(&idle.socket);
        idle.evicted.cancel();
        self.leaving += 1;
    }
}

impl State {
    /// Refused (its answer is on its way, and its body is never read), its
    /// request waiting on the IdP, or no request in service and nothing
    /// unread in the socket (or the peer has gone).
    fn is_idle(&self) -> bool {
        self.refused.load(Ordering::SeqCst)
            || self.waiting_on_idp.load(Ordering::SeqCst)
            || (!self.busy.load(Ordering::SeqCst) && !bytes_waiting(&self.socket))
    }

    fn is_parked(&self) -> bool {
        self.parked.load(Ordering::SeqCst)
    }
}

/// One connection's place; released when dropped.
pub(crate) struct Slot {
    slots: Arc<Slots>,
    state: Arc<State>,
    proven: AtomicBool,
}

impl Slots {
    pub(crate) fn new(limits: Bounds) -> Slots {
        Slots {
            limits,
            ..Slots::default()
        }
    }

    /// Waits (at most [`LEAVING_WAIT`]) while connections pushed out still
    /// hold their descriptors and, counting them, the descriptors for
    /// connections are all in use: a flood's churn cannot outrun the closes
    /// and exhaust the descriptors an authorised client needs.
    pub(crate) async fn room(&self) {
        let deadline = Instant::now() + LEAVING_WAIT;
        loop {
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            {
                let inner = held(&self.inner);
                if inner.leaving == 0 || inner.unproven.len() + inner.leaving < self.limits.capacity
                {
                    return;
                }
            }
            if tokio::time::timeout_at(deadline, released).await.is_err() {
                return;
            }
        }
    }

    /// A slot for a newly accepted connection on `socket`, making room
    /// first; `None` when the connection must be closed at once.
    pub(crate) fn admit(self: &Arc<Self>, socket: &Arc<TcpStream>) -> Option<Arc<Slot>> {
        let socket = Arc::clone(socket);
        let now = Instant::now();
        let mut inner = held(&self.inner);
        let open = inner.unproven.len();
        let mut reserve = false;
        if open >= self.limits.share {
            // A parked socket (answered already) goes first, then the
            // oldest idle one past its grace; at the bound, any idle one;
            // if every unproven connection is busy, the newcomer is closed.
            let idle_past_grace = |s: &Arc<State>| now - s.accepted >= GRACE && s.is_idle();
            let victim = inner
                .unproven
                .iter()
                .position(|s| s.is_parked())
                .or_else(|| inner.unproven.iter().position(idle_past_grace));
            let victim = match victim {
                Some(at) => Some(at),
                None if open >= self.limits.hard => {
                    match inner.unproven.iter().position(|s| s.is_idle()) {
                        Some(at) => Some(at),
                        None if open < self.limits.hard + self.limits.reserve => {
                            reserve = true;
                            None
                        }
                        None => return None,
                    }
                }
                None => None,
            };
            if let Some(at) = victim {
                inner.push_out(at);
            }
        }
        inner.next_id += 1;
        let state = Arc::new(State {
            id: inner.next_id,
            accepted: now,
            socket,
            busy: AtomicBool::new(false),
            refused: AtomicBool::new(false),
            parked: AtomicBool::new(false),
            waiting_on_idp: AtomicBool::new(false),
            reserve,
            evicted: CancellationToken::new(),
        });
        inner.unproven.push_back(Arc::clone(&state));
        Some(Arc::new(Slot {
            slots: Arc::clone(self),
            state,
            proven: AtomicBool::new(false),
        }))
    }

    /// Pushes out the oldest parked connection, or else the oldest idle
    /// unproven one, whatever its age (descriptors ran out); whether there
    /// was one.
    pub(crate) fn shed_idle(&self) -> bool {
        let mut inner = held(&self.inner);
        let parked = inner.unproven.iter().position(|s| s.is_parked());
        let Some(at) = parked.or_else(|| inner.unproven.iter().position(|s| s.is_idle())) else {
            return false;
        };
        inner.push_out(at);
        true
    }

    /// (unproven, proven) connections open now.
    #[cfg(test)]
    fn counts(&self) -> (usize, usize) {
        let inner = held(&self.inner);
        (inner.unproven.len(), inner.proven)
    }
}

impl Slot {
    /// Resolves when the connection is pushed out.
    pub(crate) async fn evicted(&self) {
        self.state.evicted.cancelled().await;
    }

    /// Marks a request in service (`true`) or answered (`false`).
    pub(crate) fn set_busy(&self, busy: bool) {
        self.state.busy.store(busy, Ordering::SeqCst);
    }

    /// Marks the connection's request as waiting on the identity provider
    /// (`true`) or not: while it waits it can be pushed out like an idle one.
    pub(crate) fn set_waiting_on_idp(&self, waiting: bool) {
        self.state.waiting_on_idp.store(waiting, Ordering::SeqCst);
    }

    /// Whether this connection holds a reserve slot, where only a
    /// credential checked without the IdP is accepted.
    pub(crate) fn is_reserve(&self) -> bool {
        self.state.reserve && !self.proven.load(Ordering::SeqCst)
    }

    /// A request of this connection was refused: it is no longer busy, and
    /// it can be pushed out whatever its socket holds.
    pub(crate) fn refuse(&self) {
        self.state.refused.store(true, Ordering::SeqCst);
        self.set_busy(false);
    }

    /// Called once the connection's answer is written: parks it (first to
    /// be pushed out) and says so if it was refused, is unproven, and
    /// unproven connections fill their share; its socket should then stay
    /// open, idle, until pushed out (or the header read timeout).
    pub(crate) fn park(&self) -> bool {
        if !self.state.refused.load(Ordering::SeqCst) || self.proven.load(Ordering::SeqCst) {
            return false;
        }
        let inner = held(&self.slots.inner);
        let crowded = inner.unproven.len() >= self.slots.limits.share;
        if crowded {
            self.state.parked.store(true, Ordering::SeqCst);
        }
        crowded
    }

    /// The connection sent an authenticated request: it can no longer be
    /// pushed out (one already pushed out stays on its way out).
    pub(crate) fn prove(&self) {
        if self.proven.load(Ordering::SeqCst) {
            return;
        }
        let mut inner = held(&self.slots.inner);
        if let Some(at) = inner.unproven.iter().position(|s| s.id == self.state.id) {
            inner.unproven.remove(at);
            inner.proven += 1;
            self.proven.store(true, Ordering::SeqCst);
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut inner = held(&self.slots.inner);
        if self.proven.load(Ordering::SeqCst) {
            inner.proven -= 1;
        } else if let Some(at) = inner.unproven.iter().position(|s| s.id == self.state.id) {
            inner.unproven.remove(at);
        } else {
            // It was pushed out, and has now closed.
            inner.leaving = inner.leaving.saturating_sub(1);
        }
        drop(inner);
        self.slots.released.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    //! Tests of the connection slots, on real loopback sockets; grace periods
    //! run on tokio's paused clock.

    use std::io::Write;
    use std::net::{TcpListener, TcpStream as StdStream};

    use super::*;

    /// Loopback connections admitted to one `Slots`, both ends held open.
    struct Bench {
        listener: TcpListener,
        slots: Arc<Slots>,
        /// (the server's end, the client's end) of each connection.
        sockets: Vec<(Arc<TcpStream>, StdStream)>,
    }

    impl Bench {
        fn new(limits: Bounds) -> Bench {
            Bench {
                listener: TcpListener::bind("127.0.0.1:0").unwrap(),
                slots: Arc::new(Slots::new(limits)),
                sockets: Vec::new(),
            }
        }

        /// Connects and admits one more connection.
        fn admit(&mut self) -> Arc<Slot> {
            let client = StdStream::connect(self.listener.local_addr().unwrap()).unwrap();
            let server = self.listener.accept().unwrap().0;
            server.set_nonblocking(true).unwrap();
            let server = Arc::new(TcpStream::from_std(server).unwrap());
            let slot = self.slots.admit(&server).unwrap();
            self.sockets.push((server, client));
            slot
        }

        fn admit_many(&mut self, count: usize) -> Vec<Arc<Slot>> {
            (0..count).map(|_| self.admit()).collect()
        }
    }

    /// Which of `admitted` were pushed out.
    fn pushed_out(admitted: &[Arc<Slot>]) -> Vec<usize> {
        (0..admitted.len())
            .filter(|i| admitted[*i].state.evicted.is_cancelled())
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_share_pushes_out_the_oldest_idle_connection_only() {
        let mut bench = Bench::new(Bounds::default());
        let admitted = bench.admit_many(UNPROVEN_SLOTS);
        // Slot 0 is proven, slot 1 is serving a request, slot 2 has sent
        // bytes not yet read: none of them may go. Slot 3 is idle.
        admitted[0].prove();
        admitted[1].set_busy(true);
        bench.sockets[2].1.write_all(b"POST /mcp").unwrap();
        tokio::time::advance(GRACE).await;
        let newest = bench.admit();
        // The share had room for the newcomer once slot 0 was proven.
        assert_eq!(pushed_out(&admitted), [] as [usize; 0]);
        let last = bench.admit();
        assert_eq!(pushed_out(&admitted), [3]);
        assert!(!newest.state.evicted.is_cancelled() && !last.state.evicted.is_cancelled());
        assert_eq!(bench.slots.counts(), (UNPROVEN_SLOTS, 1));
        drop(admitted);
        drop((newest, last));
        assert_eq!(bench.slots.counts(), (0, 0));
    }

    #[test]
    fn few_descriptors_mean_fewer_unproven_slots() {
        // Plenty: the full bounds.
        let plenty = Bounds::for_descriptors(1 << 20);
        assert_eq!((plenty.share, plenty.hard, plenty.reserve), (256, 1024, 32));
        assert_eq!(plenty.capacity, (1 << 20) - 64);
        let unlimited = Bounds::for_descriptors(u64::MAX);
        assert_eq!((unlimited.share, unlimited.hard), (256, 1024));
        // A common default soft limit: one descriptor per connection, 64 kept;
        // of the 960 left, a 32nd (30) is the reserve.
        assert_eq!(
            Bounds::for_descriptors(1024),
            Bounds {
                share: 232,
                hard: 930,
                reserve: 30,
                capacity: 960
            }
        );
        // Very few: half kept for the rest, one reserve slot.
        assert_eq!(
            Bounds::for_descriptors(64),
            Bounds {
                share: 7,
                hard: 31,
                reserve: 1,
                capacity: 32
            }
        );
        assert_eq!(
            Bounds::for_descriptors(0),
            Bounds {
                share: 1,
                hard: 4,
                reserve: 1,
                capacity: 5
            }
        );
    }

    #[tokio::test]
    async fn at_the_bound_the_accept_loop_waits_for_pushed_out_connections_to_close() {
        let mut bench = Bench::new(Bounds {
            share: 1,
            hard: 2,
            reserve: 0,
            capacity: 2,
        });
        let mut admitted = bench.admit_many(3);
        let slots = Arc::clone(&bench.slots);
        // The third pushed out the first, whose task has not ended yet.
        assert_eq!(pushed_out(&admitted), [0]);
        let early = Duration::from_millis(50);
        assert!(
            tokio::time::timeout(early, slots.room()).await.is_err(),
            "room while the pushed-out connection still holds its socket"
        );
        drop(admitted.remove(0));
        assert!(tokio::time::timeout(early, slots.room()).await.is_ok());
        // Below the bound nothing waits, whatever is leaving.
        admitted[0].prove();
        assert!(slots.shed_idle());
        assert!(tokio::time::timeout(early, slots.room()).await.is_ok());
    }

    #[tokio::test]
    async fn out_of_descriptors_the_oldest_idle_connection_goes_at_once() {
        let mut bench = Bench::new(Bounds::default());
        let mut admitted = bench.admit_many(3);
        let slots = Arc::clone(&bench.slots);
        // Well within its grace, and still the first idle one to go.
        admitted[0].set_busy(true);
        assert!(slots.shed_idle());
        assert_eq!(pushed_out(&admitted), [1]);
        // Once closed, it is reset rather than ended in order.
        let (server, mut client) = bench.sockets.remove(1);
        drop((admitted.remove(1), server));
        let mut buf = [0u8; 1];
        let read = std::io::Read::read(&mut client, &mut buf);
        assert_eq!(
            read.map_err(|e| e.kind()),
            Err(std::io::ErrorKind::ConnectionReset)
        );
        admitted[1].prove();
        assert!(!slots.shed_idle(), "only a busy one is left");
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_on_the_idp_is_idle_and_past_the_bound_a_reserve_slot_is_given() {
        let mut bench = Bench::new(Bounds {
            share: 2,
            hard: 3,
            reserve: 1,
            capacity: 4,
        });
        let admitted = bench.admit_many(3);
        for slot in &admitted {
            slot.set_busy(true);
        }
        // Every unproven connection is serving a request: the newcomer gets
        // the reserve slot, and no one is pushed out.
        let reserved = bench.admit();
        assert!(reserved.is_reserve());
        assert!(!admitted.iter().any(|s| s.is_reserve()));
        assert_eq!(pushed_out(&admitted), [] as [usize; 0]);
        // The reserve is full too: the next newcomer is closed at once...
        reserved.set_busy(true);
        assert!(bench.slots.admit(&bench.sockets[0].0).is_none());
        // ...unless a request waits on the IdP: that connection goes.
        admitted[1].set_waiting_on_idp(true);
        let after = bench.admit();
        assert!(!after.is_reserve());
        assert_eq!(pushed_out(&admitted), [1]);
        // A reserve slot that proves itself is an ordinary proven connection.
        reserved.prove();
        assert!(!reserved.is_reserve());
    }
}
