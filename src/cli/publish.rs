//! `plikt publish` and `plikt serve`.

use super::error::{Error, Exit};
use crate::server::AppState;

/// `plikt publish`.
#[derive(Debug, clap::Args)]
pub struct PublishArgs {
    #[command(flatten)]
    config: super::ConfigArgs,
    /// Write the lists only (Source Description, Capability, Resource and Change
    /// Lists): dump packages are left as they are, and the Resource and Change Dumps
    /// go on listing them until a publish without this flag (`plikt run` always
    /// writes the dumps). For publishing changes quickly and packing them later.
    #[arg(long)]
    no_dumps: bool,
}

/// Writes the ResourceSync documents from the catalog.
pub fn publish(args: &PublishArgs) -> Result<Exit, Error> {
    let config = super::load(&args.config.config)?;
    super::init_logging(false);
    let dumps = if args.no_dumps {
        crate::resourcesync::Dumps::Keep
    } else {
        crate::resourcesync::Dumps::Write
    };
    let p = crate::resourcesync::publish(&config, dumps)?;
    // The changes since each topic's last notification, for the hub to deliver (a
    // running `plikt serve` or `plikt run` sends them).
    let n = crate::notify::enqueue(&config)?;
    outln!(
        "published {} sets ({} unchanged since the last publish): {} resources, {} changes, {} dump packages written (under {}); {} change notifications queued",
        p.sets,
        p.unchanged,
        p.resources,
        p.changes,
        p.dump_packages,
        crate::resourcesync::www(&config).display(),
        n.notifications
    );
    if !n.public_topics.is_empty() && !config.notification.external_hubs.is_empty() {
        let client = crate::notify::client(&config)?;
        super::runtime()?.block_on(crate::notify::ping_external_hubs(
            &config,
            &client,
            &n.public_topics,
        ));
    }
    Ok(Exit::Ok)
}

/// Serves the documents and resources on `listen` until SIGTERM or Ctrl-C.
pub fn serve(args: &super::ConfigArgs) -> Result<Exit, Error> {
    let config = super::load(&args.config)?;
    super::init_logging(false);
    let rt = super::runtime()?;
    rt.block_on(async {
        let (_tx, shutdown) = super::shutdown_signal();
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .map_err(|source| Error::Listen {
                addr: config.listen,
                source,
            })?;
        tracing::info!(listen = %config.listen, base_url = %config.base_url, "plikt serve started");
        let c = config.clone();
        let Some(state) =
            super::when_catalog_answers("starting the server", &shutdown, move || {
                Ok(AppState::open(c.clone())?)
            })
            .await?
        else {
            return Ok(());
        };
        // Deliveries of the notifications `plikt publish` queues.
        let deliveries = tokio::spawn(crate::notify::deliver::run(
            config.clone(),
            shutdown.clone(),
            std::sync::Arc::new(tokio::sync::Notify::new()),
        ));
        let served = crate::server::serve(listener, state, shutdown)
            .await
            .map_err(Error::Server);
        // The deliveries stop on the same signal, after recording those in flight.
        match deliveries.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "deliveries stopped"),
            Err(e) => tracing::error!(error = %e, "deliveries panicked"),
        }
        served
    })?;
    Ok(Exit::Ok)
}
