//! Workers: claim pending jobs from the database and run them; a sweeper requeues the jobs
//! of dead workers, cancels unanswered approvals and deletes finished jobs past retention.
//! Any replica may run any job.

use std::sync::Arc;
use std::time::Duration;

use redline_domain::job::{JobStatus, JobType};
use redline_ports::jobs::{JobRecord, JobUpdate, Signal};
use redline_ports::{Clock, EventBus, JobStore, StoreError};
use tokio::sync::watch;

use crate::chat::Chat;

/// Runs jobs of a type other than chat (attachment processing, e-mailed exports).
/// Why the run of a background job (an attachment's processing, an e-mailed export) stopped
/// early, and so what becomes of its job.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The work cannot be done: fail the job with this sentence (and tell whom it concerns).
    Fail(String),
    /// Something outside was unavailable: leave the job to its lease, to be retried.
    Retry(String),
    /// The job is no longer this worker's (handed back, requeued, cancelled, or deleted with
    /// its session or attachment): do nothing more.
    Abandon,
}

/// A store that could not be reached is retried; any other store failure fails the job.
impl From<StoreError> for Stop {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(cause) => Stop::Retry(cause),
            other => Stop::Fail(format!("Processing failed: {other}.")),
        }
    }
}

#[async_trait::async_trait]
pub trait JobRunner: Send + Sync {
    async fn run(&self, job: JobRecord);

    /// The sweep failed the job (its workers stopped too often) or cancelled it: whatever
    /// the runner owes someone for it (the e-mailed export's failure mail). Called once, by
    /// the replica whose sweep ended it.
    async fn given_up(&self, _job: JobRecord) {}
}

/// The task keeping a running job's lease ([`keep_lease`]). It ends when this is ended or
/// dropped, between two of its queries: aborting it could drop a query in flight, and with
/// it the database connection (PostgreSQL: a new connection for every job that finished
/// while its keeper was reading the job's status).
pub(crate) struct LeaseKeeper {
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl LeaseKeeper {
    /// Stops renewing the lease (the job is over for this worker).
    pub(crate) fn end(self) {}
}

/// What keeping a lease needs: the job store, the bus that tells of the job's changes, and the
/// clock.
pub(crate) type LeasePorts<'a> = (&'a Arc<dyn JobStore>, &'a Arc<dyn EventBus>, &'a Arc<dyn Clock>);

/// Renews the job's lease every third of it; turns `true` when the job is no longer in
/// progress (cancelled, or taken back after a lease ran out).
pub(crate) fn keep_lease(
    (jobs, bus, clock): LeasePorts<'_>,
    job_id: &str,
    lease: Duration,
) -> (watch::Receiver<bool>, LeaseKeeper) {
    let (jobs, bus, clock, job_id) = (jobs.clone(), bus.clone(), clock.clone(), job_id.to_owned());
    let (tx, rx) = watch::channel(false);
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let mut signals = bus.subscribe();
        let mut renew = tokio::time::interval((lease / 3).max(Duration::from_millis(100)));
        renew.tick().await;
        loop {
            // Only waits are raced here: a query runs in a branch, to its end.
            tokio::select! {
                _ = &mut stopped => return,
                _ = renew.tick() => {
                    let now = clock.now_ms();
                    let until = now.saturating_add(i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 2));
                    let update = JobUpdate { lease_until: Some(Some(until)), ..Default::default() };
                    if let Ok(None) = jobs.update_job(&job_id, &[JobStatus::InProgress], &update, now).await {
                        let _ = tx.send(true);
                        return;
                    }
                }
                signal = signals.recv() => {
                    let mine = match signal {
                        Ok(Signal::Job(id)) => id == job_id,
                        Ok(Signal::Events(_) | Signal::Queued | Signal::KeyRevoked(_) | Signal::SessionsChanged(_) | Signal::Reconnected) => false,
                        Err(_) => true,
                    };
                    if mine {
                        if let Ok(Some(status)) = jobs.job_status(&job_id).await {
                            if status != JobStatus::InProgress {
                                let _ = tx.send(true);
                                return;
                            }
                        }
                    }
                }
            }
        }
    });
    (rx, LeaseKeeper { _stop: stop })
}

/// Idle workers look for work at least this often (signals usually wake them sooner).
const IDLE_POLL: Duration = Duration::from_millis(1000);
const SWEEP_EVERY: Duration = Duration::from_millis(1000);

/// The runners of the job types other than chat; a type without one fails its jobs.
#[derive(Default, Clone)]
pub struct Runners {
    pub attachments: Option<Arc<dyn JobRunner>>,
    pub exports: Option<Arc<dyn JobRunner>>,
}

impl Runners {
    fn of(&self, job_type: JobType) -> Option<&Arc<dyn JobRunner>> {
        match job_type {
            JobType::Chat => None,
            JobType::AttachmentProcessing => self.attachments.as_ref(),
            JobType::EmailedExport => self.exports.as_ref(),
        }
    }
}

pub struct Workers {
    chat: Arc<Chat>,
    runners: Runners,
    store: Arc<dyn redline_ports::JobStore>,
    clock: Arc<dyn redline_ports::Clock>,
}

/// How long a run handed back gets to notice and stop before the worker leaves it.
const RUN_STOPS_WITHIN: Duration = Duration::from_secs(5);

/// Resolves `drain` after `shutdown` turns true.
async fn drained(shutdown: &mut watch::Receiver<bool>, drain: Duration) {
    while !*shutdown.borrow() {
        if shutdown.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
    tokio::time::sleep(drain).await;
}

impl Workers {
    pub fn new(
        chat: Arc<Chat>,
        runners: Runners,
        store: Arc<dyn redline_ports::JobStore>,
        clock: Arc<dyn redline_ports::Clock>,
    ) -> Arc<Self> {
        Arc::new(Self { chat, runners, store, clock })
    }

    /// Starts `n` workers (0: this replica only serves HTTP) and the sweeper on the current
    /// runtime. When `shutdown` turns true they claim nothing more; a job being run gets
    /// `drain` to finish, after which it is handed back to the queue (another replica takes
    /// it up at once, not when its lease runs out) and its run stops.
    /// With `sole_runner` (this process alone runs jobs on the database: the embedded
    /// SQLite, whose data folder it has locked) every job found in progress is requeued at
    /// once, since its worker died with an earlier process, and only then do the workers
    /// start: a job they claim is never taken for one of those. Otherwise such jobs wait for
    /// their lease to run out.
    pub fn start(
        self: &Arc<Self>,
        n: usize,
        shutdown: watch::Receiver<bool>,
        sole_runner: bool,
        drain: Duration,
    ) -> Vec<tokio::task::JoinHandle<()>> {
        let me = self.clone();
        vec![tokio::spawn(async move { me.serve(n, shutdown, sole_runner, drain).await })]
    }

    async fn serve(self: Arc<Self>, n: usize, mut shutdown: watch::Receiver<bool>, sole_runner: bool, drain: Duration) {
        if sole_runner {
            // Until it succeeds (the database may still be coming up): a worker started
            // before it would have its job requeued under it and run twice.
            while let Err(e) = self.sweep(true).await {
                tracing::warn!(error = %e, "job sweep failed; workers wait for it");
                tokio::select! {
                    _ = tokio::time::sleep(SWEEP_EVERY) => {}
                    _ = shutdown.changed() => {}
                }
                if *shutdown.borrow() {
                    return;
                }
            }
        }
        let mut handles = Vec::new();
        for i in 0..n {
            let me = self.clone();
            let stop = shutdown.clone();
            handles.push(tokio::spawn(async move { me.work(i, stop, drain).await }));
        }
        let me = self.clone();
        handles.push(tokio::spawn(async move { me.sweep_loop(shutdown).await }));
        futures_util::future::join_all(handles).await;
    }

    async fn claim(&self) -> Option<JobRecord> {
        let now = self.clock.now_ms();
        let lease = i64::try_from(self.chat.config().lease.as_millis()).unwrap_or(30_000);
        match self.store.claim_job(now, now + lease).await {
            Ok(job) => job,
            Err(e) => {
                tracing::warn!(error = %e, "could not claim a job");
                None
            }
        }
    }

    async fn work(&self, worker: usize, mut shutdown: watch::Receiver<bool>, drain: Duration) {
        let mut signals = self.chat.bus().subscribe();
        loop {
            if *shutdown.borrow() {
                return;
            }
            if let Some(job) = self.claim().await {
                let job_id = job.job_id.clone();
                tracing::info!(worker, %job_id, job_type = job.job_type.as_str(), attempt = job.attempts, "running job");
                self.chat.bus().publish(Signal::Job(job_id.clone())).await;
                let job_type = job.job_type;
                let started = std::time::Instant::now();
                let run = self.run(job);
                tokio::pin!(run);
                let mut stop = shutdown.clone();
                tokio::select! {
                    () = &mut run => {}
                    () = drained(&mut stop, drain) => {
                        // The run in hand stops as soon as it sees its job taken away; one
                        // past its commit (not handed back) gets the moment it needs to end
                        // the job, and else gives its lease up for another replica.
                        let handed_back = self.chat.hand_back(&job_id).await;
                        if tokio::time::timeout(RUN_STOPS_WITHIN, &mut run).await.is_err() {
                            tracing::warn!(worker, %job_id, handed_back, "a stopping run did not end in time");
                            if !handed_back {
                                self.chat.give_up_lease(&job_id).await;
                            }
                        }
                    }
                }
                self.record_run(&job_id, job_type, started.elapsed()).await;
                continue;
            }
            let wake = async {
                loop {
                    match signals.recv().await {
                        // A queued job, or signals that may have been missed.
                        Ok(Signal::Queued | Signal::Reconnected)
                        | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => return,
                        Ok(Signal::Job(_) | Signal::Events(_) | Signal::KeyRevoked(_) | Signal::SessionsChanged(_)) => {
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                            std::future::pending::<()>().await;
                        }
                    }
                }
            };
            tokio::select! {
                _ = wake => {}
                _ = tokio::time::sleep(IDLE_POLL) => {}
                _ = shutdown.changed() => {}
            }
        }
    }

    /// The run's time, and the job's whole time when the run finished it.
    async fn record_run(&self, job_id: &str, job_type: JobType, took: Duration) {
        let telemetry = self.chat.telemetry();
        telemetry.run_ended(job_type, took);
        if let Ok(Some(job)) = self.store.job(job_id).await {
            if let (true, Some(finished)) = (job.status.is_finished(), job.finished_at) {
                let age = u64::try_from(finished - job.created_at).unwrap_or(0);
                telemetry.job_ended(job_type, job.status, Duration::from_millis(age));
            }
        }
    }

    async fn run(&self, job: JobRecord) {
        if job.job_type == JobType::Chat {
            return self.chat.run_job(job).await;
        }
        if let Some(runner) = self.runners.of(job.job_type) {
            return runner.run(job).await;
        }
        let error = match job.job_type {
            JobType::AttachmentProcessing => "Attachment processing is not available on this server.",
            JobType::Chat | JobType::EmailedExport => "This server cannot run this job.",
        };
        let update = JobUpdate { status: Some(JobStatus::Failed), error: Some(error.to_owned()), ..Default::default() };
        let _ = self.store.update_job(&job.job_id, &[JobStatus::InProgress], &update, self.clock.now_ms()).await;
        self.chat.bus().publish(Signal::Job(job.job_id)).await;
    }

    /// One sweep; the jobs of other types it ended go to their runner's `given_up`.
    async fn sweep(&self, every_lease_ended: bool) -> crate::chat::ChatResult<()> {
        for job in self.chat.sweep(every_lease_ended).await? {
            if let Some(runner) = self.runners.of(job.job_type) {
                runner.given_up(job).await;
            }
        }
        Ok(())
    }

    async fn sweep_loop(&self, mut shutdown: watch::Receiver<bool>) {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(SWEEP_EVERY) => {}
                _ = shutdown.changed() => {}
            }
            if *shutdown.borrow() {
                return;
            }
            if let Err(e) = self.sweep(false).await {
                tracing::warn!(error = %e, "job sweep failed");
            }
        }
    }
}
