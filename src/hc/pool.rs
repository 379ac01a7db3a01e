//! At most [`MAX_CONNECTIONS`] connections to hc, each handshaken once and
//! reused only while healthy. A connection goes back to the pool only when
//! its call finished cleanly: a [`Lease`] dropped without [`Lease::release`]
//! discards its connection.
//!
//! Every call belongs to a [`Class`] (reads, waits, sends), and each class
//! has its own share of the eight: hc may hold a send for a minute while a
//! user's draft sits in the terminal, so sends together never hold more
//! than `SEND_SHARE`, waits never more than `WAIT_SHARE` (`share`), and reads
//! (the preflight of a send among them) always find at least
//! `MAX_CONNECTIONS - SEND_SHARE - WAIT_SHARE`. A caller whose class has no
//! connection free waits for one (its own deadline bounds the wait; the
//! client tells that wait apart from hc's silence).
//!
//! How healthy a parked connection must look depends on what it is leased
//! for ([`ReuseCheck`]): a send gets one the kernel has vouched for; any other
//! call takes one the runtime has seen nothing arrive on, without a system
//! call, and the client opens a fresh one if its first write finds hc gone.

use crate::lock::held;
use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::acceptance::{Acceptance, Admission};
use super::conn::Connection;
use super::error::CoreError;
use super::share::{Class, InUse, MAX_CONNECTIONS};

/// How a parked connection is checked before it is reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReuseCheck {
    /// The kernel is asked (a non-blocking peek): for a send, which must
    /// not be dispatched on a connection to an hc that has gone.
    Kernel,
    /// The runtime's readiness is trusted, no system call: for a call the
    /// client may repeat on a fresh connection when its first write finds
    /// hc gone before a byte left.
    Runtime,
}

pub struct Pool {
    path: Arc<Path>,
    permits: Arc<Semaphore>,
    /// Each class's share, by [`Class::index`].
    shares: [Arc<Semaphore>; 3],
    idle: Mutex<Vec<Connection>>,
    admission: Admission,
}

impl Pool {
    pub fn new(path: &Path, acceptance: Acceptance) -> Pool {
        Pool {
            path: Arc::from(path),
            permits: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
            shares: Class::ALL.map(|class| Arc::new(Semaphore::new(class.share()))),
            idle: Mutex::new(Vec::with_capacity(MAX_CONNECTIONS)),
            admission: Admission::new(acceptance),
        }
    }

    /// Puts `acceptance` in force for connections opened from now on; when
    /// it changed, the parked connections (admitted under the old one) are
    /// closed.
    pub fn accept(&self, acceptance: Acceptance) {
        if self.admission.replace(acceptance) {
            held(&self.idle).clear();
        }
    }

    /// The acceptance in force.
    pub fn acceptance(&self) -> Arc<Acceptance> {
        self.admission.current()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A place in the pool for a call of `class`: waits while the class's
    /// share, or the whole pool, is taken; the caller's deadline bounds
    /// the wait.
    pub async fn permit(&self, class: Class) -> Result<Permit, CoreError> {
        let closed = || CoreError::Closed {
            path: self.path.to_path_buf(),
            method: super::wire::Method::Hello,
        };
        let share = Arc::clone(&self.shares[class.index()])
            .acquire_owned()
            .await
            .map_err(|_| closed())?;
        let pool = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|_| closed())?;
        Ok(Permit {
            _share: share,
            _pool: pool,
        })
    }

    /// A healthy connection under `permit`, reused or newly opened, a
    /// parked one checked as `check` says.
    pub async fn lease(&self, permit: Permit, check: ReuseCheck) -> Result<Lease<'_>, CoreError> {
        let (conn, reused) = match self.take_idle(check) {
            Some(conn) => (conn, true),
            None => (
                Connection::open(Arc::clone(&self.path), &self.admission).await?,
                false,
            ),
        };
        Ok(Lease {
            pool: self,
            conn: Some(conn),
            reused,
            _permit: permit,
        })
    }

    /// A place for `class` and a connection under it, in one (for callers
    /// whose deadline covers both).
    pub async fn acquire(&self, class: Class, check: ReuseCheck) -> Result<Lease<'_>, CoreError> {
        let permit = self.permit(class).await?;
        self.lease(permit, check).await
    }

    /// How many connections each class holds now.
    pub fn in_use(&self) -> InUse {
        let held = |class: Class| {
            class.share()
                - self.shares[class.index()]
                    .available_permits()
                    .min(class.share())
        };
        InUse {
            reads: held(Class::Read),
            waits: held(Class::Wait),
            sends: held(Class::Send),
        }
    }

    fn take_idle(&self, check: ReuseCheck) -> Option<Connection> {
        let acceptance = self.admission.current();
        let mut idle = held(&self.idle);
        while let Some(conn) = idle.pop() {
            if !Arc::ptr_eq(conn.admitted(), &acceptance) {
                continue;
            }
            let healthy = match check {
                ReuseCheck::Kernel => conn.is_healthy(),
                ReuseCheck::Runtime => conn.looks_healthy(),
            };
            if healthy {
                return Some(conn);
            }
        }
        None
    }

    /// Closes the adapter's own idle connections and refuses new leases.
    /// Terminals are untouched: they belong to hc.
    pub fn close(&self) {
        self.permits.close();
        for share in &self.shares {
            share.close();
        }
        held(&self.idle).clear();
    }

    /// Connections currently parked for reuse (for tests and diagnostics).
    pub fn idle_count(&self) -> usize {
        held(&self.idle).len()
    }
}

/// A place in the pool: one of the eight, within its class's share.
/// Released by Drop.
pub struct Permit {
    _share: OwnedSemaphorePermit,
    _pool: OwnedSemaphorePermit,
}

/// A connection on loan. Dropping it without [`Lease::release`] discards the
/// connection, which is what every error path wants.
pub struct Lease<'a> {
    pool: &'a Pool,
    conn: Option<Connection>,
    /// The connection was parked before this lease.
    reused: bool,
    _permit: Permit,
}

impl Lease<'_> {
    /// The connection was taken from the idle ones, not opened for this
    /// lease.
    pub fn reused(&self) -> bool {
        self.reused
    }

    /// Replaces the connection by a newly opened one, under the same permit
    /// (the old one is dropped).
    pub async fn reconnect(&mut self) -> Result<(), CoreError> {
        self.conn = None;
        self.conn =
            Some(Connection::open(Arc::clone(&self.pool.path), &self.pool.admission).await?);
        self.reused = false;
        Ok(())
    }

    pub fn conn(&mut self) -> &mut Connection {
        self.conn
            .as_mut()
            .expect("a lease holds its connection until released")
    }

    /// The call finished cleanly: park the connection for reuse.
    pub fn release(mut self) {
        if let Some(conn) = self.conn.take() {
            if self.pool.permits.is_closed() {
                return;
            }
            held(&self.pool.idle).push(conn);
        }
    }
}
