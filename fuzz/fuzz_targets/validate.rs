//! Fuzzes the whole validator: bytes in, report out. Any panic, hang or runaway memory
//! is a bug; a crash it finds becomes a regression test in `tests/it/hostile.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use plikt::profile::{self, Options, RuleId};

fuzz_target!(|data: &[u8]| {
    let report = profile::validate(data, &Options::default()).expect("reading from memory cannot fail");
    // G-XML is fatal and stands alone (catalogue §0.4.1).
    if report.findings.iter().any(|f| f.rule == RuleId::GXml) {
        assert_eq!(report.findings.len(), 1);
    }
    // Every finding has a position.
    assert!(report.findings.iter().all(|f| f.pos.is_some_and(|p| p.line >= 1 && p.column >= 1)));
});
