//! Texts in Swedish and English: one Fluent catalogue per language and subject
//! (`sv/*.ftl`, `en/*.ftl`: the web pages, the findings, the rules; STYLE habit 16),
//! compiled into the binary and looked up by ID with named arguments.
//!
//! Findings and the errors they quote carry a [`Message`] — an ID and typed
//! arguments, no language — and are rendered only at the edges (report printers, the
//! web pages, the API, the catalog's stored text) in the reader's [`Lang`]. English is
//! the language of machines: the JSON report, the API's default and the text stored in
//! the catalog; `Display` of a [`Message`] is its English text.
//!
//! Tests fail when an ID exists in one language only, when a message does not format
//! (an argument missing), or when code uses an ID that neither catalogue has.

use std::fmt;
use std::sync::OnceLock;

use fluent_bundle::concurrent::FluentBundle;
use fluent_bundle::{FluentArgs, FluentResource, FluentValue};

/// A language of plikt's texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    /// Svenska.
    Sv,
    /// English.
    En,
}

impl Lang {
    /// Every language, Swedish (the pages' default) first.
    pub const ALL: [Lang; 2] = [Lang::Sv, Lang::En];

    /// The BCP 47 code (`lang` attributes, cookies, `--lang`).
    pub fn code(self) -> &'static str {
        match self {
            Lang::Sv => "sv",
            Lang::En => "en",
        }
    }

    /// The language's name in itself.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Sv => "Svenska",
            Lang::En => "English",
        }
    }

    /// The other language.
    pub fn other(self) -> Lang {
        match self {
            Lang::Sv => Lang::En,
            Lang::En => Lang::Sv,
        }
    }

    /// Parses `sv` or `en`.
    pub fn parse(code: &str) -> Option<Lang> {
        Self::ALL.into_iter().find(|l| l.code() == code)
    }

    /// The language of a POSIX locale such as `sv_SE.UTF-8`: Swedish for `sv…`,
    /// English for `en…`, `C` and `POSIX`; `None` for others and empty values.
    pub fn of_locale(locale: &str) -> Option<Lang> {
        let language = locale.split(['_', '.', '@', '-']).next().unwrap_or("");
        match language.to_ascii_lowercase().as_str() {
            "sv" => Some(Lang::Sv),
            "en" | "c" | "posix" => Some(Lang::En),
            _ => None,
        }
    }

    /// The language of the process's locale, as POSIX orders the variables: the first
    /// set and non-empty of `LC_ALL`, `LC_MESSAGES`, `LANG`; English when that one
    /// names neither Swedish nor English.
    pub fn from_env() -> Lang {
        ["LC_ALL", "LC_MESSAGES", "LANG"]
            .into_iter()
            .filter_map(|v| std::env::var(v).ok())
            .find(|v| !v.is_empty())
            .and_then(|v| Lang::of_locale(&v))
            .unwrap_or(Lang::En)
    }

    fn sources(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Lang::Sv => &[
                ("sv/pages.ftl", include_str!("sv/pages.ftl")),
                ("sv/findings.ftl", include_str!("sv/findings.ftl")),
                ("sv/rules.ftl", include_str!("sv/rules.ftl")),
            ],
            Lang::En => &[
                ("en/pages.ftl", include_str!("en/pages.ftl")),
                ("en/findings.ftl", include_str!("en/findings.ftl")),
                ("en/rules.ftl", include_str!("en/rules.ftl")),
            ],
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

type Bundle = FluentBundle<FluentResource>;

fn bundles() -> &'static [Bundle; 2] {
    static BUNDLES: OnceLock<[Bundle; 2]> = OnceLock::new();
    BUNDLES.get_or_init(|| Lang::ALL.map(bundle))
}

fn bundle(lang: Lang) -> Bundle {
    let id: unic_langid::LanguageIdentifier = lang.code().parse().expect("constant language code");
    let mut bundle = FluentBundle::new_concurrent(vec![id]);
    // Plain text (into HTML, terminals, JSON): no Unicode isolation marks around
    // arguments.
    bundle.set_use_isolating(false);
    for (name, source) in lang.sources() {
        let resource = FluentResource::try_new(source.to_string())
            .unwrap_or_else(|(_, errors)| panic!("src/i18n/{name}: {errors:?}"));
        bundle
            .add_resource(resource)
            .unwrap_or_else(|errors| panic!("src/i18n/{name}: {errors:?}"));
    }
    bundle
}

/// Looks up `id` in `lang`'s catalogue with `args`. An unknown ID gives the ID itself
/// (and a test fails).
pub fn text(lang: Lang, id: &str, args: &[(&str, FluentValue<'_>)]) -> String {
    let bundle = &bundles()[lang as usize];
    let Some(pattern) = bundle.get_message(id).and_then(|m| m.value()) else {
        return id.to_string();
    };
    let mut fargs = FluentArgs::new();
    for (k, v) in args {
        fargs.set(*k, v.clone());
    }
    let mut errors = Vec::new();
    let s = bundle.format_pattern(pattern, Some(&fargs), &mut errors);
    debug_assert!(errors.is_empty(), "{lang}: {id}: {errors:?}");
    s.into_owned()
}

/// The text `id` for a count `$n` (the catalogues' plural forms, e.g. `count-errors`).
pub fn count(lang: Lang, id: &str, n: u64) -> String {
    text(lang, id, &[("n", FluentValue::from(n))])
}

/// Whether `lang`'s catalogue has `id`.
pub fn has(lang: Lang, id: &str) -> bool {
    bundles()[lang as usize].has_message(id)
}

/// A text in no language yet: a catalogue ID and its arguments, rendered with
/// [`Message::render`] where a reader's language is known. Arguments are text
/// (quoted values, numbers written as the feed wrote them: no locale formatting) or
/// other messages (an error quoted in a finding), rendered in the same language.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Message {
    id: &'static str,
    args: Vec<(&'static str, Arg)>,
}

/// An argument of a [`Message`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Arg {
    /// Text, the same in every language.
    Text(String),
    /// A message, rendered in the reader's language.
    Message(Box<Message>),
}

impl Message {
    /// The message `id` without arguments.
    pub fn new(id: &'static str) -> Self {
        Self {
            id,
            args: Vec::new(),
        }
    }

    /// Adds the argument `$name`.
    #[must_use]
    pub fn arg(mut self, name: &'static str, value: impl Into<Arg>) -> Self {
        self.args.push((name, value.into()));
        self
    }

    /// The catalogue ID.
    pub fn id(&self) -> &'static str {
        self.id
    }

    /// The text in `lang`.
    pub fn render(&self, lang: Lang) -> String {
        let rendered: Vec<(&str, FluentValue<'_>)> = self
            .args
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    Arg::Text(s) => FluentValue::from(s.as_str()),
                    Arg::Message(m) => FluentValue::from(m.render(lang)),
                };
                (*k, v)
            })
            .collect();
        text(lang, self.id, &rendered)
    }

    /// Every message in this one (itself and those in its arguments), for tests.
    pub fn each(&self, f: &mut dyn FnMut(&Message)) {
        f(self);
        for (_, a) in &self.args {
            if let Arg::Message(m) = a {
                m.each(f);
            }
        }
    }
}

/// The English text, quoted (what tests and logs compare).
impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.render(Lang::En))
    }
}

/// English.
impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(Lang::En))
    }
}

impl From<String> for Arg {
    fn from(s: String) -> Self {
        Arg::Text(s)
    }
}

impl From<&String> for Arg {
    fn from(s: &String) -> Self {
        Arg::Text(s.clone())
    }
}

impl From<&str> for Arg {
    fn from(s: &str) -> Self {
        Arg::Text(s.to_string())
    }
}

impl From<std::borrow::Cow<'_, str>> for Arg {
    fn from(s: std::borrow::Cow<'_, str>) -> Self {
        Arg::Text(s.into_owned())
    }
}

impl From<Message> for Arg {
    fn from(m: Message) -> Self {
        Arg::Message(Box::new(m))
    }
}

macro_rules! arg_display {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg {
            fn from(v: $t) -> Self {
                Arg::Text(v.to_string())
            }
        }
    )*};
}
arg_display!(char, u8, u16, u32, u64, usize, i32, i64);

/// A [`Message`]: `msg!("r103-weekday", given = g, actual = a)` is the catalogue's
/// `r103-weekday` with `$given` and `$actual`.
#[macro_export]
macro_rules! msg {
    ($id:literal $(, $name:ident = $value:expr)* $(,)?) => {
        $crate::i18n::Message::new($id)$(.arg(stringify!($name), $value))*
    };
}

/// The IDs of a language's catalogues (every file), for tests.
#[cfg(test)]
pub fn ids(lang: Lang) -> std::collections::BTreeSet<String> {
    lang.sources()
        .iter()
        .flat_map(|(name, source)| {
            let resource = FluentResource::try_new(source.to_string())
                .unwrap_or_else(|_| panic!("{name} parses"));
            resource
                .entries()
                .filter_map(|e| match e {
                    fluent_syntax::ast::Entry::Message(m) => Some(m.id.name.to_string()),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Every `.rs` file under `src/`: (path, text).
#[cfg(test)]
fn crate_sources() -> Vec<(String, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    files
        .iter()
        .map(|p| (p.display().to_string(), std::fs::read_to_string(p).unwrap()))
        .collect()
}

/// Every `msg!("…"` ID in the crate's sources outside tests, with its file.
#[cfg(test)]
pub fn used_ids() -> std::collections::BTreeSet<(String, String)> {
    let mut used = std::collections::BTreeSet::new();
    for (p, s) in crate_sources() {
        let s = s.split("#[cfg(test)]").next().unwrap_or("");
        for call in ["msg!(\"", "Message::new(\""] {
            for (i, _) in s.match_indices(call) {
                let rest = &s[i + call.len()..];
                let id = &rest[..rest.find('"').unwrap()];
                used.insert((id.to_string(), p.clone()));
            }
        }
    }
    used
}

/// The variables each message of `lang`'s catalogues uses.
#[cfg(test)]
fn message_vars(
    lang: Lang,
) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    fn collect(
        p: &fluent_syntax::ast::Pattern<&str>,
        names: &mut std::collections::BTreeSet<String>,
    ) {
        use fluent_syntax::ast::{Expression, InlineExpression, PatternElement};
        for el in &p.elements {
            if let PatternElement::Placeable { expression } = el {
                let (inline, variants) = match expression {
                    Expression::Inline(i) => (i, None),
                    Expression::Select { selector, variants } => (selector, Some(variants)),
                };
                if let InlineExpression::VariableReference { id } = inline {
                    names.insert(id.name.to_string());
                }
                for v in variants.into_iter().flatten() {
                    collect(&v.value, names);
                }
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    for (_, source) in lang.sources() {
        let resource = FluentResource::try_new(source.to_string()).unwrap();
        for e in resource.entries() {
            if let fluent_syntax::ast::Entry::Message(m) = e {
                let mut names = std::collections::BTreeSet::new();
                if let Some(p) = &m.value {
                    collect(p, &mut names);
                }
                out.insert(m.id.name.to_string(), names);
            }
        }
    }
    out
}

/// The arguments a `msg!` call names: `name = value` at the call's top level.
#[cfg(test)]
fn call_args(call: &str) -> std::collections::BTreeSet<String> {
    let mut given = std::collections::BTreeSet::new();
    let (mut depth, mut part) = (0, String::new());
    for c in call.chars().chain([',']) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            if let Some((name, _)) = part.split_once('=')
                && name
                    .trim()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_')
                && !name.trim().is_empty()
            {
                given.insert(name.trim().to_string());
            }
            part.clear();
        } else {
            part.push(c);
        }
    }
    given
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_is_in_both_languages() {
        let sv = ids(Lang::Sv);
        let en = ids(Lang::En);
        let only_sv: Vec<_> = sv.difference(&en).collect();
        let only_en: Vec<_> = en.difference(&sv).collect();
        assert!(
            only_sv.is_empty() && only_en.is_empty(),
            "only in sv/*.ftl: {only_sv:?}; only in en/*.ftl: {only_en:?}"
        );
        for lang in Lang::ALL {
            // Every file parses, and no ID is in two files of a language.
            bundle(lang);
        }
    }

    #[test]
    fn every_message_the_code_uses_exists_in_both_languages() {
        let used = used_ids();
        // The findings (kb24, dates, XML, harvest) and the rules use messages.
        assert!(used.len() > 100, "{}", used.len());
        let missing: Vec<_> = used
            .iter()
            .filter(|(id, _)| Lang::ALL.iter().any(|l| !has(*l, id)))
            .collect();
        assert!(
            missing.is_empty(),
            "IDs used but not in both catalogues: {missing:?}"
        );
    }

    /// Every `msg!` call names exactly the arguments its message uses (in English,
    /// which the next test ties to Swedish): a misspelt or missing argument fails here,
    /// not in front of a publisher.
    #[test]
    fn every_msg_call_gives_the_arguments_its_message_uses() {
        let vars = message_vars(Lang::En);
        let (mut calls, mut wrong) = (0, Vec::new());
        for (file, source) in crate_sources() {
            let source = source.split("#[cfg(test)]").next().unwrap_or("");
            for (i, _) in source.match_indices("msg!(\"") {
                let rest = &source[i + "msg!(\"".len()..];
                let id = &rest[..rest.find('"').unwrap()];
                // The call's text, up to its closing parenthesis.
                let mut depth = 1;
                let end = rest
                    .char_indices()
                    .find(|(_, c)| {
                        match c {
                            '(' | '[' | '{' => depth += 1,
                            ')' | ']' | '}' => depth -= 1,
                            _ => {}
                        }
                        depth == 0
                    })
                    .map_or(rest.len(), |(j, _)| j);
                let given = call_args(&rest[..end]);
                calls += 1;
                if vars.get(id) != Some(&given) {
                    wrong.push(format!(
                        "{file}: {id}: gives {given:?}, uses {:?}",
                        vars.get(id)
                    ));
                }
            }
        }
        assert!(calls > 150, "{calls} calls");
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    /// The variables a message of the catalogue uses, per language: the two must agree,
    /// or one language would drop (or miss) something the other says.
    #[test]
    fn both_languages_use_the_same_arguments() {
        let (sv, en) = (message_vars(Lang::Sv), message_vars(Lang::En));
        let differ: Vec<_> = en
            .iter()
            .filter(|(id, names)| sv.get(*id).is_some_and(|s| s != *names))
            .map(|(id, names)| format!("{id}: en {names:?}, sv {:?}", sv[id]))
            .collect();
        assert!(differ.is_empty(), "{differ:#?}");
    }

    #[test]
    fn locales() {
        assert_eq!(Lang::of_locale("sv_SE.UTF-8"), Some(Lang::Sv));
        assert_eq!(Lang::of_locale("sv"), Some(Lang::Sv));
        assert_eq!(Lang::of_locale("en_GB.utf8"), Some(Lang::En));
        assert_eq!(Lang::of_locale("C.UTF-8"), Some(Lang::En));
        assert_eq!(Lang::of_locale("POSIX"), Some(Lang::En));
        assert_eq!(Lang::of_locale("de_DE"), None);
        assert_eq!(Lang::of_locale(""), None);
    }

    #[test]
    fn nested_messages_render_in_one_language() {
        let m = crate::msg!("date-four-digit-year", year = "26");
        let outer = crate::msg!("r103-date", value = "`x`", error = m);
        assert_ne!(outer.render(Lang::Sv), outer.render(Lang::En));
        assert_eq!(outer.to_string(), outer.render(Lang::En));
    }
}
