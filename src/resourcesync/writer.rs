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
            write_ln(&mut out, ln, "  ")?;
        }
        write_md(&mut out, md, "  ")?;
        Ok(Self {
            out,
            root,
            entries: 0,
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
        let tag = match self.root {
            Root::UrlSet => "url",
            Root::SitemapIndex => "sitemap",
        };
        write!(self.out, "  <{tag}>\n    <loc>{}</loc>\n", escape(&e.loc))?;
        if let Some(t) = &e.lastmod {
            writeln!(self.out, "    <lastmod>{}</lastmod>", escape(t))?;
        }
        if let Some(md) = &e.md {
            write_md(&mut self.out, md, "    ")?;
        }
        for ln in &e.lns {
            write_ln(&mut self.out, ln, "    ")?;
        }
        writeln!(self.out, "  </{tag}>")?;
        self.entries += 1;
        Ok(())
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

fn write_md(out: &mut impl Write, md: &Md, indent: &str) -> io::Result<()> {
    write!(out, "{indent}<rs:md")?;
    for (k, v) in &md.0 {
        write!(out, " {k}=\"{}\"", escape(v))?;
    }
    out.write_all(b"/>\n")
}

fn write_ln(out: &mut impl Write, ln: &Ln, indent: &str) -> io::Result<()> {
    write!(
        out,
        "{indent}<rs:ln rel=\"{}\" href=\"{}\"",
        ln.rel,
        escape(&ln.href)
    )?;
    for (k, v) in &ln.attrs {
        write!(out, " {k}=\"{}\"", escape(v))?;
    }
    out.write_all(b"/>\n")
}

/// Escapes text and attribute values (`&`, `<`, `>`, `"`, `'`).
pub fn escape(s: &str) -> std::borrow::Cow<'_, str> {
    crate::xml::escape(s)
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
}
