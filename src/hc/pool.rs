//! At most [`MAX_CONNECTIONS`] connections to hc, each handshaken once and
//! reused only while healthy. A caller that finds all of them busy waits for
//! a permit (its own deadline bounds the wait). A connection goes back to the
//! pool only when its call finished cleanly: a [`Lease`] dropped without
//! [`Lease::release`] discards its connection.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::conn::Connection;
use super::error::CoreError;

/// Most connections open to hc at once. hc serves each connection in
/// lockstep; eight keep parallel tool calls flowing without letting one
/// adapter monopolise the core.
pub(crate) const MAX_CONNECTIONS: usize = 8;

pub struct Pool {
    path: Arc<Path>,
    permits: Arc<Semaphore>,
    idle: Mutex<Vec<Connection>>,
}

impl Pool {
    pub fn new(path: &Path) -> Pool {
        Pool {
            path: Arc::from(path),
            permits: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
            idle: Mutex::new(Vec::with_capacity(MAX_CONNECTIONS)),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A healthy connection, reused or newly opened. Waits while all
    /// [`MAX_CONNECTIONS`] are leased; the caller's timeout bounds the wait.
    pub async fn acquire(&self) -> Result<Lease<'_>, CoreError> {
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|_| CoreError::Closed {
                path: self.path.to_path_buf(),
                method: super::wire::Method::Hello,
            })?;
        let reused = self.take_idle();
        let conn = match reused {
            Some(conn) => conn,
            None => Connection::open(Arc::clone(&self.path)).await?,
        };
        Ok(Lease {
            pool: self,
            conn: Some(conn),
            _permit: permit,
        })
    }

    fn take_idle(&self) -> Option<Connection> {
        let mut idle = self.idle.lock().expect("pool lock");
        while let Some(conn) = idle.pop() {
            if conn.is_healthy() {
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
    _permit: OwnedSemaphorePermit,
}

impl Lease<'_> {
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
