//! The states a catalog row can be in, as types (STYLE habit 15): each an enum with its
//! one spelling in the catalog (`as_str`, `ToSql`, `FromSql`), so a state crosses modules
//! as a type and SQL names it through [`sql`] from here only; and [`Timestamp`], the one
//! type of an instant (ordered by time, written as RFC 3339 UTC with milliseconds).

use std::fmt;

use super::sql::{Cell, Column, Param, Value};

use crate::profile::Severity;

/// Declares a state enum with its catalog spelling and SQL conversions.
macro_rules! state {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// Its spelling in the catalog, in documents and in `plikt status`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The value spelt `s`, if any.
            pub fn parse(s: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.as_str() == s)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl Param for $name {
            fn value(&self) -> Value<'_> {
                Value::Text(self.as_str().into())
            }
        }

        impl Column for $name {
            fn column(cell: Cell<'_>) -> Result<Self, String> {
                let s = String::column(cell)?;
                Self::parse(&s).ok_or_else(|| format!("`{s}` is not a {}", stringify!($name)))
            }
        }
    };
}

state! {
    /// A version's effective access level (R107 and the verdict): `gratis` only for a
    /// conforming item whose accessRights is exactly `gratis`; it decides the set.
    Access {
        /// Free to read when published: the public set.
        Gratis = "gratis",
        /// Restricted, or non-conforming: the restricted set.
        Restricted = "restricted",
    }
}

state! {
    /// Where a version is on its way into the collection.
    VersionState {
        /// Found; some of its files are not stored yet.
        Pending = "pending",
        /// Every file stored, its change journalled.
        Deposited = "deposited",
        /// Given up after `max_failed_runs`.
        Failed = "failed",
    }
}

state! {
    /// Where one file of a version is.
    FileState {
        /// Not fetched yet (or to fetch again).
        Pending = "pending",
        /// In the blob store, verified.
        Stored = "stored",
        /// The last attempt failed.
        Failed = "failed",
    }
}

state! {
    /// A change in the journal (core §12: `change`).
    Change {
        /// The deposit's first version.
        Created = "created",
        /// A later version.
        Updated = "updated",
    }
}

state! {
    /// What a file is to its item.
    FileRole {
        /// The item's `<link>` (R102).
        Link = "link",
        /// A `media:content` (F302), also in `media:group`.
        Content = "content",
    }
}

state! {
    /// How a run of one publisher ended.
    Outcome {
        /// Not ended yet (or the process died: closed as `interrupted` on the next start).
        Running = "running",
        /// The feed was read and every due version was attempted.
        Ok = "ok",
        /// The feed had not changed (304).
        NotModified = "not-modified",
        /// The run could not be carried out (feed unreadable, unreachable…).
        Failed = "failed",
        /// Shut down, or killed, before the end.
        Interrupted = "interrupted",
    }
}

state! {
    /// A delivery of a change notification to one subscriber.
    DeliveryState {
        /// Waiting for its (next) attempt.
        Pending = "pending",
        /// The callback answered 2xx.
        Delivered = "delivered",
        /// Given up.
        Failed = "failed",
    }
}

/// Restricted: a value not read yet is never public by mistake.
impl Default for Access {
    fn default() -> Self {
        Access::Restricted
    }
}

/// For rows read into a reused buffer before their first value.
impl Default for Change {
    fn default() -> Self {
        Change::Created
    }
}

impl serde::Serialize for Severity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl Param for Severity {
    fn value(&self) -> Value<'_> {
        Value::Text(self.as_str().into())
    }
}

impl Column for Severity {
    fn column(cell: Cell<'_>) -> Result<Self, String> {
        let s = String::column(cell)?;
        Severity::parse(&s).ok_or_else(|| format!("`{s}` is not a severity"))
    }
}

/// A state as an SQL string literal, for the queries that name one (`'deposited'`):
/// the spelling comes from the type, so it exists in one place.
pub(super) fn sql(state: impl Into<&'static str>) -> String {
    format!("'{}'", state.into())
}

macro_rules! into_str {
    ($($t:ty),*) => {$(
        impl From<$t> for &'static str {
            fn from(v: $t) -> Self {
                v.as_str()
            }
        }
    )*};
}
into_str!(
    Access,
    VersionState,
    FileState,
    FileRole,
    Change,
    Outcome,
    DeliveryState
);

/// An instant, to the millisecond, in UTC: the catalog's one time type. Ordered by
/// time; written (in the catalog, in documents, in JSON) as RFC 3339 with milliseconds
/// and `Z`, a form whose text order is its time order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp(chrono::DateTime<chrono::Utc>);

impl Timestamp {
    /// Now (to the millisecond).
    pub fn now() -> Self {
        Self::from(chrono::Utc::now())
    }

    /// The instant.
    pub fn get(self) -> chrono::DateTime<chrono::Utc> {
        self.0
    }

    /// Parses RFC 3339 (any offset; kept to the millisecond, in UTC).
    pub fn parse(s: &str) -> Option<Self> {
        chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|t| Self::from(t.to_utc()))
    }

    /// This instant moved by `d` (at the end of time rather than past it: a setting
    /// of centuries must not panic).
    pub fn plus(self, d: chrono::Duration) -> Self {
        Self::from(
            self.0
                .checked_add_signed(d)
                .unwrap_or(match d < chrono::Duration::zero() {
                    true => chrono::DateTime::<chrono::Utc>::MIN_UTC,
                    false => chrono::DateTime::<chrono::Utc>::MAX_UTC,
                }),
        )
    }

    /// The UTC day, `YYYY-MM-DD`.
    pub fn day(self) -> String {
        self.0.format("%Y-%m-%d").to_string()
    }
}

impl From<chrono::DateTime<chrono::Utc>> for Timestamp {
    fn from(t: chrono::DateTime<chrono::Utc>) -> Self {
        use chrono::SubsecRound;
        Self(t.trunc_subsecs(3))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.format("%Y-%m-%dT%H:%M:%S%.3fZ"))
    }
}

impl From<Timestamp> for String {
    fn from(t: Timestamp) -> String {
        t.to_string()
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Param for Timestamp {
    fn value(&self) -> Value<'_> {
        Value::Text(self.to_string().into())
    }
}

impl Column for Timestamp {
    fn column(cell: Cell<'_>) -> Result<Self, String> {
        match cell {
            Cell::Text(s) => Self::parse(s).ok_or_else(|| format!("`{s}` is not an RFC 3339 time")),
            other => Err(format!("expected an RFC 3339 time, found {other:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::sql::params;
    use super::*;

    #[test]
    fn states_read_back_as_written() {
        let c = super::super::sql::Db::sqlite(rusqlite::Connection::open_in_memory().unwrap());
        for v in VersionState::ALL {
            let back: VersionState = c.one("SELECT ?1", params![v]).unwrap();
            assert_eq!(back, *v);
        }
        for s in [Severity::Error, Severity::Warning, Severity::Info] {
            let back: Severity = c.one("SELECT ?1", params![s]).unwrap();
            assert_eq!(back, s);
        }
        let bad = c.one::<Access>("SELECT 'free'", params![]);
        assert!(
            bad.unwrap_err()
                .to_string()
                .contains("`free` is not a Access")
        );
        assert_eq!(sql(VersionState::Deposited), "'deposited'");
    }

    #[test]
    fn timestamps_order_by_time_and_write_one_form() {
        let a = Timestamp::parse("2026-11-22T23:30:00+01:00").unwrap();
        let b = Timestamp::parse("2026-11-22T22:45:00.5Z").unwrap();
        // As text `2026-11-22T23…` > `2026-11-22T22…`; as instants a (22:30Z) < b.
        assert!(a < b);
        assert_eq!(a.to_string(), "2026-11-22T22:30:00.000Z");
        assert_eq!(b.to_string(), "2026-11-22T22:45:00.500Z");
        let c = super::super::sql::Db::sqlite(rusqlite::Connection::open_in_memory().unwrap());
        let back: Timestamp = c.one("SELECT ?1", params![b]).unwrap();
        assert_eq!(back, b);
        assert_eq!(a.day(), "2026-11-22");
    }
}
