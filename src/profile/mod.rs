//! Validation against a delivery profile: feed events in, [`Finding`]s out, no I/O.
//!
//! [`Validator`] is the streaming API the harvester uses: it yields each item with its
//! findings as soon as the item ends, and feed-level findings as they arise. [`validate`]
//! collects everything into a [`Report`] for `plikt validate` and the web page. Both apply
//! the catalogue's cascade policy (§0.4): `G-XML` is fatal and replaces every other
//! finding; a root that is not `rss` reports only `G-RSS`.

mod date;
mod finding;
mod kb24;
#[cfg(unix)]
mod split;
pub mod syntax;
mod vocabulary;

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Read};

pub use date::{PubDate, days_from_civil, parse as parse_pub_date};
pub use finding::{Finding, RuleId, Severity};
pub use kb24::{ItemKeys, Kb24, ProfileOptions, item_guid};
pub use vocabulary::Vocabulary;

use crate::feed::{FeedEvent, FeedReader, Item};
use crate::xml::{Encoding, ReadError, ReaderLimits, XmlReader};

/// Everything that tunes one validation.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Size and depth limits of the XML reader.
    pub limits: ReaderLimits,
    /// Options the feed cannot decide (per-feed configuration).
    pub profile: ProfileOptions,
    /// At most this many findings of one rule and severity are kept in a [`Report`]
    /// (all are counted); 0 means no limit.
    pub max_findings_per_rule: usize,
    /// [`validate_file`] hands stretches of about this many bytes of items to a second
    /// thread; a file under twice this size, or 0, is read on one thread.
    pub segment_bytes: u64,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            limits: ReaderLimits::default(),
            profile: ProfileOptions::default(),
            max_findings_per_rule: 0,
            segment_bytes: 1 << 20,
        }
    }
}

/// The profile's name in reports.
pub const PROFILE: &str = "kb-2.4";

/// What a [`Validator`] yields.
#[derive(Debug)]
pub enum Checked {
    /// A feed-level finding (namespace, channel, root).
    Finding(Finding),
    /// An item and its findings.
    Item(Box<Item>, Vec<Finding>),
    /// A fatal finding (`G-XML`, or a root that is not `rss`): discard everything
    /// before it; nothing follows.
    Fatal(Finding),
}

/// Streaming validation of one feed against KB profile 2.4.
#[derive(Debug)]
pub struct Validator<R: Read> {
    feed: FeedReader<R>,
    rules: Kb24,
    queue: VecDeque<Checked>,
    items: u32,
    done: bool,
    pagination: Vec<crate::feed::AttrValue>,
    /// Items read by a second thread ([`validate_file`]).
    #[cfg(unix)]
    split: Option<split::Link>,
}

impl<R: Read> Validator<R> {
    /// Validates `input` (raw bytes in any supported encoding).
    pub fn new(input: R, options: &Options) -> Self {
        Self {
            feed: FeedReader::new(XmlReader::new(input, options.limits)),
            rules: Kb24::new(options.profile),
            queue: VecDeque::new(),
            items: 0,
            done: false,
            pagination: Vec::new(),
            #[cfg(unix)]
            split: None,
        }
    }

    /// Pagination links of the channel (`atom:link rel="next"` …), once the channel
    /// ended: the harvester's H-PAGINATION.
    pub fn pagination(&self) -> &[crate::feed::AttrValue] {
        &self.pagination
    }

    /// Hands back an item the caller is done with, so reading the next one allocates
    /// nothing new (optional; see [`crate::feed::List`]).
    pub fn recycle(&mut self, item: Box<Item>) {
        self.feed.recycle(item);
    }

    /// Items seen so far.
    pub fn items(&self) -> u32 {
        self.items
    }

    /// The input's encoding, once known.
    pub fn encoding(&self) -> Option<Encoding> {
        self.feed.xml().encoding()
    }

    fn step(&mut self) -> Result<Option<Checked>, io::Error> {
        loop {
            if let Some(c) = self.queue.pop_front() {
                return Ok(Some(c));
            }
            if self.done {
                return Ok(None);
            }
            let event = match self.feed.read_event() {
                Ok(Some(e)) => e,
                Ok(None) => {
                    self.done = true;
                    continue;
                }
                Err(ReadError::Io(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(ReadError::Malformed(e)) => {
                    self.done = true;
                    self.queue.clear();
                    let f = Finding::new(RuleId::GXml, Severity::Error, e.pos, e.kind.message());
                    return Ok(Some(Checked::Fatal(f)));
                }
            };
            let mut out = Vec::new();
            match event {
                FeedEvent::Namespace(d) => self.rules.namespace(&d, &mut out),
                FeedEvent::Root(root) => {
                    if !self.rules.root(&root, &mut out) {
                        self.done = true;
                        self.queue.clear();
                        if let Some(f) = out.pop() {
                            return Ok(Some(Checked::Fatal(f)));
                        }
                    }
                }
                FeedEvent::ChannelStart(pos) => {
                    self.rules.channel_start(pos, &mut out);
                    #[cfg(unix)]
                    if let Some(link) = &mut self.split {
                        link.channel_started(self.feed.xml_mut());
                    }
                }
                FeedEvent::Boundary =>
                {
                    #[cfg(unix)]
                    if let Some(link) = &mut self.split {
                        self.items +=
                            link.splice(&mut self.feed, &mut self.rules, self.items, &mut out);
                    }
                }
                FeedEvent::DcElement { pos, local } => self.rules.dc_element(pos, &local, &mut out),
                FeedEvent::Channel(c) => {
                    self.rules.channel(&c, &mut out);
                    self.pagination.clone_from(&c.pagination);
                }
                FeedEvent::Item(item) => {
                    self.items += 1;
                    self.rules.item(&item, &mut out);
                    self.queue.push_back(Checked::Item(item, out));
                    continue;
                }
                FeedEvent::End => self.rules.end(&mut out),
            }
            self.queue.extend(out.into_iter().map(Checked::Finding));
        }
    }
}

impl<R: Read> Iterator for Validator<R> {
    /// `Err` only when the input itself could not be read (a file, pipe or connection
    /// failed): that is no verdict on the feed. Nothing follows an `Err`.
    type Item = Result<Checked, io::Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.step().transpose()
    }
}

/// All findings of one feed, for printing.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Items in the feed (read before a fatal error, if any).
    pub items: u32,
    /// Kept findings, sorted by position.
    pub findings: Vec<Finding>,
    /// Errors found (all, also those not kept).
    pub errors: u64,
    /// Warnings found.
    pub warnings: u64,
    /// Infos found.
    pub infos: u64,
    /// Findings counted but not kept, per rule and severity.
    pub omitted: BTreeMap<(RuleId, Severity), u64>,
    /// The input's encoding.
    pub encoding: Option<Encoding>,
}

impl Report {
    /// No errors (warnings allowed): exit status 0.
    pub fn valid(&self) -> bool {
        self.errors == 0
    }

    fn add(&mut self, f: Finding, cap: usize, kept: &mut BTreeMap<(RuleId, Severity), usize>) {
        match f.severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
            Severity::Info => self.infos += 1,
        }
        let n = kept.entry((f.rule, f.severity)).or_default();
        if cap == 0 || *n < cap {
            *n += 1;
            self.findings.push(f);
        } else {
            *self.omitted.entry((f.rule, f.severity)).or_default() += 1;
        }
    }
}

/// Validates a whole feed into a [`Report`]. `Err` only when the input could not be read.
pub fn validate<R: Read>(input: R, options: &Options) -> Result<Report, io::Error> {
    report(&mut Validator::new(input, options), options)
}

/// [`validate`] for a file: the same [`Report`], but a large UTF-8 file is read on two
/// threads (see `split`), which takes about half the time.
pub fn validate_file(file: &std::fs::File, options: &Options) -> Result<Report, io::Error> {
    #[cfg(unix)]
    return split::validate_file(file, options);
    #[cfg(not(unix))]
    return validate(file, options);
}

fn report<R: Read>(v: &mut Validator<R>, options: &Options) -> Result<Report, io::Error> {
    let mut report = Report::default();
    let mut kept = BTreeMap::new();
    let cap = options.max_findings_per_rule;
    let mut fatal = false;
    while let Some(c) = v.next().transpose()? {
        match c {
            Checked::Finding(f) => report.add(f, cap, &mut kept),
            Checked::Item(item, findings) => {
                for f in findings {
                    report.add(f, cap, &mut kept);
                }
                v.recycle(item);
            }
            Checked::Fatal(f) => {
                report = Report::default();
                report.add(f, 0, &mut BTreeMap::new());
                fatal = true;
            }
        }
    }
    // After a fatal finding the items read before it count for nothing (§0.4.1).
    report.items = if fatal { 0 } else { v.items() };
    report.encoding = v.encoding();
    report.findings.sort_by_key(|f| f.pos);
    Ok(report)
}
