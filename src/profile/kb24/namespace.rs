//! Namespace declarations (catalogue §2): G-NS-MRSS, G-NS-DCTERMS and G-NS-XSI (a
//! near miss of the namespace name, or its usual prefix bound elsewhere), G-NS-PREFIX
//! (DCMI Terms under one prefix, used for nothing else) and G-NS-DCELEMENTS (no element
//! in the DC 1.1 namespace). Each distinct declaration is reported once.

use super::{DCTERMS, Kb24, MRSS, R, XSI};
use crate::i18n::Message;
use crate::msg;
use crate::profile::finding::Severity::{Error, Info, Warning};
use crate::profile::finding::{Finding, RuleId, Severity};
use crate::xml::{NsDecl, Pos};

/// Normalises a namespace name for near-miss detection: lower case, no scheme, no
/// `www.`, no trailing slash.
fn near(uri: &str) -> String {
    let u = uri.trim().to_ascii_lowercase();
    let u = u
        .strip_prefix("http://")
        .or_else(|| u.strip_prefix("https://"))
        .unwrap_or(&u);
    let u = u.strip_prefix("www.").unwrap_or(u);
    u.trim_end_matches('/').to_string()
}

impl Kb24 {
    /// G-NS-DCELEMENTS: an element in the DC 1.1 namespace.
    pub fn dc_element(&mut self, pos: Pos, local: &str, out: &mut Vec<Finding>) {
        out.push(Finding::new(
            R::GNsDcelements,
            Error,
            pos,
            msg!("ns-dc-elements", name = local, ns = DCTERMS),
        ));
    }

    /// G-NS-MRSS, G-NS-DCTERMS, G-NS-XSI, G-NS-PREFIX: one namespace declaration.
    pub fn namespace(&mut self, decl: &NsDecl, out: &mut Vec<Finding>) {
        self.near_misses(decl, out);
        if decl.uri == DCTERMS {
            self.dcterms_prefix(decl, out);
        } else {
            self.other_prefix(decl, out);
        }
    }

    /// Adds a finding on `decl` unless this rule and severity were already reported
    /// for the same prefix and namespace name.
    fn report(
        &mut self,
        decl: &NsDecl,
        rule: RuleId,
        severity: Severity,
        message: Message,
        out: &mut Vec<Finding>,
    ) {
        let key = (rule, severity, prefix(decl).to_string(), decl.uri.clone());
        if self.reported.insert(key) {
            out.push(Finding::new(rule, severity, decl.pos, message));
        }
    }

    /// G-NS-MRSS, G-NS-DCTERMS, G-NS-XSI: a namespace name that normalises to one of
    /// the profile's namespaces but is not exactly it, or the namespace's usual prefix
    /// bound to another name.
    fn near_misses(&mut self, decl: &NsDecl, out: &mut Vec<Finding>) {
        let prefix = prefix(decl);
        let uri = decl.uri.as_str();
        let shown = if prefix.is_empty() {
            "xmlns".to_string()
        } else {
            format!("xmlns:{prefix}")
        };
        let n = near(uri);
        if uri != MRSS
            && (matches!(
                n.as_str(),
                "search.yahoo.com/mrss" | "video.search.yahoo.com/mrss" | "rssboard.org/media-rss"
            ) || prefix == "media")
        {
            self.report(
                decl,
                R::GNsMrss,
                Error,
                msg!("ns-mrss", decl = shown.as_str(), uri = uri, ns = MRSS),
                out,
            );
        }
        if uri != DCTERMS && (n == "purl.org/dc/terms" || matches!(prefix, "dcterms" | "dct")) {
            self.report(
                decl,
                R::GNsDcterms,
                Error,
                msg!("ns-dcterms", decl = shown.as_str(), uri = uri, ns = DCTERMS),
                out,
            );
        }
        if uri != XSI && (n == "w3.org/2001/xmlschema-instance" || prefix == "xsi") {
            self.report(
                decl,
                R::GNsXsi,
                Error,
                msg!("ns-xsi", decl = shown.as_str(), uri = uri, ns = XSI),
                out,
            );
        }
    }

    /// G-NS-PREFIX for a declaration of DCMI Terms: a prefix other than `dcterms`
    /// (info), a second prefix for DCMI Terms, or a prefix bound elsewhere to another
    /// namespace (warnings).
    fn dcterms_prefix(&mut self, decl: &NsDecl, out: &mut Vec<Finding>) {
        let prefix = prefix(decl);
        if prefix != "dcterms" {
            self.report(
                decl,
                R::GNsPrefix,
                Info,
                msg!("ns-prefix-other", prefix = prefix),
                out,
            );
        }
        if self.dcterms_prefixes.iter().any(|p| p == prefix) {
            return;
        }
        if let Some(first) = self.dcterms_prefixes.first().cloned() {
            self.report(
                decl,
                R::GNsPrefix,
                Warning,
                msg!("ns-prefix-two", first = first, prefix = prefix),
                out,
            );
        }
        if let Some(other) = self.other_prefixes.get(prefix).cloned() {
            self.report(
                decl,
                R::GNsPrefix,
                Warning,
                msg!("ns-prefix-elsewhere", prefix = prefix, other = other),
                out,
            );
        }
        self.dcterms_prefixes.push(prefix.to_string());
    }

    /// G-NS-PREFIX for a declaration of another namespace: a prefix also used for DCMI
    /// Terms (warning).
    fn other_prefix(&mut self, decl: &NsDecl, out: &mut Vec<Finding>) {
        let prefix = prefix(decl);
        let uri = decl.uri.as_str();
        if self.dcterms_prefixes.iter().any(|p| p == prefix) {
            self.report(
                decl,
                R::GNsPrefix,
                Warning,
                msg!("ns-prefix-here", prefix = prefix, uri = uri),
                out,
            );
        }
        self.other_prefixes
            .entry(prefix.to_string())
            .or_insert_with(|| uri.to_string());
    }
}

/// The declared prefix; `""` for the default namespace.
fn prefix(decl: &NsDecl) -> &str {
    decl.prefix.as_deref().unwrap_or("")
}
