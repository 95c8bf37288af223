-- The mirror's schema: its durable outbox and the Gmail mirror's records.
--
-- These tables belong to the mirror, which applies this file under its own
-- component name ("mirror"). Until this file existed, the agent-mail
-- migration 0003_mirror.sql created the very same tables, index and trigger,
-- so every store opened before has them, with rows in them. Applied
-- migrations never change (a running older mailgate on the same store
-- trusts that its recorded 0003 built them), so agent-mail's 0003 stays as
-- it was, and this file repeats its definitions word for word behind
-- IF NOT EXISTS: on a store that has them it changes nothing and keeps every
-- row; on one that lacks them it builds them. The am_mirror_ prefix is
-- theirs from then: renaming tables would mean copying live outboxes.
--
-- A sink (a consumer: 'gmail', 'archive') registers itself in
-- am_mirror_sinks once; from then on an AFTER INSERT trigger on am_messages
-- enqueues every new message for every registered sink in the same
-- transaction that writes the message. So whatever tool set or process
-- writes a message, it is queued exactly when it commits, and never when
-- the write rolls back. The trigger costs one indexed insert per sink: the
-- agent's call never waits on Gmail or the file system. The trigger is the
-- one place the mirror's schema names an agent-mail table, and it reads only
-- the new row's id, project_id and thread_id: queuing in the writer's own
-- transaction is what makes the outbox lose nothing, and no call of
-- agent-mail's API can join that transaction. It needs agent-mail's schema
-- (migrated first).
--
-- A row leaves the outbox only when its sink has finished with it (the
-- sink records the outcome in the same transaction), so a crash, an outage
-- or a 429 storm loses nothing. lease_owner/lease_until_us let several
-- processes drain one outbox without two of them working on a row at once.

CREATE TABLE IF NOT EXISTS am_mirror_sinks (
    name       TEXT PRIMARY KEY,
    created_us INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS am_mirror_outbox (
    sink           TEXT NOT NULL,
    message_id     INTEGER NOT NULL,
    project_id     INTEGER NOT NULL,
    -- The agent thread: thread_id, or the message's own id when it names
    -- none (replies to it then carry that id as thread_id). Rows of one
    -- thread are handed out in id order, one at a time, so each message
    -- can thread onto the ones before it.
    thread_key     TEXT NOT NULL,
    attempts       INTEGER NOT NULL DEFAULT 0,
    next_us        INTEGER NOT NULL DEFAULT 0,
    lease_owner    TEXT,
    lease_until_us INTEGER,
    last_error     TEXT,
    PRIMARY KEY (sink, message_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS am_mirror_outbox_due ON am_mirror_outbox(sink, next_us);
CREATE INDEX IF NOT EXISTS am_mirror_outbox_thread ON am_mirror_outbox(sink, project_id, thread_key, message_id);

CREATE TRIGGER IF NOT EXISTS am_mirror_outbox_ai AFTER INSERT ON am_messages BEGIN
    INSERT OR IGNORE INTO am_mirror_outbox (sink, message_id, project_id, thread_key)
    SELECT s.name, new.id, new.project_id, COALESCE(new.thread_id, CAST(new.id AS TEXT))
    FROM am_mirror_sinks s;
END;

-- What the Gmail mirror did: one row per mirrored message (the idempotency
-- record) and one per agent thread (the Gmail thread it lives in).
CREATE TABLE IF NOT EXISTS am_mirror_gmail_messages (
    message_id      INTEGER PRIMARY KEY,
    gmail_id        TEXT NOT NULL,
    gmail_thread_id TEXT NOT NULL,
    rfc_message_id  TEXT NOT NULL,
    mirrored_us     INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS am_mirror_gmail_threads (
    project_id      INTEGER NOT NULL,
    thread_key      TEXT NOT NULL,
    gmail_thread_id TEXT NOT NULL,
    PRIMARY KEY (project_id, thread_key)
) WITHOUT ROWID;
