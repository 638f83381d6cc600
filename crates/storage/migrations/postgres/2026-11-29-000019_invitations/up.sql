-- Organization membership by invitation (docs/api.md, "Accounts, keys and organizations"):
-- an owner or admin invites an address; the organization is the invitee's only once they
-- accept through the link mailed to the address (its token, stored as a SHA-256: accepting
-- proves the mailbox, not only an account that claims the address). One pending invitation
-- per organization and address.
CREATE TABLE org_invitations (
    id TEXT PRIMARY KEY NOT NULL,
    token_hash TEXT NOT NULL,
    org_id TEXT NOT NULL,
    email TEXT NOT NULL,
    role TEXT NOT NULL,
    invited_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX org_invitations_org_email ON org_invitations (org_id, email);
CREATE UNIQUE INDEX org_invitations_token ON org_invitations (token_hash);
