//! The payload of a change notification (Change Notification 1.0.1 §3): a `<urlset>`
//! with `<rs:md capability="change-notification" from=… until=…>` and `rel="up"` to the
//! set's Capability List, and one entry per change in forward chronological order,
//! written as the Change Lists write them (`change`, `datetime`, `hash`, `length`,
//! `type`, and the same links). Never a `<sitemapindex>`: a large burst is split into
//! several notifications of at most `max_changes` changes each.
//!
//! A topic's notifications cover consecutive intervals [`from`, `until`): each starts
//! where the one before ended (a millisecond after its last change), and lists the
//! journal's changes after the position the one before ended at. The caller keeps that position
//! and time (`notify`): the payload is made from the catalog, so the same position
//! always gives the same changes.

use super::files::write_err;
use super::{
    DocumentWriter, Ln, Md, PublishError, Root, Set, SetSpec, capability_list_path, set_path,
};
use crate::config::Config;
use crate::store::{Access, Catalog, Timestamp};

/// A change notification, ready to be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The journal position of its last change.
    pub last_seq: i64,
    /// `from`: where the notification before ended.
    pub from: Timestamp,
    /// `until`: a millisecond after its last change.
    pub until: Timestamp,
    /// Changes (deposited versions) in it.
    pub changes: u64,
    /// The payload (`application/xml`).
    pub body: Vec<u8>,
}

/// Writes the notification of the set (`publisher`, `access`) of the next changes
/// after journal position `after` (at most `max_changes` of them), starting at `from`;
/// `None` when there are none.
pub fn write_notification(
    config: &Config,
    catalog: &Catalog,
    publisher: &str,
    access: Access,
    after: i64,
    from: Timestamp,
    max_changes: u64,
) -> Result<Option<Notification>, PublishError> {
    let Some((last_seq, last_at)) =
        catalog.journal_bound(publisher, access, after, max_changes.max(1))?
    else {
        return Ok(None);
    };
    let base = config.base_url.as_str();
    let www = super::www(config);
    let blobs = crate::store::Blobs::open(&config.data_dir, &config.blobs)
        .map_err(crate::store::StoreError::from)?;
    let spec = SetSpec {
        blobs: &blobs,
        www: &www,
        base,
        publisher,
        access,
        dir: set_path(publisher, access),
        cap: format!("{base}{}", capability_list_path(publisher, access)),
        empty: false,
        fingerprint: String::new(),
        now: crate::store::now(),
        retention_days: 0,
        stopping: super::Stopping(&super::never),
        mirror: None,
    };
    let set = Set {
        catalog,
        spec: &spec,
    };
    // The interval is [from, until): it ends a millisecond after its last change, where
    // the next notification starts (a later transaction's changes are at least that
    // late: `Catalog::record`). Times are written alike, so they compare as text.
    let until = from.max(last_at.plus(chrono::Duration::milliseconds(1)));
    let md = Md::capability("change-notification")
        .with("from", from)
        .with("until", until);
    let mut changes = 0u64;
    let mut w = DocumentWriter::new(
        Vec::new(),
        Root::UrlSet,
        &[Ln::new("up", spec.cap.clone())],
        &md,
    )
    .map_err(write_err(&www))?;
    catalog.journal_range(publisher, access, after, last_seq, &mut |e, f| {
        let change = Some((e.change.as_str(), e.at.as_str()));
        if f.first_of_version {
            changes += 1;
            set.write_record(&mut w, f, change, None)?;
        }
        set.write_file(&mut w, f, change, None)
    })?;
    let body = w.finish().map_err(write_err(&www))?;
    Ok(Some(Notification {
        last_seq,
        from,
        until,
        changes,
        body,
    }))
}

/// The answer of a topic that has notified nothing yet: a notification without
/// changes (`rel="up"` and the capability, no interval).
pub fn empty_notification(config: &Config, publisher: &str, access: Access) -> Vec<u8> {
    let cap = format!(
        "{}{}",
        config.base_url,
        capability_list_path(publisher, access)
    );
    DocumentWriter::new(
        Vec::new(),
        Root::UrlSet,
        &[Ln::new("up", cap)],
        &Md::capability("change-notification"),
    )
    .and_then(DocumentWriter::finish)
    .expect("writing to memory cannot fail")
}
