//! Turns that start again: a replica shutting down hands its running turn back to the queue
//! (`hand_back`), and the sweep requeues the turn of a replica that died. The events the
//! stopped run had written stay in the job's stream, so the run that starts again names, in
//! its first event, the events it supersedes (docs/api.md, "Chat and jobs").

use std::time::Duration;

use redline_domain::job::JobStatus;
use redline_ports::jobs::{JobEvent, JobUpdate, Signal};
use redline_ports::StoreError;
use serde_json::{json, Value};

use super::Chat;

/// How many times a write of a stopping replica (hand-back, lease given up) is tried, with
/// pauses growing by [`STOP_WRITE_PAUSE`].
const STOP_WRITE_TRIES: u32 = 4;
const STOP_WRITE_PAUSE: Duration = Duration::from_millis(250);

/// The message of the status event that starts every run of a turn.
pub const RUN_START: &str = "Reading the document";

/// The events a run that starts again supersedes: from the start of the last run that was
/// interrupted through the last event written before this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Superseded {
    pub from: i64,
    pub through: i64,
}

impl Superseded {
    pub(super) fn to_json(self) -> Value {
        json!({"from": self.from, "through": self.through})
    }
}

/// The status event that ends a run which proposed changes (the next run continues it).
pub(super) const ROUND_END: &str = "Waiting for approval";

fn is_status(e: &JobEvent, message: &str) -> bool {
    e.kind == "status" && e.content.get("message").and_then(Value::as_str) == Some(message)
}

/// Called as a run starts: every run starts with a `RUN_START` event and either finishes the
/// job or ends its round with `ROUND_END`; a run start with no round end after it is a run
/// that was cut off, and its events are superseded by the one starting now.
pub(super) fn superseded(events: &[JobEvent]) -> Option<Superseded> {
    let start = events.iter().rposition(|e| is_status(e, RUN_START))?;
    if events[start..].iter().any(|e| is_status(e, ROUND_END)) {
        return None;
    }
    Some(Superseded { from: events[start].sequence, through: events.last().map_or(0, |e| e.sequence) })
}

/// A write of a stopping replica, tried [`STOP_WRITE_TRIES`] times with growing pauses while
/// it fails; its last error after that.
async fn retried<T, F, Fut>(job_id: &str, what: &str, mut write: F) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    let mut tries = 1;
    loop {
        match write().await {
            Err(e) if tries < STOP_WRITE_TRIES => {
                tracing::warn!(job_id, error = %e, "could not {what} yet; trying again");
                tokio::time::sleep(STOP_WRITE_PAUSE * tries).await;
                tries += 1;
            }
            done => return done,
        }
    }
}

impl Chat {
    /// Hands a running job back to the queue at once (this replica is shutting down and
    /// cannot finish it): another replica takes it up without waiting for the lease. The
    /// run in hand sees its job taken away and stops writing. Answers whether the job was
    /// handed back (false when it had committed its document and must finish here, or had
    /// ended).
    pub async fn hand_back(&self, job_id: &str) -> bool {
        // A replica stopping under load may find its pool busy: a turn left in progress would
        // wait out its whole lease.
        match retried(job_id, "hand a job back", || self.ports.jobs.release_job(job_id, self.now())).await {
            Ok(true) => {
                tracing::info!(job_id, "handed a running job back to the queue: this replica is shutting down");
                self.ports.bus.publish(Signal::Job(job_id.to_owned())).await;
                self.ports.bus.publish(Signal::Queued).await;
                true
            }
            Ok(false) => false,
            Err(e) => {
                tracing::warn!(job_id, error = %e, "could not hand a job back; it is taken up when its lease runs out");
                false
            }
        }
    }

    /// Ends the lease of a running job this replica could neither finish nor hand back before
    /// it stops (its run was past its commit and still writing): another replica's sweep takes
    /// it up at once, as it would after a crash, instead of when the lease would have run
    /// out. The run, if it finishes meanwhile, still ends the job.
    pub async fn give_up_lease(&self, job_id: &str) {
        let update = JobUpdate { lease_until: Some(Some(self.now())), ..Default::default() };
        let give_up = || self.ports.jobs.update_job(job_id, &[JobStatus::InProgress], &update, self.now());
        match retried(job_id, "give up a job's lease", give_up).await {
            Ok(_) => {
                tracing::warn!(job_id, "gave up the lease of a job this replica could not finish as it stopped");
                self.ports.bus.publish(Signal::Job(job_id.to_owned())).await;
            }
            Err(e) => tracing::warn!(job_id, error = %e, "could not give up a job's lease; it runs out in time"),
        }
    }

    /// What the run about to start supersedes, read from the job's events.
    pub(super) async fn superseded_by_this_run(&self, job_id: &str) -> Option<Superseded> {
        match self.ports.jobs.events(job_id, 0).await {
            Ok(events) if !events.is_empty() => superseded(&events),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(job_id, error = %e, "could not read the events of a job starting again");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stopping_write_is_tried_again_while_it_fails() {
        let calls = std::cell::Cell::new(0);
        let flaky = || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move {
                if n < 3 {
                    Err(StoreError::Other("pool busy".into()))
                } else {
                    Ok(n)
                }
            }
        };
        assert_eq!(retried("j", "test", flaky).await.unwrap(), 3, "the third try succeeded");

        calls.set(0);
        let broken = || {
            calls.set(calls.get() + 1);
            async { Err::<(), _>(StoreError::Other("down".into())) }
        };
        assert!(retried("j", "test", broken).await.is_err());
        assert_eq!(calls.get(), STOP_WRITE_TRIES, "given up after its tries");
    }

    fn event(sequence: i64, kind: &str, content: Value) -> JobEvent {
        JobEvent { sequence, kind: kind.to_owned(), content, at: 0 }
    }

    fn start(sequence: i64) -> JobEvent {
        event(sequence, "status", json!({"message": RUN_START, "attempt": 1}))
    }

    fn round_end(sequence: i64) -> JobEvent {
        event(sequence, "status", json!({"message": ROUND_END, "pending": 1}))
    }

    #[test]
    fn a_fresh_or_continued_turn_supersedes_nothing() {
        assert_eq!(superseded(&[]), None);
        // Round one ended in an approval with feedback; round two starts now.
        let next = [
            start(1),
            event(2, "change", json!({})),
            round_end(3),
            event(4, "status", json!({"message": "Reviewer feedback sent to the AI"})),
        ];
        assert_eq!(superseded(&next), None);
    }

    #[test]
    fn the_cut_off_run_is_superseded_whole_and_only_it() {
        let first = [start(1), event(2, "tool_call", json!({})), event(3, "change", json!({}))];
        assert_eq!(superseded(&first), Some(Superseded { from: 1, through: 3 }));
        // Round one ended in an approval; round two was cut off: only round two.
        let second =
            [start(1), event(2, "change", json!({})), round_end(3), start(4), event(5, "tool_call", json!({}))];
        assert_eq!(superseded(&second), Some(Superseded { from: 4, through: 5 }));
        // Cut off twice: the last run, which started after the first was superseded.
        let twice = [start(1), event(2, "tool_call", json!({})), start(3)];
        assert_eq!(superseded(&twice), Some(Superseded { from: 3, through: 3 }));
    }
}
