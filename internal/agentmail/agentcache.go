package agentmail

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// agentCache remembers, per project and name, the agents that the busiest
// calls name (send_message, reply_message, fetch_inbox, the reservation
// tools), so that those calls stop looking the agent up by name each time:
// on PostgreSQL a lookup is a round trip, 1.2 of them a call on the load mix.
//
// What it keeps cannot go stale, on one server or many sharing a store:
// agents are never deleted nor renamed and their id never changes, so a name
// that once resolved in a project resolves to the same agent for good. A
// name that did not resolve is not kept (another server may register it the
// next moment). The rest of the row (program, model, policies) changes, and
// is not kept: a cached Agent carries only ID, ProjectID, Name and
// InceptionAt, and callers that need a policy (a send's recipients) read the
// row. Entries come only from reads of committed rows, never from a
// transaction that inserted the agent, which could still roll back.
//
// LastActiveAt is the one moving field the hot calls read: they write the
// heartbeat when it is a second (writes) or a minute (reads) old. The cache
// holds the newest value this process knows was stored: the row's when it
// was read, and the time of each heartbeat this process wrote, noted after
// its transaction committed (see touched). Other servers' heartbeats only
// move the stored value further forward, so the cached one is never newer
// than the stored one: a call may write a heartbeat another server already
// wrote, never skip one that is due.
type agentCache struct {
	mu sync.RWMutex
	m  map[agentKey]*cachedAgent
}

type agentKey struct {
	project int64
	name    string // folded as the stores compare names: ASCII letters only
}

type cachedAgent struct {
	a      Agent        // identity only (see agentCache)
	active atomic.Int64 // LastActiveAt, in Unix microseconds
}

// maxCachedAgents bounds the cache: past it, it starts over.
const maxCachedAgents = 10000

func keyOf(projectID int64, name string) agentKey {
	return agentKey{projectID, foldASCII(name)}
}

// foldASCII lowers ASCII letters only, as the stores' name lookups do
// (SQLite's NOCASE; PostgreSQL's lower() under the "C" collation).
func foldASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func (c *agentCache) get(projectID int64, name string) (Agent, bool) {
	c.mu.RLock()
	e, ok := c.m[keyOf(projectID, name)]
	c.mu.RUnlock()
	if !ok {
		return Agent{}, false
	}
	a := e.a
	a.LastActiveAt = time.UnixMicro(e.active.Load()).UTC()
	return a, true
}

// put keeps a's identity and its stored heartbeat (a was just read).
func (c *agentCache) put(a Agent) {
	k := keyOf(a.ProjectID, a.Name)
	c.mu.Lock()
	e, ok := c.m[k]
	if !ok {
		if c.m == nil || len(c.m) >= maxCachedAgents {
			c.m = map[agentKey]*cachedAgent{}
		}
		e = &cachedAgent{a: Agent{ID: a.ID, ProjectID: a.ProjectID, Name: a.Name, InceptionAt: a.InceptionAt}}
		c.m[k] = e
	}
	c.mu.Unlock()
	e.advance(a.LastActiveAt)
}

// touched notes that a committed transaction wrote a's heartbeat at at, if
// it did: the hot calls write it when the one they read was at least every
// old (see touchWriter and sendTx), so the same test says whether this one
// did.
func (c *agentCache) touched(a Agent, at time.Time, every time.Duration) {
	if a.ID == 0 || at.Sub(a.LastActiveAt) < every {
		return
	}
	c.mu.RLock()
	e, ok := c.m[keyOf(a.ProjectID, a.Name)]
	c.mu.RUnlock()
	if ok && e.a.ID == a.ID {
		e.advance(at)
	}
}

// advance moves the heartbeat forward to at, never back.
func (e *cachedAgent) advance(at time.Time) {
	us := at.UnixMicro()
	for {
		old := e.active.Load()
		if us <= old || e.active.CompareAndSwap(old, us) {
			return
		}
	}
}

// knownAgent is agent through the cache, for calls that use only an agent's
// identity and heartbeat (see agentCache).
func (s *Service) knownAgent(ctx context.Context, tx Tx, p Project, name string) (Agent, error) {
	n := strings.TrimSpace(name)
	if a, ok := s.agents.get(p.ID, n); ok {
		return a, nil
	}
	a, err := s.agent(ctx, tx, p, n)
	if err != nil {
		return Agent{}, err
	}
	s.agents.put(a)
	return a, nil
}

// knownProjectAgent is projectAgent through the caches (see knownAgent).
func (s *Service) knownProjectAgent(ctx context.Context, tx Tx, projectKey, agentName string) (Project, Agent, error) {
	return s.projectAnd(ctx, tx, projectKey, agentName, s.knownAgent)
}
