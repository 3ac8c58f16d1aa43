//! Fatal errors of a command and the exit codes they map to (documented in the README).
//! Validation findings are not errors: they are the result.

use std::io;

use crate::fetch::FetchError;

/// Exit statuses of `plikt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Success: the feed has no errors (warnings allowed); every harvest run was
    /// carried out; the audit found everything intact.
    Ok = 0,
    /// The feed has at least one error; a harvest run could not be carried out; the
    /// audit found missing or corrupt files.
    Invalid = 1,
    /// The input or configuration could not be read, the store failed, or the
    /// arguments are wrong.
    Failure = 2,
}

/// Why a command could not be carried out.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input file or standard input could not be read.
    #[error("cannot read {name}: {source}")]
    Input {
        /// File name, or `-`.
        name: String,
        /// The I/O error.
        source: io::Error,
    },
    /// Downloading the feed failed.
    #[error(transparent)]
    Fetch(Box<FetchError>),
    /// Writing the report failed.
    #[error("cannot write the report: {0}")]
    Output(io::Error),
    /// The configuration cannot be used.
    #[error(transparent)]
    Config(Box<crate::config::ConfigError>),
    /// The catalog or blob store failed.
    #[error(transparent)]
    Store(Box<crate::store::StoreError>),
    /// A harvest could not be set up.
    #[error(transparent)]
    Harvest(Box<crate::harvest::HarvestError>),
    /// The ResourceSync documents could not be written.
    #[error("publishing failed: {0}")]
    Publish(Box<crate::resourcesync::PublishError>),
    /// Change notifications could not be stored or sent.
    #[error("change notification failed: {0}")]
    Notify(Box<crate::notify::NotifyError>),
    /// Moving a catalog and its blobs (`plikt migrate`) failed.
    #[error("migrating failed: {0}")]
    Move(Box<crate::store::moving::MoveError>),
    /// A command-line value is wrong.
    #[error("{0}")]
    Usage(String),
    /// The address to serve on cannot be used.
    #[error(
        "cannot listen on {addr}: {source}; is another plikt (or another server) using it? Change `listen` in the configuration"
    )]
    Listen {
        /// The address.
        addr: std::net::SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(io::Error),
    /// The HTTP server stopped with an error.
    #[error("the HTTP server failed: {0}")]
    Server(io::Error),
    /// A task of the command panicked or was cancelled (a bug: the log has more).
    #[error(
        "{what} stopped unexpectedly: {reason}; this is a bug in plikt, please report it with the log"
    )]
    Task {
        /// What it was doing.
        what: &'static str,
        /// The panic or cancellation.
        reason: String,
    },
    /// A report could not be written as JSON.
    #[error("cannot write the JSON report: {0}")]
    Json(#[from] serde_json::Error),
}

impl Error {
    /// The exit status for this error.
    pub fn exit(&self) -> Exit {
        Exit::Failure
    }

    /// Whether the catalog could not be reached (PostgreSQL starting, restarting or
    /// cut off): a long-running command waits for it rather than exiting.
    pub fn catalog_away(&self) -> bool {
        matches!(self, Error::Store(e) if e.is_disconnect())
    }
}

macro_rules! boxed_from {
    ($($variant:ident: $t:ty),*) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Self {
                Error::$variant(Box::new(e))
            }
        }
    )*};
}

boxed_from!(
    Fetch: FetchError,
    Config: crate::config::ConfigError,
    Store: crate::store::StoreError,
    Harvest: crate::harvest::HarvestError,
    Publish: crate::resourcesync::PublishError,
    Move: crate::store::moving::MoveError
);

impl From<crate::notify::NotifyError> for Error {
    /// The catalog's or blob store's failure as such (opening `plikt serve`'s store is
    /// not a change notification that failed).
    fn from(e: crate::notify::NotifyError) -> Self {
        match e {
            crate::notify::NotifyError::Store(e) => Error::Store(Box::new(e)),
            e => Error::Notify(Box::new(e)),
        }
    }
}
