//! Cron schedules → runs, shared by any number of workers (issue 3 §2, issue 17 §3).
//!
//! Every `plikt run` process is a worker. The catalog keeps, per publisher, when its
//! next run is due and which worker holds it (`store::lease`): a worker claims due
//! runs with a lease (a time of the catalog's clock, not of the worker's: `store::clock`),
//! renews the leases it holds every third of `lease_secs`, and
//! releases each with the next slot of the publisher's schedule when the run ends. So
//! two runs of one publisher never overlap, on one machine or many; a slot missed while
//! every worker was down (or while a long run was busy) is caught up once, not once
//! per missed slot; and a worker killed mid-run leaves a lease that expires, after
//! which another worker takes the run over (the catalog is consistent at every instant:
//! the new run completes what is pending). With SQLite there is one worker (the data
//! folder's lock); the same code runs it.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio::sync::watch;

use crate::config::{Config, PublisherConfig};
use crate::harvest::{HarvestError, Harvester, RunSummary};
use crate::store::{
    Busy, Catalog, Connection, Location, Outcome, PublisherStatus, StoreError, Timestamp,
};

/// The next slot of `p`'s schedule strictly after `after`.
pub fn next_slot(p: &PublisherConfig, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
    p.cron().after(&after).next()
}

/// When `p`'s next run is due, its last one claimed at `base`: the first slot after
/// it, which is already past when slots were missed (one catch-up run).
fn due(p: &PublisherConfig, base: Timestamp) -> Option<Timestamp> {
    next_slot(p, base.get()).map(Timestamp::from)
}

/// One process taking part in the harvest: its name in the catalog's leases and how
/// long they last.
#[derive(Debug, Clone)]
pub struct Worker {
    id: String,
    location: Location,
    lease: chrono::Duration,
    /// How far this machine's clock may be from the catalog's (`[catalog]
    /// max_clock_offset_secs`): further, and the worker claims no runs.
    max_clock_offset: chrono::Duration,
    /// The publishers whose runs this worker is carrying out: the leases it renews.
    carrying: Arc<std::sync::Mutex<BTreeSet<String>>>,
}

/// A run this worker carries out, from its claim until the release of its lease is
/// tried: its lease is renewed while this lives.
struct Carrying {
    publisher: String,
    of: Arc<std::sync::Mutex<BTreeSet<String>>>,
}

impl Drop for Carrying {
    fn drop(&mut self) {
        self.of
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&self.publisher);
    }
}

impl Worker {
    /// This process as a worker on `config`'s catalog: named by host, process id and
    /// 32 random bits (a restarted process is a new worker).
    pub fn new(config: &Config) -> Result<Self, StoreError> {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .unwrap_or_else(|_| "localhost".into());
        let mut tag = [0u8; 4];
        // Without randomness the pid still tells processes of one host apart.
        let _ = getrandom::fill(&mut tag);
        Ok(Self {
            id: format!("{host}:{}:{}", std::process::id(), hex::encode(tag)),
            location: Location::of(config)?,
            lease: chrono::Duration::seconds(
                i64::try_from(config.harvest.lease_secs).unwrap_or(i64::MAX / 1000),
            ),
            max_clock_offset: config.catalog.max_clock_offset(),
            carrying: Arc::default(),
        })
    }

    /// Marks `publisher`'s run as carried out by this worker until the guard drops.
    fn carry(&self, publisher: &str) -> Carrying {
        self.carrying
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(publisher.to_owned());
        Carrying {
            publisher: publisher.to_owned(),
            of: self.carrying.clone(),
        }
    }

    /// The worker's name in the catalog.
    pub fn id(&self) -> &str {
        &self.id
    }

    fn until(&self, now: Timestamp) -> Timestamp {
        now.plus(self.lease)
    }

    /// Renews the leases of the runs this worker carries out every third of their
    /// length (in the catalog's time, `store::clock`) until `shutdown`; a catalog that cannot be reached is tried again at the
    /// next turn (on a new connection), and meanwhile the leases run towards their
    /// expiry.
    pub async fn keep_leases(self, mut shutdown: watch::Receiver<bool>) {
        let every = (self.lease / 3)
            .to_std()
            .unwrap_or(std::time::Duration::from_secs(1));
        let mut catalog = Connection::new(self.location.clone());
        loop {
            tokio::select! {
                () = tokio::time::sleep(every) => {}
                _ = shutdown.changed() => {}
            }
            if *shutdown.borrow() {
                return;
            }
            let carrying: Vec<String> = self
                .carrying
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .iter()
                .cloned()
                .collect();
            if carrying.is_empty() {
                continue;
            }
            let renewed = catalog.with(|c| {
                let now = c.read_clock()?.catalog_now;
                c.renew_leases(&self.id, &carrying, self.until(now))
            });
            if let Err(e) = renewed {
                tracing::warn!(worker = %self.id, error = %e, "renewing leases failed; trying again");
            }
        }
    }

    /// Harvests `p` now (`plikt harvest`), under a lease like a scheduled run: `Busy`
    /// when another live worker is harvesting it.
    pub async fn harvest_now(
        &self,
        harvester: &Harvester,
        p: &PublisherConfig,
    ) -> Result<Result<RunSummary, Busy>, HarvestError> {
        let mut catalog = Catalog::open(&self.location)?;
        let now = catalog.check_clock(self.max_clock_offset)?.catalog_now;
        let carrying = self.carry(&p.id);
        if let Err(busy) =
            catalog.claim_now(&p.id, &self.id, (now, self.until(now)), due(p, now))?
        {
            return Ok(Err(busy));
        }
        let summary = harvester.run(p).await;
        drop(carrying);
        // The next scheduled run is the first slot after this one. When the run failed,
        // its failure is what the command reports (a full disk fails the release too).
        let released = Catalog::open(&self.location)
            .and_then(|c| c.release_lease(&p.id, &self.id, due(p, now)));
        match (summary, released) {
            (Ok(summary), Ok(_)) => Ok(Ok(summary)),
            (Ok(_), Err(e)) => Err(e.into()),
            (Err(e), released) => {
                if let Err(r) = released {
                    tracing::warn!(publisher = %p.id, error = %r, "releasing the run's lease failed too; it runs out by itself");
                }
                Err(e)
            }
        }
    }
}

impl Worker {
    /// The per-host limit kept together with the other workers of a PostgreSQL catalog
    /// (`None` with SQLite: one process keeps its limits itself).
    pub fn host_gate(&self) -> Option<Arc<dyn crate::fetch::HostGate>> {
        matches!(self.location, Location::Postgres { .. }).then(|| {
            Arc::new(HostSlots {
                location: self.location.clone(),
                state: Arc::default(),
            }) as Arc<dyn crate::fetch::HostGate>
        })
    }
}

/// Host slots as advisory locks on one catalog connection of this worker
/// (`Catalog::try_host_slot`): a request to a host takes one of the
/// `max_connections_per_host` slots, or waits and looks again. Each slot this worker
/// holds is one lock, taken once: a request reuses a slot of its worker that no other
/// request of it is using (PostgreSQL would grant a session a lock it holds already,
/// so taking slot 0 again for each request would let every worker hold
/// `max_connections_per_host` connections). A slot outlives its request by [`LINGER`]
/// before it is given back, so that a harvest's stream of requests to one host costs
/// the catalog no round trip per request (issue 17 §6: 40,000 of them for 20,000 small
/// files); other workers wait that much longer for it.
#[derive(Debug)]
struct HostSlots {
    location: Location,
    state: Arc<std::sync::Mutex<SlotState>>,
}

/// The slots this worker holds, and the connection that holds them.
#[derive(Debug, Default)]
struct SlotState {
    catalog: Option<Catalog>,
    /// Per host: slot → the time it was given back by its last request (`None`: a
    /// request is using it).
    held: HashMap<String, HashMap<u32, Option<std::time::Instant>>>,
    /// Per host: slots whose lock went with a connection that ended while a request
    /// was using them. They count against the limit until that request ends (the
    /// worker takes no new lock for them meanwhile), then are forgotten.
    owed: HashMap<String, std::collections::HashSet<u32>>,
    /// The task that gives back slots unused for [`LINGER`] runs.
    reaping: bool,
    /// When the connection was last found to hold the slots this worker counts on.
    checked: Option<std::time::Instant>,
    /// The connection is out of the state being checked ([`SlotState::due_check`]):
    /// no slot is taken meanwhile.
    checking: bool,
}

/// How long a request waits before it looks for a free slot of its host again.
const SLOT_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// How long a worker keeps a slot no request of it uses before it gives it back.
const LINGER: std::time::Duration = std::time::Duration::from_millis(100);

/// How often a worker that holds slots asks whether its connection still holds them.
/// A session that ended (`idle_session_timeout`, `pg_terminate_backend`, a restart)
/// took its locks with it; other workers may take those slots, so a worker streaming
/// to a host on slots it no longer holds would put that host over its limit.
const SLOT_CHECK: std::time::Duration = std::time::Duration::from_secs(1);

impl SlotState {
    /// A slot of `host` for a request now, if there is one; `Err` when the catalog
    /// cannot be reached (the connection is made again next time; the locks went
    /// with the old one).
    fn try_enter(
        &mut self,
        location: &Location,
        host: &str,
        max: usize,
    ) -> Result<Option<u32>, StoreError> {
        let max = u32::try_from(max).unwrap_or(u32::MAX);
        let held = self.held.entry(host.to_owned()).or_default();
        if let Some((&slot, idle)) = held
            .iter_mut()
            .find(|(slot, idle)| idle.is_some() && **slot < max)
        {
            *idle = None;
            return Ok(Some(slot));
        }
        if self.checking {
            return Ok(None);
        }
        let owed = self.owed.get(host);
        let free: Vec<u32> = (0..max)
            .filter(|s| !held.contains_key(s) && owed.is_none_or(|o| !o.contains(s)))
            .collect();
        if free.is_empty() {
            return Ok(None);
        }
        if self.catalog.is_none() {
            self.catalog = Some(Catalog::open(location)?);
        }
        let catalog = self.catalog.as_ref().expect("just opened");
        for slot in free {
            match catalog.try_host_slot(host, slot) {
                Ok(true) => {
                    self.held
                        .entry(host.to_owned())
                        .or_default()
                        .insert(slot, None);
                    return Ok(Some(slot));
                }
                Ok(false) => {}
                Err(e) => {
                    self.forget();
                    return Err(e);
                }
            }
        }
        Ok(None)
    }

    /// The connection is gone, and with it every lock it held: the slots requests are
    /// using become owed, the others are forgotten.
    fn forget(&mut self) {
        self.catalog = None;
        for (host, held) in self.held.drain() {
            let in_use = held
                .into_iter()
                .filter(|(_, idle)| idle.is_none())
                .map(|(slot, _)| slot);
            self.owed.entry(host).or_default().extend(in_use);
        }
        self.owed.retain(|_, o| !o.is_empty());
    }

    /// A request gives `slot` of `host` back.
    fn leave(&mut self, host: &str, slot: u32) {
        if let Some(idle) = self.held.get_mut(host).and_then(|h| h.get_mut(&slot)) {
            *idle = Some(std::time::Instant::now());
        } else if let Some(owed) = self.owed.get_mut(host) {
            owed.remove(&slot);
            if owed.is_empty() {
                self.owed.remove(host);
            }
        }
    }

    /// Every [`SLOT_CHECK`] while slots are held: the connection, taken out of the state
    /// (so that the query runs without the state's lock), and the slots it should hold.
    fn due_check(&mut self) -> Option<(Catalog, Vec<(String, u32)>)> {
        let now = std::time::Instant::now();
        if self.held.values().all(HashMap::is_empty)
            || self
                .checked
                .is_some_and(|t| now.duration_since(t) < SLOT_CHECK)
        {
            return None;
        }
        let catalog = self.catalog.take()?;
        self.checked = Some(now);
        self.checking = true;
        let slots = self
            .held
            .iter()
            .flat_map(|(host, held)| held.keys().map(|&slot| (host.clone(), slot)))
            .collect();
        Some((catalog, slots))
    }

    /// The outcome of a [`SlotState::due_check`]: the connection back, or, if it no
    /// longer holds the slots (its session ended), every slot forgotten.
    fn checked(&mut self, catalog: Catalog, holds: Result<bool, StoreError>) {
        self.checking = false;
        self.catalog = Some(catalog);
        if !matches!(holds, Ok(true)) {
            tracing::warn!(outcome = ?holds, "the catalog connection no longer holds this worker's host slots (its session ended); taking them again");
            self.forget();
        }
    }

    /// Gives back the slots no request has used for [`LINGER`].
    fn reap(&mut self) {
        let now = std::time::Instant::now();
        let Some(catalog) = self.catalog.as_ref() else {
            return;
        };
        let mut lost = false;
        for (host, held) in &mut self.held {
            held.retain(|slot, idle| {
                if lost || !idle.is_some_and(|t| now.duration_since(t) >= LINGER) {
                    return true;
                }
                if let Err(e) = catalog.leave_host_slot(host, *slot) {
                    tracing::warn!(host = %host, error = %e, "giving back a host slot failed");
                    lost = true;
                }
                false
            });
        }
        self.held.retain(|_, held| !held.is_empty());
        if lost {
            self.forget();
        }
    }
}

/// A slot of a host, handed back to its worker when dropped.
struct HostSlot {
    host: String,
    slot: u32,
    state: Arc<std::sync::Mutex<SlotState>>,
}

impl Drop for HostSlot {
    fn drop(&mut self) {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .leave(&self.host, self.slot);
    }
}

impl HostSlots {
    /// Starts the task that gives back idle slots (once); it ends with `self`.
    fn reaper(&self, state: &mut SlotState) {
        if std::mem::replace(&mut state.reaping, true) {
            return;
        }
        let weak = Arc::downgrade(&self.state);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(LINGER / 2).await;
                let Some(state) = weak.upgrade() else { return };
                let reaped = tokio::task::spawn_blocking(move || {
                    let lock = || {
                        state
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                    };
                    let due = lock().due_check();
                    if let Some((catalog, slots)) = due {
                        let holds = catalog.holds_host_slots(&slots);
                        lock().checked(catalog, holds);
                    }
                    lock().reap();
                })
                .await;
                if reaped.is_err() {
                    return;
                }
            }
        });
    }
}

impl crate::fetch::HostGate for HostSlots {
    fn enter<'a>(
        &'a self,
        host: &'a str,
        max: usize,
    ) -> std::pin::Pin<Box<dyn Future<Output = crate::fetch::HostSlot> + Send + 'a>> {
        Box::pin(async move {
            loop {
                let entered = {
                    let mut state = self
                        .state
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    self.reaper(&mut state);
                    state.try_enter(&self.location, host, max)
                };
                match entered {
                    Ok(Some(slot)) => {
                        return Box::new(HostSlot {
                            host: host.to_owned(),
                            slot,
                            state: self.state.clone(),
                        }) as crate::fetch::HostSlot;
                    }
                    Ok(None) => tokio::time::sleep(SLOT_POLL).await,
                    Err(e) => {
                        // The catalog is away: the run fails at its next write anyway;
                        // this request goes ahead under this process's own limit.
                        tracing::warn!(host, error = %e, "the shared per-host limit cannot be reached; going on under this worker's own");
                        return Box::new(()) as crate::fetch::HostSlot;
                    }
                }
            }
        })
    }
}

/// `plikt run`'s harvest: records the configured publishers' schedules (at the first
/// turn the catalog answers, on a clock that agrees with its), then claims runs as
/// they fall due (up to `runs_per_worker` at once), carries each out and calls
/// `after_run` with whether the run may have deposited anything (it must not block:
/// `plikt run`'s asks for a publish), until
/// `shutdown` turns true; then waits for the runs in progress (which stop taking work)
/// and releases their leases.
pub async fn work(
    harvester: Harvester,
    config: Arc<Config>,
    worker: Worker,
    mut shutdown: watch::Receiver<bool>,
    after_run: Arc<dyn Fn(bool) + Send + Sync>,
) {
    let publishers: HashMap<String, PublisherConfig> = config
        .publishers
        .iter()
        .map(|p| (p.id.clone(), p.clone()))
        .collect();
    tokio::spawn(worker.clone().keep_leases(shutdown.clone()));
    let poll = std::time::Duration::from_secs(config.harvest.poll_secs);
    let capacity = config.harvest.runs_per_worker as usize;
    let mut runs = tokio::task::JoinSet::new();
    let mut catalog = Connection::new(worker.location.clone());
    // Whether the publishers' schedules are recorded: at the first turn the catalog
    // answers (one away at the start, or a clock off then, is waited for as later).
    let mut scheduled = false;
    // Whether this machine's clock was too far from the catalog's at the last claim.
    let mut off_clock = false;
    loop {
        if *shutdown.borrow() {
            break;
        }
        let free = capacity.saturating_sub(runs.len());
        let mut next_due: Option<std::time::Duration> = None;
        if free > 0 {
            // Leases in the catalog's time; none claimed on a clock too far from it.
            let claimed = catalog.with(|c| {
                let reading = c.read_clock()?;
                crate::metrics::get()
                    .clock_offset
                    .set(reading.offset.num_milliseconds() as f64 / 1000.0);
                let now = reading.within(worker.max_clock_offset)?.catalog_now;
                if !scheduled {
                    schedule(c, &config, &publishers, now)?;
                    scheduled = true;
                }
                let claims = c.claim_due(&worker.id, now, worker.until(now), free)?;
                next_due = c
                    .next_due()?
                    .map(|t| (t.get() - now.get()).to_std().unwrap_or_default());
                Ok((claims, now))
            });
            match claimed {
                Ok((claims, now)) => {
                    if std::mem::take(&mut off_clock) {
                        tracing::info!(worker = %worker.id, "this machine's clock agrees with the catalog's again; claiming runs");
                    }
                    for claim in claims {
                        let Some(p) = publishers.get(&claim.publisher).cloned() else {
                            tracing::warn!(publisher = %claim.publisher, worker = %worker.id, "a run is due for a publisher this worker's configuration does not have: give every worker the same configuration");
                            let _ = catalog
                                .with(|c| c.release_lease(&claim.publisher, &worker.id, None));
                            continue;
                        };
                        if let Some(dead) = &claim.took_over_from {
                            tracing::warn!(publisher = %p.id, worker = %worker.id, from = %dead, "the worker carrying out this run stopped; taking the run over");
                        }
                        let carrying = worker.carry(&p.id);
                        runs.spawn(carry_out(
                            harvester.clone(),
                            worker.clone(),
                            p,
                            now,
                            carrying,
                            after_run.clone(),
                        ));
                    }
                }
                Err(e @ StoreError::ClockOff { .. }) => {
                    if !std::mem::replace(&mut off_clock, true) {
                        tracing::error!(worker = %worker.id, error = %e, "this worker claims no runs until its clock agrees with the catalog's");
                    }
                }
                Err(e) => {
                    tracing::warn!(worker = %worker.id, error = %e, "scheduling or claiming runs failed; trying again at the next poll");
                }
            }
        }
        // Sleep until the next poll, the next due run, a run's end or shutdown.
        let wait = next_due.map_or(poll, |d| d.min(poll));
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            Some(_) = runs.join_next(), if !runs.is_empty() => {}
            _ = shutdown.changed() => {}
        }
    }
    while runs.join_next().await.is_some() {}
}

/// Records the configured publishers and their schedules in the catalog, at `now`
/// (the catalog's time).
fn schedule(
    catalog: &mut Catalog,
    config: &Config,
    publishers: &HashMap<String, PublisherConfig>,
    now: Timestamp,
) -> Result<(), StoreError> {
    let mut known = Vec::new();
    for p in &config.publishers {
        catalog.upsert_publisher(&p.id, &p.name, p.feed.as_str())?;
        // A publisher new to leases: its schedule continues from its last run (a slot
        // missed since then is caught up once), or starts now.
        known.push((p.id.as_str(), catalog.last_run_start(&p.id)?.unwrap_or(now)));
    }
    catalog.schedule_leases(&known, &|id, base| {
        publishers.get(id).and_then(|p| due(p, base))
    })
}

/// When a publisher's next run is due, once its run ended.
enum Next {
    /// At once (an interrupted run).
    Now,
    /// At this slot of its schedule (`None`: not scheduled).
    At(Option<Timestamp>),
    /// A lease from now (a run whose end could not be recorded).
    AfterLease,
}

/// One claimed run of `p`: harvest, `after_run`, release with the next due time (the
/// first slot after the claim; an interrupted or failed run is due again at once or
/// after a lease, for this or another worker).
async fn carry_out(
    harvester: Harvester,
    worker: Worker,
    p: PublisherConfig,
    claimed_at: Timestamp,
    carrying: Carrying,
    after_run: Arc<dyn Fn(bool) + Send + Sync>,
) {
    // When the next run is due, from the catalog's time at the release.
    // A run that could not be recorded may have deposited before it failed.
    let (next, deposited) = match harvester.run(&p).await {
        Ok(summary) if summary.outcome == Outcome::Interrupted => {
            tracing::info!(publisher = %p.id, "run interrupted; it is due again");
            (Next::Now, summary.counts.deposited > 0)
        }
        Ok(summary) => {
            tracing::info!(publisher = %p.id, outcome = %summary.outcome, "scheduled run ended");
            (Next::At(due(&p, claimed_at)), summary.counts.deposited > 0)
        }
        Err(e) => {
            tracing::error!(publisher = %p.id, error = %e, "scheduled run could not be recorded; it is due again after a lease");
            (Next::AfterLease, true)
        }
    };
    after_run(deposited);
    drop(carrying);
    let released = Catalog::open(&worker.location).and_then(|c| {
        let now = c.read_clock()?.catalog_now;
        let next = match next {
            Next::Now => Some(now),
            Next::At(at) => at,
            Next::AfterLease => Some(worker.until(now)),
        };
        c.release_lease(&p.id, &worker.id, next)
    });
    match released {
        Ok(true) => {}
        Ok(false) => {
            tracing::warn!(publisher = %p.id, worker = %worker.id, "the lease had expired and another worker took the run over")
        }
        Err(e) => {
            tracing::warn!(publisher = %p.id, error = %e, "releasing the lease failed; it expires by itself")
        }
    }
}

/// `plikt status`: every configured publisher's state, with its next scheduled run.
pub fn status(config: &Config) -> Result<Vec<PublisherStatus>, StoreError> {
    let location = Location::of(config)?;
    // Asking is no reason to create a data folder: before the first harvest every
    // publisher simply has nothing yet.
    let exists = match &location {
        Location::Sqlite(path) => path.exists(),
        Location::Postgres { .. } => true,
    };
    let catalog = if exists {
        Some(Catalog::open(&location)?)
    } else {
        None
    };
    // The workers' schedule where they keep one (the next due run; a held lease is
    // a run in progress), else the next slot from now.
    let leases: HashMap<String, crate::store::Lease> = match &catalog {
        Some(c) => c
            .leases()?
            .into_iter()
            .map(|l| (l.publisher.clone(), l))
            .collect(),
        None => HashMap::new(),
    };
    let ids: Vec<&str> = config.publishers.iter().map(|p| p.id.as_str()).collect();
    let mut out = match &catalog {
        Some(c) => c.statuses(&ids)?,
        None => ids.iter().map(|id| PublisherStatus::empty(id)).collect(),
    };
    // Leases are in the catalog's time (`store::clock`).
    let now = match &catalog {
        Some(c) => c.read_clock()?.catalog_now,
        None => Timestamp::now(),
    };
    // The schedule's slots are this machine's time, as the workers' are.
    let local_now = Utc::now();
    for (s, p) in out.iter_mut().zip(&config.publishers) {
        let lease = leases.get(&p.id);
        s.harvesting =
            lease
                .and_then(|l| l.holder.clone())
                .map(|(worker, until)| crate::store::Harvesting {
                    worker,
                    lease_until: until,
                    expired: until <= now,
                });
        // A held lease is due again when it runs out (to be taken over): while it is
        // renewed, the next run is the schedule's next slot.
        let live = s.harvesting.as_ref().is_some_and(|h| !h.expired);
        s.next_run = match lease.and_then(|l| l.due_at) {
            Some(due) if !live => Some(due),
            _ => next_slot(p, local_now).map(Timestamp::from),
        };
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn publisher(schedule: &str) -> PublisherConfig {
        let text = format!(
            "[[publisher]]\nid = \"a\"\nname = \"A\"\nfeed = \"https://a.example/f.xml\"\nschedule = \"{schedule}\"\n"
        );
        Config::parse(
            &text,
            std::path::Path::new("t.toml"),
            std::path::Path::new("."),
            &|_| None,
        )
        .unwrap()
        .publishers
        .remove(0)
    }

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn a_missed_slot_is_caught_up_once() {
        let p = publisher("0 0 * * * *"); // every hour on the hour
        let ts = |s: &str| Timestamp::from(t(s));
        // Last claimed 10:00: due 11:00.
        assert_eq!(
            due(&p, ts("2026-11-22T10:00:00Z")),
            Some(ts("2026-11-22T11:00:00Z"))
        );
        // Down from 10:00 until 14:30: due 11:00, in the past: one run at once; claimed
        // at 14:30, the next is due at 15:00 (slots 12, 13, 14 are not run one by one).
        assert!(due(&p, ts("2026-11-22T10:00:00Z")).unwrap() <= ts("2026-11-22T14:30:00Z"));
        assert_eq!(
            due(&p, ts("2026-11-22T14:30:00Z")),
            Some(ts("2026-11-22T15:00:00Z"))
        );
    }
}
