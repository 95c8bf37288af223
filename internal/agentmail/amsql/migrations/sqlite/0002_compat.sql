-- Compatibility sets (channels, mailbox) over the agent-mail core. Only what
-- the core has no place for gets a table: channel agents' UUID identities
-- and heartbeats, the UUID that sent a channel message, change
-- announcements, and mailbox availability. Channel messages themselves are
-- am_messages in thread 'channel.<name>', claims are am_reservations (reason
-- 'channels:<uuid>'), mailbox mail is am_messages with one am_recipients
-- copy. See docs/compat.md.

-- One row per register call. agent_id is the core identity the UUID acts
-- as; stale_us is set once, by the sweep that retired the agent.
CREATE TABLE am_ch_agents (
    uuid          TEXT PRIMARY KEY,
    project_id    INTEGER NOT NULL REFERENCES am_projects(id),
    agent_id      INTEGER NOT NULL REFERENCES am_agents(id),
    name          TEXT NOT NULL,
    role          TEXT NOT NULL,
    registered_us INTEGER NOT NULL,
    heartbeat_us  INTEGER NOT NULL,
    stale_us      INTEGER
);
CREATE INDEX am_ch_agents_live ON am_ch_agents(project_id, heartbeat_us) WHERE stale_us IS NULL;
CREATE INDEX am_ch_agents_core ON am_ch_agents(agent_id) WHERE stale_us IS NULL;

-- The channel agent (UUID) that sent a message; several UUIDs may act as
-- one core agent over time, so the sender's UUID is kept per message.
CREATE TABLE am_ch_senders (
    message_id  INTEGER PRIMARY KEY REFERENCES am_messages(id),
    sender_uuid TEXT NOT NULL
);

CREATE TABLE am_ch_changes (
    id           INTEGER PRIMARY KEY,
    project_id   INTEGER NOT NULL REFERENCES am_projects(id),
    agent_uuid   TEXT NOT NULL,
    file_path    TEXT NOT NULL,
    summary      TEXT NOT NULL,
    announced_us INTEGER NOT NULL
);
CREATE INDEX am_ch_changes_time ON am_ch_changes(project_id, announced_us);

-- Mailbox availability of a core agent (ready | work | offline) and when it
-- was last notified of unread mail (NULL = not notified since the reset).
CREATE TABLE am_mb_status (
    agent_id    INTEGER PRIMARY KEY REFERENCES am_agents(id),
    status      TEXT NOT NULL CHECK (status IN ('ready', 'work', 'offline')),
    updated_us  INTEGER NOT NULL,
    notified_us INTEGER
);

-- receive pops the oldest unread delivered copy of an agent.
CREATE INDEX am_recipients_unread ON am_recipients(agent_id, message_id) WHERE read_us IS NULL AND delivered_us IS NOT NULL;
