//! plikt
pub mod feed;
pub mod profile;
pub mod xml;
