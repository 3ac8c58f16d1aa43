//! plikt
pub mod xml;
