//! A catalog connection kept by a loop or server for as long as the process lives
//! (the delivery loop, a worker's lease keeper and claims, `plikt serve`): opened when
//! first needed, and made again after it broke (PostgreSQL restarted or failed over, a
//! network cut). A connection held for days must not outlive its server: before this,
//! `plikt serve` and the delivery loop kept failing on a closed connection until they
//! were restarted (issue 17 §4, the restart test).

use super::{Catalog, Location, StoreError};

/// What a new connection runs first (session settings of its user).
type Prepare = fn(&Catalog) -> Result<(), StoreError>;

/// A catalog connection that is made again when it breaks.
#[derive(Debug)]
pub struct Connection {
    location: Location,
    catalog: Option<Catalog>,
    prepare: Option<Prepare>,
}

impl Connection {
    /// A connection to `location`, opened at first use.
    pub fn new(location: Location) -> Self {
        Self {
            location,
            catalog: None,
            prepare: None,
        }
    }

    /// A connection to `location` that is `catalog` (already open) until it breaks.
    pub fn open(location: Location, catalog: Catalog) -> Self {
        Self {
            location,
            catalog: Some(catalog),
            prepare: None,
        }
    }

    /// Runs `prepare` on each new connection, before its first use.
    #[must_use]
    pub fn prepared(mut self, prepare: Prepare) -> Self {
        self.prepare = Some(prepare);
        self
    }

    /// Runs `f` on the connection, opening it first if there is none. When `f` fails
    /// because the connection is gone, it is dropped: the next call makes a new one.
    pub fn with<T>(
        &mut self,
        f: impl FnOnce(&mut Catalog) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let catalog = match &mut self.catalog {
            Some(c) => c,
            None => {
                let c = Catalog::open(&self.location)?;
                if let Some(prepare) = self.prepare {
                    prepare(&c)?;
                }
                self.catalog.insert(c)
            }
        };
        let result = f(catalog);
        if result.as_ref().is_err_and(StoreError::is_disconnect) {
            self.catalog = None;
        }
        result
    }

    /// As [`Connection::with`], for what may safely run twice (reads; writes that
    /// set a state rather than add to one): a connection that was open already and
    /// turns out to be gone is replaced and `f` run again on the new one at once, so
    /// the first request after a PostgreSQL restart does not fail.
    pub fn again<T>(
        &mut self,
        mut f: impl FnMut(&mut Catalog) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let reused = self.catalog.is_some();
        match self.with(&mut f) {
            Err(e) if reused && e.is_disconnect() => self.with(f),
            result => result,
        }
    }
}
