-- One row per running mailgate server: what it would do with an approval.
-- Times are Unix milliseconds. A row is deleted when its server stops
-- cleanly; a killed server's row goes stale (heartbeat_ms stops moving).
CREATE TABLE presence_servers (
	id            TEXT    PRIMARY KEY,
	pid           INTEGER NOT NULL,
	host          TEXT    NOT NULL,
	started_ms    INTEGER NOT NULL,
	heartbeat_ms  INTEGER NOT NULL,
	dev_mode      INTEGER NOT NULL,
	send_limit    INTEGER NOT NULL,
	approval_mode TEXT    NOT NULL,
	vault         TEXT    NOT NULL,
	transport     TEXT    NOT NULL,
	tools         TEXT    NOT NULL,
	mailbox       TEXT    NOT NULL,
	version       TEXT    NOT NULL
);
CREATE INDEX presence_servers_heartbeat ON presence_servers (heartbeat_ms);
