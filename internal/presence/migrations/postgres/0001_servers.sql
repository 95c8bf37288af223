-- One row per running mailgate server: what it would do with an approval.
-- Times are Unix milliseconds. A row is deleted when its server stops
-- cleanly; a killed server's row goes stale (heartbeat_ms stops moving).
CREATE TABLE presence_servers (
	id            TEXT    PRIMARY KEY,
	pid           BIGINT  NOT NULL,
	host          TEXT    NOT NULL,
	started_ms    BIGINT  NOT NULL,
	heartbeat_ms  BIGINT  NOT NULL,
	dev_mode      BIGINT  NOT NULL,
	send_limit    BIGINT  NOT NULL,
	approval_mode TEXT    NOT NULL,
	vault         TEXT    NOT NULL,
	transport     TEXT    NOT NULL,
	tools         TEXT    NOT NULL,
	mailbox       TEXT    NOT NULL,
	version       TEXT    NOT NULL
);
CREATE INDEX presence_servers_heartbeat ON presence_servers (heartbeat_ms);
