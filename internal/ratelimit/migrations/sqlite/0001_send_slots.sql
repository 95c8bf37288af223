-- One row per send or reply that holds (or held) a slot in the rolling window.
-- at_ms is the reservation time in Unix milliseconds, as passed by the caller.
CREATE TABLE ratelimit_slots (
	id    INTEGER PRIMARY KEY AUTOINCREMENT,
	at_ms INTEGER NOT NULL,
	ref   TEXT    NOT NULL
);
CREATE INDEX ratelimit_slots_at ON ratelimit_slots (at_ms);
