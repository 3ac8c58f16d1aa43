//! A password that does not print.

use std::fmt;

/// A secret string: `Debug` and `Display` print `***`; only [`Secret::expose`] reads it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: String) -> Self {
        Self(value)
    }

    /// The secret itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// `text` with the password of every URL in it (`scheme://user:password@host`) and every
/// `password=…` parameter written as `***`: configuration errors quote what was written,
/// and a URL typed with its password must not carry it into a log or a terminal. A URL
/// runs to the quote, backtick or space that ends it (a password may hold `/`, `@` or an
/// escaped quote: the reason such a URL does not parse); what lies between its first `:`
/// after `//` and its last `@` is masked, more than the password at worst.
pub(crate) fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = token_end(tail);
        let url = &tail[..end];
        match url
            .rfind('@')
            .and_then(|at| url[..at].find(':').map(|colon| (colon, at)))
        {
            Some((colon, at)) => {
                out.push_str(&url[..=colon]);
                out.push_str("***");
                out.push_str(&url[at..]);
            }
            None => out.push_str(url),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    mask_password_parameters(&out)
}

/// Where a quoted value that starts `text` ends: at a quote, backtick or space not
/// escaped with a backslash.
fn token_end(text: &str) -> usize {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' | '\'' | '`' => return i,
            c if c.is_whitespace() => return i,
            _ => {}
        }
    }
    text.len()
}

/// `text` with the value of every `password=` (a URL's query, a libpq keyword) masked.
fn mask_password_parameters(text: &str) -> String {
    const KEY: &str = "password=";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.to_ascii_lowercase().find(KEY) {
        let (head, tail) = rest.split_at(i + KEY.len());
        out.push_str(head);
        let end = tail
            .find('&')
            .map_or(token_end(tail), |amp| amp.min(token_end(tail)));
        if end > 0 {
            out.push_str("***");
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::redact_urls;

    #[test]
    fn a_urls_password_is_masked_and_the_rest_kept() {
        assert_eq!(
            redact_urls(r#"invalid port number: "postgres://plikt:hunter2@127.0.0.1:99999/plikt""#),
            r#"invalid port number: "postgres://plikt:***@127.0.0.1:99999/plikt""#
        );
        assert_eq!(
            redact_urls("`https://a:b@c/` and `http://d:e@f:1`"),
            "`https://a:***@c/` and `http://d:***@f:1`"
        );
        // A password holding what ends a host (the reason the URL does not parse), an
        // escaped quote, or given as a parameter.
        assert_eq!(
            redact_urls(r#""postgres://plikt:hun/ter#2@h/db" and `x://u:p\"w@h`"#),
            r#""postgres://plikt:***@h/db" and `x://u:***@h`"#
        );
        assert_eq!(
            redact_urls(r#""postgres://h/db?sslmode=require&password=hunter2&x=1""#),
            r#""postgres://h/db?sslmode=require&password=***&x=1""#
        );
        assert_eq!(
            redact_urls("host=db PASSWORD=hunter2 user=u"),
            "host=db PASSWORD=*** user=u"
        );
        // No password, or no URL: unchanged.
        for kept in [
            "postgres://plikt@127.0.0.1:5432/plikt",
            "http://127.0.0.1:3900",
            "a://",
            "no URL here: x@y",
        ] {
            assert_eq!(redact_urls(kept), kept);
        }
    }
}
