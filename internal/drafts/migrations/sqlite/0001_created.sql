-- One row per Gmail draft mailgate created (draft_email): the only drafts
-- update_draft may change. A draft the user wrote in Gmail has no row.
CREATE TABLE drafts_created (
	draft_id   TEXT   NOT NULL PRIMARY KEY,
	created_ms BIGINT NOT NULL
);
