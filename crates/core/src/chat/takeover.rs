//! Turns that start again: a replica shutting down hands its running turn back to the queue
//! (`hand_back`), and the sweep requeues the turn of a replica that died. The events the
//! stopped run had written stay in the job's stream, so the run that starts again names, in
//! its first event, the events it supersedes (docs/api.md, "Chat and jobs").

use redline_ports::jobs::{JobEvent, Signal};
use serde_json::{json, Value};

use super::Chat;

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

impl Chat {
    /// Hands a running job back to the queue at once (this replica is shutting down and
    /// cannot finish it): another replica takes it up without waiting for the lease. The
    /// run in hand sees its job taken away and stops writing. Answers whether the job was
    /// handed back (false when it had committed its document and must finish here, or had
    /// ended).
    pub async fn hand_back(&self, job_id: &str) -> bool {
        match self.ports.jobs.release_job(job_id, self.now()).await {
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
