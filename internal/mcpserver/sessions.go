package mcpserver

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/presence"
)

// Session keys name an MCP session for agent-mail's identity binding
// (agentmail.WithSession): "<pid>@<host>:<nonce>/<session>". The nonce
// tells this process from an earlier one that had the same pid; the pid and
// host let another process on the same machine see that the process holding
// an identity is gone, so an agent whose client restarted resumes its name at
// once instead of being treated as a second, live agent.
var (
	hostname, _   = os.Hostname()
	processPrefix = fmt.Sprintf("%d@%s:%s", os.Getpid(), hostname, rand.Text())
)

// sessions maps each session this process has seen to its key while it is
// open; a session that ends is removed (so the map does not grow with every
// HTTP client that came and went).
var sessions sync.Map // *mcp.ServerSession → string

// liveKeys holds the keys of this process's open sessions.
var liveKeys sync.Map // string → struct{}

// withSession tags ctx with the caller's session key and how to tell whether
// another session is still there.
func withSession(ctx context.Context, ss *mcp.ServerSession) context.Context {
	ctx = agentmail.WithSessionLiveness(ctx, sessionLive)
	return agentmail.WithSession(ctx, sessionKey(ss))
}

func sessionKey(ss *mcp.ServerSession) string {
	if ss == nil {
		return processPrefix
	}
	if k, ok := sessions.Load(ss); ok {
		return k.(string)
	}
	id := ss.ID()
	if id == "" { // stdio and in-memory transports: one session per connection, no id
		id = rand.Text()
	}
	k := processPrefix + "/" + id
	if prev, loaded := sessions.LoadOrStore(ss, k); loaded {
		return prev.(string)
	}
	liveKeys.Store(k, struct{}{})
	go func() {
		ss.Wait()
		liveKeys.Delete(k)
		sessions.Delete(ss)
	}()
	return k
}

// sessionLive reports whether the session with key is still there, when
// this process can know: its own sessions it tracks; another process's it
// knows are gone when that process no longer runs on this host. Otherwise
// known is false and the caller falls back on the identity's activity.
func sessionLive(key string) (live, known bool) {
	if strings.HasPrefix(key, processPrefix+"/") || key == processPrefix {
		_, ok := liveKeys.Load(key)
		return ok || key == processPrefix, true
	}
	at := strings.IndexByte(key, '@')
	colon := strings.IndexByte(key, ':')
	if at <= 0 || colon < at {
		return false, false // an older key, or one from an in-process caller
	}
	pid, err := strconv.Atoi(key[:at])
	if err != nil || key[at+1:colon] != hostname {
		return false, false
	}
	if pid == os.Getpid() || !presence.ProcessExists(pid) {
		return false, true // that process has ended (our pid now, or none)
	}
	return false, false // alive: its sessions are its own to know
}
