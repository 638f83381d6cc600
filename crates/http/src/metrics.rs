//! Prometheus metrics of the HTTP shell, kept in atomics and rendered as text on `/metrics`.

use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds (seconds) of the request-duration histogram buckets.
const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

#[derive(Default)]
pub struct Metrics {
    by_class: [AtomicU64; 5],
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
    in_flight: AtomicI64,
}

impl Metrics {
    pub fn started(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    pub fn finished(&self, status: u16, elapsed: Duration) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        self.by_class[class].fetch_add(1, Ordering::Relaxed);
        let secs = elapsed.as_secs_f64();
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            if secs <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// The Prometheus text exposition format (version 0.0.4).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# HELP redline_http_requests_total HTTP requests answered, by status class.");
        let _ = writeln!(out, "# TYPE redline_http_requests_total counter");
        for (i, counter) in self.by_class.iter().enumerate() {
            let _ = writeln!(
                out,
                "redline_http_requests_total{{status=\"{}xx\"}} {}",
                i + 1,
                counter.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(out, "# HELP redline_http_requests_in_flight HTTP requests being served.");
        let _ = writeln!(out, "# TYPE redline_http_requests_in_flight gauge");
        let _ = writeln!(out, "redline_http_requests_in_flight {}", self.in_flight.load(Ordering::Relaxed));
        let _ = writeln!(out, "# HELP redline_http_request_duration_seconds Time to answer an HTTP request.");
        let _ = writeln!(out, "# TYPE redline_http_request_duration_seconds histogram");
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            let _ = writeln!(
                out,
                "redline_http_request_duration_seconds_bucket{{le=\"{bound}\"}} {}",
                bucket.load(Ordering::Relaxed)
            );
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(out, "redline_http_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}");
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "redline_http_request_duration_seconds_sum {sum}");
        let _ = writeln!(out, "redline_http_request_duration_seconds_count {count}");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_renders() {
        let m = Metrics::default();
        m.started();
        m.finished(200, Duration::from_millis(3));
        m.started();
        m.finished(404, Duration::from_secs(20));
        let text = m.render();
        assert!(text.contains("redline_http_requests_total{status=\"2xx\"} 1"));
        assert!(text.contains("redline_http_requests_total{status=\"4xx\"} 1"));
        assert!(text.contains("redline_http_request_duration_seconds_bucket{le=\"0.005\"} 1"));
        assert!(text.contains("redline_http_request_duration_seconds_bucket{le=\"+Inf\"} 2"));
        assert!(text.contains("redline_http_requests_in_flight 0"));
    }
}
