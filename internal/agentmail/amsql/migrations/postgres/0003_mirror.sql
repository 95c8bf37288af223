-- Durable outbox for the agent-mail mirrors (Gmail, vault archive), as in
-- the SQLite schema (see its 0003_mirror.sql for the design).
--
-- A sink registers itself in am_mirror_sinks once; from then on an AFTER
-- INSERT trigger on am_messages enqueues every new message for every
-- registered sink in the transaction that writes the message, so it is
-- queued exactly when that transaction commits. A row leaves the outbox
-- only when its sink has finished with it; lease_owner/lease_until_us let
-- several servers drain one outbox without two of them working on a row.

CREATE TABLE am_mirror_sinks (
    name       TEXT PRIMARY KEY,
    created_us BIGINT NOT NULL
);

CREATE TABLE am_mirror_outbox (
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
CREATE INDEX am_mirror_outbox_due ON am_mirror_outbox(sink, next_us);
CREATE INDEX am_mirror_outbox_thread ON am_mirror_outbox(sink, project_id, thread_key, message_id);

CREATE FUNCTION am_mirror_outbox_enqueue() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO am_mirror_outbox (sink, message_id, project_id, thread_key)
    SELECT s.name, NEW.id, NEW.project_id, COALESCE(NEW.thread_id, NEW.id::text)
    FROM am_mirror_sinks s
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER am_mirror_outbox_ai AFTER INSERT ON am_messages
    FOR EACH ROW EXECUTE FUNCTION am_mirror_outbox_enqueue();

-- What the Gmail mirror did: one row per mirrored message (the idempotency
-- record) and one per agent thread (the Gmail thread it lives in).
CREATE TABLE am_mirror_gmail_messages (
    message_id      BIGINT PRIMARY KEY,
    gmail_id        TEXT NOT NULL,
    gmail_thread_id TEXT NOT NULL,
    rfc_message_id  TEXT NOT NULL,
    mirrored_us     BIGINT NOT NULL
);

CREATE TABLE am_mirror_gmail_threads (
    project_id      BIGINT NOT NULL,
    thread_key      TEXT COLLATE "C" NOT NULL,
    gmail_thread_id TEXT NOT NULL,
    PRIMARY KEY (project_id, thread_key)
);
