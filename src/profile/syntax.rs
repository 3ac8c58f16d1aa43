//! The shared value checks of catalogue §0.3 and G-URL. Each returns what is wrong in
//! words a publisher can act on; the rule module decides the rule ID and severity.

use url::Url;

use crate::i18n::Message;
use crate::msg;

/// An absolute http(s) URL that passed [`http_url`].
#[derive(Debug, Clone, Copy)]
pub struct HttpUrl {
    /// It contains non-ASCII characters (an IRI): accepted, info.
    pub non_ascii: bool,
}

/// True for the common case that needs no full parse: `http(s)://` in lower case, a
/// host of lower-case letters, digits, `-` and `.` that is no IP address and no
/// punycode, and printable ASCII after it — every such string is an absolute URL to
/// the WHATWG parser. Anything else goes through `url::Url::parse`.
fn plain_http_url(value: &str) -> bool {
    let Some(rest) = value
        .strip_prefix("https://")
        .or_else(|| value.strip_prefix("http://"))
    else {
        return false;
    };
    let host_end = rest
        .bytes()
        .position(|b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let (host, tail) = rest.split_at(host_end);
    // One pass over the host: allowed bytes, no empty label, no punycode label, and
    // the last label starts with a letter (so it is no IPv4 address).
    let mut label_start = 0;
    for (i, b) in host.bytes().enumerate() {
        match b {
            b'a'..=b'z' | b'0'..=b'9' => {}
            b'-' if i > label_start => {}
            b'.' if i > label_start && host.as_bytes()[i - 1] != b'-' => label_start = i + 1,
            _ => return false,
        }
        if i == label_start + 3 && host[label_start..=i].eq_ignore_ascii_case("xn--") {
            return false;
        }
    }
    !host.is_empty()
        && !host.ends_with(['.', '-'])
        && host
            .as_bytes()
            .get(label_start)
            .is_some_and(u8::is_ascii_lowercase)
        && tail.bytes().all(|b| (0x21..0x7F).contains(&b))
}

/// §0.3 "absolute http(s) URL" / G-URL.
pub fn http_url(value: &str) -> Result<HttpUrl, Message> {
    if plain_http_url(value) {
        return Ok(HttpUrl { non_ascii: false });
    }
    if value.is_empty() {
        return Err(msg!("url-empty"));
    }
    if let Some(c) = value
        .chars()
        .find(|c| c.is_ascii_whitespace() || c.is_control())
    {
        return Err(if c == ' ' {
            msg!("url-space")
        } else {
            msg!("url-control", code = format!("{:04X}", u32::from(c)))
        });
    }
    let url = match Url::parse(value) {
        Ok(u) => u,
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            return Err(msg!("url-relative", value = value));
        }
        Err(e) => return Err(msg!("url-invalid", value = value, error = url_error(e))),
    };
    if !is_http_scheme(url.scheme()) {
        return Err(msg!("url-scheme", value = value, scheme = url.scheme()));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(msg!("url-no-host", value = value));
    }
    Ok(HttpUrl {
        non_ascii: !value.is_ascii(),
    })
}

/// What the URL parser found wrong, in the reader's language (its own text for what
/// a newer `url` adds).
fn url_error(e: url::ParseError) -> Message {
    use url::ParseError as P;
    match e {
        P::EmptyHost => msg!("url-error-empty-host"),
        P::IdnaError => msg!("url-error-idna"),
        P::InvalidPort => msg!("url-error-port"),
        P::InvalidIpv4Address => msg!("url-error-ipv4"),
        P::InvalidIpv6Address => msg!("url-error-ipv6"),
        P::InvalidDomainCharacter => msg!("url-error-domain-character"),
        P::Overflow => msg!("url-error-overflow"),
        other => msg!("url-error-other", detail = other.to_string()),
    }
}

/// R104: `<10-digit organisation number>[-suffix]` (the part after `SE`); returns the
/// organisation number. The suffix is 2 or more ASCII letters or digits.
pub fn organisation_number(rest: &str) -> Option<&str> {
    let (orgnr, suffix) = rest.split_at_checked(10)?;
    let digits = orgnr.bytes().all(|b| b.is_ascii_digit());
    let suffix_ok = suffix.is_empty()
        || suffix
            .strip_prefix('-')
            .is_some_and(|s| s.len() >= 2 && s.bytes().all(|b| b.is_ascii_alphanumeric()));
    (digits && suffix_ok).then_some(orgnr)
}

/// The same URL after WHATWG normalisation (scheme and host case, default port,
/// `&amp;`/`&#38;` already expanded by the XML layer): MARKER-isFormatOf.
pub fn same_url(a: &str, b: &str) -> bool {
    a == b || matches!((Url::parse(a), Url::parse(b)), (Ok(x), Ok(y)) if x == y)
}

/// `http` or `https`, in any case.
pub fn is_http_scheme(scheme: &str) -> bool {
    scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
}

/// §0.3 "URI": RFC 3986 absolute-URI. Returns the scheme as written.
pub fn absolute_uri(value: &str) -> Result<&str, Message> {
    if value.is_empty() {
        return Err(msg!("uri-empty"));
    }
    // Folds without an early exit: the compiler vectorises them.
    let bad = value
        .bytes()
        .fold(false, |acc, b| acc | (b <= b' ') | (b == 0x7F));
    let bad_char = |c: char| c.is_ascii_whitespace() || c.is_control();
    if bad || (!value.is_ascii() && value.chars().any(bad_char)) {
        return Err(msg!("uri-space", value = value));
    }
    let Some(colon) = value.bytes().position(|b| b == b':') else {
        return Err(msg!("uri-no-scheme", value = value));
    };
    let (scheme, rest) = (&value[..colon], &value[colon + 1..]);
    let mut bytes = scheme.bytes();
    let valid_scheme = bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    let hashes = value.bytes().fold(0u32, |n, b| n + u32::from(b == b'#'));
    if !valid_scheme || rest.is_empty() || hashes > 1 {
        return Err(msg!("uri-not-absolute", value = value));
    }
    Ok(scheme)
}

/// §0.3 MIME type verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mime {
    /// A MIME type with a registered top-level type.
    Ok,
    /// Syntactically a MIME type, but the top-level type is not registered (warning).
    UnknownTopLevel(String),
}

fn restricted_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    s.len() <= 127
        && bytes.next().is_some_and(|b| b.is_ascii_alphanumeric())
        && bytes.all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#' | b'$' | b'&' | b'^' | b'_' | b'.' | b'+' | b'-'
                )
        })
}

/// §0.3 MIME type: `type "/" subtype` (RFC 6838 restricted-name), optional parameters.
pub fn mime(value: &str, top_level: &[String]) -> Result<Mime, Message> {
    // The usual value, `type/subtype` without parameters or white space, in one pass;
    // anything else takes the general path below, which gives the same verdict here.
    if let Some(slash) = value.bytes().position(|b| b == b'/') {
        let (t, s) = (&value[..slash], &value[slash + 1..]);
        if restricted_name(t) && restricted_name(s) {
            return Ok(top_level_verdict(t, top_level));
        }
    }
    let (essence, params) = match value.find(';') {
        Some(i) => (value[..i].trim(), Some(&value[i + 1..])),
        None => (value.trim(), None),
    };
    let ok_params = params.is_none_or(|params| {
        params.split(';').all(|p| {
            p.split_once('=')
                .is_some_and(|(k, v)| restricted_name(k.trim()) && !v.trim().is_empty())
        })
    });
    match essence.split_once('/') {
        Some((t, s)) if restricted_name(t) && restricted_name(s) && ok_params => {
            Ok(top_level_verdict(t, top_level))
        }
        _ => Err(msg!("mime-invalid", value = value)),
    }
}

/// Whether `t` is one of the registered top-level types `top_level` (any case).
fn top_level_verdict(t: &str, top_level: &[String]) -> Mime {
    if top_level.iter().any(|known| known.eq_ignore_ascii_case(t)) {
        Mime::Ok
    } else {
        Mime::UnknownTopLevel(t.to_ascii_lowercase())
    }
}

/// True if `s` is `n` hexadecimal digits.
pub fn is_hex(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Luhn (mod 10) check over ASCII digits; the last digit is the check digit.
pub fn luhn(digits: &str) -> bool {
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            if i % 2 == 1 {
                if d * 2 > 9 { d * 2 - 9 } else { d * 2 }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

fn digits_only(value: &str) -> String {
    value.chars().filter(|c| !matches!(c, '-' | ' ')).collect()
}

fn ean13_ok(d: &str) -> bool {
    d.len() == 13
        && d.bytes().all(|b| b.is_ascii_digit())
        && d.bytes()
            .enumerate()
            .map(|(i, b)| u32::from(b - b'0') * if i % 2 == 0 { 1 } else { 3 })
            .sum::<u32>()
            % 10
            == 0
}

/// Value syntax of a typed identifier (§0.3: info only). `None` when it looks right or
/// the type prescribes no syntax.
pub fn identifier_syntax(kind: &str, value: &str) -> Option<Message> {
    let ok = match kind {
        "isbn" => isbn_ok(value),
        "issn" => issn_ok(value),
        "ean" => ean13_ok(&digits_only(value)),
        "upc" => {
            let d = digits_only(value);
            d.len() == 12 && ean13_ok(&format!("0{d}"))
        }
        "ismn" => {
            let d = digits_only(value);
            d.starts_with("9790") && ean13_ok(&d)
        }
        "isrc" => isrc_ok(value),
        "doi" => {
            let v = value.trim();
            v.starts_with("10.")
                && v.split_once('/')
                    .is_some_and(|(p, s)| p.len() > 3 && !s.is_empty())
        }
        "urn" => {
            let v = value.trim();
            v.len() > 4
                && v[..4].eq_ignore_ascii_case("urn:")
                && v[4..]
                    .split_once(':')
                    .is_some_and(|(nid, nss)| !nid.is_empty() && !nss.is_empty())
        }
        "uri" => absolute_uri(value.trim()).is_ok(),
        _ => true,
    };
    (!ok).then(|| match kind {
        "isbn" => msg!("id-isbn", value = value),
        "issn" => msg!("id-issn", value = value),
        "ean" => msg!("id-ean", value = value),
        "upc" => msg!("id-upc", value = value),
        "ismn" => msg!("id-ismn", value = value),
        "isrc" => msg!("id-isrc", value = value),
        "doi" => msg!("id-doi", value = value),
        "urn" => msg!("id-urn", value = value),
        _ => msg!("uri-not-absolute", value = value),
    })
}

/// ISBN-13 (an EAN-13 starting 978 or 979) or ISBN-10 (mod 11, `X` for 10), with or
/// without hyphens, spaces and an `ISBN` prefix.
fn isbn_ok(value: &str) -> bool {
    let d = digits_only(value);
    let d = d
        .strip_prefix("ISBN")
        .or_else(|| d.strip_prefix("isbn"))
        .unwrap_or(&d)
        .trim();
    match d.len() {
        13 => ean13_ok(d) && (d.starts_with("978") || d.starts_with("979")),
        10 => {
            let b = d.as_bytes();
            b[..9].iter().all(u8::is_ascii_digit)
                && (b[9].is_ascii_digit() || b[9] == b'X' || b[9] == b'x')
                && {
                    let sum: u32 = b
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            (10 - i as u32)
                                * if *c == b'X' || *c == b'x' {
                                    10
                                } else {
                                    u32::from(c - b'0')
                                }
                        })
                        .sum();
                    sum.is_multiple_of(11)
                }
        }
        _ => false,
    }
}

/// ISSN `NNNN-NNNC`, the check digit C mod 11 (`X` for 10).
fn issn_ok(value: &str) -> bool {
    let b = value.trim().as_bytes();
    b.len() == 9
        && b[4] == b'-'
        && b[..4].iter().chain(&b[5..8]).all(u8::is_ascii_digit)
        && (b[8].is_ascii_digit() || b[8] == b'X' || b[8] == b'x')
        && {
            let sum: u32 = b[..4]
                .iter()
                .chain(&b[5..8])
                .enumerate()
                .map(|(i, c)| (8 - i as u32) * u32::from(c - b'0'))
                .sum();
            let check = (11 - sum % 11) % 11;
            let given = if b[8] == b'X' || b[8] == b'x' {
                10
            } else {
                u32::from(b[8] - b'0')
            };
            check == given
        }
}

/// ISRC `CCXXXYYNNNNN` (hyphens allowed): country, registrant, year, designation.
fn isrc_ok(value: &str) -> bool {
    let v: String = value.chars().filter(|c| *c != '-').collect();
    let b = v.as_bytes();
    b.len() == 12
        && b[..2].iter().all(u8::is_ascii_alphabetic)
        && b[2..5].iter().all(u8::is_ascii_alphanumeric)
        && b[5..].iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_parser_errors_are_said_in_both_languages() {
        let e = http_url("http://exempel.se:99999/a").unwrap_err();
        assert_eq!(
            e.render(crate::i18n::Lang::En),
            "`http://exempel.se:99999/a` is not a valid URL (invalid port number)"
        );
        assert_eq!(
            e.render(crate::i18n::Lang::Sv),
            "`http://exempel.se:99999/a` är inte en giltig URL (ogiltigt portnummer)"
        );
    }

    #[test]
    fn http_urls() {
        assert!(http_url("https://www.example.se/a?b=1&c=2").is_ok());
        assert!(http_url("http://exempel.se/räksmörgås").is_ok_and(|u| u.non_ascii));
        assert!(http_url("/relative/path").is_err());
        assert!(http_url("ftp://ftp.example.se/a.pdf").is_err());
        assert!(http_url("https://exa mple.se/").is_err());
        assert!(http_url("mailto:a@b.se").is_err());
    }

    #[test]
    fn the_fast_path_accepts_only_what_the_url_parser_accepts() {
        for s in [
            "https://www.example.se/a?b=1&c=2#f",
            "http://a.se",
            "http://1.2.3.999/",
            "http://a..b/",
            "http://a.b./",
            "http://-a.se/",
            "http://xn--zz.se/",
            "http://123/",
            "http://0x7f.1/",
            "https://x.se/%zz/{}|^`\\",
            "https://x.se:8080/",
            "https://ÅÄÖ.se/",
        ] {
            if plain_http_url(s) {
                let u = Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
                assert!(
                    is_http_scheme(u.scheme()) && u.host_str().is_some_and(|h| !h.is_empty()),
                    "{s}"
                );
            }
        }
        assert!(plain_http_url("https://www.example.se/a?b=1&c=2#f"));
        assert!(!plain_http_url("http://1.2.3.999/"));
    }

    #[test]
    fn uris() {
        assert_eq!(
            absolute_uri("https://creativecommons.org/licenses/by/4.0/").as_deref(),
            Ok("https")
        );
        assert_eq!(absolute_uri("urn:isbn:9789127155060").as_deref(), Ok("urn"));
        assert!(absolute_uri("CC BY 4.0").is_err());
        assert!(absolute_uri("by-nc").is_err());
    }

    fn mime_kb(v: &str) -> Result<Mime, Message> {
        mime(v, &crate::profile::vocabulary::kb24().media_top_level_types)
    }

    #[test]
    fn mime_types() {
        assert_eq!(mime_kb("text/html"), Ok(Mime::Ok));
        assert_eq!(mime_kb("text/html; charset=utf-8"), Ok(Mime::Ok));
        assert_eq!(mime_kb("audio/x-m4a"), Ok(Mime::Ok));
        assert_eq!(mime_kb("foo/bar"), Ok(Mime::UnknownTopLevel("foo".into())));
        assert!(mime_kb("mp3").is_err());
        assert!(mime_kb("html").is_err());
        assert!(mime_kb("text/").is_err());
        // Past the one-pass path for plain `type/subtype`: the same verdicts.
        assert_eq!(mime_kb(" Text/HTML "), Ok(Mime::Ok));
        assert_eq!(mime_kb("FOO/bar"), Ok(Mime::UnknownTopLevel("foo".into())));
        assert!(mime_kb("text/html/x").is_err());
        assert!(mime_kb("/html").is_err());
        assert!(mime_kb("text/html;").is_err());
        assert!(mime_kb("text/ html").is_err());
    }

    #[test]
    fn check_digits() {
        assert!(luhn("5560041815"));
        assert!(!luhn("5560041816"));
        assert_eq!(identifier_syntax("isbn", "978-91-27-15506-0"), None);
        assert_eq!(identifier_syntax("isbn", "91-27-15506-4"), None);
        assert!(identifier_syntax("isbn", "978-91-27-15506-6").is_some());
        assert_eq!(identifier_syntax("issn", "0346-4326"), None);
        assert_eq!(identifier_syntax("issn", "1403-1140"), None);
        assert!(identifier_syntax("issn", "1403-1141").is_some());
        assert_eq!(identifier_syntax("doi", "10.1000/xyz123"), None);
        assert_eq!(identifier_syntax("isrc", "SE-A1B-26-00001"), None);
        assert_eq!(identifier_syntax("hdl", "anything"), None);
    }
}
