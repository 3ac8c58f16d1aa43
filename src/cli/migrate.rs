//! `plikt migrate`: moving up from the embedded default (issue 17 §5).

use clap::Args;

use super::error::{Error, Exit};
use crate::store::moving::{self, MoveError};
use crate::store::{Blobs, Catalog, Location};

/// Arguments of `plikt migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The configuration whose `[catalog]` and `[blobs]` receive the copy.
    #[arg(long, short, default_value = "plikt.toml")]
    pub config: std::path::PathBuf,
    /// The data folder to copy from: its `catalog.sqlite`, `blobs/` and published
    /// documents `www/` (only read; stop `plikt run` on it first).
    #[arg(long)]
    pub from: std::path::PathBuf,
}

/// Copies blobs, then rows, then verifies; exit 0 only when the copy is complete and
/// intact, 1 when verification found a difference (each printed), 2 on errors. Run it
/// again after an interruption: it goes on where it stopped.
pub fn run(args: &MigrateArgs) -> Result<Exit, Error> {
    let config = super::load(&args.config)?;
    super::init_logging(true);
    let (source, target) = source_and_target(args, &config)?;
    // Nothing writes to the source while it is copied: a `plikt run` or `plikt harvest`
    // on it would deposit what the copy has already passed.
    let _source_lock = crate::store::lock_data_dir(&args.from)?;
    let started = std::time::Instant::now();
    let src = Catalog::open_sqlite(&source)?;
    let from = Blobs::open(&args.from, &crate::config::BlobsConfig::default())
        .map_err(crate::store::StoreError::from)?;
    let to =
        Blobs::open(&config.data_dir, &config.blobs).map_err(crate::store::StoreError::from)?;
    let mut dst = Catalog::open(&target)?;
    // Checked at the start, not only when the documents are moved after hours of copying.
    dst.check_clock(config.catalog.max_clock_offset())?;
    let rt = super::runtime()?;
    let into = match &config.blobs.s3 {
        Some(Ok(s3)) => format!("the object store's bucket `{}`", s3.bucket),
        _ => config.data_dir.join("blobs").display().to_string(),
    };
    eprintln!(
        "plikt migrate: copying the blobs of {} into {into}",
        args.from.display()
    );
    let copied = rt.block_on(moving::copy_blobs(
        &src,
        &mut dst,
        &from,
        &to,
        &|done, total| {
            if done % 1000 == 0 || done == total {
                eprintln!("plikt migrate: blobs {done}/{total}");
            }
        },
    ))?;
    eprintln!("plikt migrate: copying the catalog's rows");
    let rows = rt.block_on(async {
        tokio::task::block_in_place(|| {
            moving::copy_rows(&src, &mut dst, &|table, n| {
                if n % 10_000 == 0 {
                    eprintln!("plikt migrate: {table}: {n} rows");
                }
            })
        })
    })?;
    eprintln!("plikt migrate: verifying (every blob is read back from the target)");
    let problems = rt.block_on(async {
        tokio::task::block_in_place(|| {
            moving::verify(&src, &dst, &to, &|done, total| {
                if done % 1000 == 0 || done == total {
                    eprintln!("plikt migrate: verified {done}/{total} blobs");
                }
            })
        })
    })?;
    for (table, n) in &rows {
        outln!("{table}: {n} rows");
    }
    outln!(
        "blobs: {} ({} copied now, {} bytes), in {:.1} s",
        copied.blobs,
        copied.blobs_copied,
        copied.bytes_copied,
        started.elapsed().as_secs_f64()
    );
    if problems.is_empty() {
        // The published documents last: what the archives list moves with the
        // collection (verified by the object store's checksums on upload).
        let (copied, pushed) =
            crate::resourcesync::move_documents(&config, &args.from.join("www"))?;
        outln!(
            "documents: {copied} copied into {}, {pushed} to the object store",
            crate::resourcesync::www(&config).display()
        );
        outln!(
            "verified: every row count, the change journal and every blob's length and SHA-256 match"
        );
        Ok(Exit::Ok)
    } else {
        for p in &problems {
            outln!("DIFFERS: {p}");
        }
        eprintln!(
            "plikt: error: the copy differs from the source in {} place(s) (listed above); run plikt migrate again to complete an interrupted copy, and if a difference stays, check the target's catalog and object store",
            problems.len()
        );
        Ok(Exit::Invalid)
    }
}

/// The SQLite catalog to copy (in `--from`) and the catalog to copy it into, which must
/// be another, with other blobs.
fn source_and_target(
    args: &MigrateArgs,
    config: &crate::config::Config,
) -> Result<(std::path::PathBuf, Location), Error> {
    let source = args.from.join("catalog.sqlite");
    if !source.exists() {
        return Err(Error::Usage(format!(
            "{} has no catalog.sqlite: --from names the data folder of the SQLite catalog to copy",
            args.from.display()
        )));
    }
    let target = Location::of(config)?;
    use crate::config::same_path;
    let same_catalog = matches!(&target, Location::Sqlite(p) if same_path(p, &source));
    let same_blobs = config.blobs.s3.is_none() && same_path(&config.data_dir, &args.from);
    if same_catalog || same_blobs {
        return Err(MoveError::SameTarget(args.from.display().to_string()).into());
    }
    Ok((source, target))
}
