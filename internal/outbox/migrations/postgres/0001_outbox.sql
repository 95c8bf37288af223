-- The mirror's schema on PostgreSQL, as in the SQLite one (see its
-- 0001_outbox.sql for the design and for why every statement is guarded).
--
-- These tables belong to the mirror, which applies this file under its own
-- component name ("mirror"). The agent-mail migration 0003_mirror.sql
-- created the very same objects on every database opened before; applied
-- migrations never change, so it stays, and this file repeats its
-- definitions word for word behind IF NOT EXISTS: it keeps every existing
-- row and builds what is missing. PostgreSQL has no CREATE FUNCTION or
-- CREATE TRIGGER IF NOT EXISTS, hence the DO block, which creates each only
-- when it is missing (CREATE OR REPLACE would rewrite a function that
-- another role may own); the function's body is quoted $fn$ inside it.
--
-- A sink registers itself in am_mirror_sinks once; from then on an AFTER
-- INSERT trigger on am_messages (the one agent-mail table the mirror's
-- schema names, reading only the new row's id, project_id and thread_id)
-- enqueues every new message for every registered sink in the transaction
-- that writes the message, so it is queued exactly when that transaction
-- commits. A row leaves the outbox only when its sink has finished with it;
-- lease_owner/lease_until_us let several servers drain one outbox without
-- two of them working on a row.

CREATE TABLE IF NOT EXISTS am_mirror_sinks (
    name       TEXT PRIMARY KEY,
    created_us BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS am_mirror_outbox (
    sink           TEXT NOT NULL,
    message_id     BIGINT NOT NULL,
    project_id     BIGINT NOT NULL,
    -- The agent thread: thread_id, or the message's own id when it names
    -- none. Rows of one thread are handed out in id order, one at a time.
    thread_key     TEXT COLLATE "C" NOT NULL,
    attempts       INTEGER NOT NULL DEFAULT 0,
    next_us        BIGINT NOT NULL DEFAULT 0,
    lease_owner    TEXT,
    lease_until_us BIGINT,
    last_error     TEXT,
    PRIMARY KEY (sink, message_id)
);
CREATE INDEX IF NOT EXISTS am_mirror_outbox_due ON am_mirror_outbox(sink, next_us);
CREATE INDEX IF NOT EXISTS am_mirror_outbox_thread ON am_mirror_outbox(sink, project_id, thread_key, message_id);

DO $$
BEGIN
    IF to_regproc('am_mirror_outbox_enqueue') IS NULL THEN
CREATE FUNCTION am_mirror_outbox_enqueue() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    INSERT INTO am_mirror_outbox (sink, message_id, project_id, thread_key)
    SELECT s.name, NEW.id, NEW.project_id, COALESCE(NEW.thread_id, NEW.id::text)
    FROM am_mirror_sinks s
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$fn$;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_trigger
                   WHERE tgname = 'am_mirror_outbox_ai' AND tgrelid = 'am_messages'::regclass) THEN
        CREATE TRIGGER am_mirror_outbox_ai AFTER INSERT ON am_messages
            FOR EACH ROW EXECUTE FUNCTION am_mirror_outbox_enqueue();
    END IF;
END
$$;

-- What the Gmail mirror did: one row per mirrored message (the idempotency
-- record) and one per agent thread (the Gmail thread it lives in).
CREATE TABLE IF NOT EXISTS am_mirror_gmail_messages (
    message_id      BIGINT PRIMARY KEY,
    gmail_id        TEXT NOT NULL,
    gmail_thread_id TEXT NOT NULL,
    rfc_message_id  TEXT NOT NULL,
    mirrored_us     BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS am_mirror_gmail_threads (
    project_id      BIGINT NOT NULL,
    thread_key      TEXT COLLATE "C" NOT NULL,
    gmail_thread_id TEXT NOT NULL,
    PRIMARY KEY (project_id, thread_key)
);
