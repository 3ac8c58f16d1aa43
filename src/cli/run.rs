//! `plikt run`: the long-running service.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::error::{Error, Exit};
use crate::config::Config;
use crate::harvest::{Harvester, NoProgress};
use crate::resourcesync::{Dumps, PublishError};
use crate::server::AppState;
use crate::store::{Mode, Store};

/// A publish at least this often, deposits or not: days close, retention moves, and
/// another worker may have deposited and stopped before it published.
const KEEP_UP: std::time::Duration = std::time::Duration::from_secs(60);

/// Harvests every publisher on its schedule and serves HTTP on `listen` until SIGTERM
/// or Ctrl-C; then stops taking work, lets files in flight finish (or abandons them
/// after the grace period) and exits 0.
pub fn run(args: &super::ConfigArgs) -> Result<Exit, Error> {
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
        // The store (held to the end: with SQLite it is the data folder's lock) and the
        // server's, once the catalog answers.
        let c = config.clone();
        let Some((_store, state)) =
            super::when_catalog_answers("starting the worker", &shutdown, move || {
                let store = Store::open(&c, Mode::Write)?;
                Ok((store, AppState::open(c.clone())?))
            })
            .await?
        else {
            return Ok(());
        };
        tracing::info!(listen = %config.listen, publishers = config.publishers.len(), "plikt run started");
        let harvester = Harvester::new(config.clone(), shutdown.clone(), Arc::new(NoProgress))?;
        // After runs that deposited: publish the ResourceSync documents, queue the
        // change notifications and wake the deliveries. Runs do not wait for it: a
        // run that ends asks for a publish, and one task publishes while asked, so runs
        // ending during a publish make one more publish after it, not one each (a
        // publish goes through every set; one at a time per data folder and catalog).
        let wake = Arc::new(tokio::sync::Notify::new());
        // Whether a publish failed and must be tried again at the next run's end.
        let failed = Arc::new(AtomicBool::new(false));
        let publish = publisher(config.clone(), shutdown.clone(), wake.clone(), failed.clone())?;
        // Documents for what is already in the catalog, before the first run.
        let first = publish.clone();
        tokio::task::spawn_blocking(move || first())
            .await
            .map_err(|e| Error::Task {
                what: "the first publish",
                reason: e.to_string(),
            })?;
        let wanted = Arc::new(tokio::sync::Notify::new());
        let publishing = tokio::spawn(publish_when_asked(publish, wanted.clone(), shutdown.clone()));
        // A run that deposited nothing changes no document: with thousands of
        // publishers answering 304, a publish after each would be most of the work.
        let after_run: Arc<dyn Fn(bool) + Send + Sync> =
            Arc::new(move |deposited| {
                if deposited || failed.load(Ordering::SeqCst) {
                    wanted.notify_one();
                }
            });
        let deliveries = tokio::spawn(crate::notify::deliver::run(
            config.clone(),
            shutdown.clone(),
            wake.clone(),
        ));
        let worker = crate::schedule::Worker::new(&config)?;
        tracing::info!(worker = %worker.id(), "harvesting as a worker");
        let harvester = match worker.host_gate() {
            Some(gate) => harvester.with_host_gate(gate),
            None => harvester,
        };
        let work = tokio::spawn(crate::schedule::work(
            harvester.clone(),
            config.clone(),
            worker,
            shutdown.clone(),
            after_run.clone(),
        ));
        let server = tokio::spawn(crate::server::serve(
            listener,
            state,
            shutdown.clone(),
        ));
        if let Err(e) = work.await {
            tracing::error!(error = %e, "the schedule panicked");
        }
        // The schedule returns only on shutdown (a catalog away is waited for): wait
        // for the signal, then for the server to finish.
        let _ = shutdown.clone().wait_for(|v| *v).await;
        match server.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "the HTTP server failed"),
            Err(e) => tracing::error!(error = %e, "the HTTP server panicked"),
        }
        if let Err(e) = publishing.await {
            tracing::error!(error = %e, "publishing panicked");
        }
        match deliveries.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "deliveries stopped"),
            Err(e) => tracing::error!(error = %e, "deliveries panicked"),
        }
        tracing::info!("plikt run stopped");
        Ok::<_, Error>(())
    })?;
    Ok(Exit::Ok)
}

/// `plikt run`'s publish: the documents, then the change notifications queued and the
/// deliveries woken (`wake`); `failed` is set when it fails, cleared when it starts.
fn publisher(
    config: Arc<Config>,
    shutdown: tokio::sync::watch::Receiver<bool>,
    wake: Arc<tokio::sync::Notify>,
    failed: Arc<AtomicBool>,
) -> Result<Arc<dyn Fn() + Send + Sync>, Error> {
    let hub_client = crate::notify::client(&config)?;
    let handle = tokio::runtime::Handle::current();
    Ok(Arc::new(move || {
        failed.store(false, Ordering::SeqCst);
        // On SIGTERM the publish stops between packages, so that the service stops
        // within its grace period (a first publish of a large collection takes
        // minutes); the next start publishes the rest.
        let stopping = || *shutdown.borrow();
        match crate::resourcesync::publish_until(&config, Dumps::Write, &stopping) {
            Ok(p) => tracing::info!(
                sets = p.sets,
                unchanged = p.unchanged,
                resources = p.resources,
                changes = p.changes,
                "published"
            ),
            Err(PublishError::Interrupted) => {
                // Change notifications wait for the documents they point to.
                tracing::info!("publishing stopped on shutdown; the next publish completes it");
                return;
            }
            Err(e) => {
                failed.store(true, Ordering::SeqCst);
                tracing::error!(error = %e, "publishing failed");
            }
        }
        match crate::notify::enqueue(&config) {
            Ok(n) => {
                wake.notify_one();
                if !n.public_topics.is_empty() && !config.notification.external_hubs.is_empty() {
                    let (c, client) = (config.clone(), hub_client.clone());
                    handle.spawn(async move {
                        crate::notify::ping_external_hubs(&c, &client, &n.public_topics).await;
                    });
                }
            }
            Err(e) => tracing::error!(error = %e, "queuing change notifications failed"),
        }
    }))
}

/// Publishes each time `wanted` is notified (a notification during a publish makes one
/// more publish after it), and after [`KEEP_UP`] without one, until shutdown.
async fn publish_when_asked(
    publish: Arc<dyn Fn() + Send + Sync>,
    wanted: Arc<tokio::sync::Notify>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        // Shutdown first: a publish asked for meanwhile is left to the next start.
        tokio::select! {
            biased;
            _ = shutdown.wait_for(|v| *v) => return,
            () = wanted.notified() => {}
            () = tokio::time::sleep(KEEP_UP) => {}
        }
        let p = publish.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || p()).await {
            tracing::error!(error = %e, "the publish panicked");
        }
    }
}
