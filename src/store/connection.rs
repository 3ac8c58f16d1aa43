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

/// Catalog connections for many readers at once (`plikt serve`): requests read on
/// every core instead of queueing on one connection (issue 35 §2). A connection that
/// turns out to be gone is dropped from the pool and the read made again on another.
#[derive(Debug, Clone)]
pub struct Pool(r2d2::Pool<Manager>);

/// Opens the pool's connections.
#[derive(Debug)]
struct Manager(Location);

/// A pooled catalog connection; `broken` once a statement found it gone.
#[derive(Debug)]
struct Pooled {
    catalog: Catalog,
    broken: bool,
}

impl r2d2::ManageConnection for Manager {
    type Connection = Pooled;
    type Error = StoreError;

    fn connect(&self) -> Result<Pooled, StoreError> {
        Ok(Pooled {
            catalog: Catalog::open(&self.0)?,
            broken: false,
        })
    }

    /// Not asked at every checkout (a round trip per request): a broken connection
    /// shows itself in the statement, and [`Pool::again`] takes another.
    fn is_valid(&self, _: &mut Pooled) -> Result<(), StoreError> {
        Ok(())
    }

    fn has_broken(&self, c: &mut Pooled) -> bool {
        c.broken
    }
}

/// The pauses of a long-running loop waiting for the catalog to answer: 1 s, doubled
/// after each try up to 30 s.
#[derive(Debug)]
pub struct Patience {
    pause: std::time::Duration,
}

impl Default for Patience {
    fn default() -> Self {
        Self {
            pause: std::time::Duration::from_secs(1),
        }
    }
}

impl Patience {
    /// The pause before the next try, in seconds (for the log).
    pub fn next_secs(&self) -> u64 {
        self.pause.as_secs()
    }

    /// Waits the pause (longer next time); false if shutdown came first.
    pub async fn wait(&mut self, shutdown: &mut tokio::sync::watch::Receiver<bool>) -> bool {
        let pause = self.pause;
        self.pause = (pause * 2).min(std::time::Duration::from_secs(30));
        tokio::select! {
            _ = shutdown.wait_for(|v| *v) => false,
            () = tokio::time::sleep(pause) => true,
        }
    }
}

/// How long a request waits for a connection.
const CHECKOUT: std::time::Duration = std::time::Duration::from_secs(10);

impl Pool {
    /// Up to `size` connections to `location`, made as requests need them.
    pub fn new(location: Location, size: u32) -> Self {
        Self(
            r2d2::Pool::builder()
                .max_size(size.max(1))
                .min_idle(Some(0))
                .test_on_check_out(false)
                .connection_timeout(CHECKOUT)
                .error_handler(Box::new(r2d2::NopErrorHandler))
                .build_unchecked(Manager(location)),
        )
    }

    /// Runs `f` on a pooled connection (waiting for one, at most 10 s). When the
    /// connection turns out to be gone (PostgreSQL restarted), it leaves the pool and
    /// `f` runs once more on another, so the first request after a restart does not
    /// fail. Blocks.
    pub fn again<T>(
        &self,
        mut f: impl FnMut(&Catalog) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut c = self.get()?;
        match f(&c.catalog) {
            Err(e) if e.is_disconnect() => {
                c.broken = true;
                drop(c);
                let mut c = self.get()?;
                let result = f(&c.catalog);
                c.broken = result.as_ref().is_err_and(StoreError::is_disconnect);
                result
            }
            result => result,
        }
    }

    /// As [`Pool::again`], if a connection is free now (never waits, never connects
    /// to a server: for quick reads on the async threads); `None` if none is.
    pub fn try_again<T>(
        &self,
        f: impl FnOnce(&Catalog) -> Result<T, StoreError>,
    ) -> Option<Result<T, StoreError>> {
        let mut c = self.0.try_get()?;
        let result = f(&c.catalog);
        c.broken = result.as_ref().is_err_and(StoreError::is_disconnect);
        Some(result)
    }

    fn get(&self) -> Result<r2d2::PooledConnection<Manager>, StoreError> {
        self.0.get().map_err(|e| StoreError::Unreachable {
            secs: CHECKOUT.as_secs(),
            reason: e.to_string(),
        })
    }
}
