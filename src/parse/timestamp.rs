//! Timestamps as nvidia-smi prints them, turned into seconds since the epoch.
//!
//! `nvidia-smi -q` prints C `asctime` text (`Mon Nov 30 00:10:31 2026`,
//! day padded with a space: `Tue Jan  9 …`) in the machine's local time zone
//! without naming it; `dmon -o DT` prints `20261130` and `00:10:31`. Neither
//! says the zone, so the seconds are computed as if the text were UTC: right
//! for the many hosts that run in UTC, and in every case right for
//! differences between two timestamps from the same host, which is what
//! rates need.

/// `Mon Nov 30 00:10:31 2026` → seconds since 1970-01-01 00:00:00 (as UTC).
#[must_use]
pub fn asctime_to_unix(text: &str) -> Option<i64> {
    let mut words = text.split_whitespace();
    let _weekday = words.next()?;
    let month = month_number(words.next()?)?;
    let day: u32 = words.next()?.parse().ok()?;
    let (h, m, s) = clock(words.next()?)?;
    let year: i64 = words.next()?.parse().ok()?;
    if words.next().is_some() {
        return None;
    }
    civil_to_unix(year, month, day, h, m, s)
}

/// `20261130` and `00:10:31` → seconds since the epoch (as UTC).
#[must_use]
pub fn date_time_to_unix(date: &str, time: &str) -> Option<i64> {
    if date.len() != 8 || !date.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let year: i64 = date.get(0..4)?.parse().ok()?;
    let month: u32 = date.get(4..6)?.parse().ok()?;
    let day: u32 = date.get(6..8)?.parse().ok()?;
    let (h, m, s) = clock(time)?;
    civil_to_unix(year, month, day, h, m, s)
}

/// `HH:MM:SS` → seconds of the day parts.
pub(crate) fn clock(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.split(':');
    let h: u32 = parts.next()?.parse().ok()?;
    let m: u32 = parts.next()?.parse().ok()?;
    let s: u32 = parts.next()?.parse().ok()?;
    if parts.next().is_some() || h > 23 || m > 59 || s > 60 {
        return None;
    }
    Some((h, m, s))
}

/// Month abbreviations as C's `asctime` and coreutils' `date` print them.
const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// `Nov`, `nov`, `November` → 11: a month's English name or its
/// three-letter abbreviation, in any case.
pub(crate) fn month_number(name: &str) -> Option<u32> {
    if name.len() < 3 || name.len() > 9 {
        return None;
    }
    let i = MONTHS.iter().position(|m| {
        name.as_bytes()
            .get(..m.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(m.as_bytes()))
    })?;
    u32::try_from(i + 1).ok()
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`), plus the time of day.
pub(crate) fn civil_to_unix(
    year: i64,
    month: u32,
    day: u32,
    h: u32,
    m: u32,
    s: u32,
) -> Option<i64> {
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(month) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + i64::from(h) * 3600 + i64::from(m) * 60 + i64::from(s))
}

fn days_in_month(year: i64, month: u32) -> u32 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asctime_and_dmon_dates_give_epoch_seconds() {
        // 2026-11-30T00:10:31Z, from `date -u -d 2026-11-30T00:10:31 +%s`.
        assert_eq!(
            asctime_to_unix("Mon Nov 30 00:10:31 2026"),
            Some(1_795_997_431)
        );
        assert_eq!(asctime_to_unix("Thu Jan  1 00:00:00 1970"), Some(0));
        assert_eq!(
            asctime_to_unix("Tue Feb 29 12:00:00 2000"),
            Some(951_825_600)
        );
        assert_eq!(asctime_to_unix("Wed Feb 29 12:00:00 2023"), None);
        assert_eq!(asctime_to_unix("N/A"), None);
        assert_eq!(
            date_time_to_unix("20261130", "00:10:31"),
            Some(1_795_997_431)
        );
        assert_eq!(date_time_to_unix("2026113", "00:10:31"), None);
    }
}
