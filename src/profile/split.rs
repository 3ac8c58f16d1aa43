//! Validating a feed file on two threads, with exactly the verdict of one.
//!
//! A large feed is a long run of `<item>`s, and all but two item rules look at one item
//! only. So the main thread validates the file as usual, through a [`SpliceReader`]
//! that pauses at planned offsets just after an `</item>`, while a helper thread reads
//! the stretch after each such offset (a *segment*) with its own reader, continuing in
//! the channel's namespace scope, and checks its items with [`Kb24::check_item`].
//!
//! When the main thread's reader is exactly at the offset, between two children of
//! the channel and in the same scope ([`FeedEvent::Boundary`]), it takes the segment's
//! items in order, applies the rules across items itself (R101 uniqueness, G-ORDER:
//! [`Kb24::across_items`]) and the namespace rules to declarations inside them, moves
//! their positions from the segment's start to the document's, and reads on after the
//! segment. Otherwise (the offset was inside a comment or CDATA section) it reads on
//! itself and the helper is dropped.
//!
//! A feed whose DOCTYPE declares entities or attributes is read on one thread: what the
//! helper reads would depend on declarations it does not have.
//!
//! A segment ends before anything that is not a run of whole items: the channel's end,
//! another child of the channel, malformed XML, an I/O error. The main thread reads those
//! bytes itself, so every finding, `G-XML` included, comes from the same code at the same
//! position as on one thread. Memory stays bounded: at most [`QUEUE`] items' results wait
//! between the threads, and positions are resolved as they are read.
//!
//! The helper plans where its next segment starts from how fast each thread has read
//! so far ([`share`]), so that both threads finish at about the same time.

use std::cell::Cell;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{Finding, ItemKeys, Kb24, Options, Report, Validator, item_guid};
use crate::feed::{FeedEvent, FeedReader};
use crate::xml::{Pos, SNIFF, Scope, XmlReader, is_plain_utf8};

/// A segment ends after this many items, whatever its size.
const SEGMENT_ITEMS: u32 = 8192;
/// Items sent to the main thread at once.
const BATCH: usize = 64;
/// Batches that may wait for the main thread: two segments' worth.
const QUEUE: usize = 2 * SEGMENT_ITEMS as usize / BATCH;
/// How far past a planned offset an `</item>` is looked for.
const SEARCH: u64 = 16 << 20;

/// One item of a segment, checked, positions counted from the segment's start.
#[derive(Debug)]
struct Checked {
    /// Feed events inside the item, before it: namespace declarations, DC 1.1 elements.
    events: Vec<FeedEvent>,
    /// What [`Kb24::check_item`] found.
    findings: Vec<Finding>,
    keys: ItemKeys,
    /// The item's guid ([`item_guid`]): where it ends in [`Batch::guids`], if it has one.
    guid: Option<usize>,
}

/// Items of a segment, in order, sent together.
#[derive(Debug)]
struct Batch {
    items: Vec<Checked>,
    /// The items' guids, one after the other (one allocation for the batch).
    guids: String,
}

impl Batch {
    fn new() -> Self {
        Self {
            items: Vec::with_capacity(BATCH),
            guids: String::with_capacity(BATCH * 48),
        }
    }
}

/// What the helper sends, in document order.
#[derive(Debug)]
enum Msg {
    /// Items of the segment.
    Items(Batch),
    /// The segment ends at file offset `end`, at position `pos` (from the segment's
    /// start); the next one, if any, starts at file offset `next`.
    End {
        end: u64,
        pos: Pos,
        next: Option<u64>,
    },
}

/// Where the main thread's reader pauses, and where it goes on from there.
#[derive(Debug, Default)]
struct Gate {
    /// File offset at which reading stops until a decision is taken; `None` once the
    /// reader read past a pause without one (the offset was no boundary).
    pause: Option<u64>,
    /// Taken at the pause: the offset to read on from, and the next pause.
    resume: Option<(u64, Option<u64>)>,
}

/// The gate, shared by the main thread's reader and its [`Link`].
type SharedGate = Arc<Mutex<Gate>>;

fn lock(gate: &SharedGate) -> std::sync::MutexGuard<'_, Gate> {
    gate.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The main thread's input: the file, read up to each pause; there it skips the
/// segment the helper read if [`Link::splice`] took it, and otherwise reads on.
#[derive(Debug)]
struct SpliceReader<'f> {
    file: &'f File,
    offset: u64,
    gate: SharedGate,
    balance: Arc<Balance>,
}

impl Read for SpliceReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut gate = lock(&self.gate);
        if gate.pause == Some(self.offset) {
            match gate.resume.take() {
                Some((to, next)) => {
                    self.offset = to;
                    gate.pause = next;
                }
                // Bytes past the pause are wanted before the boundary was seen: the
                // offset is not between two children of the channel.
                None => gate.pause = None,
            }
        }
        let want = match gate.pause {
            Some(p) if p > self.offset => {
                usize::try_from(p - self.offset).map_or(buf.len(), |n| n.min(buf.len()))
            }
            _ => buf.len(),
        };
        drop(gate);
        let n = self.file.read_at(&mut buf[..want], self.offset)?;
        self.offset += n as u64;
        self.balance
            .main_bytes
            .fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A file read from an offset on, without moving the file's own cursor.
#[derive(Debug)]
struct ReadAt<'f> {
    file: &'f File,
    offset: u64,
}

impl Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.offset)?;
        self.offset += n as u64;
        Ok(n)
    }
}

/// How fast the main thread reads, for the helper to plan by ([`share`]).
#[derive(Debug)]
struct Balance {
    /// When the main thread started reading.
    started: Instant,
    /// File bytes the main thread read itself, not counting the helper's segments.
    main_bytes: AtomicU64,
    /// Nanoseconds the main thread spent waiting for the helper.
    main_waited: AtomicU64,
}

impl Balance {
    /// The main thread's bytes so far, and the nanoseconds it spent reading them.
    fn main_progress(&self) -> (u64, u64) {
        let busy =
            nanos(self.started.elapsed()).saturating_sub(self.main_waited.load(Ordering::Relaxed));
        (self.main_bytes.load(Ordering::Relaxed), busy)
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Where the helper stands when it plans its next segment, for [`share`].
#[derive(Debug, Clone, Copy)]
struct Progress {
    /// `segment_bytes`.
    segment: u64,
    /// File bytes after the segment just read.
    remaining: u64,
    /// Bytes the main thread still has to read itself before it reaches that segment.
    lag: u64,
    /// Bytes each thread read itself so far, and nanoseconds it was busy doing so:
    /// their speeds, in which the main thread's work across items is included.
    main: (u64, u64),
    helper: (u64, u64),
}

/// How the threads share the work, so that both finish at the same time: the bytes the
/// main thread reads after the segment just read (its lag aside) before the next one,
/// and whether that next segment should run on to the end of the items.
///
/// While the helper reads a segment, the main thread reads what the ratio of their
/// speeds says it can in that time, and half as much again: a main thread that comes
/// to a segment the helper is still reading waits, while a helper ahead of the main
/// thread reads on (up to [`QUEUE`] batches). The main thread's lag is taken off, so
/// it stays about half a segment behind. When the rest of the file is little more than
/// that, it is cut in the ratio of their speeds, lag included, and the helper reads on
/// to the end.
fn share(p: Progress) -> (u64, bool) {
    // Speeds as bytes per nanosecond: main / helper = a / b, kept within 1/4 and 4 so
    // that a stall measured early does not leave one thread all the work.
    let (main_bytes, main_ns) = (u128::from(p.main.0), u128::from(p.main.1));
    let (helper_bytes, helper_ns) = (u128::from(p.helper.0), u128::from(p.helper.1));
    let (mut a, mut b) = (main_bytes * helper_ns, main_ns * helper_bytes);
    if a == 0 || b == 0 {
        (a, b) = (1, 1);
    }
    a = a.min(4 * b);
    b = b.min(4 * a);
    let (segment, remaining, lag) = (
        u128::from(p.segment),
        u128::from(p.remaining),
        u128::from(p.lag),
    );
    let to_u64 = |n: u128| u64::try_from(n).unwrap_or(u64::MAX);
    // The last segment would be (remaining + lag) / (1 + a/b) long: at most two segments.
    if (remaining + lag) * b <= 2 * segment * (a + b) {
        let main = (a * remaining).saturating_sub(b * lag) / (a + b);
        return (to_u64(main), true);
    }
    (
        to_u64((segment * a * 3 / (2 * b)).saturating_sub(lag)),
        false,
    )
}

/// The main thread's end of the split, held by its [`Validator`].
#[derive(Debug)]
pub(super) struct Link {
    /// Sends the channel's scope to the helper, once.
    scope_tx: Option<SyncSender<Scope>>,
    scope: Option<Scope>,
    rx: Receiver<Msg>,
    gate: SharedGate,
    /// File bytes skipped so far: a file offset minus the reader's decoded offset.
    skipped: u64,
    /// Items taken from the helper so far.
    spliced: u32,
    balance: Arc<Balance>,
}

impl Link {
    /// At the first channel's start tag: the helper may start, in this scope.
    pub(super) fn channel_started<R: Read>(&mut self, xml: &mut XmlReader<R>) {
        let Some(tx) = self.scope_tx.take() else {
            return;
        };
        let scope = xml.scope();
        // Entities and attribute defaults of the DOCTYPE: the helper's reader would not
        // know them, and expansion is bounded over the whole document; one thread reads
        // such a feed (the helper, never sent a scope, ends).
        if scope.has_declarations() {
            return;
        }
        if let Some(pause) = lock(&self.gate).pause
            && xml.offset() < pause - self.skipped
            && tx.send(scope.clone()).is_ok()
        {
            self.scope = Some(scope);
            xml.stop_at(pause - self.skipped);
        }
    }

    /// At [`FeedEvent::Boundary`]: takes the segment that starts here, if the reader
    /// is in the scope the helper read it in. Returns how many items it held, after
    /// adding their findings to `out`.
    pub(super) fn splice<R: Read>(
        &mut self,
        feed: &mut FeedReader<R>,
        rules: &mut Kb24,
        items: u32,
        out: &mut Vec<Finding>,
    ) -> u32 {
        // No pause left (the reader read past one, declined), or another scope.
        let (Some(pause), Some(scope)) = (lock(&self.gate).pause, &self.scope) else {
            return 0;
        };
        if feed.xml().scope() != *scope {
            return 0;
        }
        let base = feed.xml_mut().position();
        let at = |p: Pos| moved(base, p);
        let mut n = 0;
        loop {
            // The helper ended without a word (it panicked): the reader reads on past
            // the pause by itself; the panic is raised when the threads are joined.
            let Some(msg) = self.receive() else {
                return n;
            };
            match msg {
                Msg::Items(batch) => {
                    let mut guid_start = 0;
                    for mut item in batch.items {
                        for e in item.events {
                            match e {
                                FeedEvent::Namespace(mut d) => {
                                    d.pos = at(d.pos);
                                    rules.namespace(&d, out);
                                }
                                FeedEvent::DcElement { pos, local } => {
                                    rules.dc_element(at(pos), &local, out);
                                }
                                _ => {}
                            }
                        }
                        for f in &mut item.findings {
                            f.pos = f.pos.map(at);
                        }
                        item.keys.map_positions(at);
                        n += 1;
                        let start = out.len();
                        out.append(&mut item.findings);
                        let guid = item.guid.map(|end| {
                            let guid = batch.guids.get(guid_start..end).unwrap_or_default();
                            guid_start = end;
                            guid
                        });
                        rules.across_items(&item.keys, items + n, guid, out, start);
                    }
                }
                Msg::End { end, pos, next } => {
                    lock(&self.gate).resume = Some((end, next));
                    self.skipped += end - pause;
                    feed.skip_items(n);
                    self.spliced += n;
                    let xml = feed.xml_mut();
                    xml.jump(at(pos));
                    if let Some(next) = next {
                        xml.stop_at(next - self.skipped);
                    }
                    return n;
                }
            }
        }
    }

    /// The helper's next message, noting when the main thread had to wait for it;
    /// `None` if the helper is gone.
    fn receive(&self) -> Option<Msg> {
        match self.rx.try_recv() {
            Ok(msg) => Some(msg),
            Err(TryRecvError::Empty) => {
                let waiting = Instant::now();
                let msg = self.rx.recv().ok();
                let waited = nanos(waiting.elapsed());
                self.balance
                    .main_waited
                    .fetch_add(waited, Ordering::Relaxed);
                msg
            }
            Err(TryRecvError::Disconnected) => None,
        }
    }
}

/// `rel`, a position counted from 1:1 at a point that is at `base` in the document.
fn moved(base: Pos, rel: Pos) -> Pos {
    if rel.line <= 1 {
        Pos {
            line: base.line,
            column: base.column + rel.column.saturating_sub(1),
        }
    } else {
        Pos {
            line: base.line + rel.line - 1,
            column: rel.column,
        }
    }
}

/// See [`super::validate_file`].
pub(super) fn validate_file(file: &File, options: &Options) -> io::Result<Report> {
    run(file, options).map(|(report, _)| report)
}

/// [`validate_file`], and how many items the helper read.
fn run(file: &File, options: &Options) -> io::Result<(Report, u32)> {
    let len = file.metadata()?.len();
    let segment = options.segment_bytes;
    let mut head = [0; SNIFF];
    let head_len = read_full_at(file, &mut head, 0)?;
    let first = if segment == 0
        || len / 2 < segment
        || len > options.limits.decode.max_bytes
        || !is_plain_utf8(&head[..head_len])
    {
        None
    } else {
        // Not within the head, which the decoder reads at once to find the encoding.
        after_item_end(file, segment.max(head.len() as u64))?
    };
    let Some(first) = first else {
        return super::validate(ReadAt { file, offset: 0 }, options).map(|r| (r, 0));
    };
    std::thread::scope(|threads| {
        let (scope_tx, scope_rx) = sync_channel(1);
        let (tx, rx) = sync_channel(QUEUE);
        let balance = Arc::new(Balance {
            started: Instant::now(),
            main_bytes: AtomicU64::new(0),
            main_waited: AtomicU64::new(0),
        });
        let shared = Arc::clone(&balance);
        threads.spawn(move || {
            if let Ok(scope) = scope_rx.recv() {
                helper(
                    file,
                    len,
                    first,
                    &scope,
                    &Sender {
                        tx,
                        balance: shared,
                        waited: Cell::new(0),
                    },
                    options,
                );
            }
        });
        let gate = Arc::new(Mutex::new(Gate {
            pause: Some(first),
            resume: None,
        }));
        let reader = SpliceReader {
            file,
            offset: 0,
            gate: Arc::clone(&gate),
            balance: Arc::clone(&balance),
        };
        let mut v = Validator::new(reader, options);
        v.split = Some(Link {
            scope_tx: Some(scope_tx),
            scope: None,
            rx,
            gate,
            skipped: 0,
            spliced: 0,
            balance,
        });
        let report = super::report(&mut v, options)?;
        let spliced = v.split.as_ref().map_or(0, |l| l.spliced);
        // The validator (and with it the receiver) is dropped before the helper is
        // joined: a helper waiting to send gives up.
        drop(v);
        Ok((report, spliced))
    })
}

/// The helper's end of the queue.
struct Sender {
    tx: SyncSender<Msg>,
    balance: Arc<Balance>,
    /// Nanoseconds the helper spent waiting for the main thread.
    waited: Cell<u64>,
}

impl Sender {
    /// Sends `msg`, noting how long it waited for room; false if the main thread is gone.
    fn send(&self, msg: Msg) -> bool {
        match self.tx.try_send(msg) {
            Ok(()) => true,
            Err(TrySendError::Full(msg)) => {
                let waiting = Instant::now();
                let sent = self.tx.send(msg).is_ok();
                self.waited
                    .set(self.waited.get() + nanos(waiting.elapsed()));
                sent
            }
            Err(TrySendError::Disconnected(_)) => false,
        }
    }
}

/// The helper thread: reads segments of the `len`-byte file from offset `start` on, in
/// `scope`.
fn helper(file: &File, len: u64, mut start: u64, scope: &Scope, tx: &Sender, options: &Options) {
    let started = Instant::now();
    let rules = Kb24::new(options.profile);
    let segment = options.segment_bytes;
    // Bytes of the segments read so far, and whether this one runs to the last item.
    let mut read = 0;
    let mut last = false;
    loop {
        let Ok(xml) = XmlReader::continuing(
            ReadAt {
                file,
                offset: start,
            },
            options.limits,
            scope,
        ) else {
            tx.send(Msg::End {
                end: start,
                pos: Pos { line: 1, column: 1 },
                next: None,
            });
            return;
        };
        let mut feed = FeedReader::continuing(xml);
        let Some(end) = read_segment(&mut feed, &rules, tx, segment, last) else {
            return;
        };
        let end_offset = start + end.offset;
        // What the main thread has to read itself to reach this segment.
        let before = start.saturating_sub(read);
        read += end.offset;
        let next = if end.more {
            let main = tx.balance.main_progress();
            let busy = nanos(started.elapsed()).saturating_sub(tx.waited.get());
            let (gap, to_the_end) = share(Progress {
                segment,
                remaining: len.saturating_sub(end_offset),
                lag: before.saturating_sub(main.0),
                main,
                helper: (read, busy),
            });
            last = to_the_end;
            after_item_end(file, end_offset + gap.max(1)).ok().flatten()
        } else {
            None
        };
        if !tx.send(Msg::End {
            end: end_offset,
            pos: end.pos,
            next,
        }) {
            return;
        }
        match next {
            Some(n) => start = n,
            None => return,
        }
    }
}

/// Where a segment's run of items ends, counted from the segment's start.
#[derive(Debug, Clone, Copy)]
struct SegmentEnd {
    /// Offset just after the last item taken.
    offset: u64,
    /// Its position.
    pos: Pos,
    /// The run of items goes on past this segment.
    more: bool,
}

/// Reads one segment's items from `feed`, checks them with [`Kb24::check_item`] and
/// sends them in batches. The segment ends after the first item past `segment` bytes
/// (unless it is the `last`) or after [`SEGMENT_ITEMS`] items, and before anything
/// that is not an item (or a namespace declaration or DC 1.1 element inside one).
/// `None` if the main thread is gone.
fn read_segment<R: Read>(
    feed: &mut FeedReader<R>,
    rules: &Kb24,
    tx: &Sender,
    segment: u64,
    last: bool,
) -> Option<SegmentEnd> {
    let mut end = SegmentEnd {
        offset: 0,
        pos: Pos { line: 1, column: 1 },
        more: false,
    };
    let mut events = Vec::new();
    let mut batch = Batch::new();
    let mut items = 0;
    while let Ok(Some(event)) = feed.read_event() {
        if feed.left_items() {
            break;
        }
        match event {
            FeedEvent::Item(item) => {
                let mut findings = Vec::new();
                let keys = rules.check_item(&item, &mut findings);
                let guid = item_guid(&item).map(|g| {
                    batch.guids.push_str(g);
                    batch.guids.len()
                });
                batch.items.push(Checked {
                    events: std::mem::take(&mut events),
                    findings,
                    keys,
                    guid,
                });
                feed.recycle(item);
                if batch.items.len() == BATCH
                    && !tx.send(Msg::Items(std::mem::replace(&mut batch, Batch::new())))
                {
                    return None;
                }
                items += 1;
                let xml = feed.xml_mut();
                (end.offset, end.pos) = (xml.offset(), xml.position());
                if (end.offset >= segment && !last) || items >= SEGMENT_ITEMS {
                    end.more = true;
                    break;
                }
            }
            e @ (FeedEvent::Namespace(_) | FeedEvent::DcElement { .. }) => events.push(e),
            _ => break,
        }
    }
    if !batch.items.is_empty() && !tx.send(Msg::Items(batch)) {
        return None;
    }
    Some(end)
}

/// The first file offset at or after `from` that directly follows an `</item>` and is
/// followed by white space or `<`: a candidate boundary between two items.
fn after_item_end(file: &File, from: u64) -> io::Result<Option<u64>> {
    const NEEDLE: &[u8] = b"</item>";
    let mut window = vec![0; 64 * 1024];
    let mut at = from.saturating_sub(NEEDLE.len() as u64);
    let finder = memchr::memmem::Finder::new(NEEDLE);
    while at < from + SEARCH {
        let n = read_full_at(file, &mut window, at)?;
        let bytes = &window[..n];
        for i in finder.find_iter(bytes) {
            let end = i + NEEDLE.len();
            let offset = at + end as u64;
            if offset >= from
                && let Some(b' ' | b'\t' | b'\r' | b'\n' | b'<') = bytes.get(end)
            {
                return Ok(Some(offset));
            }
        }
        if n < window.len() {
            return Ok(None);
        }
        // Overlap so that a needle and the byte after it across the edge are seen.
        at += (n - NEEDLE.len()) as u64;
    }
    Ok(None)
}

/// Reads into `buf` from file offset `at` until it is full or the file ends.
fn read_full_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], at + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests;
