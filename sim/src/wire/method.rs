//! The methods of hc 0.1.15 and their wire names.

/// The methods of hc 0.1.15.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    Hello,
    List,
    Get,
    Read,
    Send,
    /// `rpc.discover`: the core's own OpenRPC document (model from public
    /// clients, unverified).
    Discover,
    /// `machine.list`: the machines this core added, with their state
    /// (contract §8, model from public clients, unverified).
    MachineList,
}

impl Method {
    /// Every method, in contract order.
    pub const ALL: [Method; 7] = [
        Method::Hello,
        Method::List,
        Method::Get,
        Method::Read,
        Method::Send,
        Method::Discover,
        Method::MachineList,
    ];

    /// The method's wire name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Hello => "hc.hello",
            Method::List => "terminal.list",
            Method::Get => "terminal.get",
            Method::Read => "terminal.read",
            Method::Send => "terminal.send",
            Method::Discover => "rpc.discover",
            Method::MachineList => "machine.list",
        }
    }

    /// The method with this wire name, if hc has one.
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|method| method.name() == name)
    }
}
