//! `date`: the wall-clock time that lets two counter snapshots become rates.
//!
//! Forms handled (GNU coreutils and BusyBox `date`, C and English locales):
//! - default: `Mon Nov 30 00:53:23 UTC 2026`; en_US/en_GB: `Mon 30 Nov 2026 12:53:23 AM UTC`;
//! - `date -R`: `Mon, 30 Nov 2026 00:53:23 +0000`;
//! - `date -Iseconds` / `--rfc-3339=seconds` / `-Ins`: `2026-11-30T00:53:23+00:00`,
//!   `2026-11-30 00:53:23.123456789+00:00`, `2026-11-30T00:53:23,123456789Z`;
//! - `watch` headers: `Every 60.0s: perfquery -x   gpu07: Tue Dec  1 10:00:00 2026`;
//! - `date +%s` (and `+%s.%N`): a bare number of seconds, recognised only under a prompt running it
//!   because a bare number could be anything;
//! - a stamp decorated as a script's heading, `==== Mon Nov 30 00:53:23 UTC 2026 ====`, or the
//!   last field of a host heading, `===== node01 | before | 2026-11-30T00:53:23Z =====`;
//! - journalctl -o short-full's `Mon 2026-11-30 00:53:23 UTC` (weekday, ISO date, zone name);
//! - the same layout without a zone, as in nvidia-smi's `Timestamp : Mon Nov 30 00:53:23 2026`
//!   ([`parse_stamp`] is shared for that).
//!
//! No calendar crate: the proleptic Gregorian day count below is all that is needed.

use crate::model::date::{Date, DateStamp};
use crate::parse::text::Unread;
use crate::parse::timestamp::{civil_to_unix, month_number};
use crate::parse::{Block, Line, Parsed, Spec};
use crate::span::LineSpan;

pub(crate) const FORMAT: Spec<Date> = Spec {
    command: |argv| argv.first() == Some(&"date"),
    // `=` `#` `*` `>` open a stamp decorated as a script's heading.
    starts: |b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'=' | b'#' | b'*' | b'>'),
    detect,
    parse,
    summary,
    attach_command: None,
    labels: &["date", "time"],
};

const WEEKDAYS: &[&str] = &["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// Reads `date` output: the first readable line is the stamp.
#[must_use]
pub fn parse(lines: &[Line<'_>]) -> Parsed<Date> {
    let mut out = Date::default();
    let mut unread = Unread::default();
    for line in lines.iter().filter(|l| !l.is_blank()) {
        if out.stamp.is_some() {
            unread.line(line, "a second time stamp in one `date` output");
            continue;
        }
        let text = stamp_text(line.text());
        match parse_stamp(text, line.span())
            .or_else(|| epoch_seconds(text, line.span()))
            .or_else(|| watch_stamp(text, line.span()))
        {
            Some(stamp) => out.stamp = Some(stamp),
            None => unread.line(line, "not a date and time"),
        }
    }
    Parsed {
        value: out,
        warnings: unread.finish(),
    }
}

/// Every stamp of one kind starts a new section, so two `date` lines become
/// two time points.
fn detect(lines: &[Line<'_>]) -> Option<Block> {
    let first = lines.first()?;
    if !has_clock(first.text()) {
        return None;
    }
    parse_stamp(stamp_text(first.text()), first.span())
        .or_else(|| watch_stamp(first.text(), first.span()))
        .map(|_| Block::of_lines("date", 1))
}

/// The text of a stamp line: a stamp decorated as a script's heading
/// (`echo "==== $(date) ===="` between two snapshots) without its
/// decoration ([`decorated_title`]) and the fields before it, otherwise
/// the trimmed line.
///
/// [`decorated_title`]: crate::parse::text::decorated_title
fn stamp_text(line: &str) -> &str {
    match crate::parse::text::decorated_title(line) {
        // `===== node01 | before | 2026-08-13T07:53:30Z =====`: a host
        // heading's last field.
        Some(title) => title.rsplit(" | ").next().unwrap_or(title),
        None => line.trim(),
    }
}

/// Whether a decorated heading gives a time (`==== $(date) ====`, or a
/// host heading's last field: `===== node01 | before |
/// 2026-08-13T07:53:30Z =====`): such a line is read as `date` output, the
/// time of the snapshot under it.
pub(crate) fn heading_has_stamp(line: &str) -> bool {
    crate::parse::text::decorated_title(line).is_some()
        && has_clock(line)
        && parse_stamp(stamp_text(line), LineSpan::line(1)).is_some()
}

/// The time in the header `watch` prints above each screen of output
/// (`Every 60.0s: perfquery -x      gpu07: Tue Dec  1 10:00:00 2026`,
/// with or without the host): two screens of a watched command pasted one
/// after the other are two snapshots with their times.
fn watch_stamp(text: &str, span: LineSpan) -> Option<DateStamp> {
    let rest = text.trim().strip_prefix("Every ")?;
    let (interval, _) = rest.split_once("s: ")?;
    interval.parse::<f64>().ok()?;
    // The time is the header's last five words (`%a %b %e %H:%M:%S %Y`).
    let words: Vec<&str> = rest.split_whitespace().collect();
    let time = words.get(words.len().checked_sub(5)?..)?.join(" ");
    parse_stamp(&time, span)
}

/// Whether `text` is the header `watch` prints above each screen, with
/// its time ([`watch_stamp`]).
pub(crate) fn is_watch_header(text: &str) -> bool {
    text.trim_start().starts_with("Every ") && watch_stamp(text, LineSpan::line(1)).is_some()
}

/// Whether `text` holds `D:DD:DD`, the clock every form [`parse_stamp`]
/// reads has: a byte scan that spares the full reading of the many lines
/// detection asks about that are not dates.
fn has_clock(text: &str) -> bool {
    let b = text.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    b.iter().enumerate().any(|(i, &c)| {
        c == b':'
            && i > 0
            && digit(i - 1)
            && digit(i + 1)
            && digit(i + 2)
            && b.get(i + 3) == Some(&b':')
            && digit(i + 4)
            && digit(i + 5)
    })
}

/// Reads a textual date and time (every form in the module doc except `+%s`).
#[must_use]
pub fn parse_stamp(text: &str, span: LineSpan) -> Option<DateStamp> {
    let t = text.trim();
    let (wall_clock_seconds, utc_offset_seconds, zone) = iso(t)
        .or_else(|| words(t, None))
        .or_else(|| weekday_iso(t))?;
    Some(DateStamp {
        text: t.to_owned(),
        wall_clock_seconds,
        utc_offset_seconds,
        zone,
        span,
    })
}

/// Whether the command line runs `date +%s` (or `+%s.%N`) in one of its
/// steps (`date +%s; perfquery -x`): its bare numbers are then times.
#[must_use]
pub(crate) fn command_prints_epoch(command: &str) -> bool {
    crate::parse::text::command_steps(command).any(|step| {
        let mut words = step.split_whitespace();
        words.next() == Some("date")
            && words.any(|w| w.trim_matches(['"', '\'']).starts_with("+%s"))
    })
}

/// A `date +%s` line of such a command: a bare number of seconds between
/// 2000 and 2100 (a counter value or an index is no time).
#[must_use]
pub(crate) fn is_epoch_line(text: &str) -> bool {
    let t = text.trim();
    let int = t.split_once('.').map_or(t, |(int, _)| int);
    (9..=10).contains(&int.len())
        && epoch_seconds(t, LineSpan::line(1))
            .is_some_and(|s| (946_684_800.0..4_102_444_800.0).contains(&s.wall_clock_seconds))
}

/// `date +%s` or `+%s.%N`: seconds since the epoch, UTC by definition.
fn epoch_seconds(t: &str, span: LineSpan) -> Option<DateStamp> {
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    if int.is_empty()
        || int.len() > 12
        || !all_digits(int)
        || !frac.chars().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let seconds: f64 = t.parse().ok()?;
    Some(DateStamp {
        text: t.to_owned(),
        wall_clock_seconds: seconds,
        utc_offset_seconds: Some(0),
        zone: Some("UTC".to_owned()),
        span,
    })
}

type Reading = (f64, Option<i32>, Option<String>);

/// `2026-11-30T00:53:23+00:00` and its relatives.
fn iso(t: &str) -> Option<Reading> {
    let date = t.get(..10)?;
    let sep = t.get(10..11)?;
    if sep != "T" && sep != " " {
        return None;
    }
    let mut parts = date.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (year, month, day) = (number(y)?, number(m)?, number(d)?);
    let rest = t.get(11..)?;
    let zone_at = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
    let (clock, zone) = rest.split_at(zone_at);
    let clock_seconds = clock_seconds(clock.trim())?;
    let zone = zone.trim();
    let offset = if zone.is_empty() {
        None
    } else {
        Some(numeric_offset(zone)?)
    };
    let wall = civil_seconds(year, month, day)? + clock_seconds;
    Some((wall, offset, (!zone.is_empty()).then(|| zone.to_owned())))
}

/// `Mon 2026-12-07 10:00:01 UTC`: journalctl -o short-full's time
/// (systemd's `format_timestamp_style`, `TIMESTAMP_PRETTY`: `%a %Y-%m-%d
/// %H:%M:%S` and the zone's name). A zone other than UTC/GMT is kept by
/// name, its offset unknown.
fn weekday_iso(t: &str) -> Option<Reading> {
    let (weekday, rest) = t.split_once(' ')?;
    if !WEEKDAYS.iter().any(|w| weekday.eq_ignore_ascii_case(w)) {
        return None;
    }
    let (date_clock, zone) = match rest.rsplit_once(' ') {
        Some((head, zone))
            if head.contains(' ') && zone.bytes().all(|b| b.is_ascii_alphabetic()) =>
        {
            (head, Some(zone))
        }
        _ => (rest, None),
    };
    let (wall, offset, numeric) = iso(date_clock)?;
    match zone {
        None => Some((wall, offset, numeric)),
        Some(_) if numeric.is_some() => None,
        Some(name) => {
            let utc = ["utc", "gmt"].iter().any(|z| name.eq_ignore_ascii_case(z));
            Some((wall, utc.then_some(0), Some(name.to_owned())))
        }
    }
}

/// Seconds since 1970 of a time printed without its year (syslog's `Dec
/// 7 10:01:02`, journalctl's `Dec 07 10:01:02`), read as in `year`: the
/// caller knows only that the lines of one log follow each other, and
/// orders them (a log running past New Year counts the next year).
#[must_use]
pub(crate) fn yearless_seconds(text: &str, year: u32) -> Option<f64> {
    words(text.trim(), Some(year)).map(|(seconds, _, _)| seconds)
}

/// Word forms: weekday, month name, day, year, clock, optional AM/PM and zone, in any of
/// the orders coreutils' locales print them. `default_year` reads a form
/// without a year (else it is no date).
fn words(t: &str, default_year: Option<u32>) -> Option<Reading> {
    let mut month = None;
    let mut day = None;
    let mut year = None;
    let mut clock = None;
    let mut pm = None;
    let mut zone: Option<(Option<i32>, &str)> = None;
    // Compared without a lower-case copy: this runs on many lines that are
    // not dates, and fails on their first or second word.
    let starts_with_any_case = |word: &str, prefix: &str| {
        word.as_bytes()
            .get(..prefix.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(prefix.as_bytes()))
    };
    for (i, raw) in t.split_whitespace().enumerate() {
        let word = raw.trim_end_matches(',');
        if i == 0 && WEEKDAYS.iter().any(|w| starts_with_any_case(word, w)) {
            continue;
        }
        if let Some(m) = month_number(word) {
            if month.replace(m).is_some() {
                return None;
            }
        } else if word.contains(':') {
            if clock.replace(clock_seconds(word)?).is_some() {
                return None;
            }
        } else if word.eq_ignore_ascii_case("am") || word.eq_ignore_ascii_case("pm") {
            pm = Some(word.eq_ignore_ascii_case("pm"));
        } else if all_digits(word) && word.len() == 4 {
            year = Some(number(word)?);
        } else if all_digits(word) && word.len() <= 2 && day.is_none() {
            day = Some(number(word)?);
        } else if zone.is_none() && (word.starts_with('+') || word.starts_with('-')) {
            zone = Some((Some(numeric_offset(word)?), word));
        } else if zone.is_none() && word.len() <= 6 && word.chars().all(|c| c.is_ascii_alphabetic())
        {
            let offset = ["utc", "gmt", "z"]
                .iter()
                .any(|z| word.eq_ignore_ascii_case(z))
                .then_some(0);
            zone = Some((offset, word));
        } else {
            return None;
        }
    }
    let mut clock = clock?;
    if let Some(pm) = pm {
        if !(3600.0..13.0 * 3600.0).contains(&clock) {
            return None;
        }
        clock %= 12.0 * 3600.0;
        if pm {
            clock += 12.0 * 3600.0;
        }
    }
    let wall = civil_seconds(year.or(default_year)?, month?, day?)? + clock;
    let (offset, zone) = match zone {
        Some((offset, name)) => (offset, Some(name.to_owned())),
        None => (None, None),
    };
    Some((wall, offset, zone))
}

/// `00:53:23`, `00:53:23.123`, `00:53:23,123456789` → seconds into the day.
fn clock_seconds(text: &str) -> Option<f64> {
    let mut parts = text.split(':');
    let (h, m, s) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || h.is_empty() || h.len() > 2 || m.len() != 2 {
        return None;
    }
    let (whole, fraction) = s.split_once(['.', ',']).unwrap_or((s, ""));
    if whole.len() != 2 || !all_digits(fraction) && !fraction.is_empty() {
        return None;
    }
    let (h, m, whole) = (number(h)?, number(m)?, number(whole)?);
    if h > 23 || m > 59 || whole > 60 {
        return None;
    }
    let fraction: f64 = if fraction.is_empty() {
        0.0
    } else {
        format!("0.{fraction}").parse().ok()?
    };
    Some(f64::from(h * 3600 + m * 60 + whole) + fraction)
}

/// `+0000`, `-05:00`, `+05`, `Z` → seconds east of UTC.
fn numeric_offset(text: &str) -> Option<i32> {
    if text.eq_ignore_ascii_case("z") {
        return Some(0);
    }
    let sign = match text.get(..1)? {
        "+" => 1,
        "-" => -1,
        _ => return None,
    };
    let digits: String = text.get(1..)?.chars().filter(|c| *c != ':').collect();
    if !all_digits(&digits) || !(digits.len() == 2 || digits.len() == 4) {
        return None;
    }
    let hours = i32::try_from(number(digits.get(..2)?)?).ok()?;
    let minutes = i32::try_from(number(digits.get(2..).unwrap_or("0"))?).ok()?;
    if hours > 14 || minutes > 59 {
        return None;
    }
    Some(sign * (hours * 3600 + minutes * 60))
}

/// Seconds from 1970-01-01 to the start of the given day, or `None` for an
/// impossible date (years 1 to 9999, as coreutils prints them).
fn civil_seconds(year: u32, month: u32, day: u32) -> Option<f64> {
    if !(1..=9999).contains(&year) {
        return None;
    }
    let seconds = civil_to_unix(i64::from(year), month, day, 0, 0, 0)?;
    #[allow(clippy::cast_precision_loss)] // |seconds| < 4e11: exact in f64
    Some(seconds as f64)
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_digit())
}

fn number(s: &str) -> Option<u32> {
    if all_digits(s) {
        s.parse().ok()
    } else {
        None
    }
}

/// One-line description.
#[must_use]
pub fn summary(date: &Date) -> String {
    match &date.stamp {
        Some(s) => match s.timestamp_unix() {
            Some(t) => format!("{} (unix {t})", s.text),
            None => format!("{} (zone not resolved; intervals only)", s.text),
        },
        None => "no time stamp".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_headers_give_their_time() {
        let span = LineSpan::line(1);
        let with_host = watch_stamp(
            "Every 60.0s: perfquery -x                  gpu07: Tue Dec  1 10:00:00 2026",
            span,
        );
        let without = watch_stamp("Every 2.0s: ibstat      Tue Dec  1 10:01:00 2026", span);
        let (Some(a), Some(b)) = (with_host, without) else {
            unreachable!("both headers read")
        };
        assert_eq!(b.wall_clock_seconds - a.wall_clock_seconds, 60.0);
        assert_eq!(a.utc_offset_seconds, None);
        assert!(watch_stamp("Every day: check the fabric", span).is_none());
        assert!(watch_stamp("Every 60.0s: perfquery -x", span).is_none());
    }

    #[test]
    fn epoch_lines_belong_to_a_date_plus_s_step() {
        assert!(command_prints_epoch("date +%s; perfquery -x"));
        assert!(command_prints_epoch("perfquery -x && date '+%s.%N'"));
        assert!(!command_prints_epoch("date; perfquery -x"));
        assert!(!command_prints_epoch("perfquery -x +%s"));
        assert!(is_epoch_line("1764583964"));
        assert!(is_epoch_line(" 1764583964.123456789 "));
        assert!(!is_epoch_line("65535"));
        assert!(!is_epoch_line("99999999999"));
        assert!(!is_epoch_line("1764583964 bytes"));
    }
    use crate::parse::lines_of;

    /// `date -d @1796000003 -u` printed `Mon Nov 30 00:53:23 UTC 2026`.
    const T: f64 = 1_796_000_003.0;

    fn unix(text: &str) -> Option<f64> {
        parse_stamp(text, LineSpan::line(1)).and_then(|s| s.timestamp_unix())
    }

    #[test]
    fn reads_every_coreutils_form_of_the_same_instant() {
        assert_eq!(unix("Mon Nov 30 00:53:23 UTC 2026"), Some(T));
        assert_eq!(unix("Mon, 30 Nov 2026 00:53:23 +0000"), Some(T));
        assert_eq!(unix("2026-11-30T00:53:23+00:00"), Some(T));
        assert_eq!(unix("2026-11-30T01:53:23+01:00"), Some(T));
        assert_eq!(unix("2026-11-29 19:53:23-05:00"), Some(T));
        assert_eq!(unix("2026-11-30T00:53:23Z"), Some(T));
        assert_eq!(unix("Mon 30 Nov 2026 12:53:23 AM UTC"), Some(T));
        assert_eq!(unix("Sun Nov 29 19:53:23 -0500 2026"), Some(T));
        assert_eq!(unix("2026-11-30T00:53:23,500000000+00:00"), Some(T + 0.5));
    }

    #[test]
    fn every_readable_stamp_has_a_clock() {
        for text in [
            "Mon Nov 30 00:53:23 UTC 2026",
            "Mon, 30 Nov 2026 00:53:23 +0000",
            "2026-11-30T00:53:23,500000000+00:00",
            "Mon 30 Nov 2026 9:53:23 AM UTC",
            "  Thu Jan  1 0:00:00 1970",
        ] {
            assert!(parse_stamp(text, LineSpan::line(1)).is_some(), "{text}");
            assert!(has_clock(text), "{text}");
        }
        for text in ["Link 0: Replay Errors: 0", "12:3:45", "1:23:4", ":12:34"] {
            assert!(!has_clock(text), "{text}");
        }
    }

    #[test]
    fn epoch_anchors_are_right() {
        assert_eq!(unix("Thu Jan  1 00:00:00 UTC 1970"), Some(0.0));
        assert_eq!(unix("2000-03-01T00:00:00Z"), Some(951_868_800.0));
        assert_eq!(unix("2024-02-29T12:00:00Z"), Some(1_709_208_000.0));
        assert_eq!(unix("2023-02-29T12:00:00Z"), None);
    }

    #[test]
    fn zone_names_we_cannot_resolve_keep_the_wall_clock() {
        let s = parse_stamp("Mon Nov 30 01:53:23 CET 2026", LineSpan::line(1)).unwrap();
        assert_eq!(s.timestamp_unix(), None);
        assert_eq!(s.wall_clock_seconds, T + 3600.0);
        let nvsmi = parse_stamp("Mon Nov 30 00:53:23 2026", LineSpan::line(1)).unwrap();
        assert_eq!(nvsmi.wall_clock_seconds, T);
        assert_eq!(nvsmi.zone, None);
    }

    #[test]
    fn refuses_things_that_are_not_dates() {
        for text in [
            "Port 1: Active",
            "12:30",
            "Mon Nov 30 2026",
            "Link 0: 26.562 GB/s",
            "2026-13-01T00:00:00Z",
            "Mon Nov 30 25:00:00 UTC 2026",
        ] {
            assert!(parse_stamp(text, LineSpan::line(1)).is_none(), "{text}");
        }
    }

    #[test]
    fn reads_journalctl_short_full_times() {
        // `journalctl -o short-full`: weekday, ISO date, clock, zone name.
        let utc = parse_stamp("Mon 2026-11-30 00:53:23 UTC", LineSpan::line(1)).unwrap();
        assert_eq!(utc.timestamp_unix(), Some(T));
        let cet = parse_stamp("Mon 2026-11-30 00:53:23 CET", LineSpan::line(1)).unwrap();
        assert_eq!(cet.wall_clock_seconds, utc.wall_clock_seconds);
        assert_eq!(
            (cet.utc_offset_seconds, cet.zone.as_deref()),
            (None, Some("CET"))
        );
        let numeric = parse_stamp("Mon 2026-11-30 01:53:23 +0100", LineSpan::line(1)).unwrap();
        assert_eq!(numeric.timestamp_unix(), Some(T));
        for text in [
            "Mon 2026-11-30",
            "Mon 2026-11-30 00:53:23 UTC x",
            "Any 2026-11-30 00:53:23",
        ] {
            assert!(parse_stamp(text, LineSpan::line(1)).is_none(), "{text}");
        }
    }

    #[test]
    fn a_bare_number_is_read_only_through_the_date_parser() {
        let parsed = parse(&lines_of("1796000003\n"));
        assert_eq!(parsed.value.stamp.unwrap().timestamp_unix(), Some(T));
        assert!(detect(&lines_of("1796000003")).is_none());
        let bad = parse(&lines_of("tomorrow\n"));
        assert!(bad.value.stamp.is_none());
        assert_eq!(bad.warnings.len(), 1);
    }

    #[test]
    fn two_dates_in_a_paste_are_two_sections() {
        let doc = crate::input::read(
            "$ date\nMon Nov 30 00:53:23 UTC 2026\n$ date\nMon Nov 30 00:53:25 UTC 2026\n",
            &crate::input::ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(doc.sections.len(), 2);
        assert!(doc
            .sections
            .iter()
            .all(|s| s.kind == crate::parse::Kind::Date));
    }
}
