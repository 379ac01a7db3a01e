//! At most [`MAX_CONNECTIONS`] connections to hc, each handshaken once and
//! reused only while healthy. A caller that finds all of them busy waits for
//! a permit (its own deadline bounds the wait). A connection goes back to the
//! pool only when its call finished cleanly: a [`Lease`] dropped without
//! [`Lease::release`] discards its connection.
//!
//! How healthy a parked connection must look depends on what it is leased
//! for ([`ReuseCheck`]): a send gets one the kernel has vouched for; any other
//! call takes one the runtime has seen nothing arrive on, without a system
//! call, and the client opens a fresh one if its first write finds hc gone.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::acceptance::{Acceptance, Admission};
use super::conn::Connection;
use super::error::CoreError;

/// Most connections open to hc at once. hc serves each connection in
/// lockstep; eight keep parallel tool calls flowing without letting one
/// adapter monopolise the core.
pub(crate) const MAX_CONNECTIONS: usize = 8;

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
    idle: Mutex<Vec<Connection>>,
    admission: Admission,
}

impl Pool {
    pub fn new(path: &Path, acceptance: Acceptance) -> Pool {
        Pool {
            path: Arc::from(path),
            permits: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
            idle: Mutex::new(Vec::with_capacity(MAX_CONNECTIONS)),
            admission: Admission::new(acceptance),
        }
    }

    /// Puts `acceptance` in force for connections opened from now on; when
    /// it changed, the parked connections (admitted under the old one) are
    /// closed.
    pub fn accept(&self, acceptance: Acceptance) {
        if self.admission.replace(acceptance) {
            self.idle.lock().expect("pool lock").clear();
        }
    }

    /// The acceptance in force.
    pub fn acceptance(&self) -> Arc<Acceptance> {
        self.admission.current()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A healthy connection, reused or newly opened, a parked one checked
    /// as `check` says. Waits while all [`MAX_CONNECTIONS`] are leased; the
    /// caller's timeout bounds the wait.
    pub async fn acquire(&self, check: ReuseCheck) -> Result<Lease<'_>, CoreError> {
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|_| CoreError::Closed {
                path: self.path.to_path_buf(),
                method: super::wire::Method::Hello,
            })?;
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

    fn take_idle(&self, check: ReuseCheck) -> Option<Connection> {
        let acceptance = self.admission.current();
        let mut idle = self.idle.lock().expect("pool lock");
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
        self.idle.lock().expect("pool lock").clear();
    }

    /// Connections currently parked for reuse (for tests and diagnostics).
    pub fn idle_count(&self) -> usize {
        self.idle.lock().expect("pool lock").len()
    }
}

/// A connection on loan. Dropping it without [`Lease::release`] discards the
/// connection, which is what every error path wants.
pub struct Lease<'a> {
    pool: &'a Pool,
    conn: Option<Connection>,
    /// The connection was parked before this lease.
    reused: bool,
    _permit: OwnedSemaphorePermit,
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
            self.pool.idle.lock().expect("pool lock").push(conn);
        }
    }
}
