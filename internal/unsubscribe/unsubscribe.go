// Package unsubscribe reads a message's List-Unsubscribe header (RFC 2369)
// and its List-Unsubscribe-Post (RFC 8058), and makes the one-click POST
// the latter defines. It decides nothing about approval: the unsubscribe
// tool (internal/mcpserver) shows the human where the request goes and
// runs it through the gate, which calls Post at most once.
//
// What is used of the header, and what is not:
//   - An https URI, when List-Unsubscribe-Post is exactly
//     "List-Unsubscribe=One-Click": a POST of that body to that URI, with
//     no cookies and no redirect followed (RFC 8058 §3.1, §3.2).
//   - A mailto URI: an email to its address, with its subject and body
//     (RFC 6068), sent by the caller.
//   - Anything else (an http URI, an https one without the Post header)
//     is listed but never fetched: opening a web page on the user's
//     behalf confirms the address to the sender and may do anything; the
//     user can open it themselves.
package unsubscribe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/mail"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// OneClickBody is the body of an RFC 8058 POST, and the only value of
// List-Unsubscribe-Post that allows it.
const OneClickBody = "List-Unsubscribe=One-Click"

// Options are the ways a message offers to unsubscribe.
type Options struct {
	// OneClick is the https URI to POST to, nil when the message does not
	// offer RFC 8058's one-click.
	OneClick *url.URL
	// Mailto is the first mailto URI, nil when there is none.
	Mailto *Mailto
	// Other are the URIs mailgate never opens (http, https without
	// one-click, other schemes), as written.
	Other []string
}

// Mailto is an email that unsubscribes: where it goes, with what subject
// and body (defaults "unsubscribe" when the URI gives none).
type Mailto struct {
	To            string
	Subject, Body string
}

// maxURIs bounds the URIs read of one header; maxURI one URI's length.
const (
	maxURIs = 10
	maxURI  = 2048
)

// ErrNone: the header offers no way mailgate can use.
var ErrNone = errors.New("no List-Unsubscribe header")

// Parse reads List-Unsubscribe (header) and List-Unsubscribe-Post (post):
// a comma-separated list of URIs in angle brackets; text outside the
// brackets is ignored, as RFC 2369 allows.
func Parse(header, post string) (Options, error) {
	var o Options
	header = strings.TrimSpace(header)
	if header == "" {
		return o, ErrNone
	}
	oneClick := strings.TrimSpace(post) == OneClickBody
	rest := header
	for n := 0; n < maxURIs; n++ {
		i := strings.IndexByte(rest, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '>')
		if j < 0 {
			break
		}
		raw := strings.TrimSpace(rest[i+1 : i+j])
		rest = rest[i+j+1:]
		if raw == "" || len(raw) > maxURI || strings.ContainsFunc(raw, func(r rune) bool { return r < ' ' || r == 0x7f || r == ' ' }) {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil {
			o.Other = append(o.Other, raw)
			continue
		}
		switch strings.ToLower(u.Scheme) {
		case "https":
			if oneClick && o.OneClick == nil && u.Host != "" && u.User == nil {
				o.OneClick = u
				continue
			}
		case "mailto":
			if o.Mailto == nil {
				if m, ok := mailto(u); ok {
					o.Mailto = m
					continue
				}
			}
		}
		o.Other = append(o.Other, raw)
	}
	if o.OneClick == nil && o.Mailto == nil && len(o.Other) == 0 {
		return o, ErrNone
	}
	return o, nil
}

// mailto reads an RFC 6068 URI with exactly one plain address.
func mailto(u *url.URL) (*Mailto, bool) {
	to, err := url.PathUnescape(u.Opaque)
	if err != nil || to == "" || strings.Contains(to, ",") {
		return nil, false
	}
	a, err := mail.ParseAddress(to)
	if err != nil || a.Name != "" {
		return nil, false
	}
	q := u.Query()
	m := &Mailto{To: a.Address, Subject: oneLine(q.Get("subject")), Body: q.Get("body")}
	if m.Subject == "" {
		m.Subject = "unsubscribe"
	}
	if strings.TrimSpace(m.Body) == "" {
		m.Body = "unsubscribe"
	}
	if len(m.Subject) > 200 || len(m.Body) > 2000 {
		return nil, false
	}
	return m, true
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Client makes one-click POSTs.
type Client struct {
	HTTP *http.Client
}

// NewClient is a client for the open internet only: it refuses to
// connect to this machine, the local network or any other non-public
// address (a sender's URI must not reach the user's router or a local
// service), follows no redirect and gives up after 30 seconds.
func NewClient() *Client {
	d := &net.Dialer{Timeout: 10 * time.Second, Control: publicOnly}
	tr := &http.Transport{DialContext: d.DialContext, TLSHandshakeTimeout: 10 * time.Second, ForceAttemptHTTP2: true,
		Proxy: nil, MaxIdleConns: 2, IdleConnTimeout: 30 * time.Second}
	return &Client{HTTP: &http.Client{Transport: tr, Timeout: 30 * time.Second, CheckRedirect: noRedirect}}
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// publicOnly refuses a connection to an address that is not public.
func publicOnly(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() {
		return fmt.Errorf("%w: %s", ErrNotPublic, host)
	}
	return nil
}

// ErrNotPublic: the URI's host is this machine or a local network.
var ErrNotPublic = errors.New("refusing to connect to a non-public address")

// Error is a failed POST, typed for the gate: NeverReached when no
// connection was made, Refused when the server answered that it did not
// unsubscribe (a 4xx or a redirect, which RFC 8058 forbids).
type Error struct {
	Err      error
	Status   int
	answered bool
	reached  bool
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("unsubscribe request answered %d: %v", e.Status, e.Err)
	}
	return "unsubscribe request: " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// NeverReached: no connection was made; the list never saw the request.
func (e *Error) NeverReached() bool { return !e.reached }

// Refused: the list answered and did not unsubscribe.
func (e *Error) Refused() bool { return e.answered && e.Status >= 300 && e.Status < 500 }

// Post makes the RFC 8058 POST to u (which must be https) once.
func (c *Client) Post(ctx context.Context, u *url.URL) error {
	if u == nil || !strings.EqualFold(u.Scheme, "https") {
		return &Error{Err: errors.New("only an https URI from the header is ever posted to")}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(OneClickBody))
	if err != nil {
		return &Error{Err: err}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "mailgate-unsubscribe (RFC 8058)")
	var got atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { got.Store(true) }}))
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return &Error{Err: err, reached: got.Load()}
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return &Error{Err: fmt.Errorf("redirected to %q, which is not followed (RFC 8058 forbids redirects)", resp.Header.Get("Location")),
			Status: resp.StatusCode, answered: true, reached: true}
	}
	return &Error{Err: errors.New(http.StatusText(resp.StatusCode)), Status: resp.StatusCode, answered: true, reached: true}
}
