//! `JobStore` and `HistoryStore` on both backends.

mod archive;

use std::collections::HashMap;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use redline_domain::job::{JobStatus, JobType};
use redline_domain::page::{Cursor, Page, PageRequest};
use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};
use redline_ports::jobs::{HistoryMessage, JobEvent, JobFilter, JobRecord, JobUpdate, Sweep, SweepRules};
use redline_ports::{HistoryStore, JobStore, StoreError};
use serde_json::Value;

use crate::db::{BackendOps, Db};
use crate::error::DbResult;
use crate::schema::{attachments, chat_messages, job_events, jobs};

/// A job as `JobRecord` needs it (`committed_version` is not read: cancel and recovery filter
/// on it in SQL).
#[derive(Queryable, Selectable, Debug)]
#[diesel(table_name = jobs)]
pub(crate) struct JobRow {
    job_id: String,
    owner: String,
    session_id: String,
    job_type: String,
    status: String,
    progress: i32,
    attempts: i32,
    request: String,
    result: Option<String>,
    error: Option<String>,
    metadata: String,
    state: String,
    created_at: i64,
    updated_at: i64,
    finished_at: Option<i64>,
    lease_until: Option<i64>,
    archive: Option<Vec<u8>>,
}

/// The webhook message of a job's status as it now is, if that status makes one
/// (`EventType::of_job`). A stored value this version cannot read makes none.
pub(crate) fn webhook_message(row: &JobRow) -> Option<redline_ports::WebhookMessage> {
    let job_type = JobType::parse(&row.job_type)?;
    let status = JobStatus::parse(&row.status)?;
    let event = redline_domain::webhook::EventType::of_job(job_type, status)?;
    let owner = redline_domain::Owner::parse(&row.owner)?;
    let mut data = serde_json::json!({
        "job_id": row.job_id,
        "session_id": row.session_id,
        "job_type": job_type.as_str(),
        "status": status.as_str(),
    });
    if let Some(error) = &row.error {
        data["error"] = Value::from(error.as_str());
    }
    if job_type == JobType::AttachmentProcessing {
        let request: Value = serde_json::from_str(&row.request).unwrap_or(Value::Null);
        if let Some(id) = request.get("attachment_id").and_then(Value::as_str) {
            data["attachment_id"] = Value::from(id);
        }
    }
    Some(redline_ports::WebhookMessage::new(owner, event, row.updated_at, data))
}

fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError::Other(format!("corrupt {what} in database: {value:?}"))
}

fn json(what: &str, s: &str) -> Result<Value, StoreError> {
    serde_json::from_str(s).map_err(|_| corrupt(what, s))
}

/// A job's events after `after`: those in its archive, when it has one, then its rows (only
/// events appended after archiving are rows of an archived job).
fn merge_events(
    archived: Option<Vec<u8>>,
    rows: Vec<archive::EventRow>,
    after: i64,
) -> Result<Vec<JobEvent>, StoreError> {
    let mut events = match archived {
        Some(a) => archive::unpack(&a)?.events.into_iter().filter(|e| e.sequence > after).collect(),
        None => Vec::with_capacity(rows.len()),
    };
    for (sequence, kind, content, at) in rows {
        events.push(JobEvent { sequence, kind, content: json("job event", &content)?, at });
    }
    Ok(events)
}

impl TryFrom<JobRow> for JobRecord {
    type Error = StoreError;

    fn try_from(r: JobRow) -> Result<Self, StoreError> {
        // An archived job's JSON columns are empty: its parts are in the archive.
        let (request, state, result, metadata) = match &r.archive {
            Some(a) => {
                let parts = archive::unpack(a)?;
                (parts.request, parts.state, parts.result, parts.metadata)
            }
            None => (
                json("job request", &r.request)?,
                json("job state", &r.state)?,
                r.result.as_deref().map(|s| json("job result", s)).transpose()?,
                json("job metadata", &r.metadata)?,
            ),
        };
        Ok(JobRecord {
            owner: crate::rows::owner(&r.owner)?,
            session_id: SessionId::parse(&r.session_id).map_err(|_| corrupt("session id", &r.session_id))?,
            job_type: JobType::parse(&r.job_type).ok_or_else(|| corrupt("job type", &r.job_type))?,
            status: JobStatus::parse(&r.status).ok_or_else(|| corrupt("job status", &r.status))?,
            progress: r.progress,
            attempts: r.attempts,
            request,
            result,
            error: r.error,
            metadata,
            state,
            created_at: r.created_at,
            updated_at: r.updated_at,
            finished_at: r.finished_at,
            lease_until: r.lease_until,
            job_id: r.job_id,
        })
    }
}

/// A `JobUpdate` as one `UPDATE` statement (`None` fields are left alone).
#[derive(AsChangeset)]
#[diesel(table_name = jobs)]
pub(crate) struct JobChanges<'a> {
    updated_at: Millis,
    status: Option<&'static str>,
    progress: Option<i32>,
    result: Option<Option<String>>,
    error: Option<Option<&'a str>>,
    metadata: Option<String>,
    state: Option<String>,
    finished_at: Option<Option<Millis>>,
    lease_until: Option<Option<Millis>>,
    committed_version: Option<Option<String>>,
}

impl<'a> JobChanges<'a> {
    pub(crate) fn new(update: &'a JobUpdate, now: Millis) -> Self {
        let finished = update.status.is_some_and(JobStatus::is_finished);
        JobChanges {
            updated_at: now,
            status: update.status.map(JobStatus::as_str),
            progress: update.progress.map(|p| p.clamp(0, 100)),
            result: update.result.as_ref().map(|v| Some(v.to_string())),
            error: update.error.as_deref().map(Some),
            metadata: update.metadata.as_ref().map(Value::to_string),
            state: update.state.as_ref().map(Value::to_string),
            finished_at: finished.then_some(Some(now)),
            // A finished job holds no lease; an explicit lease in the update wins.
            lease_until: update.lease_until.or(finished.then_some(None)),
            // Queued again (reviewer feedback): what it committed so far is complete, and its
            // next round may be cancelled again.
            committed_version: (update.status == Some(JobStatus::Pending)).then_some(None),
        }
    }
}

fn statuses(from: &[JobStatus]) -> Vec<&'static str> {
    from.iter().map(|s| s.as_str()).collect()
}

const ACTIVE: [&str; 3] = ["pending", "in_progress", "awaiting_approval"];

/// The job types no listing shows (`JobType::is_public`).
fn internal_types() -> Vec<&'static str> {
    JobType::ALL.into_iter().filter(|t| !t.is_public()).map(JobType::as_str).collect()
}

#[async_trait::async_trait]

impl JobStore for Db {
    async fn insert_job(&self, job: &JobRecord) -> Result<(), StoreError> {
        let r: DbResult<usize> = with_write!(self, |conn| Ok(diesel::insert_into(jobs::table)
            .values((
                jobs::job_id.eq(&job.job_id),
                jobs::owner.eq(job.owner.to_string()),
                jobs::session_id.eq(job.session_id.as_str()),
                jobs::job_type.eq(job.job_type.as_str()),
                jobs::status.eq(job.status.as_str()),
                jobs::progress.eq(job.progress),
                jobs::attempts.eq(job.attempts),
                jobs::request.eq(job.request.to_string()),
                jobs::result.eq(job.result.as_ref().map(Value::to_string)),
                jobs::error.eq(&job.error),
                jobs::metadata.eq(job.metadata.to_string()),
                jobs::state.eq(job.state.to_string()),
                jobs::created_at.eq(job.created_at),
                jobs::updated_at.eq(job.updated_at),
                jobs::finished_at.eq(job.finished_at),
                jobs::lease_until.eq(job.lease_until),
            ))
            .execute(conn)
            .await?));
        r?;
        Ok(())
    }

    async fn job(&self, job_id: &str) -> Result<Option<JobRecord>, StoreError> {
        let row: DbResult<Option<JobRow>> = with_read!(self, |conn| Ok(jobs::table
            .find(job_id)
            .select(JobRow::as_select())
            .get_result(conn)
            .await
            .optional()?));
        row?.map(JobRecord::try_from).transpose()
    }

    async fn job_status(&self, job_id: &str) -> Result<Option<JobStatus>, StoreError> {
        let status: DbResult<Option<String>> = with_read!(self, |conn| Ok(jobs::table
            .find(job_id)
            .select(jobs::status)
            .get_result::<String>(conn)
            .await
            .optional()?));
        status?.map(|s| JobStatus::parse(&s).ok_or_else(|| corrupt("job status", &s))).transpose()
    }

    async fn list_jobs(
        &self,
        owner: Owner,
        filter: &JobFilter,
        page: &PageRequest,
    ) -> Result<Page<JobRecord>, StoreError> {
        let owner = owner.to_string();
        let session = filter.session_id.as_ref().map(|s| s.as_str().to_owned());
        let status = filter.status.map(|s| s.as_str());
        if filter.job_type.is_some_and(|t| !t.is_public()) {
            return Ok(Page::from_rows(Vec::new(), page, |j: &JobRecord| Cursor::new(j.created_at, j.job_id.clone())));
        }
        let job_type = filter.job_type.map(|t| t.as_str());
        let fetch = i64::try_from(page.fetch()).unwrap_or(i64::MAX);
        let after = page.after.clone();
        let rows: DbResult<Vec<JobRow>> = with_conn!(self, |conn| {
            let mut q = jobs::table.filter(jobs::owner.eq(&owner)).into_boxed();
            if let Some(s) = &session {
                q = q.filter(jobs::session_id.eq(s));
            }
            if let Some(s) = status {
                q = q.filter(jobs::status.eq(s));
            }
            match job_type {
                Some(t) => q = q.filter(jobs::job_type.eq(t)),
                // Internal jobs (e-mailed exports) are never listed: a condition on the rows
                // the index finds, which keeps the owner's index and its order.
                None => q = q.filter(jobs::job_type.ne_all(internal_types())),
            }
            Ok(keyset!(q, desc(jobs::created_at, jobs::job_id), &after, fetch)
                .select(JobRow::as_select())
                .load(conn)
                .await?)
        });
        let rows = rows?.into_iter().map(JobRecord::try_from).collect::<Result<Vec<_>, _>>()?;
        Ok(Page::from_rows(rows, page, |j| Cursor::new(j.created_at, j.job_id.clone())))
    }

    async fn claim_job(&self, now: Millis, lease_until: Millis) -> Result<Option<JobRecord>, StoreError> {
        if matches!(self.backend, crate::db::Backend::Sqlite(_)) {
            // Every idle worker tries to claim when a job is queued; all but one find nothing.
            // Looking first on a read connection keeps them out of the writers' queue, where
            // the running turn's own writes wait.
            let pending: DbResult<bool> = with_read!(self, |conn| Ok(diesel::select(diesel::dsl::exists(
                jobs::table.filter(jobs::status.eq("pending"))
            ))
            .get_result(conn)
            .await?));
            if !pending? {
                return Ok(None);
            }
        }
        let row: DbResult<Option<JobRow>> = with_tx!(self, |conn| {
            let Some(id) = conn.next_pending_job().await? else {
                return Ok(None);
            };
            diesel::update(jobs::table.find(&id).filter(jobs::status.eq("pending")))
                .set((
                    jobs::status.eq("in_progress"),
                    jobs::lease_until.eq(Some(lease_until)),
                    jobs::updated_at.eq(now),
                ))
                .execute(conn)
                .await?;
            Ok(jobs::table.find(&id).select(JobRow::as_select()).get_result(conn).await.optional()?)
        });
        row?.map(JobRecord::try_from).transpose()
    }

    async fn update_job(
        &self,
        job_id: &str,
        from: &[JobStatus],
        update: &JobUpdate,
        now: Millis,
    ) -> Result<Option<JobRecord>, StoreError> {
        let from = statuses(from);
        let changes = JobChanges::new(update, now);
        let row: DbResult<Option<JobRow>> = with_tx!(self, |conn| {
            let target = jobs::table.find(job_id).filter(jobs::status.eq_any(&from));
            // What the status was, when this update sets one: a webhook tells of a change only.
            let before: Option<String> = match update.status {
                Some(_) => jobs::table
                    .find(job_id)
                    .filter(jobs::status.eq_any(&from))
                    .select(jobs::status)
                    .get_result(conn)
                    .await
                    .optional()?,
                None => None,
            };
            let n = if update.status == Some(JobStatus::Cancelled) {
                // A job that has committed its document is finishing: too late to cancel.
                let target = target.filter(jobs::committed_version.is_null());
                diesel::update(target).set(&changes).execute(conn).await?
            } else {
                diesel::update(target).set(&changes).execute(conn).await?
            };
            if n == 0 {
                return Ok(None);
            }
            let row: Option<JobRow> =
                jobs::table.find(job_id).select(JobRow::as_select()).get_result(conn).await.optional()?;
            // The webhooks of a new status, in this transaction: no crash loses one.
            let changed = |r: &&JobRow| before.as_ref().is_some_and(|b| *b != r.status);
            if let Some(message) = row.as_ref().filter(changed).and_then(webhook_message) {
                queue_webhooks!(conn, &message, now);
            }
            Ok(row)
        });
        row?.map(JobRecord::try_from).transpose()
    }

    async fn append_event(&self, job_id: &str, kind: &str, content: &Value, at: Millis) -> Result<i64, StoreError> {
        // A batch of one: its number is the batch's last.
        self.append_events(job_id, &[(kind.to_owned(), content.clone())], at).await
    }

    async fn append_events(&self, job_id: &str, events: &[(String, Value)], at: Millis) -> Result<i64, StoreError> {
        let rows: Vec<(&str, String)> = events.iter().map(|(k, c)| (k.as_str(), c.to_string())).collect();
        let seq: DbResult<i64> = with_tx!(self, |conn| {
            conn.lock_owner(job_id).await?;
            let mut last: Option<i64> = job_events::table
                .filter(job_events::job_id.eq(job_id))
                .select(diesel::dsl::max(job_events::sequence))
                .get_result(conn)
                .await?;
            if last.is_none() {
                // No rows: the job's first event, or an event after it was archived.
                let archived: Option<Option<Vec<u8>>> =
                    jobs::table.find(job_id).select(jobs::archive).get_result(conn).await.optional()?;
                if let Some(a) = archived.flatten() {
                    last = archive::unpack(&a)?.events.last().map(|e| e.sequence);
                }
            }
            let mut seq = last.unwrap_or(0);
            // Row by row inside the one transaction (cheap on both backends; diesel's batch
            // insert is not available for SQLite with these value tuples).
            for (kind, content) in &rows {
                seq += 1;
                diesel::insert_into(job_events::table)
                    .values((
                        job_events::job_id.eq(job_id),
                        job_events::sequence.eq(seq),
                        job_events::kind.eq(*kind),
                        job_events::content.eq(content.as_str()),
                        job_events::created_at.eq(at),
                    ))
                    .execute(conn)
                    .await?;
            }
            Ok(seq)
        });
        Ok(seq?)
    }

    async fn events(&self, job_id: &str, after: i64) -> Result<Vec<JobEvent>, StoreError> {
        // A point range on (job_id, sequence): cheap enough for the inline read pool, and
        // event streams read it on every wake-up.
        let read: DbResult<(Vec<archive::EventRow>, Option<Vec<u8>>)> = with_read!(self, |conn| {
            let rows = job_events::table
                .filter(job_events::job_id.eq(job_id))
                .filter(job_events::sequence.gt(after))
                .order(job_events::sequence.asc())
                .select((job_events::sequence, job_events::kind, job_events::content, job_events::created_at))
                .load(conn)
                .await?;
            let archived: Option<Option<Vec<u8>>> =
                jobs::table.find(job_id).select(jobs::archive).get_result(conn).await.optional()?;
            Ok((rows, archived.flatten()))
        });
        let (rows, archived) = read?;
        merge_events(archived, rows, after)
    }

    async fn events_of(&self, job_ids: &[String]) -> Result<HashMap<String, Vec<JobEvent>>, StoreError> {
        if job_ids.is_empty() {
            return Ok(HashMap::new());
        }
        type Read = (Vec<(String, archive::EventRow)>, Vec<(String, Option<Vec<u8>>)>);
        let read: DbResult<Read> = with_read!(self, |conn| {
            let rows = job_events::table
                .filter(job_events::job_id.eq_any(job_ids))
                .order((job_events::job_id.asc(), job_events::sequence.asc()))
                .select((
                    job_events::job_id,
                    (job_events::sequence, job_events::kind, job_events::content, job_events::created_at),
                ))
                .load(conn)
                .await?;
            let archived = jobs::table
                .filter(jobs::job_id.eq_any(job_ids))
                .filter(jobs::archive.is_not_null())
                .select((jobs::job_id, jobs::archive))
                .load(conn)
                .await?;
            Ok((rows, archived))
        });
        let (rows, archived) = read?;
        let mut by_job: HashMap<String, (Option<Vec<u8>>, Vec<archive::EventRow>)> = HashMap::new();
        for (id, a) in archived {
            by_job.entry(id).or_default().0 = a;
        }
        for (id, row) in rows {
            by_job.entry(id).or_default().1.push(row);
        }
        let mut out = HashMap::with_capacity(by_job.len());
        for (id, (archived, rows)) in by_job {
            let events = merge_events(archived, rows, 0)?;
            if !events.is_empty() {
                out.insert(id, events);
            }
        }
        Ok(out)
    }

    async fn release_job(&self, job_id: &str, now: Millis) -> Result<bool, StoreError> {
        let n: DbResult<usize> = with_tx!(self, |conn| {
            Ok(diesel::update(
                jobs::table
                    .find(job_id)
                    .filter(jobs::status.eq("in_progress"))
                    .filter(jobs::committed_version.is_null()),
            )
            .set((jobs::status.eq("pending"), jobs::updated_at.eq(now), jobs::lease_until.eq(None::<i64>)))
            .execute(conn)
            .await?)
        });
        Ok(n? > 0)
    }

    async fn sweep_jobs(&self, rules: &SweepRules) -> Result<Sweep, StoreError> {
        let now = rules.now;
        let leases_before = rules.requeue_leases_before;
        let sweep: DbResult<Sweep> = with_tx!(self, |conn| {
            let mut sweep = Sweep::default();
            let expired: Vec<(String, i32, Option<String>)> = jobs::table
                .filter(jobs::status.eq("in_progress"))
                .filter(jobs::lease_until.lt(leases_before))
                .select((jobs::job_id, jobs::attempts, jobs::committed_version))
                .load(conn)
                .await?;
            for (id, attempts, committed) in expired {
                let one = jobs::table
                    .find(&id)
                    .filter(jobs::status.eq("in_progress"))
                    .filter(jobs::lease_until.lt(leases_before));
                let given_up = match committed {
                    // Its document is committed: running the turn again would apply the
                    // changes twice. It ends here, not billed, saying where the changes went.
                    Some(version) => Some(format!(
                        "The server stopped while this job was finishing. Its changes were saved as version {version} and are kept; the turn was not charged."
                    )),
                    // This lease ran out with its worker: one more crash.
                    None if attempts + 1 >= rules.max_attempts => Some(format!(
                        "The job was interrupted {} times (the server stopped while running it) and was given up.",
                        attempts + 1
                    )),
                    None => None,
                };
                // Each update checks again what made the job a candidate: on PostgreSQL it may
                // have finished, renewed its lease or committed since the list was read (the
                // update re-reads the row under its lock). Only what changed is reported.
                if let Some(message) = given_up {
                    let n = diesel::update(one)
                        .set((
                            jobs::status.eq("failed"),
                            jobs::error.eq(Some(message)),
                            jobs::updated_at.eq(now),
                            jobs::finished_at.eq(Some(now)),
                            jobs::lease_until.eq(None::<i64>),
                        ))
                        .execute(conn)
                        .await?;
                    if n > 0 {
                        sweep.failed.push(id);
                    }
                } else {
                    // Not if it committed its document meanwhile: the next sweep ends it instead.
                    let n = diesel::update(one.filter(jobs::committed_version.is_null()))
                        .set((
                            jobs::status.eq("pending"),
                            jobs::attempts.eq(attempts + 1),
                            jobs::updated_at.eq(now),
                            jobs::lease_until.eq(None::<i64>),
                        ))
                        .execute(conn)
                        .await?;
                    if n > 0 {
                        sweep.requeued.push(id);
                    }
                }
            }
            let stale: Vec<String> = jobs::table
                .filter(jobs::status.eq("awaiting_approval"))
                .filter(jobs::updated_at.lt(rules.cancel_awaiting_before))
                .select(jobs::job_id)
                .load(conn)
                .await?;
            for id in stale {
                let n = diesel::update(
                    jobs::table
                        .find(&id)
                        .filter(jobs::status.eq("awaiting_approval"))
                        .filter(jobs::updated_at.lt(rules.cancel_awaiting_before)),
                )
                .set((
                    jobs::status.eq("cancelled"),
                    jobs::error.eq(Some("The proposed changes were not reviewed in time; the job was cancelled.")),
                    jobs::updated_at.eq(now),
                    jobs::finished_at.eq(Some(now)),
                ))
                .execute(conn)
                .await?;
                if n > 0 {
                    sweep.cancelled.push(id);
                }
            }
            let ended: Vec<&String> = sweep.failed.iter().chain(&sweep.cancelled).collect();
            if !ended.is_empty() {
                let rows: Vec<JobRow> =
                    jobs::table.filter(jobs::job_id.eq_any(ended)).select(JobRow::as_select()).load(conn).await?;
                for message in rows.iter().filter_map(webhook_message) {
                    queue_webhooks!(conn, &message, now);
                }
            }
            let old: Vec<String> = jobs::table
                .filter(jobs::finished_at.lt(rules.delete_finished_before))
                .select(jobs::job_id)
                .load(conn)
                .await?;
            if !old.is_empty() {
                // Before processing jobs that failed or were cancelled go, their end (state,
                // error, progress, time) is copied onto their attachments, which would otherwise
                // be left `processing` with no job to speak for them.
                use redline_ports::attachments::AttachmentState::{Cancelled, Failed, Processing};
                let ended: Vec<(String, String, Option<String>, i32, i64)> = jobs::table
                    .filter(jobs::job_id.eq_any(&old))
                    .filter(jobs::job_type.eq(JobType::AttachmentProcessing.as_str()))
                    .filter(jobs::status.eq_any([JobStatus::Failed.as_str(), JobStatus::Cancelled.as_str()]))
                    .select((jobs::job_id, jobs::status, jobs::error, jobs::progress, jobs::updated_at))
                    .load(conn)
                    .await?;
                for (job_id, status, error, progress, ended_at) in ended {
                    // The job's status names the attachment's state: `failed` or `cancelled`.
                    let state = if status == JobStatus::Cancelled.as_str() { Cancelled } else { Failed };
                    let rows: Vec<(String, i64)> = attachments::table
                        .filter(attachments::job_id.eq(&job_id))
                        .filter(attachments::state.eq_any([Processing.as_str(), Failed.as_str()]))
                        .select((attachments::attachment_id, attachments::updated_at))
                        .load(conn)
                        .await?;
                    for (attachment_id, was) in rows {
                        diesel::update(attachments::table.find(&attachment_id))
                            .set((
                                attachments::state.eq(state.as_str()),
                                attachments::error.eq(&error),
                                attachments::progress.eq(progress),
                                attachments::updated_at.eq(was.max(ended_at)),
                            ))
                            .execute(conn)
                            .await?;
                    }
                }
                diesel::delete(job_events::table.filter(job_events::job_id.eq_any(&old))).execute(conn).await?;
                sweep.deleted =
                    diesel::delete(jobs::table.filter(jobs::job_id.eq_any(&old))).execute(conn).await? as u64;
            }
            Ok(sweep)
        });
        let sweep = sweep?;
        archive_finished(self, rules.now - archive::ARCHIVE_AFTER_MS).await?;
        Ok(sweep)
    }

    async fn job_counts(&self) -> Result<Vec<(JobType, JobStatus, i64)>, StoreError> {
        // Through the status index: finished jobs (most rows) are not read.
        let rows: DbResult<Vec<(String, String, i64)>> = with_read!(self, |conn| Ok(jobs::table
            .filter(jobs::status.eq_any(ACTIVE))
            .group_by((jobs::job_type, jobs::status))
            .select((jobs::job_type, jobs::status, diesel::dsl::count_star()))
            .load(conn)
            .await?));
        rows?
            .into_iter()
            .map(|(t, s, n)| {
                let t = JobType::parse(&t).ok_or_else(|| corrupt("job type", &t))?;
                let s = JobStatus::parse(&s).ok_or_else(|| corrupt("job status", &s))?;
                Ok((t, s, n))
            })
            .collect()
    }

    async fn has_active_chat(&self, owner: Owner, session: &SessionId) -> Result<bool, StoreError> {
        let owner = owner.to_string();
        let sid = session.as_str();
        let n: DbResult<i64> = with_conn!(self, |conn| Ok(jobs::table
            .filter(jobs::owner.eq(&owner))
            .filter(jobs::session_id.eq(sid))
            .filter(jobs::job_type.eq("chat"))
            .filter(jobs::status.eq_any(ACTIVE))
            .count()
            .get_result(conn)
            .await?));
        Ok(n? > 0)
    }

    async fn delete_session_jobs(&self, owner: Owner, session: &SessionId) -> Result<Vec<JobRecord>, StoreError> {
        let owner = owner.to_string();
        let sid = session.as_str();
        let r: DbResult<Vec<JobRow>> = with_tx!(self, |conn| {
            let rows: Vec<JobRow> = jobs::table
                .filter(jobs::owner.eq(&owner))
                .filter(jobs::session_id.eq(sid))
                .select(JobRow::as_select())
                .load(conn)
                .await?;
            let ids: Vec<&str> = rows.iter().map(|r| r.job_id.as_str()).collect();
            diesel::delete(job_events::table.filter(job_events::job_id.eq_any(&ids))).execute(conn).await?;
            diesel::delete(jobs::table.filter(jobs::job_id.eq_any(&ids))).execute(conn).await?;
            Ok(rows)
        });
        r?.into_iter().map(JobRecord::try_from).collect()
    }
}

type MessageRow = (String, String, String, Option<String>, Option<String>, Option<String>, i64);

/// The columns of a [`MessageRow`], in its order.
const MESSAGE_COLUMNS: (
    chat_messages::message_id,
    chat_messages::role,
    chat_messages::content,
    chat_messages::job_id,
    chat_messages::version_before,
    chat_messages::version_after,
    chat_messages::created_at,
) = (
    chat_messages::message_id,
    chat_messages::role,
    chat_messages::content,
    chat_messages::job_id,
    chat_messages::version_before,
    chat_messages::version_after,
    chat_messages::created_at,
);

fn history_message(
    (message_id, role, content, job_id, version_before, version_after, created_at): MessageRow,
) -> HistoryMessage {
    HistoryMessage { message_id, role, content, job_id, version_before, version_after, created_at }
}

#[async_trait::async_trait]
impl HistoryStore for Db {
    async fn add_messages(
        &self,
        owner: Owner,
        session: &SessionId,
        messages: &[HistoryMessage],
    ) -> Result<(), StoreError> {
        let owner = owner.to_string();
        let sid = session.as_str();
        let r: DbResult<()> = with_tx!(self, |conn| {
            conn.lock_owner(&format!("{owner}/{sid}")).await?;
            let at = messages.first().map_or(0, |m| m.created_at);
            let before: Option<i64> = chat_messages::table
                .filter(chat_messages::owner.eq(&owner))
                .filter(chat_messages::session_id.eq(sid))
                .filter(chat_messages::created_at.le(at))
                .select(diesel::dsl::max(chat_messages::position))
                .get_result(conn)
                .await?;
            let mut position = before.unwrap_or(0);
            // Messages created later (a turn that committed after this one but finished
            // first) move down to make room.
            let room = i64::try_from(messages.len()).unwrap_or(i64::MAX);
            diesel::update(
                chat_messages::table
                    .filter(chat_messages::owner.eq(&owner))
                    .filter(chat_messages::session_id.eq(sid))
                    .filter(chat_messages::position.gt(position)),
            )
            .set(chat_messages::position.eq(chat_messages::position + room))
            .execute(conn)
            .await?;
            for m in messages {
                position += 1;
                diesel::insert_into(chat_messages::table)
                    .values((
                        chat_messages::message_id.eq(&m.message_id),
                        chat_messages::owner.eq(&owner),
                        chat_messages::session_id.eq(sid),
                        chat_messages::position.eq(position),
                        chat_messages::role.eq(&m.role),
                        chat_messages::content.eq(&m.content),
                        chat_messages::job_id.eq(&m.job_id),
                        chat_messages::version_before.eq(&m.version_before),
                        chat_messages::version_after.eq(&m.version_after),
                        chat_messages::active.eq(true),
                        chat_messages::created_at.eq(m.created_at),
                    ))
                    .execute(conn)
                    .await?;
            }
            Ok(())
        });
        Ok(r?)
    }

    async fn active_history(
        &self,
        owner: Owner,
        session: &SessionId,
        page: &PageRequest,
    ) -> Result<Page<HistoryMessage>, StoreError> {
        let owner = owner.to_string();
        let sid = session.as_str();
        let fetch = i64::try_from(page.fetch()).unwrap_or(i64::MAX);
        let after = page.after.clone();
        let rows: DbResult<Vec<(i64, MessageRow)>> = with_conn!(self, |conn| {
            let q = chat_messages::table
                .filter(chat_messages::owner.eq(&owner))
                .filter(chat_messages::session_id.eq(sid))
                .filter(chat_messages::active.eq(true))
                .into_boxed();
            Ok(keyset!(q, asc(chat_messages::position, chat_messages::message_id), &after, fetch)
                .select((chat_messages::position, MESSAGE_COLUMNS))
                .load(conn)
                .await?)
        });
        let page = Page::from_rows(rows?, page, |(position, m)| Cursor::new(*position, m.0.clone()));
        Ok(page.map(|(_, m)| history_message(m)))
    }

    async fn active_message(
        &self,
        owner: Owner,
        session: &SessionId,
        message_id: &str,
    ) -> Result<Option<HistoryMessage>, StoreError> {
        let owner = owner.to_string();
        let sid = session.as_str();
        let row: DbResult<Option<MessageRow>> = with_conn!(self, |conn| Ok(chat_messages::table
            .find(message_id)
            .filter(chat_messages::owner.eq(&owner))
            .filter(chat_messages::session_id.eq(sid))
            .filter(chat_messages::active.eq(true))
            .select(MESSAGE_COLUMNS)
            .get_result(conn)
            .await
            .optional()?));
        Ok(row?.map(history_message))
    }

    async fn recent_history(
        &self,
        owner: Owner,
        session: &SessionId,
        limit: usize,
    ) -> Result<Vec<HistoryMessage>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let owner = owner.to_string();
        let sid = session.as_str();
        let rows: DbResult<Vec<MessageRow>> = with_conn!(self, |conn| Ok(chat_messages::table
            .filter(chat_messages::owner.eq(&owner))
            .filter(chat_messages::session_id.eq(sid))
            .filter(chat_messages::active.eq(true))
            .order((chat_messages::position.desc(), chat_messages::message_id.desc()))
            .limit(limit)
            .select(MESSAGE_COLUMNS)
            .load(conn)
            .await?));
        Ok(rows?.into_iter().map(history_message).rev().collect())
    }

    async fn truncate_history(&self, owner: Owner, session: &SessionId, message_id: &str) -> Result<bool, StoreError> {
        let owner = owner.to_string();
        let sid = session.as_str();
        let r: DbResult<bool> = with_tx!(self, |conn| {
            let position: Option<i64> = chat_messages::table
                .find(message_id)
                .filter(chat_messages::owner.eq(&owner))
                .filter(chat_messages::session_id.eq(sid))
                .filter(chat_messages::active.eq(true))
                .select(chat_messages::position)
                .get_result(conn)
                .await
                .optional()?;
            let Some(position) = position else {
                return Ok(false);
            };
            diesel::update(
                chat_messages::table
                    .filter(chat_messages::owner.eq(&owner))
                    .filter(chat_messages::session_id.eq(sid))
                    .filter(chat_messages::position.ge(position)),
            )
            .set(chat_messages::active.eq(false))
            .execute(conn)
            .await?;
            Ok(true)
        });
        Ok(r?)
    }
}

/// Archives up to [`archive::ARCHIVE_BATCH`] jobs that finished before `before` (`archive.rs`),
/// in one transaction; answers how many. Found through `jobs_unarchived`, which holds only
/// the jobs not archived yet.
///
/// The row is deleted and written again rather than updated: on SQLite a row that shrinks in
/// place leaves its page as full as it was (jobs grow while they run, so their pages are
/// half empty after splits), while a delete lets SQLite merge the emptied pages and the new
/// row lands, packed, at the end of the table. On PostgreSQL either writes a new tuple.
async fn archive_finished(db: &Db, before: Millis) -> Result<usize, StoreError> {
    let n: DbResult<usize> = with_tx!(db, |conn| {
        let due: Vec<(JobRow, Option<String>)> = jobs::table
            .filter(jobs::archive.is_null())
            .filter(jobs::finished_at.lt(before))
            .order(jobs::finished_at.asc())
            .limit(archive::ARCHIVE_BATCH)
            .select((JobRow::as_select(), jobs::committed_version))
            .load(conn)
            .await?;
        let mut archived = 0;
        for (job, committed_version) in &due {
            let events: Vec<archive::EventRow> = job_events::table
                .filter(job_events::job_id.eq(&job.job_id))
                .order(job_events::sequence.asc())
                .select((job_events::sequence, job_events::kind, job_events::content, job_events::created_at))
                .load(conn)
                .await?;
            let packed = archive::pack(&job.request, &job.state, job.result.as_deref(), &job.metadata, &events);
            // Another replica's sweep may have archived it since the read: then it is left be.
            let n = diesel::delete(jobs::table.find(&job.job_id).filter(jobs::archive.is_null())).execute(conn).await?;
            if n == 0 {
                continue;
            }
            diesel::insert_into(jobs::table)
                .values((
                    jobs::job_id.eq(&job.job_id),
                    jobs::owner.eq(&job.owner),
                    jobs::session_id.eq(&job.session_id),
                    jobs::job_type.eq(&job.job_type),
                    jobs::status.eq(&job.status),
                    jobs::progress.eq(job.progress),
                    jobs::attempts.eq(job.attempts),
                    jobs::request.eq(""),
                    jobs::result.eq(None::<String>),
                    jobs::error.eq(&job.error),
                    jobs::metadata.eq(""),
                    jobs::state.eq(""),
                    jobs::created_at.eq(job.created_at),
                    jobs::updated_at.eq(job.updated_at),
                    jobs::finished_at.eq(job.finished_at),
                    jobs::lease_until.eq(job.lease_until),
                    jobs::committed_version.eq(committed_version),
                    jobs::archive.eq(Some(packed)),
                ))
                .execute(conn)
                .await?;
            diesel::delete(job_events::table.filter(job_events::job_id.eq(&job.job_id))).execute(conn).await?;
            archived += 1;
        }
        Ok(archived)
    });
    Ok(n?)
}
