package mcpserver

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Wake: an agent busy on a task learns that mail arrived without polling.
// A client subscribes (resources/subscribe) to an agent-mail resource, most
// often its inbox (resource://inbox/{agent}?project=…); the server then
// sends notifications/resources/updated for that URI whenever what the
// resource reads changes.
//
// The change can be made by any process sharing the store (another stdio
// server, an HTTP server, on PostgreSQL another host), so there is no
// in-process event to hang this on: while at least one session holds a
// subscription, the server reads each subscribed resource every interval,
// through the same path as resources/read, and compares a digest of the
// answer with the last one. The cost is one read per subscribed URI per
// interval, and nothing at all while nobody subscribes.

// wakeInterval is how often subscribed resources are read again: a
// subscriber hears of new mail within about this long.
const wakeInterval = 250 * time.Millisecond

// resourceWake holds the subscriptions of one server and the loop that
// follows them.
type resourceWake struct {
	server   *mcp.Server
	read     func(ctx context.Context, uri string) ([sha256.Size]byte, error)
	ready    func(ctx context.Context) error // the dependencies are open (Deps.Pending), or nil
	ours     func(uri string) bool
	interval time.Duration
	logger   *slog.Logger

	mu      sync.Mutex
	subs    map[string]map[*mcp.ServerSession]bool // uri → subscribed sessions
	last    map[string][sha256.Size]byte           // uri → digest of its last read
	running bool
}

// newResourceWake wires subscriptions into a server's options; attach must
// be called with the server once it is built.
func newResourceWake(r *amReader, ready func(context.Context) error, logger *slog.Logger) *resourceWake {
	w := &resourceWake{
		ready: ready, ours: r.ours, interval: wakeInterval, logger: logger,
		subs: map[string]map[*mcp.ServerSession]bool{}, last: map[string][sha256.Size]byte{},
	}
	w.read = func(ctx context.Context, uri string) ([sha256.Size]byte, error) {
		res, err := r.read(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}})
		if err != nil {
			return [sha256.Size]byte{}, err
		}
		h := sha256.New()
		for _, c := range res.Contents {
			h.Write([]byte(c.URI))
			h.Write([]byte{0})
			h.Write([]byte(c.Text))
			h.Write(c.Blob)
			h.Write([]byte{0})
		}
		var sum [sha256.Size]byte
		h.Sum(sum[:0])
		return sum, nil
	}
	return w
}

// options sets the subscription handlers on opts.
func (w *resourceWake) options(opts *mcp.ServerOptions) {
	opts.SubscribeHandler = w.subscribe
	opts.UnsubscribeHandler = w.unsubscribe
}

// subscribe takes a subscription to one of our resources. The resource is
// read once now: a URI that cannot be read (no such agent or project) is
// refused with the reason, as resources/read would answer, and what it
// reads now is what later reads are compared with.
func (w *resourceWake) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	if !w.ours(uri) {
		return mcp.ResourceNotFoundError(uri)
	}
	if w.ready != nil {
		if err := w.ready(ctx); err != nil {
			return err
		}
	}
	sum, err := w.read(ctx, uri)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs[uri] == nil {
		w.subs[uri] = map[*mcp.ServerSession]bool{}
		w.last[uri] = sum
	}
	w.subs[uri][req.Session] = true
	if !w.running {
		w.running = true
		go w.loop()
	}
	return nil
}

func (w *resourceWake) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drop(req.Params.URI, req.Session)
	return nil
}

// drop removes one session's subscription (w.mu held).
func (w *resourceWake) drop(uri string, s *mcp.ServerSession) {
	delete(w.subs[uri], s)
	if len(w.subs[uri]) == 0 {
		delete(w.subs, uri)
		delete(w.last, uri)
	}
}

// loop reads the subscribed resources every interval and notifies the
// subscribers of those that changed. It ends when no live session holds a
// subscription (a session that ended without unsubscribing is dropped
// here), and subscribe starts it again.
func (w *resourceWake) loop() {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for range t.C {
		uris := w.live()
		if uris == nil {
			return
		}
		for _, uri := range uris {
			w.check(uri)
		}
	}
}

// live returns the URIs some live session subscribes to, or nil (and marks
// the loop stopped) when there are none.
func (w *resourceWake) live() []string {
	alive := map[*mcp.ServerSession]bool{}
	for s := range w.server.Sessions() {
		alive[s] = true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var uris []string
	for uri, ss := range w.subs {
		for s := range ss {
			if !alive[s] {
				w.drop(uri, s)
			}
		}
		if len(w.subs[uri]) > 0 {
			uris = append(uris, uri)
		}
	}
	if len(uris) == 0 {
		w.running = false
		return nil
	}
	return uris
}

// check reads uri again and notifies its subscribers when it changed. A
// read that fails (the store briefly unreachable, an agent removed) is
// logged and tried again at the next tick; it is not a change.
func (w *resourceWake) check(uri string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sum, err := w.read(ctx, uri)
	if err != nil {
		w.logger.Debug("reading a subscribed resource", "uri", uri, "err", err)
		return
	}
	w.mu.Lock()
	prev, ok := w.last[uri]
	if ok {
		w.last[uri] = sum
	}
	w.mu.Unlock()
	if !ok || prev == sum {
		return
	}
	if err := w.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
		w.logger.Warn("notifying subscribers of a resource update", "uri", uri, "err", err)
	}
}
