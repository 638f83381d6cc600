//! A session's chat history, and revert to the version before one of its messages.

use redline_domain::{Owner, SessionId};
use redline_ports::documents::{CommitOutcome, DocumentRecord, NewVersion};
use redline_ports::jobs::HistoryMessage;

use super::{Chat, ChatError, ChatResult};

/// A job's history messages.
pub struct History {
    pub session_id: SessionId,
    pub messages: Vec<HistoryMessage>,
}

impl Chat {
    /// The session's active chat history (404 when the session does not exist).
    pub async fn history(&self, owner: Owner, session: &SessionId) -> ChatResult<History> {
        if self.ports.store.document(owner, session).await?.is_none() {
            return Err(ChatError::SessionNotFound);
        }
        let messages = self.ports.history.active_history(owner, session).await?;
        Ok(History { session_id: session.clone(), messages })
    }
    /// Restores the document to the version before `message_id` and drops that message and
    /// the later ones from the active history.
    pub async fn revert(&self, owner: Owner, session: &SessionId, message_id: &str) -> ChatResult<DocumentRecord> {
        let history = self.history(owner, session).await?;
        let message = history.messages.iter().find(|m| m.message_id == message_id).ok_or(ChatError::MessageNotFound)?;
        if self.ports.jobs.has_active_chat(owner, session).await? {
            return Err(ChatError::Conflict(
                "A chat job is running on this session; wait for it to finish or cancel it, then revert.".to_owned(),
            ));
        }
        let Some(target) = message.version_before.clone() else {
            return Err(ChatError::NoSnapshot(
                "This message predates revert: it has no version snapshot to restore.".to_owned(),
            ));
        };
        let version = self
            .ports
            .store
            .version(owner, session, &target)
            .await?
            .ok_or_else(|| ChatError::NoSnapshot("The version before this message no longer exists.".to_owned()))?;
        let new = NewVersion {
            version_id: crate::documents::new_version_id(),
            html: version.html,
            section_count: version.section_count,
            source: "revert".to_owned(),
            title: None,
            now: self.now(),
        };
        let record = match self.ports.store.commit_version(owner, session, None, &new).await? {
            CommitOutcome::Committed(r) => r,
            CommitOutcome::Stale { .. } => {
                return Err(ChatError::Conflict("The document changed during the revert; try again.".to_owned()))
            }
        };
        self.ports.history.truncate_history(owner, session, message_id).await?;
        Ok(record)
    }
}
