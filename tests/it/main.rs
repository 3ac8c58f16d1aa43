//! The integration tests: one binary (STYLE habit 12), one module per area.

mod cli;
mod crash;
mod golden;
mod harvest;
mod hostile;
mod support;
mod usage;
mod xsd;
