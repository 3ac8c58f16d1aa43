//! Fuzzes two threads against one: the same bytes, written to a file and validated by
//! `validate_file` in segments of 1 to 256 bytes (the input's first byte picks), must give
//! exactly the report `validate` gives on one thread, finding by finding. A difference or a
//! panic is a bug; a case it finds becomes a test in `src/profile/split/tests.rs`.
//! Inputs under about 1 KiB are always read on one thread, so seed the corpus with
//! `scripts/fuzz-seed-split` and run it with a larger `-max_len` and `-detect_leaks=0`
//! (see README: LeakSanitizer takes the helper thread's exit record for a leak).
#![no_main]

use libfuzzer_sys::fuzz_target;
use plikt::profile::{self, Options};

fuzz_target!(|data: &[u8]| {
    let Some((&segment, feed)) = data.split_first() else {
        return;
    };
    let one = profile::validate(feed, &Options::default()).expect("reading from memory cannot fail");
    let path = std::env::temp_dir().join(format!("plikt-fuzz-split-{}.xml", std::process::id()));
    std::fs::write(&path, feed).expect("write the input to a temporary file");
    let file = std::fs::File::open(&path).expect("open the temporary file");
    let options = Options {
        segment_bytes: u64::from(segment) + 1,
        ..Options::default()
    };
    let two = profile::validate_file(&file, &options).expect("read the temporary file");
    assert_eq!(format!("{one:#?}"), format!("{two:#?}"));
});
