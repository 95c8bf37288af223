-- The full-text index gains prefix indexes, and stops merging on writes.
--
-- A prefix query (retr*) without a prefix index of its length makes FTS5
-- gather the whole posting list of every word with that prefix from every
-- segment before it returns a row: 200 ms for retr* and 600 ms for mig* at
-- one million messages built by live sends, where a word takes 2 ms. With a
-- prefix index on 2, 3 and 4 characters FTS5 reads such a query as it reads
-- a word, newest first, stopping at the search window. (A longer prefix
-- names few enough words to stay cheap; a one-character one is refused by
-- nobody, but costs what it costs.)
--
-- The table is made again with the prefix option and rebuilt from
-- am_messages, which indexes every message, queued or not; so the queue is
-- emptied in the same transaction.
--
-- automerge 0: a write (the indexer's batch, or a search bringing the
-- index up to date) only flushes its own small segment, and the indexer
-- merges segments afterwards, in transactions of their own (indexer.go),
-- so no search waits for a merge. crisismerge still bounds the segments of
-- one level should no indexer run.

DROP TABLE am_messages_fts;
CREATE VIRTUAL TABLE am_messages_fts USING fts5(
    subject, body_md,
    content = 'am_messages', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '2 3 4'
);
INSERT INTO am_messages_fts(am_messages_fts) VALUES ('rebuild');
DELETE FROM am_fts_pending;
INSERT INTO am_messages_fts(am_messages_fts, rank) VALUES ('automerge', 0);
