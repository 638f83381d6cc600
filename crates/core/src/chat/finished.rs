//! The rendered views of finished jobs, which never change: polling a finished job costs no
//! query of its events and no serialisation.

use redline_domain::time_util::Millis;
use redline_domain::{Owner, SessionId};

use super::view::JobView;

/// The JSON of finished jobs, which never change: polling a finished job costs no query of
/// its events and no serialisation. Entries leave at retention, on deletion (a `Job` signal,
/// from any replica) and oldest first beyond the capacity.
#[derive(Default)]
pub(super) struct FinishedViews {
    entries: std::sync::Mutex<(std::collections::HashMap<String, FinishedView>, std::collections::VecDeque<String>)>,
}

struct FinishedView {
    owner: Owner,
    session: SessionId,
    finished_at: Millis,
    json: bytes::Bytes,
}

const FINISHED_VIEWS: usize = 4096;

impl FinishedViews {
    pub(super) fn get(&self, job_id: &str, fresh_after: Millis) -> Option<(Owner, bytes::Bytes)> {
        let guard = self.entries.lock().ok()?;
        let e = guard.0.get(job_id)?;
        (e.finished_at > fresh_after).then(|| (e.owner, e.json.clone()))
    }

    pub(super) fn put(&self, job: &JobView, json: bytes::Bytes) {
        let (Some(finished_at), Ok(mut guard)) = (job.finished_at, self.entries.lock()) else {
            return;
        };
        let (map, order) = &mut *guard;
        if map
            .insert(
                job.job_id.clone(),
                FinishedView { owner: job.owner, session: job.session_id.clone(), finished_at, json },
            )
            .is_none()
        {
            order.push_back(job.job_id.clone());
        }
        while order.len() > FINISHED_VIEWS {
            if let Some(old) = order.pop_front() {
                map.remove(&old);
            }
        }
    }

    pub(super) fn evict(&self, job_id: &str) {
        if let Ok(mut guard) = self.entries.lock() {
            guard.0.remove(job_id);
        }
    }

    pub(super) fn evict_session(&self, owner: Owner, session: &SessionId) {
        if let Ok(mut guard) = self.entries.lock() {
            guard.0.retain(|_, e| !(e.owner == owner && &e.session == session));
        }
    }
}
