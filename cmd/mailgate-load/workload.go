package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mailgate/mailgate/internal/loadtext"
)

// The mix's operations and the tools they call.
const (
	opSend    = "send"
	opFetch   = "fetch"
	opSearch  = "search"
	opReserve = "reserve" // file_reservation_paths, then release_file_reservations

	toolSend    = "send_message"
	toolFetch   = "fetch_inbox"
	toolSearch  = "search_messages"
	toolReserve = "file_reservation_paths"
	toolRelease = "release_file_reservations"
)

// tools lists every tool the load calls, in report order.
var tools = []string{toolSend, toolFetch, toolSearch, toolReserve, toolRelease}

// callTimeout bounds one call, so a stuck server ends the run instead of
// hanging it; the call is then counted as an error.
const callTimeout = 10 * time.Second

// projectKey is the one project every client joins, as a team of agents
// working in one repository does. With -db it gets a random suffix per run
// (config.project), as the shared database keeps earlier runs' projects.
const projectKey = "/tmp/mailgate-load/project"

type mixEntry struct {
	op     string
	weight int
}

// parseMix reads "send=40,fetch=30,search=20,reserve=10". Omitted
// operations get weight 0.
func parseMix(s string) ([]mixEntry, error) {
	known := map[string]bool{opSend: true, opFetch: true, opSearch: true, opReserve: true}
	var mix []mixEntry
	seen := map[string]bool{}
	total := 0
	for part := range strings.SplitSeq(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("%q: want op=weight", part)
		}
		if !known[name] {
			return nil, fmt.Errorf("unknown operation %q (known: send, fetch, search, reserve)", name)
		}
		if seen[name] {
			return nil, fmt.Errorf("%q given twice", name)
		}
		seen[name] = true
		w, err := strconv.Atoi(val)
		if err != nil || w < 0 {
			return nil, fmt.Errorf("%s=%s: weight must be a whole number ≥ 0", name, val)
		}
		total += w
		mix = append(mix, mixEntry{op: name, weight: w})
	}
	if total == 0 {
		return nil, errors.New("all weights are 0")
	}
	return mix, nil
}

// pick draws an operation with probability weight / total.
func pick(mix []mixEntry, rng *rand.Rand) string {
	total := 0
	for _, e := range mix {
		total += e.weight
	}
	n := rng.IntN(total)
	for _, e := range mix {
		if n < e.weight {
			return e.op
		}
		n -= e.weight
	}
	return mix[len(mix)-1].op
}

// workload is the set of clients of one run.
type workload struct {
	cfg       config
	endpoints []string // client i talks to endpoints[i % len(endpoints)]
	token     string
	clients   []*client
	names     []string // registered agent names, by client index
	calls     atomic.Int64
	failures  atomic.Int64
}

func newWorkload(cfg config, endpoints []string, token string) *workload {
	if cfg.project == "" {
		cfg.project = projectKey
	}
	return &workload{cfg: cfg, endpoints: endpoints, token: token}
}

// setup connects every client and registers its agent, all at once as a
// team starting up would. Any failure ends the run: a load on fewer agents
// than asked measures something else.
func (w *workload) setup(ctx context.Context) error {
	w.clients = make([]*client, w.cfg.clients)
	w.names = make([]string, w.cfg.clients)
	errs := make([]error, w.cfg.clients)
	var wg sync.WaitGroup
	for i := range w.clients {
		// Round-robin over the servers: each gets every N-th client, so
		// the agents of the one project are registered on all of them.
		srv := i % len(w.endpoints)
		rng := rand.New(rand.NewPCG(uint64(i), 0x6d61696c67617465))
		c := &client{w: w, id: i, server: srv, endpoint: w.endpoints[srv], rng: rng, text: loadtext.New(rng), stats: newStats()}
		w.clients[i] = c
		wg.Go(func() { errs[i] = c.setup(ctx) })
	}
	wg.Wait()
	// One message is enough: the clients usually fail alike (a wrong token,
	// a server that is not there), and thirty copies bury it.
	var failed []error
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	switch len(failed) {
	case 0:
	case 1:
		return fmt.Errorf("setting up the clients: %w", failed[0])
	default:
		return fmt.Errorf("setting up the clients: %w (and %d more clients failed)", failed[0], len(failed)-1)
	}
	// Every agent must be a distinct identity. Registered on several
	// servers of one database at once, two clients given the same name
	// would share an inbox and reservations, and the load would count the
	// resulting conflicts as server errors: say so here instead.
	byName := map[string]int{}
	for i, c := range w.clients {
		if j, dup := byName[strings.ToLower(c.name)]; dup {
			return fmt.Errorf("setting up the clients: client %d (%s) and client %d (%s) were both registered as agent %s in project %s",
				j, w.clients[j].endpoint, i, c.endpoint, c.name, w.cfg.project)
		}
		byName[strings.ToLower(c.name)] = i
		w.names[i] = c.name
	}
	return nil
}

// perServer is how many calls server i answered during the run: successful
// ones and errors.
func (w *workload) perServer(i int) (calls, errs int) {
	for _, c := range w.clients {
		if c.server != i {
			continue
		}
		for _, l := range c.stats.lat {
			calls += len(l)
		}
		errs += c.stats.errorCount()
	}
	return calls, errs
}

// run loops every client over the mix until the deadline (or ctx ends) and
// returns the merged statistics and the time the loops ran.
func (w *workload) run(ctx context.Context, progress io.Writer) (*stats, time.Duration) {
	start := time.Now()
	deadline := start.Add(w.cfg.duration)
	done := make(chan struct{})
	var reporter sync.WaitGroup
	reporter.Go(func() { w.report(progress, start, done) })
	var wg sync.WaitGroup
	for _, c := range w.clients {
		wg.Go(func() { c.loop(ctx, start, deadline) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(done)
	reporter.Wait() // no progress line may land after the caller's output
	all := newStats()
	for _, c := range w.clients {
		all.merge(c.stats)
	}
	return all, elapsed
}

// report prints a progress line every 10 s to stderr, so a long run shows
// it is alive (and failing early) without touching the report on stdout.
func (w *workload) report(out io.Writer, start time.Time, done <-chan struct{}) {
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			fmt.Fprintf(out, "mailgate-load: %3.0fs  %d calls  %d errors\n",
				time.Since(start).Seconds(), w.calls.Load(), w.failures.Load())
		}
	}
}

// close ends every session and its connections; safe to call twice.
func (w *workload) close() {
	var wg sync.WaitGroup
	for _, c := range w.clients {
		if c != nil {
			wg.Go(c.close)
		}
	}
	wg.Wait()
}
