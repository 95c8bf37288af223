-- The clock-proof window (issue 31): each slot also records a reading of a
-- monotonic clock that wall-clock steps do not move: clock names it (on
-- Linux the boot, so every process on the machine shares it), mono_ms is
-- the reading. '' and 0: no reading (older slots, slots rebuilt from the
-- audit log); those are judged by their wall time alone.
ALTER TABLE ratelimit_slots ADD COLUMN clock TEXT NOT NULL DEFAULT '';
ALTER TABLE ratelimit_slots ADD COLUMN mono_ms BIGINT NOT NULL DEFAULT 0;
