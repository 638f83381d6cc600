-- The other listings read the same way as sessions and jobs (migration 000014): through an
-- index that starts with what scopes them (the owner, the organization, the member) and ends
-- with their whole sort key, the id last.
DROP INDEX attachments_session;
CREATE INDEX attachments_session ON attachments (owner, session_id, created_at, attachment_id);
DROP INDEX document_versions_session;
CREATE INDEX document_versions_session ON document_versions (owner, session_id, created_at, version_id);
-- The active history only: reverted messages stay in the table.
DROP INDEX chat_messages_session;
CREATE INDEX chat_messages_session ON chat_messages (owner, session_id, active, position, message_id);
DROP INDEX templates_owner;
CREATE INDEX templates_owner ON templates (owner, created_at, template_id);
DROP INDEX api_keys_owner;
CREATE INDEX api_keys_owner ON api_keys (owner, created_at, id);
CREATE INDEX org_members_org_created ON org_members (org_id, created_at, user_id);
-- A user's organizations are listed by the organizations' creation: a copy of it on the
-- membership (it never changes) lets one index of the member hold the whole sort key.
ALTER TABLE org_members ADD COLUMN org_created_at BIGINT NOT NULL DEFAULT 0;
UPDATE org_members
SET org_created_at = (SELECT o.created_at FROM organizations o WHERE o.id = org_members.org_id);
DROP INDEX org_members_user;
CREATE INDEX org_members_user ON org_members (user_id, org_created_at, org_id);
