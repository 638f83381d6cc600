DROP TABLE verified_emails;
DROP TABLE email_verifications;
