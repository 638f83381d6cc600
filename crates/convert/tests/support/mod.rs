//! Code shared by the integration tests and the examples.

pub mod fidelity;
