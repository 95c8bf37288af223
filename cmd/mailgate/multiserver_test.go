package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
)

// TestMultiServer is issue 9's fleet on one machine: three `serve --http`
// processes (think: three hosts) on one PostgreSQL database, 30 agent
// clients spread across them running a mixed workload, then one server
// killed with SIGKILL mid-load. It checks what a fleet must keep:
//
//   - every send_message a client saw succeed is stored exactly once, and
//     every recipient got its copy (nothing lost, nothing duplicated);
//   - two agents on two servers reserving one path at the same instant:
//     never both granted without a conflict being reported;
//   - the send limit (10 per hour) is exact across servers: 30 approved
//     emails raced through three servers send exactly 10;
//   - after the SIGKILL, clients on the other servers see no errors.
//
// It needs MAILGATE_TEST_POSTGRES (make test starts a throwaway cluster).
// MAILGATE_MULTISERVER_DURATION shortens the 60 s load for a quick look.
func TestMultiServer(t *testing.T) {
	parallel(t)
	if storetest.PostgresURL() == "" {
		t.Skip("needs " + storetest.EnvPostgres + " (make test runs it on a throwaway PostgreSQL cluster)")
	}
	duration := 60 * time.Second
	if d, err := time.ParseDuration(os.Getenv("MAILGATE_MULTISERVER_DURATION")); err == nil && d > 0 {
		duration = d
	}
	// newWorld points MAILGATE_DB at a fresh schema of the test database.
	w := newWorld(t, false, "SEND_LIMIT_PER_HOUR=10", "MAILGATE_TOOLS=email,agentmail")
	dsn := w.dsn()

	// Requests for 30 distinct emails, approved by the human, before any
	// server runs: the race below is only about the limit.
	w.prepareApprovals(30)

	servers := make([]*fleetServer, 3)
	for i := range servers {
		servers[i] = startFleetServer(t, w.env)
	}
	const project = "/srv/fleet/project"
	const clientsPerServer = 10
	var clients []*fleetClient
	for i := range 3 * clientsPerServer {
		clients = append(clients, newFleetClient(t, servers[i%3], i, project))
	}
	names := make([]string, len(clients))
	for i, c := range clients {
		names[i] = c.name
	}

	t.Run("send limit exact across servers", func(t *testing.T) {
		var sent, limited atomic.Int32
		var wg sync.WaitGroup
		for i := range 30 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				text, _ := clients[i].call(t, "send_email", sendArgs(i))
				switch {
				case strings.HasPrefix(text, "Email sent successfully."):
					sent.Add(1)
				case nextSendRe.MatchString(text):
					limited.Add(1)
				default:
					t.Errorf("send_email %d: %q", i, text)
				}
			}()
		}
		wg.Wait()
		if sent.Load() != 10 || limited.Load() != 20 || len(w.gm.Sent()) != 10 {
			t.Fatalf("sent %d (Gmail got %d), limited %d: want exactly 10 and 20", sent.Load(), len(w.gm.Sent()), limited.Load())
		}
	})

	t.Run("same-instant exclusive reservations on two servers", func(t *testing.T) {
		a, b := clients[0], clients[1] // on servers 0 and 1
		for round := range 25 {
			path := fmt.Sprintf("race/round%d.go", round)
			var grants [2]reserveAnswer
			pair := []*fleetClient{a, b}
			testutil.Race(len(pair), func(k int) { grants[k] = pair[k].reserve(t, path) })
			if len(grants[0].Conflicts) == 0 && len(grants[1].Conflicts) == 0 {
				t.Fatalf("round %d: both agents hold %s exclusively and neither was told", round, path)
			}
		}
	})

	t.Run("mixed load, then SIGKILL of one server", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), duration+time.Minute)
		defer cancel()
		deadline := time.Now().Add(duration)
		killAt := time.Now().Add(duration * 2 / 3)
		victim := servers[2]
		var wg sync.WaitGroup
		for _, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.loop(ctx, names, deadline, victim)
			}()
		}
		time.Sleep(time.Until(killAt))
		victim.kill(t)
		wg.Wait()

		var calls, errs, killedCalls int
		for _, c := range clients {
			if c.srv == victim {
				killedCalls += c.calls
			} else {
				calls += c.calls
			}
			errs += len(c.errs)
			for _, e := range c.errs {
				t.Errorf("client %s (server %s, up): %s", c.name, c.srv.base, e)
			}
		}
		t.Logf("%d calls by clients on the surviving servers in %v (%d errors); %d by clients of the killed server before it died",
			calls, duration, errs, killedCalls)
		if errs > 0 { // the servers' warnings say why
			for _, s := range servers[:2] {
				t.Logf("server %s warnings and errors:\n%s", s.base, s.logs())
			}
		}
		if calls == 0 {
			t.Fatal("no calls were made")
		}

		// Nothing lost, nothing duplicated: every acknowledged send is
		// stored once with its copy; sends to the killed server that got
		// no answer may or may not have landed, but once at most.
		db := storetest.OpenDSN(t, dsn)
		acked := map[string]bool{}
		for _, c := range clients {
			for _, s := range c.acked {
				acked[s] = true
			}
		}
		stored := storedSubjects(t, db, project)
		var lost, dup int
		for s := range acked {
			switch n := stored[s]; {
			case n == 0:
				lost++
			case n > 1:
				dup++
			}
		}
		for s, n := range stored {
			if n > 1 && !acked[s] {
				dup++
			}
		}
		var copies, messages int
		if err := db.QueryRow(`SELECT count(*) FROM am_recipients r JOIN am_messages m ON m.id = r.message_id
			JOIN am_projects p ON p.id = m.project_id WHERE p.human_key = $1`, project).Scan(&copies); err != nil {
			t.Fatal(err)
		}
		for _, n := range stored {
			messages += n
		}
		t.Logf("%d sends acknowledged, %d messages stored, %d recipient copies", len(acked), messages, copies)
		if lost != 0 || dup != 0 || copies != messages {
			t.Fatalf("%d acknowledged messages lost, %d stored twice, %d copies for %d messages", lost, dup, copies, messages)
		}

		// Reservations consistent: no path is held exclusively by two
		// agents without either having been told (each grant in the load
		// is on the client's own paths, so any overlap is a fault).
		var overlaps int
		if err := db.QueryRow(`SELECT count(*) FROM am_reservations a JOIN am_reservations b
			ON a.project_id = b.project_id AND a.path_pattern = b.path_pattern AND a.id < b.id AND a.agent_id <> b.agent_id
			WHERE a.exclusive = 1 AND b.exclusive = 1 AND a.released_us IS NULL AND b.released_us IS NULL
			AND a.path_pattern LIKE 'load/%'`).Scan(&overlaps); err != nil {
			t.Fatal(err)
		}
		if overlaps != 0 {
			t.Fatalf("%d overlapping exclusive reservations of different agents", overlaps)
		}
		// The servers that were not killed still answer readiness.
		for _, s := range servers[:2] {
			if code, _ := httpDo(t, "GET", s.base+"/health/readiness", "", nil); code != 200 {
				t.Fatalf("%s readiness after the load: %d", s.base, code)
			}
		}
	})
}

// dsn is the MAILGATE_DB the world's processes share.
func (w *world) dsn() string {
	for _, kv := range w.env {
		if v, ok := strings.CutPrefix(kv, "MAILGATE_DB="); ok {
			return v
		}
	}
	w.t.Fatal("the world has no MAILGATE_DB")
	return ""
}

func storedSubjects(t *testing.T, db *store.DB, project string) map[string]int {
	t.Helper()
	rows, err := db.Query(`SELECT m.subject FROM am_messages m JOIN am_projects p ON p.id = m.project_id
		WHERE p.human_key = $1 AND m.subject LIKE 'fleet %'`, project)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out[s]++
	}
	if err := rows.Err(); err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	return out
}

// fleetServer is one `serve --http` of the fleet.
type fleetServer = httpServer

func startFleetServer(t *testing.T, env []string) *fleetServer {
	t.Helper()
	cmd := exec.Command(builtBinary(t), "serve", "--http", "127.0.0.1:0")
	cmd.Dir = "/"
	// The email tools are served over HTTP only with a token.
	cmd.Env = append(append([]string{}, env...), "MAILGATE_LOG_LEVEL=info", "AGENT_MAIL_BEARER_TOKEN="+httpToken)
	// Keep warnings and errors only: the request log is one line per call.
	keep := func(line string) bool {
		return !strings.Contains(line, "level=INFO") || strings.Contains(line, "serving over HTTP")
	}
	return runHTTPServer(t, cmd, keep, func(s *httpServer, err error) {
		if err != nil {
			t.Errorf("server %s after SIGTERM: %v; log:\n%s", s.base, err, s.logs())
		}
	})
}

func (s *fleetServer) kill(t *testing.T) {
	t.Helper()
	s.killed.Store(true)
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed %s with SIGKILL", s.base)
}

// fleetClient is one agent: an MCP session on one server of the fleet.
type fleetClient struct {
	srv     *fleetServer
	cs      *mcp.ClientSession
	project string
	name    string
	rng     *rand.Rand
	seq     int
	calls   int
	acked   []string // subjects of sends the server confirmed
	errs    []string // failures while the client's server was up
	down    int      // failures after its server was killed (expected)
}

func newFleetClient(t *testing.T, srv *fleetServer, i int, project string) *fleetClient {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "fleet", Version: "0"}, nil)
	hc := &http.Client{Transport: bearerRoundTripper{httpToken}}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.url, HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting to %s: %v", srv.url, err)
	}
	t.Cleanup(func() { cs.Close() })
	fc := &fleetClient{srv: srv, cs: cs, project: project, rng: rand.New(rand.NewPCG(uint64(i), 9))}
	if text, isErr := fc.call(t, "ensure_project", map[string]any{"human_key": project}); isErr {
		t.Fatalf("ensure_project: %s", text)
	}
	text, isErr := fc.call(t, "register_agent", map[string]any{"project_key": project, "program": "fleet-test", "model": "none"})
	var r struct {
		Name string `json:"name"`
	}
	if isErr || json.Unmarshal([]byte(text), &r) != nil || r.Name == "" {
		t.Fatalf("register_agent: %s", text)
	}
	fc.name = r.Name
	return fc
}

func (c *fleetClient) call(t *testing.T, tool string, args map[string]any) (string, bool) {
	t.Helper()
	return call(t, c.cs, tool, args)
}

// try calls a tool during the load, recording a failure instead of
// stopping the test (a client of the killed server is expected to fail).
func (c *fleetClient) try(ctx context.Context, tool string, args map[string]any) (string, bool) {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c.calls++
	res, err := c.cs.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		if c.srv.killed.Load() {
			c.down++
		} else {
			c.errs = append(c.errs, fmt.Sprintf("%s: %v", tool, err))
		}
		return "", false
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		c.errs = append(c.errs, fmt.Sprintf("%s: tool error: %.300s", tool, b.String()))
		return b.String(), false
	}
	return b.String(), true
}

// loop runs the mix until deadline: send 40%, fetch 30%, search 20%,
// reserve+release 10%. A client of the killed server stops at its first
// failure after the kill.
func (c *fleetClient) loop(ctx context.Context, names []string, deadline time.Time, victim *fleetServer) {
	for time.Now().Before(deadline) && ctx.Err() == nil {
		switch n := c.rng.IntN(10); {
		case n < 4:
			to := names[c.rng.IntN(len(names))]
			for to == c.name {
				to = names[c.rng.IntN(len(names))]
			}
			c.seq++
			subject := fmt.Sprintf("fleet %s #%d", c.name, c.seq)
			text, ok := c.try(ctx, "send_message", map[string]any{"project_key": c.project, "sender_name": c.name,
				"to": []string{to}, "subject": subject, "body_md": "status of " + subject})
			if ok {
				var r struct {
					Count int `json:"count"`
				}
				if json.Unmarshal([]byte(text), &r) != nil || r.Count != 1 {
					c.errs = append(c.errs, "send_message: "+text)
				} else {
					c.acked = append(c.acked, subject)
				}
			}
		case n < 7:
			c.try(ctx, "fetch_inbox", map[string]any{"project_key": c.project, "agent_name": c.name, "limit": 10, "include_bodies": true})
		case n < 9:
			c.try(ctx, "search_messages", map[string]any{"project_key": c.project, "query": "status", "limit": 10})
		default:
			path := fmt.Sprintf("load/%s/f%d.go", strings.ToLower(c.name), c.rng.IntN(4))
			text, ok := c.try(ctx, "file_reservation_paths", map[string]any{"project_key": c.project, "agent_name": c.name,
				"paths": []string{path}, "ttl_seconds": 120, "exclusive": true})
			var r reserveAnswer
			if ok && json.Unmarshal([]byte(text), &r) == nil && len(r.Granted) == 1 {
				if len(r.Conflicts) != 0 {
					c.errs = append(c.errs, "file_reservation_paths: a conflict on the client's own path: "+text)
				}
				c.try(ctx, "release_file_reservations", map[string]any{"project_key": c.project, "agent_name": c.name,
					"file_reservation_ids": []int64{r.Granted[0].ID}})
			} else if ok {
				c.errs = append(c.errs, "file_reservation_paths: "+text)
			}
		}
		if c.srv == victim && c.down > 0 {
			return // its server is gone, as expected
		}
	}
}

type reserveAnswer struct {
	Granted []struct {
		ID int64 `json:"id"`
	} `json:"granted"`
	Conflicts []json.RawMessage `json:"conflicts"`
}

func (c *fleetClient) reserve(t *testing.T, path string) reserveAnswer {
	t.Helper()
	text, isErr := c.call(t, "file_reservation_paths", map[string]any{"project_key": c.project, "agent_name": c.name,
		"paths": []string{path}, "ttl_seconds": 600, "exclusive": true})
	var r reserveAnswer
	if isErr || json.Unmarshal([]byte(text), &r) != nil {
		t.Fatalf("file_reservation_paths: %s", text)
	}
	return r
}
