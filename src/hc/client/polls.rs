//! The calls of a wait's polls: [`HcClient`]'s reads, within the waits'
//! share of the pool.

use std::sync::Arc;

use super::{Answer, HcClient, Listing, MachineListing};
use crate::hc::error::CoreError;
use crate::hc::share::Class;
use crate::hc::wire::{Hello, ReadResult, TerminalRecord};

/// The calls of [`HcClient`] as the polls of a wait make them: within the
/// waits' share of the pool, so that waits never take the connections
/// reads and sends need.
#[derive(Clone, Copy)]
pub struct Polls<'a>(pub(super) &'a HcClient);

impl Polls<'_> {
    /// [`HcClient::hello`], as a poll.
    pub async fn hello(&self) -> Result<Arc<Hello>, CoreError> {
        self.0.hello_as(Class::Wait).await
    }

    /// [`HcClient::list`], as a poll.
    pub async fn list(&self, include_finished: bool) -> Result<Answer<Listing>, CoreError> {
        self.0.list_as(Class::Wait, include_finished).await
    }

    /// [`HcClient::machines`], as a poll.
    pub async fn machines(&self) -> Result<Answer<Option<MachineListing>>, CoreError> {
        self.0.machines_as(Class::Wait).await
    }

    /// [`HcClient::get`], as a poll.
    pub async fn get(&self, address: &str) -> Result<Answer<TerminalRecord>, CoreError> {
        self.0.get_as(Class::Wait, address).await
    }

    /// [`HcClient::read`], as a poll.
    pub async fn read(&self, address: &str) -> Result<Answer<ReadResult>, CoreError> {
        self.0.read_as(Class::Wait, address).await
    }
}
