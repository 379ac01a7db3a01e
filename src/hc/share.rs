//! The shares of the pool: what kinds of call there are ([`Class`]), how
//! many of the connections to hc each may hold at once, and how many each
//! holds now ([`InUse`]). A leaf: the pool enforces the shares, the
//! errors name them.

/// Most connections open to hc at once. hc serves each connection in
/// lockstep; eight keep parallel tool calls flowing without letting one
/// adapter monopolise the core.
pub(crate) const MAX_CONNECTIONS: usize = 8;
/// Most connections sends hold at once: hc holds a send while the user's
/// draft sits in the terminal (about a minute), and held sends must never
/// take the connections reads and waits need.
pub(crate) const SEND_SHARE: usize = 4;
/// Most connections the polls of waits (and the fleet's shared look, and
/// subscriptions) hold at once.
pub(crate) const WAIT_SHARE: usize = 2;
/// Most connections reads hold at once, so a flood of reads leaves sends
/// and waits two.
pub(crate) const READ_SHARE: usize = MAX_CONNECTIONS - 2;

/// What a call is, for the share of the pool it may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A one-off read: a list, a record, a screen, a handshake (the
    /// preflight of a send too).
    Read,
    /// A poll of a bounded wait, of the fleet's shared look or of the
    /// subscriptions' watcher.
    Wait,
    /// A `terminal.send`.
    Send,
}

impl Class {
    /// The class's name in messages: `reads`, `waits`, `sends`.
    pub fn plural(self) -> &'static str {
        match self {
            Class::Read => "reads",
            Class::Wait => "waits",
            Class::Send => "sends",
        }
    }

    pub(crate) fn share(self) -> usize {
        match self {
            Class::Read => READ_SHARE,
            Class::Wait => WAIT_SHARE,
            Class::Send => SEND_SHARE,
        }
    }

    pub(crate) fn index(self) -> usize {
        match self {
            Class::Read => 0,
            Class::Wait => 1,
            Class::Send => 2,
        }
    }

    pub(crate) const ALL: [Class; 3] = [Class::Read, Class::Wait, Class::Send];
}

/// How many connections each class holds now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InUse {
    /// Held by reads.
    pub reads: usize,
    /// Held by the polls of waits.
    pub waits: usize,
    /// Held by sends (hc may be holding them for a draft).
    pub sends: usize,
}

impl std::fmt::Display for InUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} of {SEND_SHARE} for sends, {} of {WAIT_SHARE} for waits, {} of {READ_SHARE} for reads",
            self.sends, self.waits, self.reads
        )
    }
}
