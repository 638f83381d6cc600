-- How many segments of one level FTS5 lets accumulate before it merges them into one: 8
-- instead of 4. Every attachment's transaction writes at least one segment, and merging
-- fewer, larger groups rewrites each entry fewer times: in the indexing bench 10-25 % less
-- time for the same searches (docs/benchmarks.md §4, seventh session). A larger
-- `hashsize` (16 MB instead of 1 MB, one segment per 10 MB attachment) was measured too
-- and made the large attachment slower; it is left at its default.
INSERT INTO attachment_fts (attachment_fts, rank) VALUES ('automerge', 8);
