DROP TABLE org_invitations;
