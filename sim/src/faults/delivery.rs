//! Writing one reply the way a call's delivery fault says: truncated, after
//! a notification, oversized, endless, not at all, by closing the
//! connection, late, or plainly.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::{FaultKind, OVERSIZED_REPLY_BYTES, STREAM_CHUNK_BYTES};
use crate::wire::{self, RpcError};

/// What the connection does after a reply was delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// The connection reads its next request.
    Continue,
    /// The connection is closed (the fault drops it after the reply).
    Close,
}

/// What a delivery needs besides the reply.
pub struct Delivery<'a> {
    /// How long the `slow-reply` fault holds the reply back.
    pub slow_reply: Duration,
    /// Params of the notification line the `notification` fault sends first.
    pub notification: &'a (dyn Fn() -> Value + Sync),
}

/// Writes `reply` to `writer` as the delivery fault (if any) says. An error
/// means the peer is gone.
pub async fn deliver<W: AsyncWrite + Unpin>(
    writer: &mut W,
    delivery: Option<FaultKind>,
    id: &Value,
    reply: &Result<Value, RpcError>,
    context: &Delivery<'_>,
) -> std::io::Result<Flow> {
    let line = wire::response_line(id, reply);
    match delivery {
        Some(FaultKind::MalformedJson) => {
            let truncated = format!("{}\n", wire::result_prefix(id));
            writer.write_all(truncated.as_bytes()).await?;
        }
        Some(FaultKind::Notification) => {
            let params = (context.notification)();
            let notification = wire::notification_line(wire::STATUS_NOTIFICATION, params);
            writer.write_all(notification.as_bytes()).await?;
            writer.write_all(line.as_bytes()).await?;
        }
        Some(FaultKind::OversizedReply) => {
            writer.write_all(wire::result_prefix(id).as_bytes()).await?;
            writer.write_all(b"\"").await?;
            let chunk = vec![b'x'; STREAM_CHUNK_BYTES];
            for _ in 0..OVERSIZED_REPLY_BYTES / STREAM_CHUNK_BYTES {
                writer.write_all(&chunk).await?;
            }
            writer.write_all(b"\"}\n").await?;
        }
        Some(FaultKind::EndlessReply) => {
            writer.write_all(wire::result_prefix(id).as_bytes()).await?;
            let chunk = vec![b'x'; STREAM_CHUNK_BYTES];
            loop {
                writer.write_all(&chunk).await?;
            }
        }
        Some(FaultKind::NoReply) => {}
        Some(FaultKind::DropAfterDispatch) => return Ok(Flow::Close),
        Some(FaultKind::SlowReply) => {
            tokio::time::sleep(context.slow_reply).await;
            writer.write_all(line.as_bytes()).await?;
        }
        // Rewriting faults never decide the delivery: a plain reply.
        None | Some(_) => writer.write_all(line.as_bytes()).await?,
    }
    writer.flush().await?;
    Ok(Flow::Continue)
}
