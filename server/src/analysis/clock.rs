//! Local 12-hour clock labels for finish times (seed 002: `07:28 am`; case 16: UTC timestamps
//! shown in the user's zone).

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// Resolves a configured zone: `None` → the system zone (UTC when it cannot be determined),
/// `"UTC"` (any case) → UTC, an IANA name (`Asia/Shanghai`) → that zone. An unknown or invalid
/// name falls back to UTC, so a bad setting gives a stable, visibly-UTC label instead of an
/// error.
pub fn time_zone(tz: Option<&str>) -> TimeZone {
    match tz.map(str::trim) {
        None | Some("") => TimeZone::try_system().unwrap_or(TimeZone::UTC),
        Some(name) if name.eq_ignore_ascii_case("utc") => TimeZone::UTC,
        Some(name) => TimeZone::get(name).unwrap_or(TimeZone::UTC),
    }
}

/// The 12-hour local clock label of an epoch-millisecond instant: zero-padded hour, minutes,
/// lowercase `am`/`pm` (`07:28 am`, `12:05 pm`). `tz` as in [`time_zone`]. `None` only when
/// `ms` is outside the range jiff can represent.
pub fn clock_label(ms: i64, tz: Option<&str>) -> Option<String> {
    clock_label_in(ms, &time_zone(tz))
}

/// [`clock_label`] with an already-resolved zone (analysis resolves the zone once per run).
pub fn clock_label_in(ms: i64, tz: &TimeZone) -> Option<String> {
    let ts = Timestamp::from_millisecond(ms).ok()?;
    Some(ts.to_zoned(tz.clone()).strftime("%I:%M %P").to_string())
}

/// The local date and time of an instant with seconds, for a record's hover: `12 May 2026,
/// 11:48:05 am` (the 12-hour clock of the hints, issue 11 item 4). `tz` as in [`time_zone`].
pub fn date_time_label(ms: i64, tz: Option<&str>) -> Option<String> {
    let ts = Timestamp::from_millisecond(ms).ok()?;
    Some(
        ts.to_zoned(time_zone(tz))
            .strftime("%-d %b %Y, %I:%M:%S %P")
            .to_string(),
    )
}

/// The local time span of a session, from its first to its last record: `12 May 2026, 11:47 am
/// – 12:02 pm` (one day; `12 May 2026, 11:47 am` when both ends show the same minute), `12 May 2026, 11:47 pm – 13 May, 12:10 am` (two days of one year),
/// `31 Dec 2025, 11:47 pm – 1 Jan 2026, 12:10 am`. `None` when an instant is out of range.
pub fn span_label_in(start_ms: i64, end_ms: i64, tz: &TimeZone) -> Option<String> {
    let a = Timestamp::from_millisecond(start_ms)
        .ok()?
        .to_zoned(tz.clone());
    let b = Timestamp::from_millisecond(end_ms)
        .ok()?
        .to_zoned(tz.clone());
    let day = |z: &jiff::Zoned| z.strftime("%-d %b %Y").to_string();
    let clock = |z: &jiff::Zoned| z.strftime("%I:%M %P").to_string();
    if a.date() == b.date() && clock(&a) == clock(&b) {
        return Some(format!("{}, {}", day(&a), clock(&a)));
    }
    let end = if a.date() == b.date() {
        clock(&b)
    } else if a.year() == b.year() {
        format!("{}, {}", b.strftime("%-d %b"), clock(&b))
    } else {
        format!("{}, {}", day(&b), clock(&b))
    };
    Some(format!("{}, {} – {end}", day(&a), clock(&a)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_times() {
        let ms = 1_772_410_805_000; // 2026-03-02T00:20:05Z
        assert_eq!(
            date_time_label(ms, Some("UTC")).as_deref(),
            Some("2 Mar 2026, 12:20:05 am")
        );
        assert_eq!(
            date_time_label(ms, Some("Asia/Shanghai")).as_deref(),
            Some("2 Mar 2026, 08:20:05 am")
        );
    }

    #[test]
    fn spans() {
        let ms = 1_772_410_800_000; // 2026-03-02T00:20:00Z
        let utc = TimeZone::UTC;
        assert_eq!(
            span_label_in(ms, ms + 14 * 60_000, &utc).as_deref(),
            Some("2 Mar 2026, 12:20 am – 12:34 am")
        );
        assert_eq!(
            span_label_in(ms, ms + 36_000, &utc).as_deref(),
            Some("2 Mar 2026, 12:20 am")
        );
        let ny = time_zone(Some("America/New_York"));
        assert_eq!(
            span_label_in(ms - 3_600_000, ms + 3_600_000, &ny).as_deref(),
            Some("1 Mar 2026, 06:20 pm – 08:20 pm")
        );
        assert_eq!(
            span_label_in(ms - 3_600_000, ms + 3_600_000, &utc).as_deref(),
            Some("1 Mar 2026, 11:20 pm – 2 Mar, 01:20 am")
        );
        let new_year = 1_767_225_000_000; // 2025-12-31T23:50:00Z
        assert_eq!(
            span_label_in(new_year, new_year + 1_200_000, &utc).as_deref(),
            Some("31 Dec 2025, 11:50 pm – 1 Jan 2026, 12:10 am")
        );
    }

    #[test]
    fn labels_in_zones() {
        // 2026-03-02T00:20:00Z (case 16 end of turn).
        let ms = 1_772_410_800_000;
        assert_eq!(clock_label(ms, Some("UTC")).as_deref(), Some("12:20 am"));
        assert_eq!(
            clock_label(ms, Some("Asia/Shanghai")).as_deref(),
            Some("08:20 am")
        );
        assert_eq!(
            clock_label(ms, Some("America/New_York")).as_deref(),
            Some("07:20 pm")
        );
        assert_eq!(
            clock_label(ms, Some("Not/AZone")).as_deref(),
            Some("12:20 am")
        );
        assert_eq!(clock_label(i64::MAX, Some("UTC")), None);
    }
}
