//! Time as the library stores it: integer milliseconds since the Unix epoch (sortable, exact,
//! no time-zone text to parse), and the compact UTC stamp used to name a set-aside file.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Now, in milliseconds since the epoch (0 if the clock is before 1970).
pub(crate) fn now_ms() -> i64 {
    to_ms(SystemTime::now())
}

pub(crate) fn to_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

pub(crate) fn from_ms(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// `20261122T101500` (UTC) for a time, for file names: sortable and free of `:`.
pub(crate) fn compact_utc(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_stamps_known_instants() {
        assert_eq!(compact_utc(UNIX_EPOCH), "19700101T000000");
        // 2026-11-22 10:15:00 UTC
        let t = UNIX_EPOCH + Duration::from_mins(29_922_375);
        assert_eq!(compact_utc(t), "20261122T101500");
        // a leap day
        let t = UNIX_EPOCH + Duration::from_hours(264_384);
        assert_eq!(compact_utc(t), "20000229T000000");
    }

    #[test]
    fn millis_round_trip() {
        let ms = 1_795_342_500_123;
        assert_eq!(to_ms(from_ms(ms)), ms);
    }
}
