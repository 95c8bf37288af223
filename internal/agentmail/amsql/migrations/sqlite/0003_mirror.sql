-- Durable outbox for the agent-mail mirrors (Gmail, vault archive).
--
-- A sink (a consumer: 'gmail', 'archive') registers itself in
-- am_mirror_sinks once; from then on an AFTER INSERT trigger on am_messages
-- enqueues every new message for every registered sink in the same
-- transaction that writes the message. So whatever tool set or process
-- writes a message, it is queued exactly when it commits, and never when
-- the write rolls back. The trigger costs one indexed insert per sink: the
-- agent's call never waits on Gmail or the file system.
--
-- A row leaves the outbox only when its sink has finished with it (the
-- sink records the outcome in the same transaction), so a crash, an outage
-- or a 429 storm loses nothing. lease_owner/lease_until_us let several
-- processes drain one outbox without two of them working on a row at once.

CREATE TABLE am_mirror_sinks (
    name       TEXT PRIMARY KEY,
    created_us INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE am_mirror_outbox (
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
CREATE INDEX am_mirror_outbox_due ON am_mirror_outbox(sink, next_us);
CREATE INDEX am_mirror_outbox_thread ON am_mirror_outbox(sink, project_id, thread_key, message_id);

CREATE TRIGGER am_mirror_outbox_ai AFTER INSERT ON am_messages BEGIN
    INSERT OR IGNORE INTO am_mirror_outbox (sink, message_id, project_id, thread_key)
    SELECT s.name, new.id, new.project_id, COALESCE(new.thread_id, CAST(new.id AS TEXT))
    FROM am_mirror_sinks s;
END;

-- What the Gmail mirror did: one row per mirrored message (the idempotency
-- record) and one per agent thread (the Gmail thread it lives in).
CREATE TABLE am_mirror_gmail_messages (
    message_id      INTEGER PRIMARY KEY,
    gmail_id        TEXT NOT NULL,
    gmail_thread_id TEXT NOT NULL,
    rfc_message_id  TEXT NOT NULL,
    mirrored_us     INTEGER NOT NULL
);

CREATE TABLE am_mirror_gmail_threads (
    project_id      INTEGER NOT NULL,
    thread_key      TEXT NOT NULL,
    gmail_thread_id TEXT NOT NULL,
    PRIMARY KEY (project_id, thread_key)
) WITHOUT ROWID;

