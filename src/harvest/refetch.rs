//! Fetching again from its publisher a blob `plikt audit` found missing or damaged
//! (`plikt audit --refetch`): the way back for bytes the blob store lost (an object
//! removed, a disk damaged, a catalog restored to an instant later than its bucket copy),
//! while the publisher still serves them. The file is fetched as a harvest fetches it
//! (the publisher's policy, credentials and H-MD5 check), and stored only if it has the
//! SHA-256 the catalog records: a deposit's record never changes, so other bytes are
//! reported, not stored.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::download::{FileJob, fetch_file};
use super::{HarvestError, Harvester};
use crate::fetch::Client;
use crate::store::{Blobs, Catalog, FileResult, Packing, StoreError};

/// What became of one blob ([`Harvester::refetch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refetched {
    /// Fetched again with the recorded SHA-256 from `url`, and stored.
    Stored {
        /// The blob.
        sha256: String,
        /// Where it was fetched.
        url: String,
    },
    /// Not stored, and why.
    NotStored {
        /// The blob.
        sha256: String,
        /// Why (the URL, what it served or what failed).
        reason: String,
    },
}

impl Harvester {
    /// Fetches each of `lost` (blobs by SHA-256) again from the publisher of its latest
    /// stored file, and stores those whose bytes are the recorded ones, noting their new
    /// place in the catalog (a blob once in a pack goes into a new pack).
    pub async fn refetch(
        &self,
        catalog: &Catalog,
        blobs: &Blobs,
        lost: &[String],
    ) -> Result<Vec<Refetched>, HarvestError> {
        let mut out = Vec::new();
        // One client per publisher, as a run has: its connections are reused.
        let mut clients: HashMap<String, Client> = HashMap::new();
        for sha in lost {
            let not = |reason: String| Refetched::NotStored {
                sha256: sha.clone(),
                reason,
            };
            let Some(source) = catalog.blob_source(sha)? else {
                out.push(not("no stored file of the catalog has these bytes".into()));
                continue;
            };
            let Some(p) = self
                .config
                .publishers
                .iter()
                .find(|p| p.id == source.publisher)
            else {
                out.push(not(format!(
                    "its publisher `{}` is not in the configuration any more",
                    source.publisher
                )));
                continue;
            };
            let client = match clients.entry(p.id.clone()) {
                Entry::Occupied(c) => c.into_mut(),
                Entry::Vacant(v) => v.insert(self.client_for(p)?),
            };
            let url = source.file.url.clone();
            let job = FileJob {
                version: source.version,
                file_id: source.file_id,
                guid: source.guid,
                file: source.file,
            };
            let outcome = fetch_file(client, blobs, job, self.shutdown.clone(), &|_| {}).await;
            let reason = match (outcome.result, outcome.blob) {
                (FileResult::Stored(s), Some(blob)) if s.digests.sha256 == *sha => {
                    let b = blobs.clone();
                    let placed = tokio::task::spawn_blocking(move || {
                        b.commit(vec![blob], &|_| false, Packing::Small)
                    })
                    .await
                    .map_err(|e| HarvestError::Task {
                        what: "storing a file fetched again",
                        reason: e.to_string(),
                    })?
                    .map_err(StoreError::from)?;
                    match placed.into_iter().next() {
                        Some(Ok(pack)) => {
                            catalog.place_blob(sha, pack.as_ref())?;
                            out.push(Refetched::Stored {
                                sha256: sha.clone(),
                                url,
                            });
                            continue;
                        }
                        Some(Err(e)) => format!("{url}: storing it failed: {e}"),
                        None => format!("{url}: storing it failed"),
                    }
                }
                // Dropping the blob removes its temporary copy: other bytes are not kept.
                (FileResult::Stored(s), _) => format!(
                    "{url} serves other bytes now (SHA-256 {}, {} bytes): the recorded ones are lost unless a backup holds them",
                    s.digests.sha256, s.digests.length
                ),
                (FileResult::Failed(why), _) => why,
            };
            out.push(not(reason));
        }
        Ok(out)
    }
}
