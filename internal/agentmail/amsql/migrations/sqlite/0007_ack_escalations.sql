-- ACK escalation (escalation.go): one row per step taken for one unacked
-- copy of an ack_required message (1 reminder to the recipient, 2 notice to
-- the sender). The row is inserted in the transaction that sends the step's
-- message, and the primary key lets only one of several processes racing on
-- the same copy insert it: that one sends, the others skip.
CREATE TABLE am_ack_escalations (
    message_id    INTEGER NOT NULL,
    agent_id      INTEGER NOT NULL REFERENCES am_agents(id),
    step          INTEGER NOT NULL,
    at_us         INTEGER NOT NULL,
    escalation_id INTEGER,
    PRIMARY KEY (message_id, agent_id, step)
) WITHOUT ROWID;

-- The escalation worker's scan: recent ack_required messages only.
CREATE INDEX am_messages_ack ON am_messages(created_us) WHERE ack_required = 1;
