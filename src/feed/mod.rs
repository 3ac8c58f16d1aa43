//! The feed model: RSS 2.0 + MediaRSS + DCMI Terms, as far as the KB profile reads it.
//!
//! [`FeedReader`] pulls [`FeedEvent`]s out of an [`XmlReader`]: one [`Item`] at a time
//! (memory is bounded by the largest item, not the feed), the [`Channel`]'s own
//! elements when the channel ends (they may come after the items), namespace
//! declarations and stray elements as they are seen. Every node keeps its position.
//! Elements are matched on (namespace, local name); nothing here judges values — that
//! is the profile's job — and nothing is invented: a missing guid stays missing.
//!
//! `model` holds the nodes, each field documented with the catalogue rule that reads
//! it; `reader` the pull parser from XML events to them; `list` the vectors that keep
//! their allocations from one item to the next.
//!
//! [`XmlReader`]: crate::xml::XmlReader

mod list;
mod model;
mod reader;

pub use list::List;
pub use model::{
    AttrValue, Channel, Copyright, Credit, Enclosure, Group, Guid, Hash, Item, License,
    MediaContent, Root, ScopedHash, Typed, Value, XsiType, trim_xml,
};
pub use reader::{FeedEvent, FeedReader};
