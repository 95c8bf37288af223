-- The archive's record of agent profiles and file reservations (issue 30,
-- item 6): what it needs to write agents/<Name>/profile.json and
-- file_reservations/<id>.json in the vault. These tables belong to the
-- archive (component "archive").
--
-- am_archive_events is the history: one row per registration or profile
-- change of an agent and per grant, renewal or release of a reservation,
-- written by triggers in the transaction that makes the change, so the
-- history never misses one and never records one that rolled back. It is
-- kept (a reservation's file lists its events). am_archive_pending is the
-- archive's work queue: one row per agent or reservation whose file is
-- behind, carrying the newest event's seq; a worker rewrites the file from
-- the current state and deletes the row only if its seq is unchanged, so a
-- change that lands while the file is being written is written again.
--
-- The triggers record nothing until the archive has first started on this
-- store (a row in am_archive_state_cursor); that start records what exists
-- in the same transaction. Like the mirror's outbox trigger, they are the
-- only place the archive's schema names agent-mail tables, reading only the
-- changed row.

CREATE TABLE am_archive_state_cursor (
    name       TEXT PRIMARY KEY,
    started_us INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE am_archive_events (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    kind       TEXT NOT NULL CHECK (kind IN ('agent', 'reservation')),
    ref_id     INTEGER NOT NULL,
    event      TEXT NOT NULL,
    at_us      INTEGER NOT NULL,
    expires_us INTEGER
);
CREATE INDEX am_archive_events_ref ON am_archive_events(kind, ref_id, seq);

CREATE TABLE am_archive_pending (
    kind   TEXT NOT NULL,
    ref_id INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    PRIMARY KEY (kind, ref_id)
) WITHOUT ROWID;

CREATE TRIGGER am_archive_agents_ai AFTER INSERT ON am_agents
WHEN EXISTS (SELECT 1 FROM am_archive_state_cursor) BEGIN
    INSERT INTO am_archive_events (kind, ref_id, event, at_us) VALUES ('agent', new.id, 'registered', new.inception_us);
    INSERT OR REPLACE INTO am_archive_pending (kind, ref_id, seq)
        SELECT 'agent', new.id, max(seq) FROM am_archive_events WHERE kind = 'agent' AND ref_id = new.id;
END;

-- last_active_us alone changes on every call: it is written with the next
-- profile change, not on its own.
CREATE TRIGGER am_archive_agents_au AFTER UPDATE ON am_agents
WHEN EXISTS (SELECT 1 FROM am_archive_state_cursor)
 AND (old.name IS NOT new.name OR old.program IS NOT new.program OR old.model IS NOT new.model
      OR old.task_description IS NOT new.task_description OR old.attachments_policy IS NOT new.attachments_policy
      OR old.contact_policy IS NOT new.contact_policy) BEGIN
    INSERT INTO am_archive_events (kind, ref_id, event, at_us) VALUES ('agent', new.id, 'updated', new.last_active_us);
    INSERT OR REPLACE INTO am_archive_pending (kind, ref_id, seq)
        SELECT 'agent', new.id, max(seq) FROM am_archive_events WHERE kind = 'agent' AND ref_id = new.id;
END;

CREATE TRIGGER am_archive_reservations_ai AFTER INSERT ON am_reservations
WHEN EXISTS (SELECT 1 FROM am_archive_state_cursor) BEGIN
    INSERT INTO am_archive_events (kind, ref_id, event, at_us, expires_us)
        VALUES ('reservation', new.id, 'granted', new.created_us, new.expires_us);
    INSERT OR REPLACE INTO am_archive_pending (kind, ref_id, seq)
        SELECT 'reservation', new.id, max(seq) FROM am_archive_events WHERE kind = 'reservation' AND ref_id = new.id;
END;

-- A renewal (or a re-grant of the same pattern) moves expires_us; the row
-- has no time of the change, so the event takes the database's clock.
CREATE TRIGGER am_archive_reservations_renew AFTER UPDATE OF expires_us ON am_reservations
WHEN EXISTS (SELECT 1 FROM am_archive_state_cursor) AND old.expires_us IS NOT new.expires_us BEGIN
    INSERT INTO am_archive_events (kind, ref_id, event, at_us, expires_us)
        VALUES ('reservation', new.id, 'renewed', CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER), new.expires_us);
    INSERT OR REPLACE INTO am_archive_pending (kind, ref_id, seq)
        SELECT 'reservation', new.id, max(seq) FROM am_archive_events WHERE kind = 'reservation' AND ref_id = new.id;
END;

CREATE TRIGGER am_archive_reservations_release AFTER UPDATE OF released_us ON am_reservations
WHEN EXISTS (SELECT 1 FROM am_archive_state_cursor) AND old.released_us IS NULL AND new.released_us IS NOT NULL BEGIN
    INSERT INTO am_archive_events (kind, ref_id, event, at_us, expires_us)
        VALUES ('reservation', new.id, 'released', new.released_us, new.expires_us);
    INSERT OR REPLACE INTO am_archive_pending (kind, ref_id, seq)
        SELECT 'reservation', new.id, max(seq) FROM am_archive_events WHERE kind = 'reservation' AND ref_id = new.id;
END;
