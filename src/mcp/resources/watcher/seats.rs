//! The places among the subscribers: at most a number at once, and of
//! those a share per caller, taken before a subscription is acknowledged
//! and given back when its subscriber goes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use crate::caller::Caller;
use crate::lock::held;

/// Subscribers at once (sessions and listen requests together).
const MAX_SUBSCRIBERS: usize = 64;
/// Of those, what one caller (a token, an OAuth subject) may hold: one
/// caller opening listen after listen fills its own share, not everyone's.
const MAX_SUBSCRIBERS_PER_CALLER: usize = 16;

/// How many places among the subscribers are taken, in all and by each
/// caller's share ([`Caller::share`]).
#[derive(Default)]
pub(super) struct Seats {
    taken: usize,
    by_share: HashMap<String, usize>,
}

/// One subscriber's place, taken before it is acknowledged; given back
/// when dropped.
pub(crate) struct Seat {
    seats: Arc<Mutex<Seats>>,
    share: String,
}

impl Seat {
    /// A place among the subscribers for one more of `caller`'s, or why
    /// there is none.
    pub(super) fn take(seats: &Arc<Mutex<Seats>>, caller: &Caller) -> Result<Seat, ErrorData> {
        let share = caller.share();
        let mut places = held(seats);
        if places.taken >= MAX_SUBSCRIBERS {
            return Err(ErrorData::invalid_request(
                format!(
                    "{MAX_SUBSCRIBERS} subscribers of all callers are watching already; nothing was subscribed: try again once one has ended"
                ),
                None,
            ));
        }
        let held = places.by_share.get(&share).copied().unwrap_or(0);
        if held >= MAX_SUBSCRIBERS_PER_CALLER {
            return Err(ErrorData::invalid_request(
                format!(
                    "{share} holds {held} subscriptions already, its share of {MAX_SUBSCRIBERS_PER_CALLER}; nothing was subscribed: end one first"
                ),
                None,
            ));
        }
        places.taken += 1;
        *places.by_share.entry(share.clone()).or_default() += 1;
        Ok(Seat {
            seats: Arc::clone(seats),
            share,
        })
    }

    /// The place a listen request took before it reached rmcp: carried in
    /// the request's extensions (stdio), or in its HTTP request's.
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Option<Arc<Seat>> {
        context.extensions.get::<Arc<Seat>>().cloned().or_else(|| {
            context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Arc<Seat>>().cloned())
        })
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut seats = held(&self.seats);
        seats.taken -= 1;
        if let Some(n) = seats.by_share.get_mut(&self.share) {
            *n -= 1;
            if *n == 0 {
                seats.by_share.remove(&self.share);
            }
        }
    }
}
