//! Time as the domain sees it: milliseconds since the Unix epoch (UTC), rendered as ISO 8601.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// Milliseconds since the epoch.
pub type Millis = i64;

/// ISO 8601 / RFC 3339 text for a timestamp (UTC, millisecond precision).
pub fn iso8601(ms: Millis) -> String {
    let nanos = i128::from(ms) * 1_000_000;
    OffsetDateTime::from_unix_timestamp_nanos(nanos)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
}

/// Parses an RFC 3339 timestamp into milliseconds.
pub fn parse_iso8601(s: &str) -> Option<Millis> {
    let t = OffsetDateTime::parse(s, &Rfc3339).ok()?;
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let ms = 1_795_000_000_123;
        assert_eq!(parse_iso8601(&iso8601(ms)), Some(ms));
        assert_eq!(parse_iso8601("2026-11-22T00:00:00Z"), Some(1_795_305_600_000));
        assert_eq!(parse_iso8601("yesterday"), None);
    }
}
