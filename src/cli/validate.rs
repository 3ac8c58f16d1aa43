//! `plikt validate`.

use std::fs::File;
use std::io::{self, IsTerminal, Write};

use clap::{Args, ValueEnum};

use super::error::{Error, Exit};
use crate::fetch::{self, Policy, PrivateRule, Tee};
use crate::i18n::Lang;
use crate::profile::{self, Report};
use crate::report::{Json, Junit, Printer, Source, Text};

/// The formats `plikt validate --format` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Compiler-style diagnostics with source lines (the default).
    Text,
    /// One JSON document for other tools.
    Json,
    /// JUnit XML for CI pipelines: one testcase per item plus one for the channel.
    Junit,
}

/// When to colour the text report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Color {
    /// When standard output is a terminal and NO_COLOR is unset.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Arguments of `plikt validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The feed: a file path, `-` for standard input, or an http(s) URL.
    pub input: String,

    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Colour in the text report.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,

    /// The host publication is deposit-liable: every item needs a typed
    /// dcterms:isPartOf (R112).
    #[arg(long)]
    pub require_is_part_of: bool,

    /// Largest feed read, in bytes (suffixes K, M, G allowed).
    #[arg(long, default_value = "1G", value_parser = parse_size)]
    pub max_bytes: u64,

    /// Fetch a URL also from a loopback, private or link-local address (refused by
    /// default).
    #[arg(long)]
    pub allow_private: bool,

    /// Findings kept per rule and severity (all are counted); 0 keeps all. JUnit
    /// output keeps all.
    #[arg(long, default_value_t = 1000)]
    pub max_findings: usize,

    /// Language of the report: `sv` or `en` (default: from LC_ALL, LC_MESSAGES or
    /// LANG; English unless that names Swedish).
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
}

/// Parses `sv` or `en`.
fn parse_lang(s: &str) -> Result<Lang, String> {
    Lang::parse(s).ok_or_else(|| format!("`{s}` is not a language plikt writes: use `sv` or `en`"))
}

impl ValidateArgs {
    /// The HTTP policy of `validate URL`: the built-in defaults (validate reads no
    /// configuration) under the command line, the policy's top layer: `--max-bytes`
    /// caps the feed while it streams, `--allow-private` lifts the private-target rule.
    /// http URLs are fetched too: no credentials are ever sent.
    pub fn http_policy(&self) -> Policy {
        Policy::for_validation(self.max_bytes, self.allow_private, PrivateRule::CommandLine)
    }
}

/// Parses `1048576`, `512K`, `64M`, `1G`.
fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (digits, factor) = match s.char_indices().last() {
        Some((i, 'K' | 'k')) => (&s[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&s[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&s[..i], 1 << 30),
        _ => (s, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("`{s}` is not a size; write e.g. 1048576, 512K, 64M or 1G"))
}

/// Largest standard input copied aside for showing source lines.
const STDIN_COPY_LIMIT: u64 = 256 << 20;

/// Runs `plikt validate`.
pub fn run(args: &ValidateArgs) -> Result<Exit, Error> {
    let options = crate::report::options(
        args.max_bytes,
        args.require_is_part_of,
        args.max_findings,
        args.format == Format::Junit,
    );
    let text = args.format == Format::Text;
    let input_error = |source: io::Error| Error::Input {
        name: args.input.clone(),
        source,
    };

    // The report and a copy of the feed for its source lines.
    let (report, copy): (Report, Option<File>) = if args.input == "-" {
        if text {
            let mut tee = Tee::new(io::stdin().lock(), STDIN_COPY_LIMIT).map_err(input_error)?;
            let report = profile::validate(&mut tee, &options).map_err(input_error)?;
            let copy = tee.into_spool().and_then(|s| s.reader().ok());
            (report, copy)
        } else {
            (
                profile::validate(io::stdin().lock(), &options).map_err(input_error)?,
                None,
            )
        }
    } else if args.input.starts_with("http://") || args.input.starts_with("https://") {
        let url = url::Url::parse(&args.input)
            .map_err(|e| Error::Usage(format!("`{}` is not a valid URL: {e}", args.input)))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Usage(format!("cannot start the HTTP client: {e}")))?;
        let spool = runtime.block_on(fetch::download(&url, &args.http_policy()))?;
        let file = spool.reader().map_err(input_error)?;
        let report = profile::validate_file(&file, &options).map_err(input_error)?;
        (report, Some(file))
    } else {
        let file = File::open(&args.input).map_err(input_error)?;
        let report = profile::validate_file(&file, &options).map_err(input_error)?;
        (report, Some(file))
    };

    let source = Source {
        name: args.input.clone(),
        copy,
    };
    let stdout = io::stdout();
    let color = match args.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let lang = args.lang.unwrap_or_else(Lang::from_env);
    let printer: Box<dyn Printer> = match args.format {
        Format::Text => Box::new(Text { color, lang }),
        Format::Json => Box::new(Json { lang }),
        Format::Junit => Box::new(Junit { lang }),
    };
    let mut out = io::BufWriter::new(stdout.lock());
    let written = printer
        .print(&report, &source, &mut out)
        .and_then(|()| out.flush());
    super::written(written)?;
    Ok(if report.valid() {
        Exit::Ok
    } else {
        Exit::Invalid
    })
}
