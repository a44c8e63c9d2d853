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

#[cfg(test)]
mod tests {
    use super::*;

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
