INSERT INTO attachment_fts (attachment_fts, rank) VALUES ('automerge', 4);
