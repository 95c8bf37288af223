-- A GIN index adds new entries to a pending list that every search through
-- the index reads in full, until the list outgrows gin_pending_list_limit
-- (4 MB by default, some 5,000 messages) or a vacuum empties it. With the
-- list that long a rare word cost a scan of all of it, so the planner read
-- the whole project instead (1-2 ms a search at 2,000 messages, against
-- 0.2 ms through the index). At 128 kB the sending backend moves the list
-- into the index every 150 messages or so, a bulk insert of a few
-- milliseconds, and a search reads at most that many pending messages.
ALTER INDEX am_messages_fts SET (gin_pending_list_limit = 128);
