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
