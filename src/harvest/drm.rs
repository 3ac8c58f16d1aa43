//! H-DRM (catalogue §5, profile §3: DRM is not supported): PDF with `/Encrypt`, EPUB
//! with `META-INF/rights.xml` or `META-INF/encryption.xml` naming algorithms other than
//! font obfuscation. PDFs are scanned while they stream past; EPUBs are opened after
//! they are stored.

use std::io::Read;
use std::path::Path;

/// Font obfuscation algorithms, which are not DRM (EPUB OCF §4.3).
const FONT_OBFUSCATION: &[&str] = &[
    "http://www.idpf.org/2008/embedding",
    "http://ns.adobe.com/pdf/enc#RC",
];

const PDF_ENCRYPT: &[u8] = b"/Encrypt";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Unknown,
    Pdf,
    Zip,
    Other,
}

/// Watches a file's bytes for DRM.
#[derive(Debug)]
pub struct DrmScan {
    kind: Kind,
    tail: Vec<u8>,
    pdf_encrypt: bool,
}

impl Default for DrmScan {
    fn default() -> Self {
        Self {
            kind: Kind::Unknown,
            tail: Vec::new(),
            pdf_encrypt: false,
        }
    }
}

impl DrmScan {
    /// Looks at the next chunk.
    pub fn update(&mut self, chunk: &[u8]) {
        if self.kind == Kind::Unknown {
            self.tail.extend_from_slice(&chunk[..chunk.len().min(8)]);
            if self.tail.len() < 4 {
                return;
            }
            self.kind = if self.tail.starts_with(b"%PDF") {
                Kind::Pdf
            } else if self.tail.starts_with(b"PK\x03\x04") {
                Kind::Zip
            } else {
                Kind::Other
            };
            self.tail.clear();
        }
        if self.kind == Kind::Pdf && !self.pdf_encrypt {
            // Search across the chunk boundary: the last bytes of the previous chunk
            // followed by the start of this one.
            let mut joined = std::mem::take(&mut self.tail);
            joined.extend_from_slice(&chunk[..chunk.len().min(PDF_ENCRYPT.len())]);
            if memchr::memmem::find(&joined, PDF_ENCRYPT).is_some()
                || memchr::memmem::find(chunk, PDF_ENCRYPT).is_some()
            {
                self.pdf_encrypt = true;
            }
            let keep = PDF_ENCRYPT.len() - 1;
            self.tail = chunk[chunk.len().saturating_sub(keep)..].to_vec();
        }
    }

    /// The verdict, reading a ZIP container from `stored` if needed: why the file
    /// carries DRM, or `None`.
    pub fn finish(self, stored: &Path) -> Option<String> {
        match self.kind {
            Kind::Pdf if self.pdf_encrypt => Some(
                "the PDF is encrypted (`/Encrypt` in its trailer): DRM is not accepted (profile §3); deliver it unencrypted".into(),
            ),
            Kind::Zip => epub_drm(stored),
            _ => None,
        }
    }
}

fn epub_drm(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut zip = zip::ZipArchive::new(std::io::BufReader::new(file)).ok()?;
    if zip.by_name("META-INF/rights.xml").is_ok() {
        return Some("the EPUB has `META-INF/rights.xml` (a DRM licence): DRM is not accepted (profile §3); deliver it without DRM".into());
    }
    let mut text = String::new();
    zip.by_name("META-INF/encryption.xml")
        .ok()?
        .take(4 << 20)
        .read_to_string(&mut text)
        .ok()?;
    let drm: Vec<&str> = text
        .split("Algorithm=")
        .skip(1)
        .filter_map(|s| {
            let q = s.chars().next()?;
            s[1..].split(q).next()
        })
        .filter(|a| !FONT_OBFUSCATION.contains(a))
        .collect();
    (!drm.is_empty()).then(|| {
        format!(
            "the EPUB's `META-INF/encryption.xml` encrypts content with {}: DRM is not accepted (profile §3); only font obfuscation is allowed",
            drm.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pdf_encrypt_is_found_across_chunk_boundaries() {
        for split in 1..20 {
            let doc = b"%PDF-1.4\n...trailer << /Size 3 /Encrypt 5 0 R >>";
            let at = doc.len() - split;
            let mut s = DrmScan::default();
            s.update(&doc[..at]);
            s.update(&doc[at..]);
            assert!(
                s.finish(Path::new("/nonexistent")).is_some(),
                "split {split}"
            );
        }
        let mut s = DrmScan::default();
        s.update(b"%PDF-1.4\ntrailer << /Size 3 >>");
        assert!(s.finish(Path::new("/nonexistent")).is_none());
    }

    fn epub(name: &str, extra: &[(&str, &str)]) -> std::path::PathBuf {
        use std::io::Write;
        let path =
            std::env::temp_dir().join(format!("plikt-drm-{}-{name}.epub", std::process::id()));
        let mut z = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        z.start_file("mimetype", stored).unwrap();
        z.write_all(b"application/epub+zip").unwrap();
        for (n, text) in extra {
            z.start_file(*n, stored).unwrap();
            z.write_all(text.as_bytes()).unwrap();
        }
        z.finish().unwrap();
        path
    }

    fn scan(path: &Path) -> Option<String> {
        let bytes = std::fs::read(path).unwrap();
        let mut s = DrmScan::default();
        s.update(&bytes);
        s.finish(path)
    }

    #[test]
    fn epub_drm_is_found_but_font_obfuscation_is_not_drm() {
        let enc = |alg: &str| {
            format!(
                r#"<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:EncryptionMethod Algorithm="{alg}"/></enc:EncryptedData></encryption>"#
            )
        };
        let plain = epub("plain", &[("OEBPS/a.xhtml", "<html/>")]);
        assert_eq!(scan(&plain), None);
        let fonts = epub(
            "fonts",
            &[(
                "META-INF/encryption.xml",
                &enc("http://www.idpf.org/2008/embedding"),
            )],
        );
        assert_eq!(scan(&fonts), None);
        let aes = epub(
            "aes",
            &[(
                "META-INF/encryption.xml",
                &enc("http://www.w3.org/2001/04/xmlenc#aes128-cbc"),
            )],
        );
        assert!(scan(&aes).is_some_and(|r| r.contains("aes128-cbc")));
        let rights = epub("rights", &[("META-INF/rights.xml", "<rights/>")]);
        assert!(scan(&rights).is_some_and(|r| r.contains("rights.xml")));
        for p in [plain, fonts, aes, rights] {
            std::fs::remove_file(p).unwrap();
        }
    }
}
