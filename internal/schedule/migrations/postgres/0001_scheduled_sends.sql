-- One row per approved email kept to be sent later (send_at): its Done
-- file's name is the key. state: scheduled, then sending (one server took
-- it), then sent / failed / unknown; or expired / cancelled (moved to
-- Rejected/). raw is the whole email, base64.
CREATE TABLE scheduled_sends (
	done_name   TEXT   NOT NULL PRIMARY KEY,
	send_at_ms  BIGINT NOT NULL,
	state       TEXT   NOT NULL,
	request     TEXT   NOT NULL,
	content_sha TEXT   NOT NULL,
	tool        TEXT   NOT NULL,
	raw         TEXT   NOT NULL,
	thread_id   TEXT   NOT NULL,
	taken_by    TEXT   NOT NULL DEFAULT '',
	taken_ms    BIGINT NOT NULL DEFAULT 0,
	detail      TEXT   NOT NULL DEFAULT '',
	updated_ms  BIGINT NOT NULL
);
CREATE INDEX scheduled_sends_due ON scheduled_sends (state, send_at_ms);
