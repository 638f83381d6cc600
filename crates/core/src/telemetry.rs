//! What an operator graphs about the work behind the API: how long jobs take, how long the
//! model takes and how many tokens it uses. Kept in atomics (no I/O); the HTTP shell renders
//! them on `/metrics` in the Prometheus text format, next to the queue depth it reads from
//! the job store at each scrape (docs/deploy.md, "Metrics").

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redline_domain::job::{JobStatus, JobType};

/// A histogram of durations with fixed upper bounds, in seconds.
#[derive(Debug)]
pub struct Histogram {
    bounds: &'static [f64],
    buckets: Vec<AtomicU64>,
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Self {
        Self {
            bounds,
            buckets: bounds.iter().map(|_| AtomicU64::new(0)).collect(),
            count: AtomicU64::new(0),
            sum_micros: AtomicU64::new(0),
        }
    }

    pub fn observe(&self, d: Duration) {
        let secs = d.as_secs_f64();
        for (bound, bucket) in self.bounds.iter().zip(&self.buckets) {
            if secs <= *bound {
                bucket.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(u64::try_from(d.as_micros()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// The `_bucket`, `_sum` and `_count` lines of `name` with `labels` (`a="b",c="d"` or empty).
    pub fn render(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (bound, bucket) in self.bounds.iter().zip(&self.buckets) {
            let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {}", bucket.load(Ordering::Relaxed));
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {count}");
        let braces = if labels.is_empty() { String::new() } else { format!("{{{labels}}}") };
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum{braces} {sum}");
        let _ = writeln!(out, "{name}_count{braces} {count}");
    }
}

/// Seconds, from a quick turn to the approval timeout's scale.
const JOB_BOUNDS: &[f64] = &[0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 900.0, 1800.0];
const MODEL_BOUNDS: &[f64] = &[0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, 120.0];

const TYPES: [JobType; 3] = JobType::ALL;
const ENDS: [JobStatus; 3] = [JobStatus::Completed, JobStatus::Failed, JobStatus::Cancelled];

/// The job and model figures of one replica.
#[derive(Debug)]
pub struct Telemetry {
    /// Per type: one worker's run of a job (a claim to the run's end).
    runs: Vec<Histogram>,
    /// Per type and final status: a job's creation to its end, for jobs that ended in a run.
    jobs: Vec<Histogram>,
    model_calls: Histogram,
    model_failures: AtomicU64,
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
}

impl Default for Telemetry {
    fn default() -> Self {
        Self {
            runs: TYPES.iter().map(|_| Histogram::new(JOB_BOUNDS)).collect(),
            jobs: (0..TYPES.len() * ENDS.len()).map(|_| Histogram::new(JOB_BOUNDS)).collect(),
            model_calls: Histogram::new(MODEL_BOUNDS),
            model_failures: AtomicU64::new(0),
            prompt_tokens: AtomicU64::new(0),
            completion_tokens: AtomicU64::new(0),
        }
    }
}

fn type_index(t: JobType) -> usize {
    TYPES.iter().position(|x| *x == t).unwrap_or(0)
}

impl Telemetry {
    /// A worker finished running a job for now (it may wait for approval and run again).
    pub fn run_ended(&self, job_type: JobType, took: Duration) {
        self.runs[type_index(job_type)].observe(took);
    }

    /// A job reached a final status; `age` is from its creation.
    pub fn job_ended(&self, job_type: JobType, status: JobStatus, age: Duration) {
        if let Some(end) = ENDS.iter().position(|s| *s == status) {
            self.jobs[type_index(job_type) * ENDS.len() + end].observe(age);
        }
    }

    /// One call of the language model (retries included), and the tokens it reported.
    pub fn model_call(&self, took: Duration, ok: bool, prompt_tokens: u64, completion_tokens: u64) {
        self.model_calls.observe(took);
        if !ok {
            self.model_failures.fetch_add(1, Ordering::Relaxed);
        }
        self.prompt_tokens.fetch_add(prompt_tokens, Ordering::Relaxed);
        self.completion_tokens.fetch_add(completion_tokens, Ordering::Relaxed);
    }

    /// The Prometheus text of these figures.
    pub fn render(&self, out: &mut String) {
        let _ =
            writeln!(out, "# HELP redline_job_run_seconds One worker's run of a job, from its claim to the run's end.");
        let _ = writeln!(out, "# TYPE redline_job_run_seconds histogram");
        for (t, h) in TYPES.iter().zip(&self.runs) {
            h.render(out, "redline_job_run_seconds", &format!("type=\"{}\"", t.as_str()));
        }
        let _ = writeln!(
            out,
            "# HELP redline_job_duration_seconds A job's creation to its final status (approval waits included)."
        );
        let _ = writeln!(out, "# TYPE redline_job_duration_seconds histogram");
        for (i, t) in TYPES.iter().enumerate() {
            for (j, s) in ENDS.iter().enumerate() {
                let labels = format!("type=\"{}\",status=\"{}\"", t.as_str(), s.as_str());
                self.jobs[i * ENDS.len() + j].render(out, "redline_job_duration_seconds", &labels);
            }
        }
        let _ =
            writeln!(out, "# HELP redline_model_call_seconds One call of the language model, its retries included.");
        let _ = writeln!(out, "# TYPE redline_model_call_seconds histogram");
        self.model_calls.render(out, "redline_model_call_seconds", "");
        let _ = writeln!(out, "# HELP redline_model_call_failures_total Model calls that failed after their retries.");
        let _ = writeln!(out, "# TYPE redline_model_call_failures_total counter");
        let _ = writeln!(out, "redline_model_call_failures_total {}", self.model_failures.load(Ordering::Relaxed));
        let _ = writeln!(out, "# HELP redline_model_tokens_total Tokens the model reported, by kind.");
        let _ = writeln!(out, "# TYPE redline_model_tokens_total counter");
        let _ = writeln!(
            out,
            "redline_model_tokens_total{{kind=\"prompt\"}} {}",
            self.prompt_tokens.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "redline_model_tokens_total{{kind=\"completion\"}} {}",
            self.completion_tokens.load(Ordering::Relaxed)
        );
    }
}

/// The queue depth lines: one gauge per job type and unfinished status, zeros included so
/// that graphs fall to zero instead of stopping.
pub fn render_queue_depth(out: &mut String, counts: &[(JobType, JobStatus, i64)]) {
    let _ = writeln!(out, "# HELP redline_jobs Unfinished jobs in the queue (all replicas), by type and status.");
    let _ = writeln!(out, "# TYPE redline_jobs gauge");
    for t in TYPES {
        for s in [JobStatus::Pending, JobStatus::InProgress, JobStatus::AwaitingApproval] {
            let n = counts.iter().find(|(ct, cs, _)| *ct == t && *cs == s).map_or(0, |c| c.2);
            let _ = writeln!(out, "redline_jobs{{type=\"{}\",status=\"{}\"}} {n}", t.as_str(), s.as_str());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_render_as_prometheus_text() {
        let t = Telemetry::default();
        t.run_ended(JobType::Chat, Duration::from_millis(300));
        t.job_ended(JobType::Chat, JobStatus::Completed, Duration::from_secs(3));
        t.job_ended(JobType::AttachmentProcessing, JobStatus::Failed, Duration::from_secs(2000));
        t.model_call(Duration::from_millis(700), true, 120, 30);
        t.model_call(Duration::from_secs(200), false, 0, 0);
        let mut out = String::new();
        t.render(&mut out);
        render_queue_depth(&mut out, &[(JobType::Chat, JobStatus::Pending, 4)]);
        for line in [
            "redline_job_run_seconds_bucket{type=\"chat\",le=\"0.25\"} 0",
            "redline_job_run_seconds_bucket{type=\"chat\",le=\"0.5\"} 1",
            "redline_job_run_seconds_count{type=\"chat\"} 1",
            "redline_job_duration_seconds_bucket{type=\"chat\",status=\"completed\",le=\"5\"} 1",
            "redline_job_duration_seconds_bucket{type=\"attachment_processing\",status=\"failed\",le=\"1800\"} 0",
            "redline_job_duration_seconds_count{type=\"attachment_processing\",status=\"failed\"} 1",
            "redline_model_call_seconds_bucket{le=\"1\"} 1",
            "redline_model_call_seconds_bucket{le=\"+Inf\"} 2",
            "redline_model_call_failures_total 1",
            "redline_model_tokens_total{kind=\"prompt\"} 120",
            "redline_model_tokens_total{kind=\"completion\"} 30",
            "redline_jobs{type=\"chat\",status=\"pending\"} 4",
            "redline_jobs{type=\"chat\",status=\"in_progress\"} 0",
            "redline_jobs{type=\"attachment_processing\",status=\"awaiting_approval\"} 0",
        ] {
            assert!(out.lines().any(|l| l == line), "missing {line:?} in\n{out}");
        }
    }
}
