//! The pull parser from XML events to [`FeedEvent`]s: a stack of frames says where
//! each element sits (channel, item, `media:group`, `media:content`, a value), and each
//! start tag is matched on (namespace, local name) to the node it fills.

use std::collections::VecDeque;
use std::io::Read;

use super::{
    AttrValue, Channel, Copyright, Credit, Enclosure, Group, Guid, Hash, Item, License, List,
    MediaContent, Root, ScopedHash, Typed, Value, XsiType,
};
use crate::xml::{Attribute, NsDecl, NsId, Pos, QNameValue, ReadError, Start, XmlEvent, XmlReader};

/// What [`FeedReader::read_event`] yields, in document order.
#[derive(Debug)]
pub enum FeedEvent {
    /// A namespace declaration (G-NS-*).
    Namespace(NsDecl),
    /// The root element started. If it is not `rss`, nothing follows.
    Root(Root),
    /// A channel started (G-RSS: exactly one).
    ChannelStart(Pos),
    /// An item ended.
    Item(Box<Item>),
    /// A channel ended.
    Channel(Box<Channel>),
    /// An element in the DC 1.1 namespace (G-NS-DCELEMENTS).
    DcElement {
        /// Its `<`.
        pos: Pos,
        /// Its local name.
        local: String,
    },
    /// The root ended; the document is complete and well-formed.
    End,
    /// The reader is at the offset given to [`XmlReader::stop_at`], between two
    /// children of the channel, outside any item.
    Boundary,
}

/// Where the element being read sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    Rss,
    Channel,
    Item,
    /// `media:group`, nested or not.
    Group,
    Content,
    /// A simple-valued element whose text goes to `Slot`.
    Value(Slot),
    /// Anything else (ignored, but DC 1.1 elements are reported).
    Other,
}

/// Which value a text goes to: always the last pushed node of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    ChannelTitle,
    ChannelLink,
    ChannelDescription,
    Guid,
    Identifier,
    Link,
    PubDate,
    Publisher,
    Title,
    Description,
    AccessRights,
    License,
    IsPartOf,
    IsFormatOf,
    Creator,
    Contributor,
    Format,
    References,
    Keywords,
    ScopedHash,
    ContentHash,
    ContentLicense,
    ContentCredit,
    ContentCopyright,
    ContentKeywords,
    Marker,
}

/// Pull parser from XML events to [`FeedEvent`]s.
#[derive(Debug)]
pub struct FeedReader<R: Read> {
    xml: XmlReader<R>,
    state: State,
}

/// Everything but the XML reader, so both can be borrowed at once.
#[derive(Debug, Default)]
struct State {
    frames: Vec<Frame>,
    queue: VecDeque<FeedEvent>,
    item: Option<Box<Item>>,
    /// An item handed back by the consumer, reused for the next one.
    spare: Option<Box<Item>>,
    /// Indices into `item.groups` of the open `media:group`s, innermost last.
    open_groups: Vec<usize>,
    channel: Option<Box<Channel>>,
    items: u32,
    finished: bool,
    /// Reading items only, from the middle of a channel ([`FeedReader::continuing`]).
    items_only: bool,
    /// In `items_only` mode: a child of the channel other than an item started.
    left_items: bool,
}

impl<R: Read> FeedReader<R> {
    /// Reads feed events from `xml`.
    pub fn new(xml: XmlReader<R>) -> Self {
        Self {
            xml,
            state: State::default(),
        }
    }

    /// Reads the items of a channel from the middle of it: `xml` continues inside
    /// `<rss><channel>` ([`XmlReader::continuing`]). Items are numbered from 1 here.
    pub fn continuing(mut xml: XmlReader<R>) -> Self {
        let state = State {
            frames: vec![Frame::Rss, Frame::Channel],
            channel: Some(Box::default()),
            items_only: true,
            ..State::default()
        };
        xml.skip_space(state.ignores_text());
        Self { xml, state }
    }

    /// In a reader from [`FeedReader::continuing`]: a child of the channel other than
    /// an item has started, so what follows is no longer a run of items.
    pub fn left_items(&self) -> bool {
        self.state.left_items
    }

    /// Counts `n` items read elsewhere, so the next one gets the right index.
    pub fn skip_items(&mut self, n: u32) {
        self.state.items += n;
    }

    /// Hands back an item the caller is done with; its allocations serve the next one.
    pub fn recycle(&mut self, item: Box<Item>) {
        self.state.spare = Some(item);
    }

    /// The underlying XML reader.
    pub fn xml(&self) -> &XmlReader<R> {
        &self.xml
    }

    /// The underlying XML reader, to move it on.
    pub fn xml_mut(&mut self) -> &mut XmlReader<R> {
        &mut self.xml
    }

    /// The next event, `Ok(None)` after [`FeedEvent::End`] (or after a root that is
    /// not `rss`). Errors are `G-XML` or I/O failures.
    #[inline]
    pub fn read_event(&mut self) -> Result<Option<FeedEvent>, ReadError> {
        let st = &mut self.state;
        loop {
            if let Some(e) = st.queue.pop_front() {
                return Ok(Some(e));
            }
            if st.finished {
                return Ok(None);
            }
            let moved = match self.xml.read_event()? {
                XmlEvent::Start(s) => {
                    let frame = st.enter(&s);
                    st.frames.push(frame);
                    true
                }
                XmlEvent::Text(t) => {
                    if let Some(Frame::Value(slot)) = st.frames.last() {
                        let slot = *slot;
                        if let Some(v) = st.slot(slot) {
                            v.raw.push_str(t);
                        }
                    }
                    false
                }
                XmlEvent::End => {
                    st.leave();
                    true
                }
                XmlEvent::Boundary => {
                    if st.frames == [Frame::Rss, Frame::Channel] && st.item.is_none() {
                        return Ok(Some(FeedEvent::Boundary));
                    }
                    false
                }
                XmlEvent::Eof => {
                    st.finished = true;
                    st.queue.push_back(FeedEvent::End);
                    false
                }
            };
            if moved {
                self.xml.skip_space(st.ignores_text());
            }
        }
    }
}

impl State {
    /// Text here goes nowhere (only values keep text), so white space between tags
    /// need not be read as text. Outside the root element (no frame) text is an error
    /// and is read.
    fn ignores_text(&self) -> bool {
        !matches!(self.frames.last(), None | Some(Frame::Value(_)))
    }

    fn enter(&mut self, s: &Start<'_>) -> Frame {
        for d in s.decls {
            self.queue.push_back(FeedEvent::Namespace(d.clone()));
        }
        if s.ns == NsId::DC_ELEMENTS {
            self.queue.push_back(FeedEvent::DcElement {
                pos: s.pos,
                local: s.local.to_string(),
            });
        }
        let parent = match self.frames.last() {
            None => return self.root(s),
            Some(Frame::Value(slot)) => {
                let slot = *slot;
                if let Some(v) = self.slot(slot) {
                    v.has_children = true;
                }
                return Frame::Other;
            }
            Some(f) => *f,
        };
        let name = (s.ns, s.local);
        match parent {
            Frame::Rss => match name {
                (NsId::NONE, "channel") => {
                    self.channel = Some(Box::new(Channel {
                        pos: s.pos,
                        ..Channel::default()
                    }));
                    self.queue.push_back(FeedEvent::ChannelStart(s.pos));
                    Frame::Channel
                }
                _ => Frame::Other,
            },
            Frame::Channel => self.enter_channel_child(s),
            Frame::Item => self.enter_item_child(s),
            Frame::Group => self.enter_group_child(s),
            Frame::Content => self.enter_content_child(s),
            Frame::Value(_) | Frame::Other => Frame::Other,
        }
    }

    fn root(&mut self, s: &Start<'_>) -> Frame {
        let is_rss = s.ns == NsId::NONE && s.local == "rss";
        let name = if s.ns == NsId::NONE {
            s.local.to_string()
        } else {
            format!("{{{}}}{}", s.ns_uri, s.local)
        };
        let version = s.attr(NsId::NONE, "version").map(AttrValue::from);
        self.queue.push_back(FeedEvent::Root(Root {
            pos: s.pos,
            is_rss,
            name,
            version,
        }));
        if !is_rss {
            self.finished = true;
        }
        Frame::Rss
    }

    fn enter_channel_child(&mut self, s: &Start<'_>) -> Frame {
        let Some(channel) = self.channel.as_deref_mut() else {
            return Frame::Other;
        };
        if self.items_only && (s.ns, s.local) != (NsId::NONE, "item") {
            self.left_items = true;
        }
        match (s.ns, s.local) {
            (NsId::NONE, "item") => {
                self.items += 1;
                let mut item = self.spare.take().unwrap_or_default();
                item.reset(self.items, s.pos);
                self.item = Some(item);
                Frame::Item
            }
            (NsId::NONE, "title") => value(&mut channel.titles, s.pos, Slot::ChannelTitle),
            (NsId::NONE, "link") => value(&mut channel.links, s.pos, Slot::ChannelLink),
            (NsId::NONE, "description") => {
                value(&mut channel.descriptions, s.pos, Slot::ChannelDescription)
            }
            (NsId::MRSS, "content") => {
                channel.stray_contents.push(s.pos);
                Frame::Other
            }
            (NsId::ATOM, "link") => {
                let rel = s.attr(NsId::NONE, "rel").map(|a| a.value.as_str());
                if matches!(rel, Some("next" | "prev" | "previous" | "first" | "last"))
                    && let Some(href) = s.attr(NsId::NONE, "href")
                {
                    channel.pagination.push(href.into());
                }
                Frame::Other
            }
            _ => Frame::Other,
        }
    }

    fn enter_item_child(&mut self, s: &Start<'_>) -> Frame {
        let Some(item) = self.item.as_deref_mut() else {
            return Frame::Other;
        };
        let pos = s.pos;
        match (s.ns, s.local) {
            (NsId::NONE, "guid") => {
                let g = item.guids.push_reused(Guid::default);
                g.value.reset(pos);
                set_attr(&mut g.is_perma_link, s.attr(NsId::NONE, "isPermaLink"));
                Frame::Value(Slot::Guid)
            }
            (NsId::NONE, "link") => value(&mut item.links, pos, Slot::Link),
            (NsId::NONE, "pubDate") => value(&mut item.pub_dates, pos, Slot::PubDate),
            (NsId::NONE, "title") => value(&mut item.titles, pos, Slot::Title),
            (NsId::NONE, "description") => value(&mut item.descriptions, pos, Slot::Description),
            (NsId::NONE, "enclosure") => {
                item.enclosures.push(Enclosure {
                    pos,
                    url: s.attr(NsId::NONE, "url").map(AttrValue::from),
                });
                Frame::Other
            }
            (NsId::DCTERMS, "identifier") => typed(&mut item.identifiers, s, Slot::Identifier),
            (NsId::DCTERMS, "publisher") => value(&mut item.publishers, pos, Slot::Publisher),
            (NsId::DCTERMS, "accessRights") => {
                value(&mut item.access_rights, pos, Slot::AccessRights)
            }
            (NsId::DCTERMS, "license") => value(&mut item.licenses, pos, Slot::License),
            (NsId::DCTERMS, "isPartOf") => typed(&mut item.is_part_of, s, Slot::IsPartOf),
            (NsId::DCTERMS, "isFormatOf") => typed(&mut item.is_format_of, s, Slot::IsFormatOf),
            (NsId::DCTERMS, "creator") => value(&mut item.creators, pos, Slot::Creator),
            (NsId::DCTERMS, "contributor") => value(&mut item.contributors, pos, Slot::Contributor),
            (NsId::DCTERMS, "format") => value(&mut item.formats, pos, Slot::Format),
            (NsId::DCTERMS, "references") => typed(&mut item.references, s, Slot::References),
            (NsId::MRSS, "keywords") => value(&mut item.keywords, pos, Slot::Keywords),
            (NsId::MRSS, "hash") => scoped_hash(item, s, None),
            (NsId::MRSS, "content") => {
                fill_content(item.contents.push_reused(MediaContent::default), s, false);
                Frame::Content
            }
            (NsId::MRSS, "group") => open_group(&mut self.open_groups, item, pos, false),
            _ => Frame::Other,
        }
    }

    fn enter_group_child(&mut self, s: &Start<'_>) -> Frame {
        let Some(item) = self.item.as_deref_mut() else {
            return Frame::Other;
        };
        match (s.ns, s.local) {
            (NsId::MRSS, "content") => {
                if let Some(g) = self
                    .open_groups
                    .last()
                    .and_then(|i| item.groups.get_mut(*i))
                {
                    g.contents += 1;
                }
                fill_content(item.contents.push_reused(MediaContent::default), s, true);
                Frame::Content
            }
            (NsId::MRSS, "group") => open_group(&mut self.open_groups, item, s.pos, true),
            (NsId::MRSS, "hash") => {
                let group = self
                    .open_groups
                    .last()
                    .and_then(|i| item.groups.get(*i))
                    .map(|g| g.pos);
                scoped_hash(item, s, group)
            }
            _ => Frame::Other,
        }
    }

    fn enter_content_child(&mut self, s: &Start<'_>) -> Frame {
        let Some(c) = self.item.as_deref_mut().and_then(|i| i.contents.last_mut()) else {
            return Frame::Other;
        };
        let attr = |local: &str| s.attr(NsId::NONE, local).map(AttrValue::from);
        match (s.ns, s.local) {
            (NsId::MRSS, "hash") => {
                push_hash(&mut c.hashes, s);
                Frame::Value(Slot::ContentHash)
            }
            (NsId::MRSS, "license") => {
                c.licenses.push(License {
                    value: Value::at(s.pos),
                    href: attr("href"),
                    mime: attr("type"),
                });
                Frame::Value(Slot::ContentLicense)
            }
            (NsId::MRSS, "credit") => {
                c.credits.push(Credit {
                    value: Value::at(s.pos),
                    role: attr("role"),
                    scheme: attr("scheme"),
                });
                Frame::Value(Slot::ContentCredit)
            }
            (NsId::MRSS, "copyright") => {
                c.copyrights.push(Copyright {
                    value: Value::at(s.pos),
                    url: attr("url"),
                });
                Frame::Value(Slot::ContentCopyright)
            }
            (NsId::MRSS, "keywords") => value(&mut c.keywords, s.pos, Slot::ContentKeywords),
            (NsId::DCTERMS, "isFormatOf") => value(&mut c.markers, s.pos, Slot::Marker),
            _ => Frame::Other,
        }
    }

    fn leave(&mut self) {
        match self.frames.pop() {
            Some(Frame::Group) => {
                self.open_groups.pop();
            }
            Some(Frame::Item) => {
                if let Some(item) = self.item.take() {
                    self.queue.push_back(FeedEvent::Item(item));
                }
            }
            Some(Frame::Channel) => {
                if let Some(channel) = self.channel.take() {
                    self.queue.push_back(FeedEvent::Channel(channel));
                }
            }
            _ => {}
        }
    }

    /// The value the text of `slot` goes to.
    fn slot(&mut self, slot: Slot) -> Option<&mut Value> {
        if let Some(c) = self.channel.as_deref_mut() {
            match slot {
                Slot::ChannelTitle => return c.titles.last_mut(),
                Slot::ChannelLink => return c.links.last_mut(),
                Slot::ChannelDescription => return c.descriptions.last_mut(),
                _ => {}
            }
        }
        let item = self.item.as_deref_mut()?;
        Some(match slot {
            Slot::Guid => &mut item.guids.last_mut()?.value,
            Slot::Identifier => &mut item.identifiers.last_mut()?.value,
            Slot::Link => item.links.last_mut()?,
            Slot::PubDate => item.pub_dates.last_mut()?,
            Slot::Publisher => item.publishers.last_mut()?,
            Slot::Title => item.titles.last_mut()?,
            Slot::Description => item.descriptions.last_mut()?,
            Slot::AccessRights => item.access_rights.last_mut()?,
            Slot::License => item.licenses.last_mut()?,
            Slot::IsPartOf => &mut item.is_part_of.last_mut()?.value,
            Slot::IsFormatOf => &mut item.is_format_of.last_mut()?.value,
            Slot::Creator => item.creators.last_mut()?,
            Slot::Contributor => item.contributors.last_mut()?,
            Slot::Format => item.formats.last_mut()?,
            Slot::References => &mut item.references.last_mut()?.value,
            Slot::Keywords => item.keywords.last_mut()?,
            Slot::ScopedHash => &mut item.scoped_hashes.last_mut()?.hash.value,
            Slot::ContentHash => &mut item.contents.last_mut()?.hashes.last_mut()?.value,
            Slot::ContentLicense => &mut item.contents.last_mut()?.licenses.last_mut()?.value,
            Slot::ContentCredit => &mut item.contents.last_mut()?.credits.last_mut()?.value,
            Slot::ContentCopyright => &mut item.contents.last_mut()?.copyrights.last_mut()?.value,
            Slot::ContentKeywords => item.contents.last_mut()?.keywords.last_mut()?,
            Slot::Marker => item.contents.last_mut()?.markers.last_mut()?,
            Slot::ChannelTitle | Slot::ChannelLink | Slot::ChannelDescription => return None,
        })
    }
}

fn value(list: &mut List<Value>, pos: Pos, slot: Slot) -> Frame {
    list.push_reused(Value::default).reset(pos);
    Frame::Value(slot)
}

/// Sets `slot` from `attr`, reusing the old value's allocation.
fn set_attr(slot: &mut Option<AttrValue>, attr: Option<&Attribute>) {
    match (slot.as_mut(), attr) {
        (Some(old), Some(a)) => {
            old.value.clear();
            old.value.push_str(&a.value);
            old.pos = a.pos;
        }
        (None, Some(a)) => *slot = Some(a.into()),
        (_, None) => *slot = None,
    }
}

fn typed(list: &mut List<Typed>, s: &Start<'_>, slot: Slot) -> Frame {
    let t = list.push_reused(Typed::default);
    t.value.reset(s.pos);
    t.xsi_type = s.attr(NsId::XSI, "type").map(|a| XsiType {
        raw: a.value.clone(),
        resolved: a.qname.clone().unwrap_or(QNameValue::Invalid),
        pos: a.pos,
    });
    Frame::Value(slot)
}

/// A `media:group` opens, in the item or `nested` in another group (S201-content).
fn open_group(open_groups: &mut Vec<usize>, item: &mut Item, pos: Pos, nested: bool) -> Frame {
    open_groups.push(item.groups.len());
    item.groups.push(Group {
        pos,
        nested,
        contents: 0,
    });
    Frame::Group
}

/// A `media:hash` on the item (`group` is `None`) or on a `media:group`: it applies to
/// all contents below it (F305).
fn scoped_hash(item: &mut Item, s: &Start<'_>, group: Option<Pos>) -> Frame {
    item.scoped_hashes.push(ScopedHash {
        hash: Hash {
            value: Value::at(s.pos),
            algo: s.attr(NsId::NONE, "algo").map(AttrValue::from),
        },
        group,
    });
    Frame::Value(Slot::ScopedHash)
}

fn push_hash(list: &mut List<Hash>, s: &Start<'_>) {
    let h = list.push_reused(Hash::default);
    h.value.reset(s.pos);
    set_attr(&mut h.algo, s.attr(NsId::NONE, "algo"));
}

fn fill_content(c: &mut MediaContent, s: &Start<'_>, in_group: bool) {
    c.pos = s.pos;
    c.in_group = in_group;
    set_attr(&mut c.url, s.attr(NsId::NONE, "url"));
    set_attr(&mut c.mime, s.attr(NsId::NONE, "type"));
    set_attr(&mut c.file_size, s.attr(NsId::NONE, "fileSize"));
    set_attr(&mut c.medium, s.attr(NsId::NONE, "medium"));
    c.hashes.clear();
    c.licenses.clear();
    c.credits.clear();
    c.copyrights.clear();
    c.keywords.clear();
    c.markers.clear();
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::ReaderLimits;

    fn items(doc: &str) -> Vec<Item> {
        let mut r = FeedReader::new(XmlReader::new(doc.as_bytes(), ReaderLimits::default()));
        let mut out = Vec::new();
        while let Some(e) = r.read_event().expect("well-formed") {
            if let FeedEvent::Item(i) = e {
                out.push(*i);
            }
        }
        out
    }

    #[test]
    fn contents_after_a_nested_group_count_for_the_outer_group() {
        let doc = r#"<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><item>
            <media:group><media:group><media:content url="https://a.se/1"/></media:group>
            <media:content url="https://a.se/2"/><media:hash>x</media:hash></media:group>
            <media:content url="https://a.se/3"/></item></channel></rss>"#;
        let item = &items(doc)[0];
        let groups: Vec<(bool, usize)> =
            item.groups.iter().map(|g| (g.nested, g.contents)).collect();
        assert_eq!(groups, vec![(false, 1), (true, 1)]);
        assert_eq!(
            item.contents.iter().map(|c| c.in_group).collect::<Vec<_>>(),
            vec![true, true, false]
        );
        assert_eq!(item.scoped_hashes[0].group, Some(item.groups[0].pos));
    }

    #[test]
    fn values_keep_text_cdata_and_references_and_note_child_elements() {
        let doc = "<rss version=\"2.0\"><channel><item><title> a <![CDATA[<b>]]> &amp; &#229; </title><description>x<p>y</p></description></item></channel></rss>";
        let item = &items(doc)[0];
        assert_eq!(item.titles[0].trimmed(), "a <b> & å");
        assert!(!item.titles[0].has_children);
        assert!(item.descriptions[0].has_children);
    }
}
