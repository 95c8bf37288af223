-- Agent-mail schema. Times are INTEGER microseconds since the Unix epoch
-- (UTC), NULL when unset: compact, indexable and free of format drift
-- between processes. Tables carry the am_ prefix because other components
-- share this SQLite file.

CREATE TABLE am_projects (
    id         INTEGER PRIMARY KEY,
    slug       TEXT NOT NULL UNIQUE,
    human_key  TEXT NOT NULL UNIQUE,
    created_us INTEGER NOT NULL
);

CREATE TABLE am_agents (
    id                 INTEGER PRIMARY KEY,
    project_id         INTEGER NOT NULL REFERENCES am_projects(id),
    name               TEXT NOT NULL COLLATE NOCASE,
    program            TEXT NOT NULL DEFAULT '',
    model              TEXT NOT NULL DEFAULT '',
    task_description   TEXT NOT NULL DEFAULT '',
    inception_us       INTEGER NOT NULL,
    last_active_us     INTEGER NOT NULL,
    attachments_policy TEXT NOT NULL DEFAULT 'auto',
    contact_policy     TEXT NOT NULL DEFAULT 'auto',
    UNIQUE (project_id, name)
);

CREATE TABLE am_messages (
    id           INTEGER PRIMARY KEY,
    project_id   INTEGER NOT NULL REFERENCES am_projects(id),
    sender_id    INTEGER NOT NULL REFERENCES am_agents(id),
    thread_id    TEXT,
    subject      TEXT NOT NULL,
    body_md      TEXT NOT NULL,
    importance   TEXT NOT NULL DEFAULT 'normal',
    ack_required INTEGER NOT NULL DEFAULT 0,
    created_us   INTEGER NOT NULL,
    reply_to     INTEGER
);
CREATE INDEX am_messages_thread ON am_messages(project_id, thread_id) WHERE thread_id IS NOT NULL;
CREATE INDEX am_messages_sender ON am_messages(sender_id, created_us);

-- One row per recipient copy. delivered_us is NULL while the recipient's
-- contact policy holds the message (held, never dropped).
CREATE TABLE am_recipients (
    message_id   INTEGER NOT NULL REFERENCES am_messages(id),
    agent_id     INTEGER NOT NULL REFERENCES am_agents(id),
    ord          INTEGER NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('to', 'cc', 'bcc')),
    delivered_us INTEGER,
    held_reason  TEXT,
    read_us      INTEGER,
    ack_us       INTEGER,
    PRIMARY KEY (message_id, agent_id)
) WITHOUT ROWID;
CREATE INDEX am_recipients_inbox ON am_recipients(agent_id, message_id);
CREATE INDEX am_recipients_held ON am_recipients(agent_id, message_id) WHERE delivered_us IS NULL;

-- Full-text index over subject and body, kept in step by triggers
-- (external content: the text is stored once, in am_messages).
CREATE VIRTUAL TABLE am_messages_fts USING fts5(
    subject, body_md,
    content = 'am_messages', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER am_messages_fts_ai AFTER INSERT ON am_messages BEGIN
    INSERT INTO am_messages_fts(rowid, subject, body_md) VALUES (new.id, new.subject, new.body_md);
END;
CREATE TRIGGER am_messages_fts_ad AFTER DELETE ON am_messages BEGIN
    INSERT INTO am_messages_fts(am_messages_fts, rowid, subject, body_md) VALUES ('delete', old.id, old.subject, old.body_md);
END;

-- Directed contact permissions: from may write to `to` once approved.
CREATE TABLE am_contacts (
    id            INTEGER PRIMARY KEY,
    from_agent_id INTEGER NOT NULL REFERENCES am_agents(id),
    to_agent_id   INTEGER NOT NULL REFERENCES am_agents(id),
    status        TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'blocked')),
    reason        TEXT NOT NULL DEFAULT '',
    created_us    INTEGER NOT NULL,
    updated_us    INTEGER NOT NULL,
    expires_us    INTEGER,
    UNIQUE (from_agent_id, to_agent_id)
);
CREATE INDEX am_contacts_to ON am_contacts(to_agent_id);

CREATE TABLE am_reservations (
    id           INTEGER PRIMARY KEY,
    project_id   INTEGER NOT NULL REFERENCES am_projects(id),
    agent_id     INTEGER NOT NULL REFERENCES am_agents(id),
    path_pattern TEXT NOT NULL,
    exclusive    INTEGER NOT NULL,
    reason       TEXT NOT NULL DEFAULT '',
    created_us   INTEGER NOT NULL,
    expires_us   INTEGER NOT NULL,
    released_us  INTEGER
);
CREATE INDEX am_reservations_active ON am_reservations(project_id, expires_us) WHERE released_us IS NULL;
CREATE INDEX am_reservations_agent ON am_reservations(agent_id);
