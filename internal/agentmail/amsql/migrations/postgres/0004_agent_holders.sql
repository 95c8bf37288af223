-- Who holds an agent identity, as in the SQLite schema (see its
-- 0005_agent_holders.sql): the MCP session that registered the agent and
-- the SHA-256 of its registration token.
CREATE TABLE am_agent_holders (
    agent_id   BIGINT PRIMARY KEY REFERENCES am_agents(id),
    session    TEXT COLLATE "C" NOT NULL,
    token_hash TEXT COLLATE "C" NOT NULL,
    bound_us   BIGINT NOT NULL
);
