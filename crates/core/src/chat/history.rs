//! A session's chat history, and revert to the version before one of its messages.

use redline_domain::page::{Cursor, PageRequest};
use redline_domain::{Owner, SessionId};
use redline_ports::documents::{CommitOutcome, DocumentRecord, NewVersion};
use redline_ports::jobs::HistoryMessage;

use super::{Chat, ChatError, ChatResult};

/// A page of a session's history messages.
pub struct History {
    pub session_id: SessionId,
    pub messages: Vec<HistoryMessage>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<Cursor>,
}

impl Chat {
    /// One page of the session's active chat history, oldest first (404 when the session does
    /// not exist).
    pub async fn history(&self, owner: Owner, session: &SessionId, page: &PageRequest) -> ChatResult<History> {
        self.session_exists(owner, session).await?;
        let page = self.ports.history.active_history(owner, session, page).await?;
        Ok(History { session_id: session.clone(), messages: page.items, next: page.next })
    }

    async fn session_exists(&self, owner: Owner, session: &SessionId) -> ChatResult<()> {
        match self.ports.store.document(owner, session).await? {
            Some(_) => Ok(()),
            None => Err(ChatError::SessionNotFound),
        }
    }

    /// Restores the document to the version before `message_id` and drops that message and
    /// the later ones from the active history.
    pub async fn revert(&self, owner: Owner, session: &SessionId, message_id: &str) -> ChatResult<DocumentRecord> {
        self.session_exists(owner, session).await?;
        let message =
            self.ports.history.active_message(owner, session, message_id).await?.ok_or(ChatError::MessageNotFound)?;
        if self.ports.jobs.has_active_chat(owner, session).await? {
            return Err(ChatError::Conflict(
                "A chat job is running on this session; wait for it to finish or cancel it, then revert.".to_owned(),
            ));
        }
        let Some(target) = message.version_before else {
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
