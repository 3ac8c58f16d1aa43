//! The root and the channel (catalogue §2): G-RSS (an `rss` root of version 2.0 with
//! exactly one channel), G-RSS-CHANNEL (the channel's title, link and description, once
//! each), and S201-content for `media:content` directly under the channel.

use super::{Kb24, R, found};
use crate::feed::{Channel, Root};
use crate::profile::finding::Finding;
use crate::profile::finding::Severity::{Error, Warning};
use crate::xml::Pos;

impl Kb24 {
    /// G-RSS: the root element. Returns false when validation must stop (§0.4.2).
    pub fn root(&mut self, root: &Root, out: &mut Vec<Finding>) -> bool {
        self.root = root.pos;
        if !root.is_rss {
            let what = if root.name.contains("http://www.w3.org/2005/Atom") {
                " (an Atom feed)"
            } else if root.name.contains("rdf-syntax-ns") {
                " (RSS 1.0 / RDF)"
            } else {
                ""
            };
            out.push(Finding::new(
                R::GRss,
                Error,
                root.pos,
                format!(
                    "the root element is `{}`{what}; the profile requires RSS 2.0: `<rss version=\"2.0\">` (no namespace) with one `<channel>`",
                    root.name
                ),
            ));
            return false;
        }
        match &root.version {
            None => out.push(Finding::new(
                R::GRss,
                Error,
                root.pos,
                "`<rss>` has no `version`; write `<rss version=\"2.0\">`",
            )),
            Some(v) if v.value != "2.0" => out.push(Finding::new(
                R::GRss,
                Error,
                v.pos,
                format!(
                    "RSS version is {}; write exactly `version=\"2.0\"`",
                    found(&v.value)
                ),
            )),
            Some(_) => {}
        }
        true
    }

    /// G-RSS: exactly one channel.
    pub fn channel_start(&mut self, pos: Pos, out: &mut Vec<Finding>) {
        self.channels += 1;
        if self.channels == 2 {
            out.push(Finding::new(R::GRss, Error, pos, "a second `<channel>`; an RSS 2.0 feed has exactly one channel — put all items in the first"));
        }
    }

    /// End of the document.
    pub fn end(&mut self, out: &mut Vec<Finding>) {
        if self.channels == 0 {
            out.push(Finding::new(R::GRss, Error, self.root, "`<rss>` has no `<channel>`; items go in `<rss version=\"2.0\"><channel>…</channel></rss>`"));
        }
    }

    /// G-RSS-CHANNEL and channel-level S201-content: the channel's own elements.
    pub fn channel(&mut self, channel: &Channel, out: &mut Vec<Finding>) {
        for (name, list) in [
            ("title", &channel.titles),
            ("link", &channel.links),
            ("description", &channel.descriptions),
        ] {
            match list.as_slice() {
                [] => out.push(Finding::new(
                    R::GRssChannel,
                    Error,
                    channel.pos,
                    format!("the channel has no `<{name}>`; RSS 2.0 requires channel title, link and description"),
                )),
                [_, rest @ ..] => {
                    for extra in rest {
                        out.push(Finding::new(
                            R::GRssChannel,
                            Error,
                            extra.pos,
                            format!("a second channel `<{name}>`; the channel has exactly one"),
                        ));
                    }
                }
            }
        }
        for pos in &channel.stray_contents {
            out.push(Finding::new(
                R::S201Content,
                Warning,
                *pos,
                "`media:content` directly under `<channel>` belongs to no item and is not harvested; move it into the item it belongs to",
            ));
        }
    }
}
