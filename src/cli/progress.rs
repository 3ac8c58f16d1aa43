//! The harvest progress bar: shown only when standard error is a terminal.

use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::harvest::{Progress, RunSummary};

/// Publishers, items, files and bytes, on a terminal.
#[derive(Debug)]
pub struct Bars {
    publishers: ProgressBar,
    files: ProgressBar,
    bytes: AtomicU64,
}

impl Bars {
    /// Bars for `publishers` publishers.
    pub fn new(publishers: u64) -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let p = multi.add(ProgressBar::new(publishers));
        p.set_style(
            ProgressStyle::with_template("publishers {pos}/{len} {wide_msg}")
                .expect("constant template"),
        );
        let f = multi.add(ProgressBar::new(0));
        f.set_style(
            ProgressStyle::with_template("files {pos}/{len} [{bar:30}] {msg}")
                .expect("constant template")
                .progress_chars("=> "),
        );
        Self {
            publishers: p,
            files: f,
            bytes: AtomicU64::new(0),
        }
    }
}

impl Progress for Bars {
    fn publisher(&self, id: &str) {
        self.publishers.set_message(format!("harvesting {id}"));
    }
    fn items(&self, n: u64) {
        self.publishers.set_message(format!("{n} items read"));
    }
    fn files_queued(&self, n: u64) {
        self.files.inc_length(n);
    }
    fn file_done(&self) {
        self.files.inc(1);
        let total = self.bytes.load(Ordering::Relaxed);
        self.files
            .set_message(indicatif::HumanBytes(total).to_string());
    }
    fn bytes(&self, n: u64) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
    }
    fn publisher_done(&self, summary: &RunSummary) {
        self.publishers.inc(1);
        self.publishers
            .println(format!("{}: {}", summary.publisher, summary.outcome));
        self.files
            .set_message(indicatif::HumanBytes(summary.counts.bytes).to_string());
    }
}
