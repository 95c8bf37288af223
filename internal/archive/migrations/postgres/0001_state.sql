-- The archive's record of agent profiles and file reservations, as in the
-- SQLite schema (see its 0001_state.sql for the design). Here the pending
-- row is upserted with the new event's seq.

CREATE TABLE am_archive_state_cursor (
    name       TEXT PRIMARY KEY,
    started_us BIGINT NOT NULL
);

CREATE TABLE am_archive_events (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('agent', 'reservation')),
    ref_id     BIGINT NOT NULL,
    event      TEXT NOT NULL,
    at_us      BIGINT NOT NULL,
    expires_us BIGINT
);
CREATE INDEX am_archive_events_ref ON am_archive_events(kind, ref_id, seq);

CREATE TABLE am_archive_pending (
    kind   TEXT NOT NULL,
    ref_id BIGINT NOT NULL,
    seq    BIGINT NOT NULL,
    PRIMARY KEY (kind, ref_id)
);

CREATE FUNCTION am_archive_record(k TEXT, id BIGINT, ev TEXT, at BIGINT, exp BIGINT) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE s BIGINT;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM am_archive_state_cursor) THEN
        RETURN;
    END IF;
    INSERT INTO am_archive_events (kind, ref_id, event, at_us, expires_us) VALUES (k, id, ev, at, exp) RETURNING seq INTO s;
    INSERT INTO am_archive_pending (kind, ref_id, seq) VALUES (k, id, s)
        ON CONFLICT (kind, ref_id) DO UPDATE SET seq = EXCLUDED.seq;
END
$fn$;

CREATE FUNCTION am_archive_agents_trg() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM am_archive_record('agent', NEW.id, 'registered', NEW.inception_us, NULL);
    -- last_active_us alone changes on every call: it is written with the
    -- next profile change, not on its own.
    ELSIF (OLD.name, OLD.program, OLD.model, OLD.task_description, OLD.attachments_policy, OLD.contact_policy)
          IS DISTINCT FROM (NEW.name, NEW.program, NEW.model, NEW.task_description, NEW.attachments_policy, NEW.contact_policy) THEN
        PERFORM am_archive_record('agent', NEW.id, 'updated', NEW.last_active_us, NULL);
    END IF;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION am_archive_reservations_trg() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM am_archive_record('reservation', NEW.id, 'granted', NEW.created_us, NEW.expires_us);
        RETURN NULL;
    END IF;
    -- A renewal (or a re-grant of the same pattern) moves expires_us; the
    -- row has no time of the change, so the event takes the clock's.
    IF OLD.expires_us IS DISTINCT FROM NEW.expires_us THEN
        PERFORM am_archive_record('reservation', NEW.id, 'renewed',
            (extract(epoch FROM clock_timestamp()) * 1000000)::BIGINT, NEW.expires_us);
    END IF;
    IF OLD.released_us IS NULL AND NEW.released_us IS NOT NULL THEN
        PERFORM am_archive_record('reservation', NEW.id, 'released', NEW.released_us, NEW.expires_us);
    END IF;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER am_archive_agents_aiu AFTER INSERT OR UPDATE ON am_agents
    FOR EACH ROW EXECUTE FUNCTION am_archive_agents_trg();
CREATE TRIGGER am_archive_reservations_aiu AFTER INSERT OR UPDATE ON am_reservations
    FOR EACH ROW EXECUTE FUNCTION am_archive_reservations_trg();
