//! R103: RFC 2822 `date-time` with a four-digit year (catalogue §6.2).
//!
//! Written by hand because `chrono`'s RFC 2822 parser accepts two-digit years and
//! rejects a wrong weekday outright, where the profile wants an error for the first
//! and a warning for the second.

use crate::i18n::Message;
use crate::msg;

/// A parsed pubDate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PubDate {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub instant: i64,
    /// The day-of-week given, when it does not match the date: (given, actual).
    pub weekday_mismatch: Option<(&'static str, &'static str)>,
    /// A trailing comment such as `(CET)` (legal CFWS; info).
    pub comment: bool,
    /// A military zone letter other than `Z`, read as `-0000` (RFC 2822 §4.3; info).
    pub military: Option<char>,
}

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Why a pubDate is not RFC 2822 with a four-digit year; the text says what to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DateError(pub Message);

/// A date error, followed by an example of what to write.
fn err<T>(what: Message) -> Result<T, DateError> {
    Err(DateError(msg!("date-example", what = what)))
}

/// A date error that says itself what to write.
fn says<T>(what: Message) -> Result<T, DateError> {
    Err(DateError(what))
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    /// Skips folding white space; returns whether any was skipped.
    fn fws(&mut self) -> bool {
        let start = self.i;
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
        self.i > start
    }
    fn digits(&mut self) -> &'a [u8] {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        &self.s[start..self.i]
    }
    fn alpha(&mut self) -> &'a [u8] {
        let start = self.i;
        while matches!(self.peek(), Some(b'a'..=b'z' | b'A'..=b'Z')) {
            self.i += 1;
        }
        &self.s[start..self.i]
    }
    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn rest(&self) -> String {
        String::from_utf8_lossy(&self.s[self.i..]).into_owned()
    }
}

fn number(d: &[u8]) -> i64 {
    d.iter().fold(0, |n, b| n * 10 + i64::from(b - b'0'))
}

fn name_index(names: &[&str], token: &[u8]) -> Option<usize> {
    names
        .iter()
        .position(|n| n.as_bytes().eq_ignore_ascii_case(token))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses an R103 value (already trimmed): `date-time = [ day-of-week "," ] date FWS
/// time [CFWS]` (catalogue §6.2), each part read by the function of its name.
pub fn parse(value: &str) -> Result<PubDate, DateError> {
    if value.is_empty() {
        return err(msg!("date-empty"));
    }
    if value.len() >= 10
        && value.as_bytes()[4] == b'-'
        && value.as_bytes()[..4].iter().all(u8::is_ascii_digit)
    {
        return err(msg!("date-iso", value = value));
    }
    let mut c = Cursor {
        s: value.as_bytes(),
        i: 0,
    };
    let weekday = day_of_week(&mut c)?;
    let Date { day, month, year } = date(&mut c)?;
    let (hour, minute, second) = time(&mut c)?;
    let (offset_minutes, military) = zone(&mut c)?;
    let comment = cfws(&mut c)?;
    if c.i < c.s.len() {
        return err(msg!("date-after-zone", rest = c.rest()));
    }
    // Calendar and clock ranges.
    if !(1..=days_in_month(year, month)).contains(&day) {
        return err(msg!(
            "date-not-in-calendar",
            day = day,
            month = MONTHS[(month - 1) as usize],
            year = year
        ));
    }
    if hour > 23 || minute > 59 || second > 60 {
        return err(msg!(
            "date-time-range",
            time = format!("{hour:02}:{minute:02}:{second:02}")
        ));
    }
    let days = days_from_civil(year, month, day);
    let actual = DAYS[(days + 4).rem_euclid(7) as usize];
    let weekday_mismatch = weekday
        .map(|w| DAYS[w])
        .filter(|w| *w != actual)
        .map(|w| (w, actual));
    let instant = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Ok(PubDate {
        instant,
        weekday_mismatch,
        comment,
        military: military.filter(|m| *m != 'Z'),
    })
}

/// `[ day-of-week "," ]`: the index of the day name in [`DAYS`], if there is one.
fn day_of_week(c: &mut Cursor<'_>) -> Result<Option<usize>, DateError> {
    if !matches!(c.peek(), Some(b'a'..=b'z' | b'A'..=b'Z')) {
        return Ok(None);
    }
    let token = c.alpha();
    let Some(w) = name_index(&DAYS, token) else {
        return err(msg!(
            "date-day-name",
            value = String::from_utf8_lossy(token).into_owned()
        ));
    };
    c.fws();
    if !c.eat(b',') {
        return err(msg!("date-day-comma"));
    }
    c.fws();
    Ok(Some(w))
}

/// `date FWS` as read: not yet checked against the calendar.
struct Date {
    day: i64,
    /// 1 to 12.
    month: i64,
    year: i64,
}

/// `date FWS = day FWS month FWS year FWS`: a day of one or two digits, an English
/// month abbreviation, a year of exactly four digits (profile 2.4; RFC 2822's
/// obsolete two-digit years are refused).
fn date(c: &mut Cursor<'_>) -> Result<Date, DateError> {
    let day = c.digits();
    if day.is_empty() || day.len() > 2 {
        return err(msg!("date-day", rest = c.rest()));
    }
    let day = number(day);
    if !c.fws() {
        return err(msg!("date-space-after-day"));
    }
    let month = c.alpha();
    let Some(month) = name_index(&MONTHS, month) else {
        return err(msg!(
            "date-month",
            value = String::from_utf8_lossy(month).into_owned()
        ));
    };
    let month = month as i64 + 1;
    if !c.fws() {
        return err(msg!("date-space-after-month"));
    }
    let year = c.digits();
    if year.len() != 4 {
        let y = String::from_utf8_lossy(year).into_owned();
        return if year.len() == 2 {
            says(msg!("date-four-digit-year", year = y))
        } else {
            err(msg!("date-year", year = y))
        };
    }
    let year = number(year);
    if !c.fws() {
        return err(msg!("date-space-after-year"));
    }
    Ok(Date { day, month, year })
}

/// `time-of-day FWS = hour ":" minute [ ":" second ] FWS`, two digits each: (hour,
/// minute, second) as read, not yet checked against the clock.
fn time(c: &mut Cursor<'_>) -> Result<(i64, i64, i64), DateError> {
    let hour = c.digits();
    if hour.len() != 2 || !c.eat(b':') {
        return err(msg!("date-time", rest = c.rest()));
    }
    let hour = number(hour);
    let minute = c.digits();
    if minute.len() != 2 {
        return err(msg!("date-minutes"));
    }
    let minute = number(minute);
    let mut second = 0;
    if c.eat(b':') {
        let s = c.digits();
        if s.len() != 2 {
            return err(msg!("date-seconds"));
        }
        second = number(s);
    }
    if !c.fws() {
        return err(msg!("date-space-after-time"));
    }
    Ok((hour, minute, second))
}

/// `zone = ("+" / "-") 4DIGIT / obs-zone`: the offset from UTC in minutes, and the
/// military letter if the zone is one (read as `-0000`, RFC 2822 §4.3).
fn zone(c: &mut Cursor<'_>) -> Result<(i64, Option<char>), DateError> {
    match c.peek() {
        Some(sign @ (b'+' | b'-')) => {
            c.i += 1;
            let z = c.digits();
            if z.len() != 4 {
                return err(if c.peek() == Some(b':') {
                    msg!("date-zone-colon")
                } else {
                    msg!("date-zone")
                });
            }
            let (hh, mm) = (number(&z[..2]), number(&z[2..]));
            if mm > 59 {
                return err(msg!("date-zone-minutes", minutes = mm));
            }
            let m = hh * 60 + mm;
            Ok((if sign == b'-' { -m } else { m }, None))
        }
        Some(b'a'..=b'z' | b'A'..=b'Z') => {
            let z = c.alpha().to_ascii_uppercase();
            let offset = match z.as_slice() {
                b"UT" | b"GMT" | b"Z" => 0,
                b"EDT" => -4 * 60,
                b"EST" | b"CDT" => -5 * 60,
                b"CST" | b"MDT" => -6 * 60,
                b"MST" | b"PDT" => -7 * 60,
                b"PST" => -8 * 60,
                [l] if l.is_ascii_alphabetic() && *l != b'J' => {
                    return Ok((0, Some(char::from(*l))));
                }
                other => {
                    let z = String::from_utf8_lossy(other);
                    return says(msg!("date-zone-name", zone = z.into_owned()));
                }
            };
            Ok((offset, None))
        }
        _ => err(msg!("date-no-zone")),
    }
}

/// `[CFWS]` after the zone: folding white space and comments (nested, with quoted
/// pairs). Returns whether there was a comment.
fn cfws(c: &mut Cursor<'_>) -> Result<bool, DateError> {
    c.fws();
    let mut comment = false;
    while c.peek() == Some(b'(') {
        let mut depth = 0;
        loop {
            match c.peek() {
                None => return err(msg!("date-comment")),
                Some(b'\\') => c.i += 2,
                Some(b'(') => {
                    depth += 1;
                    c.i += 1;
                }
                Some(b')') => {
                    depth -= 1;
                    c.i += 1;
                    if depth == 0 {
                        break;
                    }
                }
                Some(_) => c.i += 1,
            }
        }
        comment = true;
        c.fws();
    }
    Ok(comment)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> PubDate {
        parse(s).unwrap_or_else(|e| panic!("{s}: {}", e.0))
    }

    #[test]
    fn accepts_the_rfc_2822_forms() {
        let base = ok("Sun, 22 Nov 2026 09:30:00 +0100").instant;
        assert_eq!(ok("22 Nov 2026 08:30:00 GMT").instant, base);
        assert_eq!(ok("Sun, 22 Nov 2026 08:30 UT").instant, base);
        assert_eq!(ok("sun, 22 nov 2026 03:30:00 est").instant, base);
        assert_eq!(ok("Sun,22 Nov 2026 08:30:00 -0000").instant, base);
        assert!(ok("Sun, 22 Nov 2026 09:30:00 +0100 (CET)").comment);
        assert_eq!(ok("Sun, 22 Nov 2026 08:30:00 A").military, Some('A'));
        assert_eq!(ok("Sun, 22 Nov 2026 08:30:00 Z").military, None);
        assert_eq!(ok("Thu, 1 Jan 1970 00:00:00 +0000").instant, 0);
        assert_eq!(ok("Tue, 29 Feb 2028 12:00:00 +0000").instant, 1_835_438_400);
    }

    #[test]
    fn wrong_weekday_is_reported_not_refused() {
        assert_eq!(
            ok("Mon, 22 Nov 2026 09:30:00 +0100").weekday_mismatch,
            Some(("Mon", "Sun"))
        );
    }

    #[test]
    fn rejects_what_the_profile_rejects() {
        for bad in [
            "Sun, 22 Nov 26 09:30:00 +0100",
            "Sun, 22 Nov 2026 09:30:00 CET",
            "Sun, 22 Nov 2026 09:30:00 CEST",
            "Sun, 22 Nov 2026 09:30:00 UTC",
            "Sun, 22 Nov 2026 09:30:00 +01:00",
            "2026-11-22T09:30:00+01:00",
            "Mon, 30 Feb 2026 09:30:00 +0100",
            "Sat, 29 Feb 2025 09:30:00 +0100",
            "Sun, 22 Nov 2026 24:00:00 +0100",
            "Sun, 22 Nov 2026 9:30:00 +0100",
            "Sun, 22 Nov 2026 09:30:00",
            "Sun, 22 November 2026 09:30:00 +0100",
            "Sun 22 Nov 2026 09:30:00 +0100",
            "Sun, 22 Nov 2026 09:30:00 +0160",
            "Sun, 22 Nov 2026 09:30:00 J",
            "",
        ] {
            assert!(parse(bad).is_err(), "{bad} should be refused");
        }
    }
}
