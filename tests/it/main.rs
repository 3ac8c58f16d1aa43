//! The integration tests: one binary (STYLE habit 12), one module per area.
#![allow(clippy::unwrap_used)] // test helpers panic on failure, like the tests themselves

mod catalog;
mod cli;
mod conformance;
mod crash;
mod destination;
mod golden;
mod harvest;
mod hostile;
mod migrate;
mod notification;
mod packages;
mod probe;
mod resourcesync;
mod s3;
mod scale;
mod support;
mod trust;
mod usage;
mod web;
mod workers;
mod xsd;
