//! Connection slots, split by whether a connection has proven itself.
//!
//! Nothing at accept time tells an authorised client from a flood of idle
//! sockets, so every connection starts *unproven* and becomes *proven* when
//! one of its requests passes the bearer check. The accept loop never stops
//! accepting (a stopped loop leaves an authorised client's connection in
//! the kernel's backlog behind the flood); instead, unproven connections
//! share [`UNPROVEN_SLOTS`], and a newcomer to a full share pushes out the
//! oldest *idle* unproven connection (no request being served, no unread
//! bytes in its socket) that has had [`GRACE`] to send its request. When
//! none has, the share stretches, up to [`UNPROVEN_HARD_LIMIT`]; there, the
//! oldest idle one goes whatever its age, and only if every unproven
//! connection is busy is the newcomer closed at once. A client that sends
//! its request as it connects (as every real one does) is therefore never
//! cut before it is answered, while idle sockets hold slots only until a
//! newer connection needs them (or the header read timeout closes them).
//! Proven connections are never pushed out: only token holders make them,
//! and each is closed once idle for the header read timeout.

use std::collections::VecDeque;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Unproven connections kept while an idle one can be pushed out.
pub const UNPROVEN_SLOTS: usize = 256;
/// Unproven connections at most (bounds memory under a flood).
pub const UNPROVEN_HARD_LIMIT: usize = 4 * UNPROVEN_SLOTS;
/// How long a new connection has to send its request before, idle, it is
/// first in line to make room. A real client writes as it connects.
pub const GRACE: Duration = Duration::from_millis(250);

#[derive(Default)]
pub struct Slots {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    /// Oldest first.
    unproven: VecDeque<Arc<State>>,
    proven: usize,
}

/// What the slots know of one connection.
struct State {
    id: u64,
    accepted: Instant,
    /// A duplicate of the connection's socket, to see whether bytes wait
    /// on it; closed with the slot, after the connection.
    socket: OwnedFd,
    /// A request of this connection is being served.
    busy: AtomicBool,
    /// Cancelled when the connection is pushed out.
    evicted: CancellationToken,
}

impl State {
    /// No request in service and nothing unread in the socket (or the peer
    /// has gone).
    fn is_idle(&self) -> bool {
        !self.busy.load(Ordering::SeqCst) && !bytes_waiting(self.socket.as_fd())
    }
}

/// One connection's place; released when dropped.
pub struct Slot {
    slots: Arc<Slots>,
    state: Arc<State>,
    proven: AtomicBool,
}

impl Slots {
    /// A slot for a newly accepted connection on `socket` (duplicated, the
    /// caller keeps its own), making room first; `None` when the
    /// connection must be closed at once.
    pub fn admit(self: &Arc<Self>, socket: BorrowedFd<'_>) -> Option<Arc<Slot>> {
        let socket = socket.try_clone_to_owned().ok()?;
        let now = Instant::now();
        let mut inner = self.inner.lock().expect("slots lock");
        let open = inner.unproven.len();
        if open >= UNPROVEN_SLOTS {
            let idle_past_grace = |s: &Arc<State>| now - s.accepted >= GRACE && s.is_idle();
            let victim = match inner.unproven.iter().position(idle_past_grace) {
                Some(at) => Some(at),
                // Every unproven connection busy: this one is closed.
                None if open >= UNPROVEN_HARD_LIMIT => {
                    Some(inner.unproven.iter().position(|s| s.is_idle())?)
                }
                None => None,
            };
            if let Some(at) = victim {
                let idle = inner.unproven.remove(at).expect("found above");
                idle.evicted.cancel();
            }
        }
        inner.next_id += 1;
        let state = Arc::new(State {
            id: inner.next_id,
            accepted: now,
            socket,
            busy: AtomicBool::new(false),
            evicted: CancellationToken::new(),
        });
        inner.unproven.push_back(Arc::clone(&state));
        Some(Arc::new(Slot {
            slots: Arc::clone(self),
            state,
            proven: AtomicBool::new(false),
        }))
    }

    /// (unproven, proven) connections open now.
    #[cfg(test)]
    fn counts(&self) -> (usize, usize) {
        let inner = self.inner.lock().expect("slots lock");
        (inner.unproven.len(), inner.proven)
    }
}

impl Slot {
    /// Resolves when the connection is pushed out.
    pub async fn evicted(&self) {
        self.state.evicted.cancelled().await;
    }

    /// Marks a request in service (`true`) or answered (`false`).
    pub fn set_busy(&self, busy: bool) {
        self.state.busy.store(busy, Ordering::SeqCst);
    }

    /// The connection sent an authenticated request: it can no longer be
    /// pushed out.
    pub fn prove(&self) {
        if self.proven.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut inner = self.slots.inner.lock().expect("slots lock");
        if let Some(at) = inner.unproven.iter().position(|s| s.id == self.state.id) {
            inner.unproven.remove(at);
        }
        inner.proven += 1;
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut inner = self.slots.inner.lock().expect("slots lock");
        if self.proven.load(Ordering::SeqCst) {
            inner.proven -= 1;
        } else if let Some(at) = inner.unproven.iter().position(|s| s.id == self.state.id) {
            inner.unproven.remove(at);
        }
    }
}

/// Whether unread bytes wait on `socket`, asked of the kernel without
/// consuming them.
fn bytes_waiting(socket: BorrowedFd<'_>) -> bool {
    let mut probe = [0u8; 1];
    // SAFETY: `socket` is an open descriptor for the whole call; `probe` is
    // a valid 1-byte buffer; MSG_PEEK consumes nothing and MSG_DONTWAIT
    // never blocks.
    let peeked = unsafe {
        libc::recv(
            socket.as_raw_fd(),
            probe.as_mut_ptr().cast(),
            probe.len(),
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    peeked > 0
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};

    use super::*;

    /// A connected pair: (the server's end, the client's end).
    fn pair(listener: &TcpListener) -> (TcpStream, TcpStream) {
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        (listener.accept().unwrap().0, client)
    }

    #[test]
    fn a_full_share_pushes_out_the_oldest_idle_connection_only() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let slots = Arc::new(Slots::default());
        let mut sockets = Vec::new();
        let mut admitted = Vec::new();
        for _ in 0..UNPROVEN_SLOTS {
            let (server, client) = pair(&listener);
            admitted.push(slots.admit(server.as_fd()).unwrap());
            sockets.push((server, client));
        }
        // Slot 0 is proven, slot 1 is serving a request, slot 2 has sent
        // bytes not yet read: none of them may go. Slot 3 is idle.
        admitted[0].prove();
        admitted[1].set_busy(true);
        sockets[2].1.write_all(b"POST /mcp").unwrap();
        std::thread::sleep(GRACE);
        let (server, client) = pair(&listener);
        let newest = slots.admit(server.as_fd()).unwrap();
        sockets.push((server, client));
        let gone: Vec<usize> = (0..admitted.len())
            .filter(|i| admitted[*i].state.evicted.is_cancelled())
            .collect();
        // The share had room for the newcomer once slot 0 was proven.
        assert!(gone.is_empty(), "{gone:?}");
        let (server, client) = pair(&listener);
        let last = slots.admit(server.as_fd()).unwrap();
        sockets.push((server, client));
        let gone: Vec<usize> = (0..admitted.len())
            .filter(|i| admitted[*i].state.evicted.is_cancelled())
            .collect();
        assert_eq!(gone, [3]);
        assert!(!newest.state.evicted.is_cancelled() && !last.state.evicted.is_cancelled());
        assert_eq!(slots.counts(), (UNPROVEN_SLOTS, 1));
        drop(admitted);
        drop((newest, last));
        assert_eq!(slots.counts(), (0, 0));
    }
}
