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

/// `text` with the password of every URL in it (`scheme://user:password@host`) written
/// as `***`: configuration errors quote what was written, and a URL typed with its
/// password must not carry it into a log or a terminal.
pub(crate) fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority ends where the path, query or fragment begins, or where the
        // quoted URL ends.
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#' | '"' | '\'' | '`') || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority
            .rfind('@')
            .and_then(|at| authority[..at].find(':').map(|colon| (colon, at)))
        {
            Some((colon, at)) => {
                out.push_str(&authority[..=colon]);
                out.push_str("***");
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
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
