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
