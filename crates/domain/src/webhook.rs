//! Webhooks (docs/api.md, "Webhooks"), per the Standard Webhooks specification: the events an
//! endpoint can ask for, which job change makes which event, the addresses deliveries may go
//! to, the `whsec_` secrets, and the retry schedule.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use base64::Engine;

use crate::job::{JobStatus, JobType};
use crate::time_util::Millis;

/// What happened, as the `type` of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    JobAwaitingApproval,
    JobCompleted,
    JobFailed,
    JobCancelled,
    AttachmentProcessed,
    AttachmentFailed,
    /// 80 % or 100 % of a month's operations used.
    UsageThreshold,
}

impl EventType {
    pub const ALL: [EventType; 7] = [
        EventType::JobAwaitingApproval,
        EventType::JobCompleted,
        EventType::JobFailed,
        EventType::JobCancelled,
        EventType::AttachmentProcessed,
        EventType::AttachmentFailed,
        EventType::UsageThreshold,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::JobAwaitingApproval => "job.awaiting_approval",
            EventType::JobCompleted => "job.completed",
            EventType::JobFailed => "job.failed",
            EventType::JobCancelled => "job.cancelled",
            EventType::AttachmentProcessed => "attachment.processed",
            EventType::AttachmentFailed => "attachment.failed",
            EventType::UsageThreshold => "usage.threshold",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == s)
    }

    /// The event a job's move to `status` makes, if any: a chat job's review and ends, an
    /// attachment's processing ends. Internal jobs (the e-mailed export) make none.
    pub fn of_job(job_type: JobType, status: JobStatus) -> Option<Self> {
        match (job_type, status) {
            (JobType::Chat, JobStatus::AwaitingApproval) => Some(EventType::JobAwaitingApproval),
            (JobType::Chat, JobStatus::Completed) => Some(EventType::JobCompleted),
            (JobType::Chat, JobStatus::Failed) => Some(EventType::JobFailed),
            (JobType::Chat, JobStatus::Cancelled) => Some(EventType::JobCancelled),
            (JobType::AttachmentProcessing, JobStatus::Completed) => Some(EventType::AttachmentProcessed),
            (JobType::AttachmentProcessing, JobStatus::Failed | JobStatus::Cancelled) => {
                Some(EventType::AttachmentFailed)
            }
            _ => None,
        }
    }
}

/// The most endpoints one owner may register.
pub const MAX_ENDPOINTS: usize = 20;
/// The longest endpoint URL accepted.
pub const MAX_URL_CHARS: usize = 2048;

/// Why an endpoint URL is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlProblem {
    #[error("must be an absolute http:// or https:// URL")]
    Scheme,
    #[error("must name a host")]
    NoHost,
    #[error("must be at most 2048 characters")]
    TooLong,
    #[error("must not carry a user name or password")]
    Credentials,
    #[error("names a loopback, private or link-local address, which this server does not deliver to")]
    Private,
}

/// An endpoint URL's parts that matter here: its scheme and host (a name or a literal address).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointUrl {
    pub https: bool,
    pub host: String,
}

/// Checks an endpoint URL: `http`/`https`, a host, no credentials, and — unless `allow_private`
/// — no literal private address. A host name is checked again at each delivery, against the
/// addresses it resolves to then ([`ip_is_public`]).
pub fn check_url(url: &str, allow_private: bool) -> Result<EndpointUrl, UrlProblem> {
    if url.chars().count() > MAX_URL_CHARS {
        return Err(UrlProblem::TooLong);
    }
    let lower = url.to_ascii_lowercase();
    let (https, rest) = if let Some(rest) = lower.strip_prefix("https://") {
        (true, rest)
    } else if let Some(rest) = lower.strip_prefix("http://") {
        (false, rest)
    } else {
        return Err(UrlProblem::Scheme);
    };
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(UrlProblem::Scheme);
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(UrlProblem::Credentials);
    }
    let host = if let Some(bracketed) = authority.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or_default()
    } else {
        authority.split(':').next().unwrap_or_default()
    };
    if host.is_empty() {
        return Err(UrlProblem::NoHost);
    }
    if !allow_private {
        if let Ok(ip) = host.parse::<IpAddr>() {
            if !ip_is_public(ip) {
                return Err(UrlProblem::Private);
            }
        }
        if host == "localhost" || host.ends_with(".localhost") {
            return Err(UrlProblem::Private);
        }
    }
    Ok(EndpointUrl { https, host: host.to_owned() })
}

/// Whether a delivery may go to `ip` without the operator's leave: not loopback, private,
/// link-local, unspecified, shared (100.64/10), multicast or documentation space, nor an
/// IPv6 address that maps or embeds one of those.
pub fn ip_is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4_is_public(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return v4_is_public(v4);
            }
            v6_is_public(v6)
        }
    }
}

fn v4_is_public(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0)
        || (a == 198 && (18..20).contains(&b))
        || a >= 240)
}

fn v6_is_public(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        // fc00::/7 unique local, fe80::/10 link-local, 2001:db8::/32 documentation.
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || (first == 0x2001 && ip.segments()[1] == 0x0db8)
        // 64:ff9b::/96 NAT64 and ::/96 IPv4-compatible carry an IPv4 address.
        || (first == 0x0064 && ip.segments()[1] == 0xff9b)
        || ip.segments()[..6].iter().all(|s| *s == 0))
}

/// The marker of an endpoint's signing secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// A signing secret from 32 random bytes: `whsec_` + their base64.
pub fn secret_from(bytes: &[u8; 32]) -> String {
    format!("{SECRET_PREFIX}{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// The key bytes of a `whsec_` secret (what the HMAC is keyed with); `None` when malformed.
pub fn secret_key(secret: &str) -> Option<Vec<u8>> {
    let encoded = secret.strip_prefix(SECRET_PREFIX)?;
    base64::engine::general_purpose::STANDARD.decode(encoded).ok().filter(|k| !k.is_empty())
}

/// How long the secret before a rotation still signs.
pub const ROTATION_OVERLAP_MS: Millis = 24 * 60 * 60 * 1000;

/// When deliveries are tried again, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetrySchedule {
    /// The wait after the first failed attempt; each later wait is six times the one before,
    /// up to [`RetrySchedule::longest`].
    pub first: Millis,
    pub longest: Millis,
    /// A message not delivered this long after it was made is given up.
    pub give_up_after: Millis,
}

impl Default for RetrySchedule {
    /// 5 s, 30 s, 3 min, 18 min, 1.8 h, then every 10 h, for 3 days.
    fn default() -> Self {
        Self { first: 5_000, longest: 10 * 60 * 60 * 1000, give_up_after: 3 * 24 * 60 * 60 * 1000 }
    }
}

impl RetrySchedule {
    /// When the message made at `created_at` is tried next after its `attempt`-th attempt
    /// (1-based) failed at `now`; `jitter` in `0.0..1.0` spreads the wait by up to ±20 %.
    /// `None`: give up.
    pub fn next_attempt(&self, created_at: Millis, attempt: u32, now: Millis, jitter: f64) -> Option<Millis> {
        let mut wait = self.first.max(1);
        for _ in 1..attempt {
            wait = wait.saturating_mul(6).min(self.longest);
        }
        let spread = (wait as f64 * 0.4 * (jitter.clamp(0.0, 1.0) - 0.5)) as Millis;
        let at = now.saturating_add(wait + spread);
        (at <= created_at.saturating_add(self.give_up_after)).then_some(at)
    }
}

/// The parts of `usage.threshold`: the percentages of a month's operations that make it.
pub const USAGE_THRESHOLDS: [u32; 2] = [80, 100];

/// The threshold that `used` crosses, coming from `before`, of a month's `limit`: the highest
/// of [`USAGE_THRESHOLDS`] reached now and not before.
pub fn threshold_crossed(before: i64, used: i64, limit: i64) -> Option<u32> {
    if limit <= 0 {
        return None;
    }
    USAGE_THRESHOLDS.into_iter().rev().find(|pct| {
        let mark = (limit * i64::from(*pct) + 99) / 100;
        before < mark && used >= mark
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_round_trip() {
        for e in EventType::ALL {
            assert_eq!(EventType::parse(e.as_str()), Some(e));
        }
        assert_eq!(EventType::parse("job.started"), None);
    }

    #[test]
    fn jobs_make_events_by_type_and_status() {
        assert_eq!(EventType::of_job(JobType::Chat, JobStatus::Completed), Some(EventType::JobCompleted));
        assert_eq!(EventType::of_job(JobType::Chat, JobStatus::InProgress), None);
        assert_eq!(
            EventType::of_job(JobType::AttachmentProcessing, JobStatus::Failed),
            Some(EventType::AttachmentFailed)
        );
        assert_eq!(EventType::of_job(JobType::EmailedExport, JobStatus::Completed), None);
    }

    #[test]
    fn urls_are_checked() {
        assert_eq!(check_url("https://hooks.example.com/in", false).unwrap().host, "hooks.example.com");
        assert_eq!(check_url("ftp://x", false), Err(UrlProblem::Scheme));
        assert_eq!(check_url("https://", false), Err(UrlProblem::NoHost));
        assert_eq!(check_url("https://u:p@example.com/", false), Err(UrlProblem::Credentials));
        for private in [
            "http://127.0.0.1:9/x",
            "http://10.1.2.3/",
            "http://[::1]:80/",
            "http://169.254.169.254/",
            "http://localhost/",
        ] {
            assert_eq!(check_url(private, false), Err(UrlProblem::Private), "{private}");
            assert!(check_url(private, true).is_ok(), "{private}");
        }
    }

    #[test]
    fn private_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.0.0.1",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "64:ff9b::a00:1",
        ] {
            assert!(!ip_is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:4700::1111", "8.8.8.8"] {
            assert!(ip_is_public(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn secrets_carry_their_key() {
        let secret = secret_from(&[7u8; 32]);
        assert!(secret.starts_with("whsec_"));
        assert_eq!(secret_key(&secret), Some(vec![7u8; 32]));
        assert_eq!(secret_key("whsec_"), None);
        assert_eq!(secret_key("nope"), None);
    }

    #[test]
    fn retries_back_off_then_give_up() {
        let s = RetrySchedule::default();
        assert_eq!(s.next_attempt(0, 1, 0, 0.5), Some(5_000));
        assert_eq!(s.next_attempt(0, 2, 0, 0.5), Some(30_000));
        assert_eq!(s.next_attempt(0, 20, 0, 0.5), Some(s.longest));
        let late = 3 * 24 * 60 * 60 * 1000 - 1000;
        assert_eq!(s.next_attempt(0, 9, late, 0.5), None);
        let low = s.next_attempt(0, 1, 0, 0.0).unwrap();
        let high = s.next_attempt(0, 1, 0, 0.999).unwrap();
        assert!((4_000..=6_000).contains(&low) && (4_000..=6_000).contains(&high) && low < high);
    }

    #[test]
    fn thresholds_fire_once_each() {
        assert_eq!(threshold_crossed(79, 80, 100), Some(80));
        assert_eq!(threshold_crossed(80, 81, 100), None);
        assert_eq!(threshold_crossed(99, 100, 100), Some(100));
        assert_eq!(threshold_crossed(50, 120, 100), Some(100));
        assert_eq!(threshold_crossed(0, 5, 0), None);
        assert_eq!(threshold_crossed(3, 4, 5), Some(80));
    }
}
