//! What the Change Notification hub keeps (Change Notification 1.0.1 over WebSub): each
//! topic's position in the change journal, the verified subscriptions with their
//! leases, and an outbox of notifications with one delivery per subscriber.
//!
//! A notification and its deliveries are inserted in the transaction that moves its
//! topic's position past its changes, guarded by the position it started from, so
//! consecutive notifications of a topic cover consecutive stretches of the journal,
//! whoever makes them and however often a publish is retried. Deliveries are claimed
//! with a lease (`claimed_until`), one at a time per subscriber and oldest first, so a
//! subscriber gets its notifications in order and a claim a dead process left behind
//! expires.

use super::sql::sql;
use super::sql::{Backend, Db, DbError, Lock, Row, params};

use super::StoreError;
use super::catalog::Catalog;
use super::state::{Access, DeliveryState, Timestamp};

/// A topic's position: where its last notification ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicCursor {
    /// The journal position of the last change notified.
    pub last_seq: i64,
    /// The last notification's `until` (the next one's `from`).
    pub until: Timestamp,
}

/// A notification to store, with the position it starts after.
#[derive(Debug, Clone, Copy)]
pub struct NewNotification<'a> {
    /// The publisher.
    pub publisher: &'a str,
    /// The set's access level.
    pub access: Access,
    /// The position its topic must still be at.
    pub after_seq: i64,
    /// The position of its last change.
    pub last_seq: i64,
    /// `from`.
    pub from: Timestamp,
    /// `until`.
    pub until: Timestamp,
    /// Changes in it.
    pub changes: u64,
    /// The payload.
    pub body: &'a [u8],
}

/// A verified subscription (WebSub §5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// The publisher of the topic.
    pub publisher: String,
    /// The topic's set.
    pub access: Access,
    /// `hub.callback`.
    pub callback: String,
    /// `hub.secret`.
    pub secret: Option<String>,
    /// The `[[destination]]` that subscribed to a restricted topic.
    pub destination: Option<String>,
    /// When the lease ends.
    pub lease_expires_at: Timestamp,
}

/// A delivery claimed for sending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedDelivery {
    /// The subscription.
    pub subscription_id: i64,
    /// The notification.
    pub notification_id: i64,
    /// Attempts before this one.
    pub attempts: u32,
    /// Where and how to send it.
    pub subscription: Subscription,
    /// The payload.
    pub body: Vec<u8>,
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryResult {
    /// The callback answered 2xx.
    Delivered,
    /// Failed; try again this long after the attempt is recorded (in the catalog's
    /// time: the delivery loops of several machines compare it with their claims).
    Retry {
        /// Why.
        error: String,
        /// How long after.
        after: chrono::Duration,
    },
    /// Failed for the last time, or the subscriber said it is gone (410).
    GiveUp {
        /// Why.
        error: String,
    },
}

/// Counts of the outbox, for status and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct OutboxCounts {
    /// Active subscriptions.
    pub subscriptions: u64,
    /// Notifications kept.
    pub notifications: u64,
    /// Deliveries waiting.
    pub pending: u64,
    /// Deliveries made.
    pub delivered: u64,
    /// Deliveries given up.
    pub failed: u64,
}

impl Catalog {
    /// The position of a topic, if it has one.
    pub fn topic_cursor(
        &self,
        publisher: &str,
        access: Access,
    ) -> Result<Option<TopicCursor>, StoreError> {
        self.db()
            .query_opt(
                "SELECT last_seq, until_at FROM topics WHERE publisher = ?1 AND access = ?2",
                params![publisher, access],
                |r| {
                    Ok(TopicCursor {
                        last_seq: r.get(0)?,
                        until: r.get(1)?,
                    })
                },
            )
            .map_err(sql("reading a topic"))
    }

    /// Every topic's position, by publisher and access.
    pub fn topic_cursors(
        &self,
    ) -> Result<std::collections::HashMap<(String, Access), TopicCursor>, StoreError> {
        Ok(self
            .db()
            .query(
                "SELECT publisher, access, last_seq, until_at FROM topics",
                params![],
                |r| {
                    Ok((
                        (r.get(0)?, r.get(1)?),
                        TopicCursor {
                            last_seq: r.get(2)?,
                            until: r.get(3)?,
                        },
                    ))
                },
            )
            .map_err(sql("reading the topics"))?
            .into_iter()
            .collect())
    }

    /// Gives a topic that has none a position: the end of the journal as it is now
    /// (what came before is in the Resource List a subscriber baselines from), with
    /// `until` a millisecond after the journal's last change, or `now` when it is empty.
    /// Returns the topic's position.
    pub fn start_topic(
        &mut self,
        publisher: &str,
        access: Access,
        now: Timestamp,
    ) -> Result<TopicCursor, StoreError> {
        let ctx = "starting a topic";
        let tx = self.db_mut().transaction().map_err(sql(ctx))?;
        // Taken with the journal's lock, so no change commits between reading the
        // journal's end and placing the topic there.
        tx.lock(Lock::Journal).map_err(sql(ctx))?;
        let (seq, at): (i64, Option<Timestamp>) = tx
            .query_row(
                "SELECT coalesce(max(seq), 0), max(at) FROM changes",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sql(ctx))?;
        let until = at.map_or(now, |t| t.plus(chrono::Duration::milliseconds(1)));
        tx.execute(
            "INSERT INTO topics (publisher, access, last_seq, until_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (publisher, access) DO NOTHING",
            params![publisher, access, seq, until],
        )
        .map_err(sql(ctx))?;
        tx.commit().map_err(sql(ctx))?;
        self.topic_cursor(publisher, access)?
            .ok_or(StoreError::Sql {
                context: ctx,
                source: DbError::NoRow,
            })
    }

    /// Moves a topic from `after` to `to` without a notification (none of the changes
    /// between is of its set: [`Catalog::topic_end_past_others`]), if it is still at
    /// `after`; its `until` stays, where the next notification starts.
    pub fn move_topic(
        &self,
        publisher: &str,
        access: Access,
        after: i64,
        to: i64,
    ) -> Result<(), StoreError> {
        self.db()
            .execute(
                "UPDATE topics SET last_seq = ?4
                 WHERE publisher = ?1 AND access = ?2 AND last_seq = ?3",
                params![publisher, access, after, to],
            )
            .map(drop)
            .map_err(sql("moving a topic"))
    }

    /// Stores a notification and a pending delivery of it for every subscription of
    /// its topic whose lease has not ended, and moves the topic to its end, in one
    /// transaction; only if the topic is still where the notification starts (else
    /// another publish notified those changes: `None`). Returns its id.
    pub fn add_notification(
        &mut self,
        n: &NewNotification<'_>,
        now: Timestamp,
    ) -> Result<Option<i64>, StoreError> {
        let ctx = "storing a notification";
        let tx = self.db_mut().transaction().map_err(sql(ctx))?;
        let moved = tx
            .execute(
                "UPDATE topics SET last_seq = ?3, until_at = ?4
                 WHERE publisher = ?1 AND access = ?2 AND last_seq = ?5",
                params![n.publisher, n.access, n.last_seq, n.until, n.after_seq],
            )
            .map_err(sql(ctx))?;
        if moved != 1 {
            return Ok(None);
        }
        let changes = i64::try_from(n.changes).unwrap_or(i64::MAX);
        let id: i64 = tx
            .query_row(
                "INSERT INTO notifications (publisher, access, after_seq, last_seq, from_at,
                   until_at, changes, body, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
                params![
                    n.publisher,
                    n.access,
                    n.after_seq,
                    n.last_seq,
                    n.from,
                    n.until,
                    changes,
                    n.body,
                    now
                ],
                |r| r.get(0),
            )
            .map_err(sql(ctx))?;
        tx.execute(
            "INSERT INTO deliveries (subscription_id, notification_id, state, next_attempt_at)
             SELECT id, ?3, ?5, ?4 FROM subscriptions
             WHERE publisher = ?1 AND access = ?2 AND lease_expires_at > ?4",
            params![n.publisher, n.access, id, now, DeliveryState::Pending],
        )
        .map_err(sql(ctx))?;
        tx.commit().map_err(sql(ctx))?;
        Ok(Some(id))
    }

    /// The payload of the latest notification of a topic.
    pub fn latest_notification(
        &self,
        publisher: &str,
        access: Access,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.db()
            .query_opt(
                "SELECT body FROM notifications WHERE publisher = ?1 AND access = ?2
                 ORDER BY id DESC LIMIT 1",
                params![publisher, access],
                |r| r.get(0),
            )
            .map_err(sql("reading a notification"))
    }

    /// Records a verified subscription, or renews one (a new lease and secret; its
    /// pending deliveries go on).
    pub fn subscribe(&self, s: &Subscription, now: Timestamp) -> Result<(), StoreError> {
        self.db()
            .execute(
                "INSERT INTO subscriptions (publisher, access, callback, secret, destination,
                   lease_expires_at, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (publisher, access, callback) DO UPDATE SET
                   secret = ?4, destination = ?5, lease_expires_at = ?6",
                params![
                    s.publisher,
                    s.access,
                    s.callback,
                    s.secret,
                    s.destination,
                    s.lease_expires_at,
                    now
                ],
            )
            .map_err(sql("recording a subscription"))?;
        Ok(())
    }

    /// Ends a subscription (its pending deliveries go with it). Returns whether there
    /// was one.
    pub fn unsubscribe(
        &self,
        publisher: &str,
        access: Access,
        callback: &str,
    ) -> Result<bool, StoreError> {
        self.db()
            .execute(
                "DELETE FROM subscriptions WHERE publisher = ?1 AND access = ?2 AND callback = ?3",
                params![publisher, access, callback],
            )
            .map(|n| n > 0)
            .map_err(sql("ending a subscription"))
    }

    /// The subscriptions whose lease has not ended at `now`.
    pub fn subscriptions(&self, now: Timestamp) -> Result<Vec<Subscription>, StoreError> {
        self.db()
            .query(
                "SELECT publisher, access, callback, secret, destination, lease_expires_at
                 FROM subscriptions WHERE lease_expires_at > ?1 ORDER BY id",
                params![now],
                subscription,
            )
            .map_err(sql("listing subscriptions"))
    }

    /// Claims deliveries that are due at `now`: for each subscription (whose lease has
    /// not ended) its oldest pending one, if no one holds a claim on it; first attempts
    /// first (up to `limit`), then retries (up to `retries` of what is left), so
    /// callbacks that keep failing cannot take every slot. The claim lasts until
    /// `until`.
    pub fn claim_deliveries(
        &mut self,
        now: Timestamp,
        until: Timestamp,
        limit: usize,
        retries: usize,
    ) -> Result<Vec<ClaimedDelivery>, StoreError> {
        let ctx = "claiming deliveries";
        let tx = self.db_mut().transaction().map_err(sql(ctx))?;
        // Claimers (the delivery loops of several `plikt serve` and `plikt run`) take
        // turns, so no delivery is claimed twice.
        tx.lock(Lock::Outbox).map_err(sql(ctx))?;
        let mut claimed = claim(&tx, now, until, limit, false)?;
        let left = limit.saturating_sub(claimed.len()).min(retries);
        claimed.extend(claim(&tx, now, until, left, true)?);
        let mut out = Vec::with_capacity(claimed.len());
        for (subscription_id, notification_id, attempts) in claimed {
            let (subscription, body) = tx
                .query_row(
                    "SELECT s.publisher, s.access, s.callback, s.secret, s.destination,
                       s.lease_expires_at, n.body
                     FROM subscriptions s, notifications n WHERE s.id = ?1 AND n.id = ?2",
                    params![subscription_id, notification_id],
                    |r| Ok((subscription(r)?, r.get(6)?)),
                )
                .map_err(sql(ctx))?;
            out.push(ClaimedDelivery {
                subscription_id,
                notification_id,
                attempts,
                subscription,
                body,
            });
        }
        tx.commit().map_err(sql(ctx))?;
        Ok(out)
    }

    /// Records how an attempt of a delivery ended, and releases its claim.
    pub fn delivery_attempted(
        &self,
        subscription_id: i64,
        notification_id: i64,
        result: &DeliveryResult,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let (state, error, next) = match result {
            DeliveryResult::Delivered => (DeliveryState::Delivered, None, now),
            DeliveryResult::Retry { error, after } => (
                DeliveryState::Pending,
                Some(error.as_str()),
                now.plus(*after),
            ),
            DeliveryResult::GiveUp { error } => (DeliveryState::Failed, Some(error.as_str()), now),
        };
        let delivered = (state == DeliveryState::Delivered).then_some(now);
        self.db()
            .execute(
                "UPDATE deliveries SET state = ?3, last_error = ?4, next_attempt_at = ?5,
                   attempts = attempts + 1, claimed_until = NULL, delivered_at = ?6
                 WHERE subscription_id = ?1 AND notification_id = ?2 AND state = ?7",
                params![
                    subscription_id,
                    notification_id,
                    state,
                    error,
                    next,
                    delivered,
                    DeliveryState::Pending
                ],
            )
            .map_err(sql("recording a delivery"))?;
        Ok(())
    }

    /// Removes subscriptions whose lease ended before `now` (and their deliveries), and
    /// notifications created before `before` that no delivery waits for, apart from the
    /// latest of each topic (a topic's GET returns it). Returns (subscriptions,
    /// notifications) removed.
    pub fn prune_notifications(
        &self,
        now: Timestamp,
        before: Timestamp,
    ) -> Result<(usize, usize), StoreError> {
        let ctx = "pruning notifications";
        let subscriptions = self
            .db()
            .execute(
                "DELETE FROM subscriptions WHERE lease_expires_at <= ?1",
                params![now],
            )
            .map_err(sql(ctx))?;
        let notifications = self
            .db()
            .execute(
                "DELETE FROM notifications WHERE created_at < ?1
                   AND id NOT IN (SELECT max(id) FROM notifications GROUP BY publisher, access)
                   AND NOT EXISTS (SELECT 1 FROM deliveries d
                                   WHERE d.notification_id = notifications.id AND d.state = ?2)",
                params![before, DeliveryState::Pending],
            )
            .map_err(sql(ctx))?;
        Ok((subscriptions, notifications))
    }

    /// A number that changes whenever another connection (another process) has
    /// committed to the catalog notifications or subscriptions (SQLite: `PRAGMA
    /// data_version`, any commit; PostgreSQL: the newest notification and subscription):
    /// cheap enough to ask often, so the delivery loop of `plikt serve` learns of a
    /// `plikt publish` at once.
    pub fn data_version(&self) -> Result<i64, StoreError> {
        let q = match self.backend() {
            Backend::Sqlite => "PRAGMA data_version",
            Backend::Postgres => {
                "SELECT (SELECT coalesce(max(id), 0) FROM notifications)
                   + (SELECT coalesce(max(id), 0) FROM subscriptions)"
            }
        };
        self.db()
            .one(q, params![])
            .map_err(sql("reading the catalog's version"))
    }

    /// Makes this connection's commits durable at checkpoints rather than at each
    /// commit (`synchronous = NORMAL`; still safe against a crash of the process). For
    /// the delivery loop only: a power loss may then lose a record of a delivery, and
    /// the notification is sent again, which a crash can cause anyway.
    pub fn for_deliveries(&self) -> Result<(), StoreError> {
        self.db()
            .batch(match self.backend() {
                Backend::Sqlite => "PRAGMA synchronous = NORMAL",
                Backend::Postgres => "SET synchronous_commit = off",
            })
            .map_err(sql("setting the delivery loop's durability"))
    }

    /// Counts of the outbox.
    pub fn outbox_counts(&self, now: Timestamp) -> Result<OutboxCounts, StoreError> {
        self.db()
            .query_row(
                "SELECT (SELECT count(*) FROM subscriptions WHERE lease_expires_at > ?1),
                   (SELECT count(*) FROM notifications),
                   (SELECT count(*) FROM deliveries WHERE state = ?2),
                   (SELECT count(*) FROM deliveries WHERE state = ?3),
                   (SELECT count(*) FROM deliveries WHERE state = ?4)",
                params![
                    now,
                    DeliveryState::Pending,
                    DeliveryState::Delivered,
                    DeliveryState::Failed
                ],
                |r| {
                    let n = |i: usize| r.get::<i64>(i).map(|n| n.max(0).unsigned_abs());
                    Ok(OutboxCounts {
                        subscriptions: n(0)?,
                        notifications: n(1)?,
                        pending: n(2)?,
                        delivered: n(3)?,
                        failed: n(4)?,
                    })
                },
            )
            .map_err(sql("counting notifications"))
    }
}

/// Claims up to `limit` due deliveries (see [`Catalog::claim_deliveries`]): first
/// attempts, or (`retries`) later ones. Returns (subscription, notification, attempts).
fn claim(
    tx: &Db,
    now: Timestamp,
    until: Timestamp,
    limit: usize,
    retries: bool,
) -> Result<Vec<(i64, i64, u32)>, StoreError> {
    let ctx = "claiming deliveries";
    if limit == 0 {
        return Ok(Vec::new());
    }
    let attempts = if retries {
        "d.attempts > 0"
    } else {
        "d.attempts = 0"
    };
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    tx.query(
        &format!(
            "UPDATE deliveries SET claimed_until = ?2
             WHERE (subscription_id, notification_id) IN (
               SELECT d.subscription_id, d.notification_id
               FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
               WHERE d.state = ?4 AND s.lease_expires_at > ?1 AND {attempts}
                 AND d.notification_id = (SELECT min(x.notification_id) FROM deliveries x
                       WHERE x.subscription_id = d.subscription_id AND x.state = ?4)
                 AND d.next_attempt_at <= ?1
                 AND (d.claimed_until IS NULL OR d.claimed_until <= ?1)
               LIMIT ?3)
             RETURNING subscription_id, notification_id, attempts"
        ),
        params![now, until, limit, DeliveryState::Pending],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .map_err(sql(ctx))
}

fn subscription(r: &Row<'_>) -> Result<Subscription, DbError> {
    Ok(Subscription {
        publisher: r.get(0)?,
        access: r.get(1)?,
        callback: r.get(2)?,
        secret: r.get(3)?,
        destination: r.get(4)?,
        lease_expires_at: r.get(5)?,
    })
}
