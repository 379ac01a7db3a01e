//! The typed core client: one async fn per hc method, each bounded by the
//! configured timeout (pool wait, connect, handshake, request and reply
//! together; a send by its own, longer one, since hc holds a send while the
//! user has a draft in the terminal) and answering with the identity of the
//! core that served it.
//!
//! `send` is the only writer. It reports whether a failure happened before
//! the request could have reached hc ([`SendError::NotDispatched`]) or after
//! ([`SendError::Dispatched`]), and a request hc took but did not start
//! ([`SendError::NotStarted`]); the tools turn that into NOT SENT / UNKNOWN.

mod machines;
mod polls;
mod send;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::time::Instant;

pub(crate) use machines::MachineListing;
pub(crate) use polls::Polls;

use super::acceptance::Acceptance;
use super::deadline::Pacer;
use super::error::CoreError;
use super::machine_share::MachineShares;
use super::pool::{Permit, Pool, ReuseCheck};
use super::share::Class;
use super::wire::{
    self, GetParams, Hello, ListParams, ListResult, Method, ReadParams, ReadResult, SendGuard,
    SendResult, TerminalRecord, UnreadableRecord,
};

/// `terminal.read` is always asked for the current screen only: `lines > 0`
/// makes hc scroll the program's view, which injects input into it.
pub(crate) const SCREEN_ONLY_LINES: u32 = 0;

/// A result together with the core (handshake) that produced it.
#[derive(Debug, Clone)]
pub struct Answer<T> {
    /// The handshake of the core that answered.
    pub core: Arc<Hello>,
    /// What it answered.
    pub value: T,
}

/// What `terminal.list` held: the records read, and those that were not.
#[derive(Debug, Clone)]
pub struct Listing {
    /// The records read, in hc's order.
    pub terminals: Vec<TerminalRecord>,
    /// The first records that could not be read (at most
    /// `wire::MAX_UNREADABLE`).
    pub unreadable: Vec<UnreadableRecord>,
    /// How many could not be read in all.
    pub unreadable_count: usize,
}

/// How a `terminal.send` failed, split at the moment of dispatch.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// Failed before the request was written: hc cannot have received it.
    #[error("{0}")]
    NotDispatched(CoreError),
    /// Failed after writing began: the input may have landed.
    #[error("{0}")]
    Dispatched(CoreError),
    /// hc answered `started: false`: it took the request but did not start
    /// the delivery, and typed nothing. Never resent.
    #[error("hc did not start the delivery: the terminal's input may hold the user's draft")]
    NotStarted(Box<Answer<SendResult>>),
}

/// What to paste into a terminal. `submit` is always true and `force`
/// never true (false, or left out for a core whose accepted document does
/// not declare it); only the guard varies.
#[derive(Debug, Clone, Copy)]
pub struct SendRequest<'a> {
    /// `address`: the terminal to write to.
    pub address: &'a str,
    /// `text`: what hc pastes.
    pub text: &'a str,
    /// `if`: the status hc must see under its input lock before writing, or
    /// none.
    pub guard: Option<SendGuard>,
}

/// The typed client of hc's socket: pooled, handshaken connections, every
/// call bounded by one timeout.
pub struct HcClient {
    pool: Pool,
    timeout: Duration,
    send_timeout: Duration,
    pacer: Pacer,
    machines: MachineShares,
}

impl HcClient {
    /// A client of the socket at `socket_path`, each call (a send too)
    /// bounded by `timeout`, speaking only the built-in hc version; nothing
    /// is connected yet.
    pub fn new(socket_path: &Path, timeout: Duration) -> HcClient {
        HcClient::with(socket_path, timeout, timeout, Acceptance::default())
    }

    /// A client whose sends are bounded by `send_timeout` and every other
    /// call by `timeout`, speaking the built-in version and those
    /// `acceptance` lists.
    pub fn with(
        socket_path: &Path,
        timeout: Duration,
        send_timeout: Duration,
        acceptance: Acceptance,
    ) -> HcClient {
        HcClient {
            pool: Pool::new(socket_path, acceptance),
            timeout,
            send_timeout,
            pacer: Pacer::new(timeout),
            machines: MachineShares::default(),
        }
    }

    /// Puts `acceptance` in force for the calls that start from now on
    /// (a reload); connections admitted under another are not reused.
    pub fn accept(&self, acceptance: Acceptance) {
        self.pool.accept(acceptance);
    }

    /// The acceptance in force.
    pub fn acceptance(&self) -> Arc<Acceptance> {
        self.pool.acceptance()
    }

    /// The bound of one `terminal.send`.
    pub fn send_timeout(&self) -> Duration {
        self.send_timeout
    }

    /// The connections to hc.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The handshake facts of the core currently behind the socket.
    pub async fn hello(&self) -> Result<Arc<Hello>, CoreError> {
        self.hello_as(Class::Read).await
    }

    /// Every terminal hc lists, each record read on its own: one in a shape
    /// the adapter cannot read is set aside, named, and hides no other.
    pub async fn list(&self, include_finished: bool) -> Result<Answer<Listing>, CoreError> {
        self.list_as(Class::Read, include_finished).await
    }

    /// The record of the terminal at `address` (`terminal.get`).
    pub async fn get(&self, address: &str) -> Result<Answer<TerminalRecord>, CoreError> {
        self.get_as(Class::Read, address).await
    }

    /// The current screen of `address` (never history).
    pub async fn read(&self, address: &str) -> Result<Answer<ReadResult>, CoreError> {
        self.read_as(Class::Read, address).await
    }

    /// The same calls, made by the polls of a wait: within the waits'
    /// share of the pool.
    pub fn polls(&self) -> Polls<'_> {
        Polls(self)
    }

    async fn hello_as(&self, class: Class) -> Result<Arc<Hello>, CoreError> {
        let method = Method::Hello;
        self.pacer.start();
        let deadline = Instant::now() + self.timeout;
        let permit = self.queue(class, method, deadline).await?;
        self.bounded(method, self.timeout, deadline, async {
            // The core's identity: never from a connection to a core that
            // has gone.
            let mut lease = self.pool.lease(permit, ReuseCheck::Kernel).await?;
            let hello = Arc::clone(lease.conn().hello());
            lease.release();
            Ok(hello)
        })
        .await
    }

    async fn list_as(
        &self,
        class: Class,
        include_finished: bool,
    ) -> Result<Answer<Listing>, CoreError> {
        let params = ListParams { include_finished };
        let answer: Answer<ListResult> =
            self.call(class, Method::List, &params, |_| Ok(())).await?;
        let (terminals, unreadable, unreadable_count) = wire::read_records(answer.value);
        Ok(Answer {
            core: answer.core,
            value: Listing {
                terminals,
                unreadable,
                unreadable_count,
            },
        })
    }

    async fn get_as(
        &self,
        class: Class,
        address: &str,
    ) -> Result<Answer<TerminalRecord>, CoreError> {
        let params = GetParams { address };
        let deadline = Instant::now() + self.timeout;
        let _place = self.machine_place(address, Method::Get, deadline).await?;
        self.call(class, Method::Get, &params, |r: &TerminalRecord| {
            self.expect_address(Method::Get, address, &r.address)
        })
        .await
    }

    async fn read_as(&self, class: Class, address: &str) -> Result<Answer<ReadResult>, CoreError> {
        let params = ReadParams {
            address,
            lines: SCREEN_ONLY_LINES,
        };
        let deadline = Instant::now() + self.timeout;
        let _place = self.machine_place(address, Method::Read, deadline).await?;
        self.call(class, Method::Read, &params, |r: &ReadResult| {
            self.expect_address(Method::Read, address, &r.address)
        })
        .await
    }

    /// Closes the adapter's own idle connections; terminals keep running.
    pub fn close(&self) {
        self.pool.close();
    }

    /// One bounded request/reply within `class`'s share; `check`
    /// validates the result beyond its JSON shape, and a failed check
    /// discards the connection like any other violation.
    async fn call<P: Serialize, R: DeserializeOwned>(
        &self,
        class: Class,
        method: Method,
        params: &P,
        check: impl FnOnce(&R) -> Result<(), CoreError>,
    ) -> Result<Answer<R>, CoreError> {
        self.pacer.start();
        let deadline = Instant::now() + self.timeout;
        let permit = self.queue(class, method, deadline).await?;
        self.bounded(method, self.timeout, deadline, async {
            let mut lease = self.pool.lease(permit, ReuseCheck::Runtime).await?;
            let id = match lease.conn().write_request(method, params).await {
                Ok(id) => id,
                // A parked connection whose hc has gone refuses the whole
                // request (EPIPE): nothing reached hc, so the request is
                // written once more, on a fresh connection. Only before
                // dispatch, and never for a send (which has its own path).
                Err(_) if lease.reused() && lease.conn().sent_nothing() => {
                    lease.reconnect().await?;
                    lease.conn().write_request(method, params).await?
                }
                Err(e) => return Err(e),
            };
            let value = lease.conn().read_reply(method, id).await?;
            check(&value)?;
            let core = Arc::clone(lease.conn().hello());
            lease.release();
            Ok(Answer { core, value })
        })
        .await
    }

    /// A place in the pool for a call of `class`, waited for until
    /// `deadline`. Running out of time here is the adapter's own queue,
    /// not hc's silence, and says so.
    async fn queue(
        &self,
        class: Class,
        method: Method,
        deadline: Instant,
    ) -> Result<Permit, CoreError> {
        let started = Instant::now();
        match tokio::time::timeout_at(deadline, self.pool.permit(class)).await {
            Ok(permit) => permit,
            Err(_) => Err(CoreError::Queued {
                method,
                class,
                waited_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                in_use: self.pool.in_use(),
            }),
        }
    }

    /// Runs `work` until `deadline` (`timeout` after the call began). A
    /// timed-out call's connection is dropped with the future, never
    /// returned to the pool.
    async fn bounded<T>(
        &self,
        method: Method,
        timeout: Duration,
        deadline: Instant,
        work: impl Future<Output = Result<T, CoreError>>,
    ) -> Result<T, CoreError> {
        match tokio::time::timeout_at(deadline, work).await {
            Ok(result) => result,
            Err(_) => Err(CoreError::Timeout {
                path: self.pool.path().to_path_buf(),
                method,
                timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            }),
        }
    }

    fn expect_address(&self, method: Method, asked: &str, got: &str) -> Result<(), CoreError> {
        if asked == got {
            Ok(())
        } else {
            Err(self.shape(method, "the reply names another terminal"))
        }
    }

    fn shape(&self, method: Method, detail: &str) -> CoreError {
        CoreError::Protocol {
            path: self.pool.path().to_path_buf(),
            method,
            detail: detail.to_owned(),
        }
    }
}
