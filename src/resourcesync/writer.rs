//! Streaming writer of Sitemap-based ResourceSync documents (ANSI/NISO Z39.99 §4–§7):
//! a `<urlset>` (or `<sitemapindex>`) with the document's `<rs:ln>` and `<rs:md>`,
//! then one `<url>` (or `<sitemap>`) per entry. Entries go straight to the output, so
//! memory does not depend on the number of entries.

use std::io::{self, Write};

/// Sitemap namespace.
pub const SITEMAP_NS: &str = "http://www.sitemaps.org/schemas/sitemap/0.9";
/// ResourceSync namespace.
pub const RS_NS: &str = "http://www.openarchives.org/rs/terms/";
/// At most this many entries per document (Sitemap protocol, §4 of the core).
pub const MAX_ENTRIES: usize = 50_000;
/// At most this many bytes per document (Sitemap protocol: 50 MB uncompressed).
pub const MAX_BYTES: u64 = 50_000_000;

/// `<rs:md>`: attributes in the order given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Md(pub Vec<(&'static str, String)>);

impl Md {
    /// An `<rs:md>` with `capability`.
    pub fn capability(capability: &str) -> Self {
        Self(vec![("capability", capability.to_string())])
    }

    /// Adds an attribute.
    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.0.push((name, value.into()));
        self
    }
}

/// `<rs:ln>`: `rel`, `href`, then further attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ln {
    /// Relation type (§5.2: `up`, `index`, `describedby`, `via`, `memento` …).
    pub rel: &'static str,
    /// Target URI.
    pub href: String,
    /// Further attributes (`modified`, `hash`, `length`, `type` …).
    pub attrs: Vec<(&'static str, String)>,
}

impl Ln {
    /// A link with no further attributes.
    pub fn new(rel: &'static str, href: impl Into<String>) -> Self {
        Self {
            rel,
            href: href.into(),
            attrs: Vec::new(),
        }
    }

    /// Adds an attribute.
    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.attrs.push((name, value.into()));
        self
    }
}

/// One `<url>` (or `<sitemap>`) entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    /// `<loc>`.
    pub loc: String,
    /// `<lastmod>`.
    pub lastmod: Option<String>,
    /// `<rs:md>`.
    pub md: Option<Md>,
    /// `<rs:ln>`s.
    pub lns: Vec<Ln>,
}

/// The root element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    /// `<urlset>` with `<url>` entries.
    UrlSet,
    /// `<sitemapindex>` with `<sitemap>` entries.
    SitemapIndex,
}

/// Writes one document.
#[derive(Debug)]
pub struct DocumentWriter<W: Write> {
    out: Counting<W>,
    root: Root,
    entries: usize,
    /// The entry being written: an entry goes to `out` in one piece.
    entry: Vec<u8>,
}

impl<W: Write> DocumentWriter<W> {
    /// Starts a document with its own links and metadata.
    pub fn new(out: W, root: Root, lns: &[Ln], md: &Md) -> io::Result<Self> {
        let mut out = Counting {
            inner: out,
            bytes: 0,
        };
        let name = match root {
            Root::UrlSet => "urlset",
            Root::SitemapIndex => "sitemapindex",
        };
        write!(
            out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<{name} xmlns=\"{SITEMAP_NS}\" xmlns:rs=\"{RS_NS}\">\n"
        )?;
        for ln in lns {
            let attrs: Vec<(&str, &str)> = ln.attrs.iter().map(|(k, v)| (*k, v.as_str())).collect();
            write_ln(&mut out, ln.rel, &ln.href, &attrs, "  ")?;
        }
        let attrs: Vec<(&str, &str)> = md.0.iter().map(|(k, v)| (*k, v.as_str())).collect();
        write_md(&mut out, &attrs, "  ")?;
        Ok(Self {
            out,
            root,
            entries: 0,
            entry: Vec::with_capacity(2048),
        })
    }

    /// Entries written so far.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.out.bytes
    }

    /// True when one more entry of about `reserve` bytes would pass a limit.
    pub fn full(&self, reserve: u64) -> bool {
        self.entries >= MAX_ENTRIES || self.out.bytes + reserve + 32 > MAX_BYTES
    }

    /// Writes one entry.
    pub fn entry(&mut self, e: &Entry) -> io::Result<()> {
        let mut w = self.url(&e.loc)?;
        if let Some(t) = &e.lastmod {
            w.lastmod(t)?;
        }
        if let Some(md) = &e.md {
            let attrs: Vec<(&str, &str)> = md.0.iter().map(|(k, v)| (*k, v.as_str())).collect();
            w.md(&attrs)?;
        }
        for ln in &e.lns {
            let attrs: Vec<(&str, &str)> = ln.attrs.iter().map(|(k, v)| (*k, v.as_str())).collect();
            w.ln(ln.rel, &ln.href, &attrs)?;
        }
        w.end()
    }

    /// Starts an entry at `loc`; its parts are written in order by the returned
    /// [`EntryWriter`], straight to the output (the fast path of the large lists: no
    /// [`Entry`] is built).
    pub fn url(&mut self, loc: &str) -> io::Result<EntryWriter<'_, W>> {
        let tag = match self.root {
            Root::UrlSet => "url",
            Root::SitemapIndex => "sitemap",
        };
        let out = &mut self.entry;
        out.clear();
        out.extend_from_slice(b"  <");
        out.extend_from_slice(tag.as_bytes());
        out.extend_from_slice(b">\n    <loc>");
        crate::xml::write_escaped(out, loc)?;
        out.extend_from_slice(b"</loc>\n");
        self.entries += 1;
        Ok(EntryWriter { doc: self, tag })
    }

    /// Ends the document and hands back the output.
    pub fn finish(mut self) -> io::Result<W> {
        let name = match self.root {
            Root::UrlSet => "urlset",
            Root::SitemapIndex => "sitemapindex",
        };
        writeln!(self.out, "</{name}>")?;
        self.out.flush()?;
        Ok(self.out.inner)
    }
}

/// The parts of one entry after its `<loc>` ([`DocumentWriter::url`]): `<lastmod>`,
/// then `<rs:md>`, then the `<rs:ln>`s, then [`EntryWriter::end`].
#[derive(Debug)]
pub struct EntryWriter<'w, W: Write> {
    doc: &'w mut DocumentWriter<W>,
    tag: &'static str,
}

impl<W: Write> EntryWriter<'_, W> {
    /// `<lastmod>`.
    pub fn lastmod(&mut self, t: &str) -> io::Result<()> {
        let out = &mut self.doc.entry;
        out.extend_from_slice(b"    <lastmod>");
        crate::xml::write_escaped(out, t)?;
        out.extend_from_slice(b"</lastmod>\n");
        Ok(())
    }

    /// `<rs:md>` with these attributes, in order.
    pub fn md(&mut self, attrs: &[(&str, &str)]) -> io::Result<()> {
        write_md(&mut self.doc.entry, attrs, "    ")
    }

    /// `<rs:ln>` with `rel`, `href` and these further attributes, in order.
    pub fn ln(&mut self, rel: &str, href: &str, attrs: &[(&str, &str)]) -> io::Result<()> {
        write_ln(&mut self.doc.entry, rel, href, attrs, "    ")
    }

    /// Ends the entry and writes it out.
    pub fn end(self) -> io::Result<()> {
        let doc = self.doc;
        doc.entry.extend_from_slice(b"  </");
        doc.entry.extend_from_slice(self.tag.as_bytes());
        doc.entry.extend_from_slice(b">\n");
        doc.out.write_all(&doc.entry)
    }
}

/// Attributes of an `<rs:md>` or `<rs:ln>` gathered on the stack (at most 8).
#[derive(Debug, Default)]
pub struct Attrs<'a> {
    items: [(&'a str, &'a str); 8],
    len: usize,
}

impl<'a> Attrs<'a> {
    /// Adds an attribute.
    ///
    /// # Panics
    /// Past 8 attributes (a programming error: no element here has more).
    pub fn push(&mut self, name: &'a str, value: &'a str) -> &mut Self {
        self.items[self.len] = (name, value);
        self.len += 1;
        self
    }

    /// Adds attributes.
    ///
    /// # Panics
    /// Past 8 attributes, as [`Attrs::push`].
    pub fn extend(&mut self, attrs: &[(&'a str, &'a str)]) -> &mut Self {
        for (k, v) in attrs {
            self.push(k, v);
        }
        self
    }

    /// The attributes, in order.
    pub fn as_slice(&self) -> &[(&'a str, &'a str)] {
        &self.items[..self.len]
    }
}

fn write_md(out: &mut impl Write, attrs: &[(&str, &str)], indent: &str) -> io::Result<()> {
    out.write_all(indent.as_bytes())?;
    out.write_all(b"<rs:md")?;
    write_attrs(out, attrs)?;
    out.write_all(b"/>\n")
}

fn write_ln(
    out: &mut impl Write,
    rel: &str,
    href: &str,
    attrs: &[(&str, &str)],
    indent: &str,
) -> io::Result<()> {
    out.write_all(indent.as_bytes())?;
    out.write_all(b"<rs:ln")?;
    write_attrs(out, &[("rel", rel), ("href", href)])?;
    write_attrs(out, attrs)?;
    out.write_all(b"/>\n")
}

fn write_attrs(out: &mut impl Write, attrs: &[(&str, &str)]) -> io::Result<()> {
    for (k, v) in attrs {
        out.write_all(b" ")?;
        out.write_all(k.as_bytes())?;
        out.write_all(b"=\"")?;
        crate::xml::write_escaped(out, v)?;
        out.write_all(b"\"")?;
    }
    Ok(())
}

/// `n` in decimal, without allocating.
pub fn decimal(n: u64, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    let mut n = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).expect("ASCII digits")
}

#[derive(Debug)]
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_list_is_written_with_escaped_values() {
        let mut w = DocumentWriter::new(
            Vec::new(),
            Root::UrlSet,
            &[Ln::new("up", "http://x.se/cap.xml")],
            &Md::capability("resourcelist").with("at", "2026-11-22T06:00:00Z"),
        )
        .unwrap();
        w.entry(&Entry {
            loc: "http://x.se/d?a=1&b=2".into(),
            lastmod: Some("2026-11-22T05:00:00Z".into()),
            md: Some(Md(vec![("hash", "md5:00".into()), ("length", "3".into())])),
            lns: vec![Ln::new("via", "http://p.se/\"q\"").with("modified", "2026-11-01T00:00:00Z")],
        })
        .unwrap();
        assert_eq!(w.entries(), 1);
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        assert!(text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" xmlns:rs=\"http://www.openarchives.org/rs/terms/\">"));
        assert!(
            text.contains("<loc>http://x.se/d?a=1&amp;b=2</loc>"),
            "{text}"
        );
        assert!(
            text.contains("href=\"http://p.se/&quot;q&quot;\""),
            "{text}"
        );
        assert!(text.contains("<rs:md capability=\"resourcelist\" at=\"2026-11-22T06:00:00Z\"/>"));
        assert!(text.trim_end().ends_with("</urlset>"));
        // Well-formed, namespace-well-formed XML by plikt's own reader.
        let mut r =
            crate::xml::XmlReader::new(text.as_bytes(), crate::xml::ReaderLimits::default());
        loop {
            match r.read_event() {
                Ok(crate::xml::XmlEvent::Eof) => break,
                Ok(_) => {}
                Err(e) => panic!("{e:?}\n{text}"),
            }
        }
    }

    #[test]
    fn numbers_and_special_characters_are_written_exactly() {
        let mut b = [0u8; 20];
        assert_eq!(decimal(0, &mut b), "0");
        assert_eq!(decimal(1_234_567, &mut b), "1234567");
        assert_eq!(decimal(u64::MAX, &mut b), "18446744073709551615");
        for (raw, written) in [
            ("plain", "plain"),
            ("", ""),
            ("a&b<c>d\"e'f", "a&amp;b&lt;c&gt;d&quot;e&apos;f"),
            ("&&", "&amp;&amp;"),
            ("x'", "x&apos;"),
            ("åäö é", "åäö é"),
        ] {
            let mut out = Vec::new();
            crate::xml::write_escaped(&mut out, raw).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), written, "{raw}");
        }
        let mut attrs = Attrs::default();
        attrs.push("a", "1").extend(&[("b", "2"), ("c", "3")]);
        assert_eq!(attrs.as_slice(), &[("a", "1"), ("b", "2"), ("c", "3")]);
    }
}
