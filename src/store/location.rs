//! Where the catalog is ([`Location`]) and how plikt connects to it: SQLite's pragmas,
//! PostgreSQL's time limits and TLS, and a refusal that says which setting to change.

use std::path::Path;

use super::StoreError;
use super::sql::{Db, sql};

/// Where the catalog is: `[catalog]`.
#[derive(Clone)]
pub enum Location {
    /// A SQLite file (`data_dir/catalog.sqlite`, the default).
    Sqlite(std::path::PathBuf),
    /// A PostgreSQL database (`[catalog] url`), with the password from the
    /// environment or a file (never in the URL of the configuration).
    Postgres {
        /// `postgres://user@host:port/database` (libpq's URL form).
        url: String,
        /// The password, if the server asks for one.
        password: Option<String>,
        /// TLS to the server (libpq's `sslmode`, `sslrootcert`: taken out of `url`).
        tls: crate::config::CatalogTls,
        /// The certificate to present, if the server asks for one (libpq's `sslcert`,
        /// `sslkey`: taken out of `url`).
        client_certificate: Option<crate::config::ClientCertificate>,
    },
}

impl Location {
    /// Where `config` puts the catalog: `[catalog] url`, or `data_dir/catalog.sqlite`.
    pub fn of(config: &crate::config::Config) -> Result<Self, StoreError> {
        let c = &config.catalog;
        Ok(match &c.url {
            None => Location::Sqlite(config.data_dir.join("catalog.sqlite")),
            Some(url) => Location::Postgres {
                url: url.to_string(),
                password: match &c.password {
                    None => None,
                    Some(Ok(p)) => Some(p.expose().to_string()),
                    Some(Err(reason)) => {
                        return Err(StoreError::Secret {
                            reason: reason.clone(),
                        });
                    }
                },
                tls: c.tls.clone(),
                client_certificate: c.client_certificate.clone(),
            },
        })
    }

    /// A PostgreSQL catalog at `url`, without password or TLS (the tests' clusters).
    #[cfg(test)]
    pub(crate) fn plain_postgres(url: String) -> Self {
        Location::Postgres {
            url,
            password: None,
            tls: crate::config::CatalogTls::Disable,
            client_certificate: None,
        }
    }
}

impl Location {
    /// A connection to the catalog, its schema not yet migrated.
    pub(super) fn connect(&self) -> Result<Db, StoreError> {
        match self {
            Self::Sqlite(path) => open_sqlite(path),
            Self::Postgres {
                url,
                password,
                tls,
                client_certificate,
            } => connect_postgres(url, password.as_deref(), tls, client_certificate.as_ref()),
        }
    }
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "Sqlite({})", p.display()),
            Location::Postgres { url, .. } => write!(f, "Postgres({url})"),
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Sqlite(p) => write!(f, "{}", p.display()),
            Location::Postgres { url, .. } => f.write_str(url),
        }
    }
}

fn open_sqlite(path: &Path) -> Result<Db, StoreError> {
    let conn = rusqlite::Connection::open(path).map_err(sql("opening the catalog"))?;
    conn.busy_timeout(std::time::Duration::from_secs(30))
        .map_err(sql("setting the busy timeout"))?;
    // Turning a new catalog to WAL takes an exclusive lock, and SQLite answers a
    // second process doing the same at that instant with SQLITE_BUSY without calling
    // the busy handler: try again, within the busy timeout.
    let started = std::time::Instant::now();
    loop {
        match conn.execute_batch("PRAGMA journal_mode = WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && started.elapsed() < std::time::Duration::from_secs(30) =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            r => break r.map_err(sql("turning the catalog to WAL"))?,
        }
    }
    // Statement journals (a statement's undo inside a transaction) stay in memory.
    conn.execute_batch(
        "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;",
    )
    .map_err(sql("setting the catalog's pragmas"))?;
    Ok(Db::sqlite(conn))
}

/// Connects to PostgreSQL: a connect timeout of 10 s unless the URL sets one, TCP
/// keepalives, `application_name = plikt` (so a DBA sees who is connected), and TLS as
/// `tls` asks, presenting `client_certificate` if given (the connector is made at each
/// connection, so a renewed `sslrootcert` or certificate is read without a restart).
fn connect_postgres(
    url: &str,
    password: Option<&str>,
    tls: &crate::config::CatalogTls,
    client_certificate: Option<&crate::config::ClientCertificate>,
) -> Result<Db, StoreError> {
    let mut config: postgres::Config =
        url.parse()
            .map_err(|e: postgres::Error| StoreError::CatalogUrl {
                url: url.to_string(),
                reason: e.to_string(),
            })?;
    if let Some(p) = password {
        config.password(p);
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(std::time::Duration::from_secs(10));
    }
    if config.get_application_name().is_none() {
        config.application_name("plikt");
    }
    config.keepalives(true);
    // plikt reads every row of a cursor (`Db::each`): plans made for the first tenth of
    // the rows (PostgreSQL's default for cursors) walked the due files of a 10,000-item
    // feed in 13 s instead of 0.1 s. (Planning every execution for its values,
    // `plan_cache_mode = force_custom_plan`, made `plikt migrate`'s row-by-row copy 65 %
    // slower: queries that need it go through a cursor, planned when it is declared.)
    const OPTIONS: &str = "-c cursor_tuple_fraction=1";
    let options = match config.get_options() {
        Some(o) => format!("{o} {OPTIONS}"),
        None => OPTIONS.to_string(),
    };
    config.options(&options);
    use crate::config::CatalogTls;
    // libpq speaks no TLS over a Unix-domain socket, whatever sslmode says.
    let local = !config.get_hosts().is_empty()
        && config
            .get_hosts()
            .iter()
            .all(|h| matches!(h, postgres::config::Host::Unix(_)));
    let tls = if local { &CatalogTls::Disable } else { tls };
    config.ssl_mode(match tls {
        CatalogTls::Disable => postgres::config::SslMode::Disable,
        CatalogTls::Prefer => postgres::config::SslMode::Prefer,
        _ => postgres::config::SslMode::Require,
    });
    // A certificate is presented over TCP only, where TLS is.
    let client_certificate = client_certificate.filter(|_| !local);
    let connected = match super::tls::connector(tls, client_certificate)? {
        None => super::sql::blocking(|| config.connect(postgres::NoTls)),
        Some(connector) => super::sql::blocking(|| config.connect(connector)),
    };
    match connected {
        Ok(client) => Ok(Db::postgres(client)),
        Err(e) => Err(super::tls::explain(&e, tls, client_certificate)
            .or_else(|| refused(&e, &config, client_certificate.is_some()))
            .unwrap_or_else(|| {
                // The server's other refusals speak for themselves; a connection that
                // was never made needs the where.
                let context = match e.as_db_error() {
                    Some(_) => "connecting to PostgreSQL",
                    None => {
                        "connecting to PostgreSQL (is it running, and listening at the host and port of [catalog] url?)"
                    }
                };
                sql(context)(e)
            })),
    }
}

/// A connection PostgreSQL refused for its settings (the password, the database, the
/// client certificate presented if `certificate`): who plikt connected as, where, and
/// what to change.
fn refused(
    e: &postgres::Error,
    config: &postgres::Config,
    certificate: bool,
) -> Option<StoreError> {
    use postgres::error::SqlState;
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .zip(config.get_ports().iter().chain(std::iter::repeat(&5432)))
        .map(|(h, port)| match h {
            postgres::config::Host::Tcp(h) => format!("{h}:{port}"),
            postgres::config::Host::Unix(p) => format!("{}", p.display()),
        })
        .collect();
    let user = config.get_user().unwrap_or("(none)");
    let who = format!(
        "user `{user}`, database `{}` at {}",
        config.get_dbname().unwrap_or(user),
        hosts.join(", ")
    );
    let advice = match e.as_db_error().map(|d| d.code()) {
        // `clientcert=verify-full` beside a password: a certificate of another user gets
        // the same refusal as a wrong password (PostgreSQL names the mismatch only in
        // its own log).
        Some(c) if *c == SqlState::INVALID_PASSWORD && certificate => {
            "check the password [catalog] password_env or password_file gives (a file's first line); if the server's pg_hba.conf asks for clientcert=verify-full, PostgreSQL says the same when the client certificate of sslcert is not the user's (its common name (CN) must be the user in [catalog] url, or be mapped to it in pg_ident.conf): the server's log says which"
        }
        Some(c) if *c == SqlState::INVALID_PASSWORD => {
            "check the password [catalog] password_env or password_file gives (a file's first line)"
        }
        Some(c) if *c == SqlState::INVALID_CATALOG_NAME => {
            "the database must exist before plikt starts (plikt makes its tables, not the database): as PostgreSQL's superuser, `createuser --pwprompt plikt` and `createdb --owner plikt plikt` (README, \"Beyond one machine\")"
        }
        // Refusals of certificate authentication (`hostssl … cert`): PostgreSQL gives
        // them one code, and tells them apart only in its message (in English unless
        // the server's lc_messages says otherwise; then the message alone is shown).
        Some(c)
            if *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
                && db_message(e).contains("requires a valid client certificate") =>
        {
            super::tls::ASKS_FOR_CERTIFICATE
        }
        Some(c)
            if *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
                && db_message(e).contains("certificate authentication failed") =>
        {
            "the client certificate of sslcert is not the user's: its common name (CN) must be the user in [catalog] url, or be mapped to it in the server's pg_ident.conf"
        }
        // The client's own refusal, before any request (tokio-postgres names it only in
        // its message).
        None if super::with_causes(e).contains("password missing") => {
            "the server asks for a password and [catalog] gives none: set password_env or password_file"
        }
        _ => return None,
    };
    Some(StoreError::Refused {
        reason: format!(
            "catalog: PostgreSQL refused {who}: {}; {advice}",
            super::with_causes(e)
        ),
    })
}

/// The server's own message of its error `e` (empty if it is not the server's).
fn db_message(e: &postgres::Error) -> &str {
    e.as_db_error().map_or("", |d| d.message())
}
