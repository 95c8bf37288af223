// Package gmail is mailgate's adapter to the Gmail REST API and the only
// package that imports google.golang.org/api.
//
// Why it exists: the generated client sends each call exactly once and
// reports failures as raw HTTP errors. Everything a tool call needs on top of
// that lives here: OAuth tokens that refresh and persist themselves, typed
// errors the tool layer can turn into clear messages (re-auth, rate limit,
// not found, missing scope), a retry policy for reads and drafts that
// honours Gmail's own waits, bounded and paced fan-out for search, and a
// Send that is never retried and says whether Google may have received the
// message, so an approved email is sent at most once.
package gmail

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"golang.org/x/oauth2"
	"golang.org/x/time/rate"
	gmailapi "google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"
)

// user is the Gmail userId for the authorized account.
const user = "me"

// defaultEndpoint is Google's base URL for the Gmail API.
const defaultEndpoint = "https://gmail.googleapis.com/"

// Options configures New. Zero values select the documented defaults.
type Options struct {
	CredentialsFile string             // OAuth client JSON ("installed" or "web"); its token_uri is honoured
	TokenFile       string             // golang.org/x/oauth2 Token JSON, rewritten on every refresh
	TokenSource     oauth2.TokenSource // if non-nil, used instead of the two files (never refreshed or saved by us)
	Endpoint        string             // base URL (GMAIL_API_ENDPOINT); "" = Google's; a trailing "/" is added
	HTTPClient      *http.Client       // base client (its Transport and Timeout are used); nil = sane defaults
	Logger          *slog.Logger       // nil = discard; never stdout (stdout is the MCP channel)

	MaxRetries      int           // retries after the first attempt for reads and drafts; default 3
	RetryInitial    time.Duration // first backoff; default 250ms
	RetryMax        time.Duration // cap on one backoff sleep; default 4s
	MaxHonouredWait time.Duration // longest server-requested wait we sleep; default 30s, beyond it *RateLimitedError

	FetchConcurrency int     // parallel metadata gets in Search; default 8
	FetchRate        float64 // sustained gets per second in Search; default 40 (Gmail's quota is ~50/s per user)
	// FetchBurst is how many gets may go out before FetchRate paces them;
	// default 50 (250 quota units, one second of the per-user quota, which
	// Gmail averages over time and so allows short bursts). With a burst of
	// only FetchConcurrency, one 50-result search would take over a second
	// on pacing alone.
	FetchBurst int
}

func (o *Options) setDefaults() {
	if o.MaxRetries == 0 {
		o.MaxRetries = 3
	}
	if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.RetryInitial <= 0 {
		o.RetryInitial = 250 * time.Millisecond
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 4 * time.Second
	}
	if o.MaxHonouredWait <= 0 {
		o.MaxHonouredWait = 30 * time.Second
	}
	if o.FetchConcurrency <= 0 {
		o.FetchConcurrency = 8
	}
	if o.FetchRate <= 0 {
		o.FetchRate = 40
	}
	if o.FetchBurst <= 0 {
		o.FetchBurst = 50
	}
}

// Client talks to one Gmail account. It is safe for concurrent use.
type Client struct {
	opts      Options
	svc       *gmailapi.Service
	log       *slog.Logger
	refresher *persistingSource // nil when Options.TokenSource was given
	limiter   *rate.Limiter     // paces Search's metadata gets, shared by all searches
	http      *http.Client      // authorized: every request carries the (refreshed, persisted) token
	endpoint  string            // base URL, with a trailing slash

	// newTimer makes the timer retry sleeps on between attempts; nil is a
	// real timer. Tests set it so a server's "Retry-After: 1" is checked
	// without a second of real waiting.
	newTimer func() backoff.Timer
}

// HTTPClient is the client's authorized HTTP client, for Gmail calls this
// package does not wrap (the agent-mail mirror's inserts and labels): the
// same token source, so a refresh is persisted once for both.
func (c *Client) HTTPClient() *http.Client { return c.http }

// Endpoint is the Gmail API base URL the client talks to, ending in "/".
func (c *Client) Endpoint() string { return c.endpoint }

// New builds a Client. It reads and checks the credentials and token files
// but does no network I/O, so a misconfiguration surfaces at start-up with
// a message that says which file is wrong and what to run.
func New(ctx context.Context, o Options) (*Client, error) {
	o.setDefaults()
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	endpoint := o.Endpoint
	if endpoint == "" {
		endpoint = defaultEndpoint
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid Gmail API endpoint %q: want an http(s) URL", endpoint)
	}
	if !strings.HasSuffix(endpoint, "/") {
		// Relative API paths are resolved against this; without the slash
		// a path prefix would be dropped.
		endpoint += "/"
	}
	base := o.HTTPClient
	if base == nil {
		base = defaultHTTPClient()
	}

	c := &Client{opts: o, log: log,
		limiter: rate.NewLimiter(rate.Limit(o.FetchRate), o.FetchBurst)}
	ts := o.TokenSource
	if ts == nil {
		var err error
		if c.refresher, err = loadRefresher(ctx, o, base, log); err != nil {
			return nil, err
		}
		ts = c.refresher
	}
	transport := base.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	hc := &http.Client{
		Transport: &oauth2.Transport{Source: ts, Base: transport},
		Timeout:   base.Timeout,
	}
	svc, err := gmailapi.NewService(ctx, option.WithHTTPClient(hc), option.WithEndpoint(endpoint))
	if err != nil {
		return nil, fmt.Errorf("creating Gmail service: %w", err)
	}
	c.svc, c.http, c.endpoint = svc, hc, endpoint
	return c, nil
}

// loadRefresher reads the credential and token files into a refreshing,
// persisting token source.
func loadRefresher(ctx context.Context, o Options, base *http.Client, log *slog.Logger) (*persistingSource, error) {
	if o.CredentialsFile == "" || o.TokenFile == "" {
		return nil, errors.New("Gmail credentials are not configured: set the OAuth client file and the token file, then run `mailgate auth`")
	}
	cfg, err := LoadOAuthConfig(o.CredentialsFile, ScopeReadonly, ScopeCompose)
	if err != nil {
		return nil, err
	}
	tok, err := LoadToken(o.TokenFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &ReauthError{Cause: fmt.Errorf("no token at %s", o.TokenFile)}
		}
		return nil, &ReauthError{Cause: err}
	}
	if tok.RefreshToken == "" && !tok.Valid() {
		return nil, &ReauthError{Cause: fmt.Errorf("%s: %w", o.TokenFile, ErrNoRefreshToken)}
	}
	// Refreshes outlive any one request: use a context that is never
	// cancelled, carrying the base client so tests' transports apply.
	rctx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, base)
	return newPersistingSource(rctx, cfg, o.TokenFile, tok, log), nil
}

// defaultHTTPClient bounds every phase of a request so that a stalled
// connection cannot hang a tool call. The overall timeout leaves room for a
// large (35 MB) send on a slow link.
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 10 * time.Second
	t.ResponseHeaderTimeout = 60 * time.Second
	t.MaxIdleConnsPerHost = 16 // Search fans out to 8 parallel gets
	return &http.Client{Transport: t, Timeout: 2 * time.Minute}
}

// Profile is the authorized account as users.getProfile describes it.
type Profile struct {
	EmailAddress                string
	MessagesTotal, ThreadsTotal int64
	HistoryID                   uint64
}

// GetProfile fetches the account's profile (any of mailgate's scopes allows it).
func (c *Client) GetProfile(ctx context.Context) (*Profile, error) {
	p, err := retry(ctx, c, "getProfile", ScopeReadonly, true, func(ctx context.Context) (*gmailapi.Profile, error) {
		return c.svc.Users.GetProfile(user).Context(ctx).Do()
	})
	if err != nil {
		return nil, fmt.Errorf("fetching profile: %w", err)
	}
	return &Profile{EmailAddress: p.EmailAddress, MessagesTotal: p.MessagesTotal, ThreadsTotal: p.ThreadsTotal, HistoryID: p.HistoryId}, nil
}

// Profile returns the authorized account's email address.
func (c *Client) Profile(ctx context.Context) (string, error) {
	p, err := c.GetProfile(ctx)
	if err != nil {
		return "", err
	}
	return p.EmailAddress, nil
}

// SendAs is one address the account may send as (users.settings.sendAs):
// the primary address and each alias.
type SendAs struct {
	Email, DisplayName string
	Primary, Default   bool
	// Verified is false for an alias Gmail has not verified yet; Gmail
	// refuses it as From. The primary address is always verified.
	Verified bool
}

// SendAsAliases lists the addresses the account sends as, primary first.
// It needs gmail.readonly (or gmail.settings.basic, gmail.modify).
func (c *Client) SendAsAliases(ctx context.Context) ([]SendAs, error) {
	list, err := retry(ctx, c, "settings.sendAs.list", ScopeReadonly, true, func(ctx context.Context) (*gmailapi.ListSendAsResponse, error) {
		return c.svc.Users.Settings.SendAs.List(user).Context(ctx).Do()
	})
	if err != nil {
		return nil, fmt.Errorf("listing send-as addresses: %w", err)
	}
	out := mapped(list.SendAs, func(a *gmailapi.SendAs) SendAs {
		return SendAs{Email: a.SendAsEmail, DisplayName: a.DisplayName, Primary: a.IsPrimary, Default: a.IsDefault,
			Verified: a.IsPrimary || a.VerificationStatus == "accepted"}
	})
	slices.SortStableFunc(out, func(a, b SendAs) int { return cmpBool(b.Primary, a.Primary) })
	return out, nil
}

// OwnAddresses is every address that is the user's own: the profile's
// address and the verified send-as aliases, lower case, without repeats.
// Reply-all leaves these out of its recipients.
func (c *Client) OwnAddresses(ctx context.Context) ([]string, error) {
	p, err := c.GetProfile(ctx)
	if err != nil {
		return nil, err
	}
	aliases, err := c.SendAsAliases(ctx)
	if err != nil {
		return nil, err
	}
	out := []string{strings.ToLower(p.EmailAddress)}
	for _, a := range aliases {
		if e := strings.ToLower(a.Email); a.Verified && !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
