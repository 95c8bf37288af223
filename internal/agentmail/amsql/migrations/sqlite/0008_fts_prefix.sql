-- The full-text index gains prefix indexes, and stops merging on writes.
--
-- A prefix query (retr*) without a prefix index of its length makes FTS5
-- gather the whole posting list of every word with that prefix from every
-- segment before it returns a row: 200 ms for retr* and 600 ms for mig* at
-- one million messages built by live sends, where a word takes 2 ms. With a
-- prefix index on 2, 3 and 4 characters FTS5 reads such a query as it reads
-- a word, newest first, stopping at the search window.
--
-- A longer prefix (migra*) would still gather whole posting lists, so the
-- index's words are kept in am_fts_terms, and a search turns such a prefix
-- into the few words it names, ORed (sqlite/fts5.go): words FTS5 reads
-- lazily. The words come from FTS5's own tokenizer: every message leaving
-- the queue (whoever indexes it, this version's indexer or an older one)
-- is also written, by a trigger, to am_fts_batch, a contentless index of
-- the messages indexed since its words were last moved to am_fts_terms
-- (which the indexer does, reading them with fts5vocab); a search reads
-- both.
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

CREATE TABLE am_fts_terms (
    term TEXT PRIMARY KEY
) WITHOUT ROWID;
CREATE VIRTUAL TABLE temp.am_messages_fts_words USING fts5vocab(main, am_messages_fts, row);
INSERT INTO am_fts_terms (term) SELECT term FROM temp.am_messages_fts_words;
DROP TABLE temp.am_messages_fts_words;

CREATE VIRTUAL TABLE am_fts_batch USING fts5(
    subject, body_md,
    content = '', detail = none,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE am_fts_batch_terms USING fts5vocab(am_fts_batch, row);
CREATE TRIGGER am_fts_pending_ad AFTER DELETE ON am_fts_pending BEGIN
    INSERT INTO am_fts_batch (subject, body_md) SELECT subject, body_md FROM am_messages WHERE id = old.message_id;
END;
