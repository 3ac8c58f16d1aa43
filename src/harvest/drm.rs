//! H-DRM (catalogue §5, profile §3: DRM is not supported): PDF with `/Encrypt`, EPUB
//! with `META-INF/rights.xml` or `META-INF/encryption.xml` naming algorithms other than
//! font obfuscation, ISO-BMFF (mp4, m4a, m4b) with protection boxes (`pssh`, or `sinf`
//! / `schm` of Common Encryption) in its `moov` box. PDFs and ISO-BMFF files are
//! scanned while they stream past; EPUBs are opened after they are stored.

use std::io::{Read, Seek};

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
    /// ISO base media file format: a `ftyp` box first.
    Bmff,
    Other,
}

/// Largest `moov` box kept for inspection (it holds only metadata).
const MAX_MOOV: u64 = 64 << 20;

/// Watches a file's bytes for DRM.
#[derive(Debug)]
pub struct DrmScan {
    kind: Kind,
    tail: Vec<u8>,
    pdf_encrypt: bool,
    bmff: Bmff,
}

/// Top-level ISO-BMFF box walker: skips boxes, keeps the `moov` box.
#[derive(Debug, Default)]
struct Bmff {
    /// Bytes of the current box header read so far.
    header: Vec<u8>,
    /// Bytes of the current box body still to come.
    remaining: u64,
    /// The current box is `moov`: its body is kept.
    in_moov: bool,
    moov: Vec<u8>,
    /// A box header could not be read (truncated or not ISO-BMFF after all).
    broken: bool,
}

impl Bmff {
    fn update(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() && !self.broken {
            if self.remaining > 0 {
                let n =
                    usize::try_from(self.remaining.min(chunk.len() as u64)).unwrap_or(chunk.len());
                if self.in_moov {
                    self.moov.extend_from_slice(&chunk[..n]);
                }
                self.remaining -= n as u64;
                chunk = &chunk[n..];
                continue;
            }
            let need = if self.header.len() >= 8 && self.header[..4] == [0, 0, 0, 1] {
                16
            } else {
                8
            };
            let take = (need - self.header.len()).min(chunk.len());
            self.header.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            if self.header.len() < need {
                continue;
            }
            if need == 8 && self.header[..4] == [0, 0, 0, 1] {
                continue; // a 64-bit size follows
            }
            let size = match need {
                16 => u64::from_be_bytes(self.header[8..16].try_into().unwrap_or([0; 8])),
                _ => u64::from(u32::from_be_bytes(
                    self.header[..4].try_into().unwrap_or([0; 4]),
                )),
            };
            if size == 0 {
                // The box runs to the end of the file.
                self.remaining = u64::MAX;
            } else if size < need as u64 {
                self.broken = true;
                return;
            } else {
                self.remaining = size - need as u64;
            }
            self.in_moov = &self.header[4..8] == b"moov" && self.remaining <= MAX_MOOV;
            self.header.clear();
        }
    }

    /// Protection boxes inside `moov`, by a walk of its box tree.
    fn protection(&self) -> Option<&'static str> {
        find_boxes(&self.moov, 0)
    }
}

/// Looks for `pssh`, `sinf` or `schm` in a box tree (containers and sample entries).
fn find_boxes(mut data: &[u8], depth: u32) -> Option<&'static str> {
    if depth > 16 {
        return None;
    }
    while data.len() >= 8 {
        let size = u32::from_be_bytes([data[0], data[1], data[2], data[3]]) as usize;
        let kind = &data[4..8];
        let size = if size == 0 { data.len() } else { size };
        if size < 8 || size > data.len() {
            return None;
        }
        let body = &data[8..size];
        match kind {
            b"pssh" => return Some("a `pssh` (protection system) box"),
            b"sinf" | b"schm" => return Some("a `sinf` / `schm` (protection scheme) box"),
            b"trak" | b"mdia" | b"minf" | b"stbl" | b"moov" | b"mvex" | b"edts" | b"udta" => {
                if let Some(f) = find_boxes(body, depth + 1) {
                    return Some(f);
                }
            }
            // stsd: version/flags + entry count, then sample entries.
            b"stsd" if body.len() > 8 => {
                if let Some(f) = find_boxes(&body[8..], depth + 1) {
                    return Some(f);
                }
            }
            // Encrypted sample entries: `encv` (video, 78 bytes of fields) and `enca`
            // (audio, 28 bytes) carry `sinf` among their child boxes.
            b"encv" if body.len() > 78 => {
                return find_boxes(&body[78..], depth + 1)
                    .or(Some("an `encv` (encrypted video) sample entry"));
            }
            b"enca" if body.len() > 28 => {
                return find_boxes(&body[28..], depth + 1)
                    .or(Some("an `enca` (encrypted audio) sample entry"));
            }
            _ => {}
        }
        data = &data[size..];
    }
    None
}

impl Default for DrmScan {
    fn default() -> Self {
        Self {
            kind: Kind::Unknown,
            tail: Vec::new(),
            pdf_encrypt: false,
            bmff: Bmff::default(),
        }
    }
}

impl DrmScan {
    /// Looks at the next chunk.
    pub fn update(&mut self, chunk: &[u8]) {
        if self.kind == Kind::Unknown {
            // Sniff the first 8 bytes (an ISO-BMFF box type is in bytes 4..8).
            let took = (8 - self.tail.len()).min(chunk.len());
            self.tail.extend_from_slice(&chunk[..took]);
            if self.tail.len() < 8 && !self.tail.starts_with(b"%PDF") {
                return;
            }
            let head = std::mem::take(&mut self.tail);
            self.kind = if head.starts_with(b"%PDF") {
                Kind::Pdf
            } else if head.starts_with(b"PK\x03\x04") {
                Kind::Zip
            } else if head.len() >= 8 && &head[4..8] == b"ftyp" {
                Kind::Bmff
            } else {
                Kind::Other
            };
            if self.kind == Kind::Bmff {
                self.bmff.update(&head);
                self.bmff.update(&chunk[took..]);
                return;
            }
        }
        if self.kind == Kind::Bmff {
            self.bmff.update(chunk);
            return;
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

    /// Whether [`DrmScan::finish`] reads the stored file back (an EPUB container):
    /// blocking work.
    pub fn reads_file(&self) -> bool {
        matches!(self.kind, Kind::Zip)
    }

    /// The verdict, reading a ZIP container back from `stored` if needed (the file, or
    /// ranged reads of the object: the central directory at the end, then the two
    /// entries it names, without reading the rest): why the file carries DRM, or
    /// `None`.
    pub fn finish<R: Read + Seek>(self, stored: impl FnOnce() -> Option<R>) -> Option<String> {
        match self.kind {
            Kind::Pdf if self.pdf_encrypt => Some(
                "the PDF is encrypted (`/Encrypt` in its trailer): DRM is not accepted (profile §3); deliver it unencrypted".into(),
            ),
            Kind::Zip => epub_drm(stored()?),
            Kind::Bmff => self.bmff.protection().map(|what| {
                format!("the ISO-BMFF file (mp4/m4a/m4b) has {what} in its `moov` box: it is encrypted (DRM), which is not accepted (profile §3); deliver it unencrypted")
            }),
            _ => None,
        }
    }
}

fn epub_drm(stored: impl Read + Seek) -> Option<String> {
    let mut zip = zip::ZipArchive::new(stored).ok()?;
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
    use std::path::Path;

    fn none() -> Option<std::fs::File> {
        None
    }

    #[test]
    fn pdf_encrypt_is_found_across_chunk_boundaries() {
        for split in 1..20 {
            let doc = b"%PDF-1.4\n...trailer << /Size 3 /Encrypt 5 0 R >>";
            let at = doc.len() - split;
            let mut s = DrmScan::default();
            s.update(&doc[..at]);
            s.update(&doc[at..]);
            assert!(s.finish(none).is_some(), "split {split}");
        }
        let mut s = DrmScan::default();
        s.update(b"%PDF-1.4\ntrailer << /Size 3 >>");
        assert!(s.finish(none).is_none());
    }

    fn bmff_box(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut b = u32::try_from(body.len() + 8)
            .unwrap()
            .to_be_bytes()
            .to_vec();
        b.extend_from_slice(kind);
        b.extend_from_slice(body);
        b
    }

    #[test]
    fn mp4_protection_boxes_are_found_in_moov_across_chunks() {
        let ftyp = bmff_box(b"ftyp", b"M4A \0\0\0\0M4A mp42isom");
        let mdat = bmff_box(b"mdat", &[7u8; 5000]);
        let clear_moov = bmff_box(b"moov", &bmff_box(b"trak", &bmff_box(b"mdia", &[0u8; 40])));
        let pssh_moov = bmff_box(
            b"moov",
            &[
                bmff_box(b"mvhd", &[0u8; 100]),
                bmff_box(b"pssh", &[1u8; 32]),
            ]
            .concat(),
        );
        let sinf_moov = bmff_box(
            b"moov",
            &bmff_box(
                b"trak",
                &bmff_box(
                    b"mdia",
                    &bmff_box(
                        b"minf",
                        &bmff_box(
                            b"stbl",
                            &bmff_box(
                                b"stsd",
                                &[
                                    &[0u8; 8][..],
                                    &bmff_box(
                                        b"enca",
                                        &[
                                            &[0u8; 28][..],
                                            &bmff_box(
                                                b"sinf",
                                                &bmff_box(b"schm", b"\0\0\0\0cenc\0\x01\0\0"),
                                            ),
                                        ]
                                        .concat(),
                                    ),
                                ]
                                .concat(),
                            ),
                        ),
                    ),
                ),
            ),
        );
        for (moov, drm) in [(&clear_moov, false), (&pssh_moov, true), (&sinf_moov, true)] {
            // `moov` after `mdat` (as files written in one pass have it), fed in small chunks.
            let file = [ftyp.clone(), mdat.clone(), moov.clone()].concat();
            for chunk in [1, 3, 7, 4096, file.len()] {
                let mut s = DrmScan::default();
                for c in file.chunks(chunk) {
                    s.update(c);
                }
                assert_eq!(s.finish(none).is_some(), drm, "chunk {chunk}");
            }
        }
        // `pssh` bytes in media data are not a box of `moov`.
        let file = [ftyp, bmff_box(b"mdat", b"....pssh...."), clear_moov].concat();
        let mut s = DrmScan::default();
        s.update(&file);
        assert!(s.finish(none).is_none());
    }

    fn epub(name: &str, extra: &[(&str, &str)]) -> tempfile::NamedTempFile {
        use std::io::Write;
        let mut file = tempfile::Builder::new()
            .prefix(&format!("plikt-drm-{name}-"))
            .suffix(".epub")
            .tempfile()
            .unwrap();
        let mut z = zip::ZipWriter::new(file.as_file_mut());
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        z.start_file("mimetype", stored).unwrap();
        z.write_all(b"application/epub+zip").unwrap();
        for (n, text) in extra {
            z.start_file(*n, stored).unwrap();
            z.write_all(text.as_bytes()).unwrap();
        }
        z.finish().unwrap();
        file
    }

    fn scan(path: &Path) -> Option<String> {
        let bytes = std::fs::read(path).unwrap();
        let mut s = DrmScan::default();
        s.update(&bytes);
        s.finish(|| std::fs::File::open(path).ok())
    }

    #[test]
    fn epub_drm_is_found_but_font_obfuscation_is_not_drm() {
        let enc = |alg: &str| {
            format!(
                r#"<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:EncryptionMethod Algorithm="{alg}"/></enc:EncryptedData></encryption>"#
            )
        };
        let plain = epub("plain", &[("OEBPS/a.xhtml", "<html/>")]);
        assert_eq!(scan(plain.path()), None);
        let fonts = epub(
            "fonts",
            &[(
                "META-INF/encryption.xml",
                &enc("http://www.idpf.org/2008/embedding"),
            )],
        );
        assert_eq!(scan(fonts.path()), None);
        let aes = epub(
            "aes",
            &[(
                "META-INF/encryption.xml",
                &enc("http://www.w3.org/2001/04/xmlenc#aes128-cbc"),
            )],
        );
        assert!(scan(aes.path()).is_some_and(|r| r.contains("aes128-cbc")));
        let rights = epub("rights", &[("META-INF/rights.xml", "<rights/>")]);
        assert!(scan(rights.path()).is_some_and(|r| r.contains("rights.xml")));
    }
}
