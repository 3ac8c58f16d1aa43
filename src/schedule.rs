//! Cron schedules → runs (issue 3 §2, `plikt run`): each publisher has one loop, so two
//! harvests of one publisher never overlap; a slot missed while plikt was down (or
//! while a long run was busy) is caught up once, not once per missed slot.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use tokio::sync::watch;

use crate::config::{Config, PublisherConfig};
use crate::harvest::{HarvestError, Harvester};
use crate::store::{Catalog, PublisherStatus, StoreError};

/// The next slot of `p`'s schedule strictly after `after`.
pub fn next_slot(p: &PublisherConfig, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
    p.cron().after(&after).next()
}

/// True when a slot of `p`'s schedule fell between the last run's start and `now`:
/// that slot was missed and is run once at start-up.
pub fn missed(p: &PublisherConfig, last_run: Option<DateTime<Utc>>, now: DateTime<Utc>) -> bool {
    last_run
        .and_then(|last| next_slot(p, last))
        .is_some_and(|slot| slot <= now)
}

/// Harvests `p` on its schedule until `shutdown` turns true; `after_run` runs after
/// each run (`plikt run` publishes the ResourceSync documents there).
pub async fn publisher_loop(
    harvester: Harvester,
    config: Arc<Config>,
    p: PublisherConfig,
    mut shutdown: watch::Receiver<bool>,
    after_run: Arc<dyn Fn() + Send + Sync>,
) -> Result<(), HarvestError> {
    let last = Catalog::open(&crate::store::Location::of(&config)?)?
        .last_run_start(&p.id)?
        .map(crate::store::Timestamp::get);
    let mut catch_up = missed(&p, last, Utc::now());
    if catch_up {
        tracing::info!(publisher = %p.id, "a scheduled run was missed while plikt was down: running it now");
    }
    loop {
        if !catch_up {
            let Some(next) = next_slot(&p, Utc::now()) else {
                tracing::warn!(publisher = %p.id, "the schedule has no further slots");
                return Ok(());
            };
            tracing::debug!(publisher = %p.id, next = %next, "next run");
            let wait = (next - Utc::now()).to_std().unwrap_or_default();
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                _ = shutdown.changed() => {}
            }
        }
        if *shutdown.borrow() {
            return Ok(());
        }
        let started = Utc::now();
        match harvester.run(&p).await {
            Ok(summary) => {
                tracing::info!(publisher = %p.id, outcome = %summary.outcome, "scheduled run ended");
            }
            Err(e) => {
                tracing::error!(publisher = %p.id, error = %e, "scheduled run could not be recorded")
            }
        }
        let after = after_run.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || after()).await {
            tracing::error!(publisher = %p.id, error = %e, "the after-run step panicked");
        }
        // A slot that passed while this run was busy is run once, right away.
        catch_up = next_slot(&p, started).is_some_and(|slot| slot <= Utc::now());
    }
}

/// `plikt status`: every configured publisher's state, with its next scheduled run.
pub fn status(config: &Config) -> Result<Vec<PublisherStatus>, StoreError> {
    let location = crate::store::Location::of(config)?;
    // Asking is no reason to create a data folder: before the first harvest every
    // publisher simply has nothing yet.
    let exists = match &location {
        crate::store::Location::Sqlite(path) => path.exists(),
        crate::store::Location::Postgres { .. } => true,
    };
    let catalog = if exists {
        Some(Catalog::open(&location)?)
    } else {
        None
    };
    let mut out = Vec::new();
    for p in &config.publishers {
        let mut s = match &catalog {
            Some(c) => c.status(&p.id)?,
            None => PublisherStatus::empty(&p.id),
        };
        s.next_run = next_slot(p, Utc::now()).map(crate::store::Timestamp::from);
        out.push(s);
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
        // Last run 10:00, now 10:59: no slot missed.
        assert!(!missed(
            &p,
            Some(t("2026-11-22T10:00:00Z")),
            t("2026-11-22T10:59:00Z")
        ));
        // Last run 10:00, down until 14:30: slots 11, 12, 13, 14 missed → one catch-up.
        assert!(missed(
            &p,
            Some(t("2026-11-22T10:00:00Z")),
            t("2026-11-22T14:30:00Z")
        ));
        // Never run: nothing to catch up; the first slot comes.
        assert!(!missed(&p, None, t("2026-11-22T14:30:00Z")));
        assert_eq!(
            next_slot(&p, t("2026-11-22T14:30:00Z")),
            Some(t("2026-11-22T15:00:00Z"))
        );
    }
}
