//! MCP Streamable HTTP as clients meet it: start-up refusals, the
//! request battery (`battery`), end to end with the official client,
//! slow and hostile clients, floods of idle sockets and of refused
//! requests, and sockets inherited from systemd.

mod battery;
mod end_to_end;
mod flood;
mod inherited_socket;
mod slow_bodies;
mod slow_clients;
mod startup;
