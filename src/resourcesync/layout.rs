//! Where every document of a set lives, below `base_url` and below `data_dir/www/`: the
//! one list that [`publish`](super::publish) writes by and the server serves from, so a
//! URL a document names is a URL the server answers.
//!
//! A set (a publisher's public resources, or its restricted ones) is the folder
//! `resourcesync/<publisher>` or `resourcesync/<publisher>/restricted`. In it, each of
//! the four [`Kind`]s of document has its live document `<capability>.xml`, a folder
//! `<capability>/` for its dated documents, parts and packages, and an archive
//! (ResourceSync Archives 0.9.1) `<capability>-archive.xml` whose parts, one per year
//! once it spans more than one (`YYYY.xml`), are in `<capability>-archive/`. The
//! change-notification topic of the set is `change/` (Change Notification 1.0.1 §2), and
//! the one hub of the Source is `hub`.

use crate::store::Access;

/// The kinds of document a set publishes, each with its archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Resource List (core §10), archived as dated snapshots (Archives §3).
    ResourceList,
    /// Resource Dump (core §11), archived as dated snapshots (Archives §4).
    ResourceDump,
    /// Change List (core §12), one closed list per UTC day (Archives §5).
    ChangeList,
    /// Change Dump (core §13), one per closed UTC day (Archives §6).
    ChangeDump,
}

impl Kind {
    /// Every kind, in the order the Capability List names them.
    pub const ALL: [Kind; 4] = [
        Kind::ResourceList,
        Kind::ResourceDump,
        Kind::ChangeList,
        Kind::ChangeDump,
    ];

    /// Its `capability` value, which is also the name of its live document (with
    /// `.xml`) and of its folder.
    pub fn capability(self) -> &'static str {
        match self {
            Kind::ResourceList => "resourcelist",
            Kind::ResourceDump => "resourcedump",
            Kind::ChangeList => "changelist",
            Kind::ChangeDump => "changedump",
        }
    }

    /// The dump (Resource or Change Dump) whose folder is named `capability`.
    pub fn dump(capability: &str) -> Option<Kind> {
        [Kind::ResourceDump, Kind::ChangeDump]
            .into_iter()
            .find(|k| k.capability() == capability)
    }

    /// The `capability` of its archive, which is also the archive's name and folder.
    pub fn archive_capability(self) -> &'static str {
        match self {
            Kind::ResourceList => "resourcelist-archive",
            Kind::ResourceDump => "resourcedump-archive",
            Kind::ChangeList => "changelist-archive",
            Kind::ChangeDump => "changedump-archive",
        }
    }

    /// The live document, relative to the set: `<capability>.xml`.
    pub fn document(self) -> String {
        format!("{}.xml", self.capability())
    }

    /// The archive document, relative to the set: `<capability>-archive.xml`.
    pub fn archive_document(self) -> String {
        format!("{}.xml", self.archive_capability())
    }

    /// A dated document of this kind, relative to the set: `<capability>/<day>.xml`
    /// (`day` as `YYYY-MM-DD`).
    pub fn dated(self, day: &str) -> String {
        format!("{}/{day}.xml", self.capability())
    }
}

/// The folders of a set that hold documents and packages: each kind's folder and its
/// archive's folder. The server answers below these and no others.
pub fn is_set_folder(name: &str) -> bool {
    Kind::ALL
        .iter()
        .any(|k| k.capability() == name || k.archive_capability() == name)
}

/// A name the server may serve from a set folder: a document or a package, never a
/// hidden file (stamps and sidecars start with `.`) or a path.
pub fn is_document_name(name: &str) -> bool {
    (name.ends_with(".xml") || name.ends_with(".zip"))
        && !name.contains(['/', '\\'])
        && !name.starts_with('.')
}

/// The set's change-notification topic, relative to the set (Change Notification §2:
/// one channel per set).
pub const TOPIC: &str = "change/";

/// The Source's WebSub hub, relative to `base_url` (Change Notification §4: the hub may
/// be operated by the Source itself).
pub const HUB: &str = "hub";

/// The file in a set's folder that records the state its documents were last
/// written in (`SetSpec::state`): not a document, never served.
pub const SET_STATE: &str = ".published";

/// The file in a kind's folder (`changelist/`, `changedump/`) that names the last
/// closed day whose documents are all written: the days up to it are not looked at
/// again. Not a document, never served.
pub const CLOSED_MARK: &str = ".closed";

/// Where a set's documents live below `base_url`: the public set of a publisher, or
/// its restricted set (only for authenticated Destinations, never linked from public
/// documents).
pub fn set_path(publisher: &str, access: Access) -> String {
    if access == Access::Gratis {
        format!("resourcesync/{publisher}")
    } else {
        format!("resourcesync/{publisher}/restricted")
    }
}

/// The path of a set's Capability List below `base_url`.
pub fn capability_list_path(publisher: &str, access: Access) -> String {
    format!("{}/capabilitylist.xml", set_path(publisher, access))
}

/// The path of a set's change-notification topic below `base_url`.
pub fn topic_path(publisher: &str, access: Access) -> String {
    format!("{}/{TOPIC}", set_path(publisher, access))
}

/// The Source Description below `base_url` (core §8, discovery §6.3.1).
pub const SOURCE_DESCRIPTION: &str = ".well-known/resourcesync";

/// What a request path below `resourcesync/<publisher>/` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetRequest {
    /// The set's access level.
    pub access: Access,
    /// What in the set.
    pub target: SetTarget,
}

/// A document (or package) of a set, or its topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetTarget {
    /// A file below the set's folder: `name` or `folder/name`.
    File(String),
    /// The change-notification topic.
    Topic,
}

/// Parses the part of a request path after `resourcesync/<publisher>/`; `None` for
/// anything the publisher never writes (so the server answers 404 without touching
/// the disk).
pub fn parse_set_request(rest: &str) -> Option<SetRequest> {
    let (access, rest) = match rest.strip_prefix("restricted/") {
        Some(r) => (Access::Restricted, r),
        None => (Access::Gratis, rest),
    };
    if rest == TOPIC {
        return Some(SetRequest {
            access,
            target: SetTarget::Topic,
        });
    }
    let ok = match rest.split_once('/') {
        None => is_document_name(rest),
        Some((folder, name)) => is_set_folder(folder) && is_document_name(name),
    };
    ok.then(|| SetRequest {
        access,
        target: SetTarget::File(rest.to_string()),
    })
}

/// Whether `s` is a `YYYY-MM-DD` day.
pub(super) fn is_day(s: &str) -> bool {
    s.len() == 10
        && s.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_folder_the_publisher_writes_is_served() {
        for k in Kind::ALL {
            for folder in [k.capability(), k.archive_capability()] {
                let doc = format!("{folder}/2026-11-20.xml");
                assert_eq!(
                    parse_set_request(&doc).map(|r| r.target),
                    Some(SetTarget::File(doc.clone())),
                    "{doc}"
                );
            }
            assert!(parse_set_request(&k.document()).is_some());
            assert!(parse_set_request(&k.archive_document()).is_some());
        }
        // The Change Dump packages of issue 14's 404.
        assert!(parse_set_request("changedump/2026-11-20.zip").is_some());
        assert!(parse_set_request("restricted/changedump/2026-11-20.zip").is_some());
        assert_eq!(
            parse_set_request("restricted/change/").map(|r| (r.access, r.target)),
            Some((Access::Restricted, SetTarget::Topic))
        );
    }

    #[test]
    fn names_the_publisher_never_writes_are_refused() {
        for bad in [
            "blobs/x.xml",
            "resourcelist/.2026-11-20.meta",
            "resourcelist/../catalog.xml",
            "resourcelist/a/b.xml",
            "changelist/x.txt",
            ".resourcelist.fingerprint",
            "restricted/restricted/capabilitylist.xml",
            "change",
        ] {
            assert_eq!(parse_set_request(bad), None, "{bad}");
        }
    }
}
