//! `terminal.send`, the one writer: split at the moment of dispatch, never
//! retried, only on a connection to the core the send was approved for.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::time::Instant;

use super::{Answer, HcClient, SendError, SendRequest};
use crate::hc::core_id::CoreId;
use crate::hc::error::CoreError;
use crate::hc::pool::ReuseCheck;
use crate::hc::share::Class;
use crate::hc::wire::{Method, SendParams, SendResult};

impl HcClient {
    /// Pastes `request.text` and submits it, only on a connection whose
    /// core_id is `expected_core_id`. Never retried. A send first waits,
    /// at most `timeoutMs`, for a place within the sends' share of the
    /// pool (nothing is dispatched meanwhile); the send itself is then
    /// bounded by `sendTimeoutMs`.
    pub async fn send(
        &self,
        request: SendRequest<'_>,
        expected_core_id: &CoreId,
    ) -> Result<Answer<SendResult>, SendError> {
        let dispatched = AtomicBool::new(false);
        let method = Method::Send;
        self.pacer.start();
        let _place = self
            .machine_place(request.address, method, Instant::now() + self.timeout)
            .await
            .map_err(SendError::NotDispatched)?;
        let permit = self
            .queue(Class::Send, method, Instant::now() + self.timeout)
            .await
            .map_err(SendError::NotDispatched)?;
        let attempt = async {
            let mut lease = self.pool.lease(permit, ReuseCheck::Kernel).await?;
            let core = Arc::clone(lease.conn().hello());
            if core.core_id != *expected_core_id {
                // Nothing is wrong with the connection: park it again.
                lease.release();
                return Err(CoreError::CoreChanged {
                    expected: expected_core_id.clone(),
                    actual: core.core_id.clone(),
                    flag: self.pool.acceptance().operator_flag.clone(),
                });
            }
            // `force: false` is hc's default: a core whose accepted document
            // does not declare `force` is not sent a param it does not name.
            let sends_force = lease.conn().admitted().sends_force(&core.version);
            let params = SendParams {
                address: request.address,
                text: request.text,
                submit: true,
                guard: request.guard,
                force: sends_force.then_some(false),
            };
            dispatched.store(true, Ordering::SeqCst);
            let id = lease.conn().write_request(method, &params).await?;
            let value: SendResult = lease.conn().read_reply(method, id).await?;
            if !value.accepted {
                return Err(self.shape(method, "accepted is not true"));
            }
            self.expect_address(method, request.address, &value.address)?;
            lease.release();
            Ok(Answer { core, value })
        };
        let deadline = Instant::now() + self.send_timeout;
        match self
            .bounded(method, self.send_timeout, deadline, attempt)
            .await
        {
            Ok(answer) if answer.value.started == Some(false) => {
                Err(SendError::NotStarted(Box::new(answer)))
            }
            Ok(answer) => Ok(answer),
            Err(e) if dispatched.load(Ordering::SeqCst) => Err(SendError::Dispatched(e)),
            Err(e) => Err(SendError::NotDispatched(e)),
        }
    }
}
