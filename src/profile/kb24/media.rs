//! The files of an item (catalogue §3, MediaRSS): S201-content on the structure
//! (groups, enclosures), and for each `media:content` F302 (url), F303 (type),
//! MARKER-isFormatOf, F305 (hashes, also those on the item or a group), F307 (licence),
//! F308 (credit, copyright) and F311 (keywords).

use super::{ItemCheck, R, found};
use crate::feed::{Copyright, Credit, Hash, License, MediaContent, trim_xml};
use crate::msg;
use crate::profile::finding::Severity::{Error, Info, Warning};
use crate::profile::syntax;
use crate::profile::vocabulary::Vocabulary;

impl ItemCheck<'_> {
    /// S201-content warnings on the structure: groups and enclosures.
    pub(super) fn structure(&mut self) {
        let item = self.item;
        for g in &item.groups {
            if g.nested {
                self.push(R::S201Content, Warning, g.pos, msg!("s201-group-nested"));
            } else if g.contents == 0 {
                self.push(R::S201Content, Warning, g.pos, msg!("s201-group-empty"));
            }
        }
        for e in &item.enclosures {
            let url = e.url.as_ref().map(|u| trim_xml(&u.value)).unwrap_or("");
            let covered = item
                .contents
                .iter()
                .any(|c| c.url.as_ref().is_some_and(|u| trim_xml(&u.value) == url));
            if !covered {
                self.push(
                    R::S201Content,
                    Warning,
                    e.pos,
                    msg!("s201-enclosure", url = found(url)),
                );
            }
        }
    }

    /// F302, F303, F305, F307, F308, F311 and the marker, for one `media:content`.
    pub(super) fn content(&mut self, c: &MediaContent, link: Option<&String>) {
        self.content_url(c);
        self.content_type(c);
        self.marker(c, link);
        // F305.
        self.hashes(&c.hashes, true);
        self.media_licenses(&c.licenses);
        self.credits(&c.credits);
        self.copyrights(&c.copyrights);
        self.keywords(R::F311, &c.keywords);
    }

    /// F302: `@url` present and an absolute http(s) URL (G-URL).
    fn content_url(&mut self, c: &MediaContent) {
        match &c.url {
            None => self.push(R::F302, Error, c.pos, msg!("f302-missing")),
            Some(a) => match syntax::http_url(trim_xml(&a.value)) {
                Ok(u) if u.non_ascii => self.push(R::F302, Info, a.pos, msg!("f302-non-ascii")),
                Ok(_) => {}
                Err(e) => self.push(
                    R::F302,
                    Error,
                    a.pos,
                    msg!("named-error", what = "media:content url", error = e),
                ),
            },
        }
    }

    /// F303: `@type` present and a MIME type (§0.3).
    fn content_type(&mut self, c: &MediaContent) {
        match &c.mime {
            None => self.push(R::F303, Error, c.pos, msg!("f303-missing")),
            Some(a) => self.mime(R::F303, "media:content type", a.pos, trim_xml(&a.value)),
        }
    }

    /// MARKER-isFormatOf: at most one marker, and its value is the item's `link`
    /// (compared after URL normalisation).
    fn marker(&mut self, c: &MediaContent, link: Option<&String>) {
        for extra in c.markers.iter().skip(1) {
            self.push(
                R::MarkerIsFormatOf,
                Error,
                extra.pos,
                msg!("marker-repeated"),
            );
        }
        let Some(m) = c.markers.first() else {
            return;
        };
        if !self.text_only(R::MarkerIsFormatOf, "dcterms:isFormatOf", m) {
            return;
        }
        let value = m.trimmed();
        match link {
            None => self.push(R::MarkerIsFormatOf, Error, m.pos, msg!("marker-no-link")),
            Some(text) => {
                if !syntax::same_url(text, value) {
                    self.push(
                        R::MarkerIsFormatOf,
                        Error,
                        m.pos,
                        msg!("marker-differs", value = found(value), link = found(text)),
                    );
                }
            }
        }
    }

    /// F307: `media:license` has `@href`, an absolute URI (http or https, else a
    /// warning); `@type`, if given, should be a MIME type (warning).
    fn media_licenses(&mut self, licenses: &[License]) {
        for l in licenses {
            match &l.href {
                None => self.push(R::F307, Error, l.value.pos, msg!("f307-no-href")),
                Some(h) => match syntax::absolute_uri(trim_xml(&h.value)) {
                    Err(e) => self.push(
                        R::F307,
                        Error,
                        h.pos,
                        msg!("named-error", what = "media:license href", error = e),
                    ),
                    Ok(s) if !syntax::is_http_scheme(s) => {
                        self.push(
                            R::F307,
                            Warning,
                            h.pos,
                            msg!("r108-not-http", value = found(&h.value)),
                        );
                    }
                    Ok(_) => {}
                },
            }
            if let Some(t) = &l.mime
                && syntax::mime(trim_xml(&t.value), &self.voc.media_top_level_types).is_err()
            {
                self.push(
                    R::F307,
                    Warning,
                    t.pos,
                    msg!("f307-type", value = found(&t.value)),
                );
            }
        }
    }

    /// F308-credit: `@scheme`, if given, is `urn:ebu` or `urn:yvs` (error); `@role` is
    /// lower case (warning) and, under EBU, one of the EBU roles (info).
    fn credits(&mut self, credits: &[Credit]) {
        for cr in credits {
            let scheme = cr.scheme.as_ref().map(|s| (trim_xml(&s.value), s.pos));
            if let Some((s, pos)) = scheme
                && !Vocabulary::has(&self.voc.credit_schemes, s)
            {
                self.push(
                    R::F308Credit,
                    Error,
                    pos,
                    msg!("f308-scheme", value = found(s)),
                );
            }
            if let Some(role) = &cr.role {
                let r = trim_xml(&role.value);
                if r.chars().any(char::is_uppercase) {
                    self.push(
                        R::F308Credit,
                        Warning,
                        role.pos,
                        msg!("f308-role-case", value = found(r), lower = r.to_lowercase()),
                    );
                }
                let ebu = scheme.is_none_or(|(s, _)| s == "urn:ebu");
                if ebu && !Vocabulary::has(&self.voc.ebu_roles, &r.to_lowercase()) {
                    self.push(
                        R::F308Credit,
                        Info,
                        role.pos,
                        msg!("f308-role-ebu", value = found(r)),
                    );
                }
            }
        }
    }

    /// F308-copyright: `@url`, if given, is an absolute http(s) URL.
    fn copyrights(&mut self, copyrights: &[Copyright]) {
        for cp in copyrights {
            if let Some(u) = &cp.url
                && let Err(e) = syntax::http_url(trim_xml(&u.value))
            {
                self.push(
                    R::F308Copyright,
                    Error,
                    u.pos,
                    msg!("named-error", what = "media:copyright url", error = e),
                );
            }
        }
    }

    /// F305 syntax of a set of hashes (one element's). `content`: the set belongs to
    /// one media:content (so "no MD5" is a warning).
    fn hashes(&mut self, hashes: &[Hash], content: bool) {
        let mut seen: Vec<(&str, &str)> = Vec::new();
        let mut md5 = false;
        for h in hashes {
            let algo = h.algo.as_ref().map_or("md5", |a| trim_xml(&a.value));
            let value = h.value.trimmed();
            // Names in the vocabulary are lower case; most feeds write them so.
            let lower;
            let key = if algo.bytes().any(|b| b.is_ascii_uppercase()) {
                lower = algo.to_ascii_lowercase();
                lower.as_str()
            } else {
                algo
            };
            let Some((name, &len)) = self.voc.hash_algorithms.get_key_value(key) else {
                let pos = h.algo.as_ref().map_or(h.value.pos, |a| a.pos);
                let known: Vec<&str> = self
                    .voc
                    .hash_algorithms
                    .keys()
                    .map(String::as_str)
                    .collect();
                self.push(
                    R::F305,
                    Error,
                    pos,
                    msg!("f305-algo", value = found(algo), known = known.join(", ")),
                );
                continue;
            };
            let name = name.as_str();
            md5 |= name == "md5";
            if !syntax::is_hex(value, len) {
                self.push(
                    R::F305,
                    Error,
                    h.value.pos,
                    msg!(
                        "f305-length",
                        algo = name,
                        value = found(value),
                        len = len,
                        count = value.chars().count()
                    ),
                );
                continue;
            }
            if let Some((_, other)) = seen.iter().find(|(n, _)| *n == name) {
                if !other.eq_ignore_ascii_case(value) {
                    self.push(R::F305, Error, h.value.pos, msg!("f305-two", algo = name));
                }
            } else if hashes.len() > 1 {
                seen.push((name, value));
            }
        }
        if content
            && !hashes.is_empty()
            && !md5
            && let Some(h) = hashes.first()
        {
            self.push(R::F305, Warning, h.value.pos, msg!("f305-no-md5"));
        }
    }

    /// F305 for hashes on the item or a group, which apply to all contents below.
    pub(super) fn scoped_hashes(&mut self) {
        let item = self.item;
        for s in &item.scoped_hashes {
            self.hashes(std::slice::from_ref(&s.hash), false);
            let covered = match s.group {
                None => item.contents.len(),
                Some(g) => item
                    .groups
                    .iter()
                    .find(|x| x.pos == g)
                    .map_or(0, |x| x.contents),
            };
            if covered > 1 {
                self.push(
                    R::F305,
                    Info,
                    s.hash.value.pos,
                    msg!("f305-scoped", files = covered),
                );
            }
        }
    }
}
