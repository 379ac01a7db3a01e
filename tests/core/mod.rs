//! The core client and the contract it is built to: the client against
//! the simulator (`client`), the contract document and what real cores
//! show (`contract_document`, `real_hc`), random faults against the input
//! log (`fault_matrix`), and the fuzz corpus replayed (`fuzz_corpus`).

mod client;
mod contract_document;
mod fault_matrix;
#[cfg(feature = "fuzzing")]
mod fuzz_corpus;
mod real_hc;
mod reconnect;
