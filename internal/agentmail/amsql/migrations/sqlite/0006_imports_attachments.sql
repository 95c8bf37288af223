-- Messages brought over from a four-tool system's .agentmail/ directory
-- (mailgate mailbox import). One row per imported message, keyed by the
-- mailbox file it came from and its original 8-character id, so importing
-- the same directory again adds nothing.
CREATE TABLE am_mb_imports (
    project_id INTEGER NOT NULL REFERENCES am_projects(id),
    mailbox    TEXT NOT NULL,
    orig_id    TEXT NOT NULL,
    PRIMARY KEY (project_id, mailbox, orig_id)
);

-- Files attached to a message (send_message's attachment_paths), stored as
-- they were read: path relative to the project directory, type, size and
-- SHA-256 of the bytes, checked again when they are read back.
CREATE TABLE am_attachments (
    id         INTEGER PRIMARY KEY,
    message_id INTEGER NOT NULL REFERENCES am_messages(id),
    seq        INTEGER NOT NULL,
    path       TEXT NOT NULL,
    media_type TEXT NOT NULL,
    size       INTEGER NOT NULL,
    sha256     TEXT NOT NULL,
    data       BLOB NOT NULL,
    UNIQUE (message_id, seq)
);
