-- Who holds an agent identity (issue 18: identity takeover). register_agent
-- binds a name to the MCP session that registered it and to a registration
-- token (only its SHA-256 is kept); another live session asking for the
-- name is told so instead of silently sharing the inbox and reservations.
-- Agents created by the compatibility sets or before this migration have
-- no row: the first register_agent for them binds them.
CREATE TABLE am_agent_holders (
    agent_id   INTEGER PRIMARY KEY REFERENCES am_agents(id),
    session    TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    bound_us   INTEGER NOT NULL
);
