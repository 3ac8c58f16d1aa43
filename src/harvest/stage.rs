//! Steps 2 and 3 of a run: validate the spooled feed (a first pass only decides
//! whether it is readable and finds duplicate guids) and diff it with the catalog,
//! recording in one transaction the run's findings, the rejected items and the new
//! deposits and versions; H-VERSION, H-COVERAGE, H-PUBLISHER and H-PAGINATION are
//! applied here.

use std::collections::HashSet;

use super::HarvestError;
use super::item::{self, Candidate, Plan, harvest_finding, organisation_id, plan, stored};
use crate::config::PublisherConfig;
use crate::fetch::Spool;
use crate::profile::{self, Checked, Finding, RuleId, Severity, Validator};
use crate::store::{Catalog, NewItem, NewVersion, StoredFinding, Timestamp};

/// What staging a feed needs to know.
#[derive(Debug)]
pub(super) struct StageContext {
    pub publisher: PublisherConfig,
    pub run: i64,
    /// The start of the last run that read the feed (H-COVERAGE).
    pub last_success: Option<Timestamp>,
    /// The feed response's validators, kept for the next conditional GET.
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    pub options: profile::Options,
    /// `findings_retention_runs`.
    pub keep_runs: u32,
}

/// What staging found.
#[derive(Debug, Default)]
pub(super) struct Staged {
    /// The finding that makes the feed unreadable (nothing else was recorded).
    pub fatal: Option<Finding>,
    pub items: u64,
    pub new_versions: u64,
    pub rejected: u64,
}

/// Steps 2 and 3: validate the spooled feed and record, in one transaction, the run's
/// findings, rejections and new versions. A fatal finding records only itself.
pub(super) fn stage(
    catalog: &mut Catalog,
    feed: &Spool,
    ctx: &StageContext,
) -> Result<Staged, HarvestError> {
    let io_err = HarvestError::Spool;
    let open = || feed.reader().map(std::io::BufReader::new).map_err(io_err);
    // Pass 1: is the feed readable at all, and which guids occur twice?
    let duplicates = match duplicate_guids(Validator::new(open()?, &ctx.options)) {
        Ok(d) => d.map_err(io_err)?,
        Err(f) => return fatal(catalog, ctx.run, f),
    };

    // Pass 2: diff and record.
    let p = &ctx.publisher;
    let now = crate::store::now();
    let agreed: Vec<&str> = p
        .organisations
        .iter()
        .filter_map(|o| organisation_id(o))
        .collect();
    let mut staged = Staged::default();
    let tx = catalog.stage()?;
    let mut findings: Vec<StoredFinding> = Vec::new();
    let mut oldest: Option<i64> = None;
    // Items to collect, compared with the catalog DIFF_BATCH at a time.
    let mut collected: Vec<(u32, Candidate)> = Vec::new();
    let mut validator = Validator::new(open()?, &ctx.options);
    while let Some(c) = validator.next() {
        match c.map_err(io_err)? {
            Checked::Fatal(f) => {
                // The same bytes cannot turn fatal on a second reading; if they do,
                // record nothing of the feed.
                drop(tx);
                return fatal(catalog, ctx.run, f);
            }
            Checked::Finding(f) => findings.push(stored(&f)),
            Checked::Item(item, item_findings) => {
                staged.items += 1;
                findings.extend(item_findings.iter().map(stored));
                let duplicate = item::guid(&item).is_some_and(|g| duplicates.contains(&g));
                match plan(&item, &item_findings, duplicate) {
                    Plan::Reject { guid, reason } => {
                        staged.rejected += 1;
                        tracing::warn!(publisher = %p.id, item = item.index, guid = guid.as_deref().unwrap_or(""), reason = %reason, "item rejected");
                        tx.reject(ctx.run, item.index, guid.as_deref(), &reason)?;
                    }
                    Plan::Collect(c) => {
                        oldest = Some(oldest.map_or(c.instant, |o| o.min(c.instant)));
                        unagreed_publishers(&c, item.index, &agreed, &mut findings);
                        collected.push((item.index, *c));
                        if collected.len() >= DIFF_BATCH {
                            staged.new_versions += diff(&tx, ctx, &collected, now, &mut findings)?;
                            collected.clear();
                        }
                    }
                }
                validator.recycle(item);
            }
        }
    }
    staged.new_versions += diff(&tx, ctx, &collected, now, &mut findings)?;
    feed_findings(&validator, oldest, ctx.last_success, &mut findings);
    tx.findings(ctx.run, &findings)?;
    tx.prune_findings(&p.id, ctx.keep_runs)?;
    tx.feed_validators(&p.id, ctx.etag.as_deref(), ctx.last_modified.as_deref())?;
    tx.counts(ctx.run, staged.items, staged.new_versions, staged.rejected)?;
    tx.commit()?;
    Ok(staged)
}

/// The guids that occur more than once in the feed; `Err` with the finding that makes
/// it unreadable.
fn duplicate_guids<R: std::io::BufRead>(
    mut validator: Validator<R>,
) -> Result<std::io::Result<HashSet<String>>, Finding> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut duplicates: HashSet<String> = HashSet::new();
    while let Some(c) = validator.next() {
        match c {
            Err(e) => return Ok(Err(e)),
            Ok(Checked::Fatal(f)) => return Err(f),
            Ok(Checked::Item(item, _)) => {
                if let Some(g) = item::guid(&item)
                    && !seen.insert(g.clone())
                {
                    duplicates.insert(g);
                }
                validator.recycle(item);
            }
            Ok(Checked::Finding(_)) => {}
        }
    }
    Ok(Ok(duplicates))
}

/// H-PUBLISHER: an R104 value that is not one of the organisations agreed for the feed.
fn unagreed_publishers(
    c: &Candidate,
    index: u32,
    agreed: &[&str],
    findings: &mut Vec<StoredFinding>,
) {
    if agreed.is_empty() {
        return;
    }
    for value in &c.publishers {
        if organisation_id(value).is_some_and(|id| !agreed.contains(&id)) {
            findings.push(harvest_finding(
                RuleId::HPublisher,
                Severity::Warning,
                Some(&c.guid),
                None,
                format!(
                    "item {index} names publisher `{value}`, which is not agreed for this feed ({}) (H-PUBLISHER); check the R104 value with KB",
                    agreed.join(", ")
                ),
            ));
        }
    }
}

/// The findings about the feed as a whole: H-PAGINATION (newer KB specification: the
/// feed must not be paginated) and H-COVERAGE (the oldest item is newer than the last
/// successful run, so items published in between may have dropped off the feed).
fn feed_findings<R: std::io::BufRead>(
    validator: &Validator<R>,
    oldest: Option<i64>,
    last_success: Option<Timestamp>,
    findings: &mut Vec<StoredFinding>,
) {
    for link in validator.pagination() {
        findings.push(StoredFinding {
            line: Some(link.pos.line),
            column: Some(link.pos.column),
            ..harvest_finding(
                RuleId::HPagination,
                Severity::Warning,
                None,
                Some(&link.value),
                format!(
                    "the feed links to a further page `{}`; KB harvests only this document, so put every item in one feed (H-PAGINATION)",
                    link.value
                ),
            )
        });
    }
    if let (Some(oldest), Some(last)) = (oldest, last_success)
        && oldest > last.get().timestamp()
    {
        findings.push(harvest_finding(
            RuleId::HCoverage,
            Severity::Warning,
            None,
            None,
            format!(
                "the oldest item ({}) is newer than the last successful harvest ({last}): items published in between may have dropped off the feed (H-COVERAGE); keep items in the feed for longer than the harvest interval",
                Timestamp::from(chrono::DateTime::from_timestamp(oldest, 0).unwrap_or_default())
            ),
        ));
    }
}

/// An unreadable feed: only its fatal finding is recorded.
fn fatal(catalog: &mut Catalog, run: i64, f: Finding) -> Result<Staged, HarvestError> {
    catalog.add_findings(run, &[stored(&f)])?;
    Ok(Staged {
        fatal: Some(f),
        ..Staged::default()
    })
}

/// Items compared with the catalog at a time: a few statements for all of them
/// ([`crate::store::Stage::known`], [`crate::store::Stage::new_versions`]).
const DIFF_BATCH: usize = 512;

/// Compares items with the catalog; records their new deposits and versions. Returns
/// how many were recorded.
fn diff(
    tx: &crate::store::Stage<'_>,
    ctx: &StageContext,
    items: &[(u32, Candidate)],
    now: Timestamp,
    findings: &mut Vec<StoredFinding>,
) -> Result<u64, HarvestError> {
    if items.is_empty() {
        return Ok(0);
    }
    let p = &ctx.publisher;
    let guids: Vec<&str> = items.iter().map(|(_, c)| c.guid.as_str()).collect();
    let known = tx.known(&p.id, &guids)?;
    let mut new = Vec::new();
    for (index, c) in items {
        let h_version = |message: String| {
            harvest_finding(
                RuleId::HVersion,
                Severity::Warning,
                Some(&c.guid),
                None,
                message,
            )
        };
        let deposit = match known.get(&c.guid) {
            None => None,
            Some(known) => {
                match known.pub_date {
                    Some(latest) if c.pub_date == latest => {
                        if known.item_hash.as_deref() != Some(c.item_hash.as_str()) {
                            findings.push(h_version(format!(
                                "item {index} (guid `{}`) changed but its pubDate did not (H-VERSION); plikt keeps the version it has — give a changed item a newer pubDate so it is harvested again",
                                c.guid
                            )));
                        }
                        continue;
                    }
                    Some(latest) if c.pub_date < latest => {
                        findings.push(h_version(format!(
                            "item {index} (guid `{}`) has pubDate {}, older than the version plikt already has ({latest}) (H-VERSION); a new version needs a newer pubDate",
                            c.guid, c.pub_date_raw
                        )));
                        continue;
                    }
                    _ => {}
                }
                Some(known.deposit_id)
            }
        };
        new.push(NewItem {
            guid: &c.guid,
            deposit,
            version: NewVersion {
                pub_date: c.pub_date,
                pub_date_raw: &c.pub_date_raw,
                item_hash: &c.item_hash,
                metadata: &c.metadata,
                findings: &c.findings,
                conforming: c.conforming,
                access: c.access,
                files: &c.files,
            },
        });
    }
    tx.new_versions(&p.id, ctx.run, &new, now)?;
    Ok(new.len() as u64)
}
