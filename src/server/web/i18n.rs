//! Page texts, from the catalogues of [`crate::i18n`] (`src/i18n/*/pages.ftl`): a test
//! fails when a template or this module uses an ID that neither has.
//!
//! The language of a request: the `plikt-lang` cookie that the language switch
//! (`/lang/{code}`) sets, else the first of Swedish or English in `Accept-Language`,
//! else Swedish (KB writes to publishers in Swedish).

use axum::http::{HeaderMap, header};
use fluent_bundle::FluentValue;

/// The name of the language cookie.
pub const COOKIE: &str = "plikt-lang";

pub use crate::i18n::Lang;

/// The language of a request: cookie, then `Accept-Language`, then Swedish.
pub fn lang(headers: &HeaderMap) -> Lang {
    lang_or(headers, Lang::Sv)
}

/// The language of a request: cookie, then `Accept-Language`, then `default` (the
/// API's: English).
pub fn lang_or(headers: &HeaderMap, default: Lang) -> Lang {
    cookie(headers)
        .or_else(|| accept_language(headers))
        .unwrap_or(default)
}

fn cookie(headers: &HeaderMap) -> Option<Lang> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .and_then(|(_, v)| Lang::parse(v.trim()))
}

/// The preferred of Swedish and English in `Accept-Language` (RFC 9110 §12.5.4):
/// highest `q` first, ties in the order given; `q=0` means not acceptable.
fn accept_language(headers: &HeaderMap) -> Option<Lang> {
    let value = headers.get(header::ACCEPT_LANGUAGE)?.to_str().ok()?;
    let mut best: Option<(u32, Lang)> = None;
    for part in value.split(',') {
        let mut fields = part.split(';');
        let tag = fields.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = fields
            .filter_map(|f| f.trim().strip_prefix("q="))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        // Thousandths, as the grammar allows at most three decimals.
        let q = (q.clamp(0.0, 1.0) * 1000.0).round() as u32;
        let primary = tag.split('-').next().unwrap_or("");
        let Some(lang) = Lang::parse(primary) else {
            continue;
        };
        if q > 0 && best.is_none_or(|(b, _)| q > b) {
            best = Some((q, lang));
        }
    }
    best.map(|(_, l)| l)
}

/// The texts of one page, in one language: templates call `get`, `n` and `arg` with
/// an ID.
#[derive(Debug, Clone, Copy)]
pub struct T {
    /// The page's language.
    pub lang: Lang,
}

impl T {
    /// The text `id`.
    pub fn get(&self, id: &str) -> String {
        crate::i18n::text(self.lang, id, &[])
    }

    /// The text `id` with a count `$n` (plural forms).
    pub fn n(&self, id: &str, n: impl Count) -> String {
        crate::i18n::count(self.lang, id, n.count())
    }

    /// The text `id` with one string argument.
    pub fn arg(&self, id: &str, name: &str, value: &str) -> String {
        crate::i18n::text(self.lang, id, &[(name, FluentValue::from(value))])
    }

    /// The `lang` code.
    pub fn code(&self) -> &'static str {
        self.lang.code()
    }

    /// The language the switch offers.
    pub fn other(&self) -> Lang {
        self.lang.other()
    }
}

/// A number to count with ([`T::n`]): templates pass values or references.
pub trait Count {
    /// The number.
    fn count(self) -> u64;
}

macro_rules! count {
    ($($t:ty),*) => {$(
        impl Count for $t {
            fn count(self) -> u64 {
                self as u64
            }
        }
        impl Count for &$t {
            fn count(self) -> u64 {
                *self as u64
            }
        }
    )*};
}
count!(u32, u64, usize);

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn the_cookie_wins_then_accept_language_then_swedish() {
        assert_eq!(lang(&headers(&[])), Lang::Sv);
        assert_eq!(
            lang(&headers(&[("accept-language", "en-GB,en;q=0.9,sv;q=0.8")])),
            Lang::En
        );
        assert_eq!(
            lang(&headers(&[(
                "accept-language",
                "de, sv-SE;q=0.5, en;q=0.4"
            )])),
            Lang::Sv
        );
        assert_eq!(
            lang(&headers(&[("accept-language", "en;q=0, fr")])),
            Lang::Sv
        );
        assert_eq!(
            lang(&headers(&[
                ("accept-language", "en"),
                ("cookie", "a=b; plikt-lang=sv")
            ])),
            Lang::Sv
        );
        assert_eq!(lang(&headers(&[("cookie", "plikt-lang=xx")])), Lang::Sv);
    }

    #[test]
    fn every_id_the_pages_use_exists() {
        let known = crate::i18n::ids(Lang::En);
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/server/web");
        let mut used = std::collections::BTreeSet::new();
        let mut files = Vec::new();
        for sub in ["", "templates"] {
            for e in std::fs::read_dir(dir.join(sub)).unwrap() {
                let p = e.unwrap().path();
                if p.extension().is_some_and(|x| x == "rs" || x == "html") {
                    files.push(p);
                }
            }
        }
        for p in &files {
            let s = std::fs::read_to_string(p).unwrap();
            // This module's own tests name the patterns, not IDs.
            let s = s.split("#[cfg(test)]").next().unwrap_or("");
            for call in ["t.get(\"", "t.n(\"", "t.arg(\""] {
                for (i, _) in s.match_indices(call) {
                    let rest = &s[i + call.len()..];
                    let id = &rest[..rest.find('"').unwrap()];
                    used.insert((id.to_string(), p.display().to_string()));
                }
            }
        }
        assert!(used.len() > 20, "{used:?}");
        let missing: Vec<_> = used.iter().filter(|(id, _)| !known.contains(id)).collect();
        assert!(
            missing.is_empty(),
            "IDs used but not in the catalogues: {missing:?}"
        );
    }
}
