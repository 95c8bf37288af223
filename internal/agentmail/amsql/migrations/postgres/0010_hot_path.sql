-- A search's newest matches in one project (search_messages; ORDER BY id
-- DESC LIMIT window): without this index a query on a common word read
-- every project's matches through the GIN index, or the whole table, and
-- sorted them (38 ms a search at 30 clients, most of PostgreSQL's time on
-- the load mix); with it the planner walks the project's messages newest
-- first and stops at the window.
CREATE INDEX IF NOT EXISTS am_messages_project ON am_messages(project_id, id);

-- The foreign keys from the rows every send and grant writes to the
-- project and agent rows, as 0006 dropped those to am_messages: agents and
-- projects are never deleted nor renumbered, and the ids come from rows the
-- same transaction read, so the keys guard nothing the code does not. Each
-- check locked the one project row and the agents' rows FOR KEY SHARE: a
-- statement and a row lock (a tuple write, a MultiXact once two sends
-- share it) per key per send, three per send and two per grant.
ALTER TABLE am_messages DROP CONSTRAINT IF EXISTS am_messages_project_id_fkey;
ALTER TABLE am_messages DROP CONSTRAINT IF EXISTS am_messages_sender_id_fkey;
ALTER TABLE am_recipients DROP CONSTRAINT IF EXISTS am_recipients_agent_id_fkey;
ALTER TABLE am_reservations DROP CONSTRAINT IF EXISTS am_reservations_project_id_fkey;
ALTER TABLE am_reservations DROP CONSTRAINT IF EXISTS am_reservations_agent_id_fkey;
