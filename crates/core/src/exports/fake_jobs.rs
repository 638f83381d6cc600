//! An in-memory job queue and bus for the export tests: the statuses and compare-and-set of
//! the `JobStore` contract, nothing of listings or history.

use std::sync::Mutex;

use redline_domain::job::{JobStatus, JobType};
use redline_domain::page::{Page, PageRequest};
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};
use redline_ports::jobs::{JobEvent, JobFilter, JobRecord, JobUpdate, Signal, Sweep, SweepRules};
use redline_ports::{EventBus, JobStore, StoreError};
use serde_json::Value;

#[derive(Default)]
pub struct FakeJobs(pub Mutex<Vec<JobRecord>>);

impl FakeJobs {
    pub fn get(&self, job_id: &str) -> Option<JobRecord> {
        self.0.lock().unwrap().iter().find(|j| j.job_id == job_id).cloned()
    }

    /// Sets the job's status as another party would (a hand-back, a sweep).
    pub fn set_status(&self, job_id: &str, status: JobStatus) {
        if let Some(j) = self.0.lock().unwrap().iter_mut().find(|j| j.job_id == job_id) {
            j.status = status;
        }
    }
}

fn unsupported() -> StoreError {
    StoreError::Other("not used by the export tests".into())
}

#[async_trait::async_trait]
impl JobStore for FakeJobs {
    async fn insert_job(&self, job: &JobRecord) -> Result<(), StoreError> {
        let mut jobs = self.0.lock().unwrap();
        if jobs.iter().any(|j| j.job_id == job.job_id) {
            return Err(StoreError::Duplicate(job.job_id.clone()));
        }
        jobs.push(job.clone());
        Ok(())
    }

    async fn job(&self, job_id: &str) -> Result<Option<JobRecord>, StoreError> {
        Ok(self.get(job_id))
    }

    async fn list_jobs(&self, _: Owner, _: &JobFilter, _: &PageRequest) -> Result<Page<JobRecord>, StoreError> {
        Err(unsupported())
    }

    async fn claim_job(&self, now: Millis, lease_until: Millis) -> Result<Option<JobRecord>, StoreError> {
        let mut jobs = self.0.lock().unwrap();
        let Some(job) = jobs.iter_mut().filter(|j| j.status == JobStatus::Pending).min_by_key(|j| j.created_at) else {
            return Ok(None);
        };
        job.status = JobStatus::InProgress;
        job.lease_until = Some(lease_until);
        job.updated_at = now;
        Ok(Some(job.clone()))
    }

    async fn update_job(
        &self,
        job_id: &str,
        from: &[JobStatus],
        update: &JobUpdate,
        now: Millis,
    ) -> Result<Option<JobRecord>, StoreError> {
        let mut jobs = self.0.lock().unwrap();
        let Some(job) = jobs.iter_mut().find(|j| j.job_id == job_id && from.contains(&j.status)) else {
            return Ok(None);
        };
        if let Some(s) = update.status {
            job.status = s;
            if s.is_finished() {
                job.finished_at = Some(now);
                job.lease_until = None;
            }
        }
        if let Some(p) = update.progress {
            job.progress = p;
        }
        if let Some(r) = &update.result {
            job.result = Some(r.clone());
        }
        if let Some(e) = &update.error {
            job.error = Some(e.clone());
        }
        if let Some(l) = update.lease_until {
            job.lease_until = l;
        }
        job.updated_at = now;
        Ok(Some(job.clone()))
    }

    async fn append_event(&self, _: &str, _: &str, _: &Value, _: Millis) -> Result<i64, StoreError> {
        Err(unsupported())
    }

    async fn append_events(&self, _: &str, _: &[(String, Value)], _: Millis) -> Result<i64, StoreError> {
        Err(unsupported())
    }

    async fn events(&self, _: &str, _: i64) -> Result<Vec<JobEvent>, StoreError> {
        Ok(Vec::new())
    }

    async fn release_job(&self, job_id: &str, _: Millis) -> Result<bool, StoreError> {
        let mut jobs = self.0.lock().unwrap();
        match jobs.iter_mut().find(|j| j.job_id == job_id && j.status == JobStatus::InProgress) {
            Some(j) => {
                j.status = JobStatus::Pending;
                j.lease_until = None;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    async fn sweep_jobs(&self, _: &SweepRules) -> Result<Sweep, StoreError> {
        Err(unsupported())
    }

    async fn job_counts(&self) -> Result<Vec<(JobType, JobStatus, i64)>, StoreError> {
        Err(unsupported())
    }

    async fn has_active_chat(&self, _: Owner, _: &SessionId) -> Result<bool, StoreError> {
        Err(unsupported())
    }

    async fn delete_session_jobs(&self, _: Owner, _: &SessionId) -> Result<Vec<JobRecord>, StoreError> {
        Err(unsupported())
    }
}

/// The bus of one process.
pub struct FakeBus(tokio::sync::broadcast::Sender<Signal>);

impl Default for FakeBus {
    fn default() -> Self {
        Self(tokio::sync::broadcast::channel(64).0)
    }
}

#[async_trait::async_trait]
impl EventBus for FakeBus {
    async fn publish(&self, signal: Signal) {
        let _ = self.0.send(signal);
    }

    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Signal> {
        self.0.subscribe()
    }
}
