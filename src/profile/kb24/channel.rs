//! The root and the channel (catalogue §2): G-RSS (an `rss` root of version 2.0 with
//! exactly one channel), G-RSS-CHANNEL (the channel's title, link and description, once
//! each), and S201-content for `media:content` directly under the channel.

use super::{Kb24, R, found};
use crate::feed::{Channel, Root};
use crate::msg;
use crate::profile::finding::Finding;
use crate::profile::finding::Severity::{Error, Warning};
use crate::xml::Pos;

impl Kb24 {
    /// G-RSS: the root element. Returns false when validation must stop (§0.4.2).
    pub fn root(&mut self, root: &Root, out: &mut Vec<Finding>) -> bool {
        self.root = root.pos;
        if !root.is_rss {
            let message = if root.name.contains("http://www.w3.org/2005/Atom") {
                msg!("g-rss-root-atom", name = &root.name)
            } else if root.name.contains("rdf-syntax-ns") {
                msg!("g-rss-root-rdf", name = &root.name)
            } else {
                msg!("g-rss-root", name = &root.name)
            };
            out.push(Finding::new(R::GRss, Error, root.pos, message));
            return false;
        }
        match &root.version {
            None => out.push(Finding::new(
                R::GRss,
                Error,
                root.pos,
                msg!("g-rss-no-version"),
            )),
            Some(v) if v.value != "2.0" => out.push(Finding::new(
                R::GRss,
                Error,
                v.pos,
                msg!("g-rss-version", value = found(&v.value)),
            )),
            Some(_) => {}
        }
        true
    }

    /// G-RSS: exactly one channel.
    pub fn channel_start(&mut self, pos: Pos, out: &mut Vec<Finding>) {
        self.channels += 1;
        if self.channels == 2 {
            out.push(Finding::new(
                R::GRss,
                Error,
                pos,
                msg!("g-rss-two-channels"),
            ));
        }
    }

    /// End of the document.
    pub fn end(&mut self, out: &mut Vec<Finding>) {
        if self.channels == 0 {
            out.push(Finding::new(
                R::GRss,
                Error,
                self.root,
                msg!("g-rss-no-channel"),
            ));
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
                    msg!("g-rss-channel-missing", name = name),
                )),
                [_, rest @ ..] => {
                    for extra in rest {
                        out.push(Finding::new(
                            R::GRssChannel,
                            Error,
                            extra.pos,
                            msg!("g-rss-channel-repeated", name = name),
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
                msg!("s201-channel-content"),
            ));
        }
    }
}
