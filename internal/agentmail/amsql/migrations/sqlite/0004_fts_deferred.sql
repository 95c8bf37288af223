-- Full-text indexing leaves the sender's transaction.
--
-- FTS5 flushes a new segment (and rewrites its structure record and
-- averages) at every commit that changed the index: with one message per
-- commit that was ~50 µs of a ~115 µs send, while indexing 16 messages in
-- one transaction costs ~6 µs each. So a new message is only queued here,
-- in the transaction that stores it, and indexed in batches afterwards
-- (indexer.go): by the writing process shortly after its commit, and by
-- any search before it reads, so a search still sees every message stored
-- before it began, whichever process stored it.
--
-- A queued message is never in the index yet: deleting one just leaves the
-- queue (an FTS5 'delete' of a row it never indexed would corrupt it).

CREATE TABLE am_fts_pending (
    message_id INTEGER PRIMARY KEY
);

DROP TRIGGER am_messages_fts_ai;
CREATE TRIGGER am_messages_fts_ai AFTER INSERT ON am_messages BEGIN
    INSERT INTO am_fts_pending (message_id) VALUES (new.id);
END;

DROP TRIGGER am_messages_fts_ad;
CREATE TRIGGER am_messages_fts_ad AFTER DELETE ON am_messages BEGIN
    INSERT INTO am_messages_fts(am_messages_fts, rowid, subject, body_md)
        SELECT 'delete', old.id, old.subject, old.body_md
        WHERE NOT EXISTS (SELECT 1 FROM am_fts_pending WHERE message_id = old.id);
    DELETE FROM am_fts_pending WHERE message_id = old.id;
END;
