-- Several limits share the table, each in its own bucket: "send" (sends and
-- replies, SEND_LIMIT_PER_HOUR; every slot taken before buckets existed) and
-- "organize" (modify_labels and untrash_email, ORGANIZE_LIMIT).
ALTER TABLE ratelimit_slots ADD COLUMN bucket TEXT NOT NULL DEFAULT 'send';
CREATE INDEX ratelimit_slots_bucket_at ON ratelimit_slots (bucket, at_ms);
