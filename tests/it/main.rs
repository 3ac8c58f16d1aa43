//! The integration tests: one binary (STYLE habit 12), one module per area.

mod golden;
mod support;
