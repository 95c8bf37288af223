-- Requests mailgate wrote to Pending_Approval/. In content mode an approval
-- is honoured only if its request_id and content_sha256 are here and not yet
-- consumed. Times are Unix milliseconds.
CREATE TABLE approval_requests (
	request_id  TEXT PRIMARY KEY,
	sha256      TEXT NOT NULL,
	created_ms  INTEGER NOT NULL,
	consumed_ms INTEGER
);
CREATE INDEX approval_requests_created ON approval_requests (created_ms);
