package httpserver

import (
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// DefaultMaxConnsPerClient caps the connections one client address holds
// open at once. A stateful Streamable HTTP agent holds one hanging GET and a
// POST or two; agents on one machine all share 127.0.0.1, so the cap is also
// their common ceiling: 512 is room for ~150 local agents, and keeps one
// remote address from taking the process's descriptors (about 20 kB of
// memory and one descriptor per connection).
const DefaultMaxConnsPerClient = 512

// perClientListener caps the open connections per client address (the
// address key of clientKey: an IPv4 address, an IPv6 /64). A connection over
// the cap is answered 503 with Retry-After and closed, before a byte of its
// request is read: golang.org/x/net/netutil.LimitListener caps the whole
// listener, which would let one address lock every other out.
type perClientListener struct {
	net.Listener
	max int
	log *slog.Logger

	mu     sync.Mutex
	open   map[string]int
	shed   int       // refused since the last warning
	warned time.Time // when the last warning was logged

	refusing chan struct{} // bounds the goroutines answering refused connections
}

// limitPerClient wraps ln; max <= 0 returns ln unchanged.
func limitPerClient(ln net.Listener, max int, log *slog.Logger) net.Listener {
	if max <= 0 {
		return ln
	}
	return &perClientListener{Listener: ln, max: max, log: log, open: map[string]int{}, refusing: make(chan struct{}, 64)}
}

func (l *perClientListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := addrKey(c.RemoteAddr().String())
		l.mu.Lock()
		if l.open[key] >= l.max {
			l.shed++
			l.warnLocked(key)
			l.mu.Unlock()
			l.refuse(c)
			continue
		}
		l.open[key]++
		l.mu.Unlock()
		return &countedConn{Conn: c, release: func() { l.release(key) }}, nil
	}
}

func (l *perClientListener) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key]--; l.open[key] <= 0 {
		delete(l.open, key)
	}
}

// warnLocked logs at most one warning a minute, with how many connections
// were refused since the last one: a flood must not flood the log too.
func (l *perClientListener) warnLocked(key string) {
	now := time.Now()
	if now.Sub(l.warned) < time.Minute {
		return
	}
	l.log.Warn("refusing connections: too many open from one client address", "client", key, "limit", l.max, "refused", l.shed)
	l.warned, l.shed = now, 0
}

const connCapResponse = "HTTP/1.1 503 Service Unavailable\r\n" +
	"Content-Type: application/json\r\nCache-Control: no-store\r\nRetry-After: 1\r\nConnection: close\r\n"

var connCapBody = `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"too many open connections from this client address; close some and retry"}}` + "\n"

// refuse answers c 503 and closes it, in the background so a peer that does
// not read cannot stall the accept loop; with 64 refusals already in
// progress, c is just closed.
func (l *perClientListener) refuse(c net.Conn) {
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Second))
		msg := connCapResponse + "Content-Length: " + strconv.Itoa(len(connCapBody)) + "\r\n\r\n" + connCapBody
		if _, err := c.Write([]byte(msg)); err != nil {
			return
		}
		// Half-close and drain briefly, so the peer reads the answer rather
		// than a reset caused by its unread request.
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		buf := make([]byte, 512)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	}()
}

// countedConn gives its slot back when closed (once, however often Close is
// called).
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite keeps net/http's half-close before it closes a connection with
// an unread request (see http.conn.closeWriteAndWait).
func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// addrKey is the client an address belongs to: the IP without its port; an
// IPv6 address counts as its /64, which one host can otherwise rotate
// through at will.
func addrKey(remote string) string {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return remote
	}
	ip := ap.Addr().Unmap()
	if ip.Is6() && !ip.IsLoopback() {
		if p, err := ip.Prefix(64); err == nil {
			return p.String()
		}
	}
	return ip.String()
}
