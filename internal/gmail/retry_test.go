package gmail

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	"github.com/mailgate/mailgate/internal/localgmail"
)

// instantTimers makes c's retry sleeps return at once and records the
// waits asked for, so a test checks a server-given wait is honoured without
// spending it.
type instantTimers struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (it *instantTimers) install(c *Client) {
	c.newTimer = func() backoff.Timer { return &instantTimer{it: it, c: make(chan time.Time, 1)} }
}

func (it *instantTimers) asked() []time.Duration {
	it.mu.Lock()
	defer it.mu.Unlock()
	return slices.Clone(it.waits)
}

type instantTimer struct {
	it *instantTimers
	c  chan time.Time
}

func (t *instantTimer) Start(d time.Duration) {
	t.it.mu.Lock()
	t.it.waits = append(t.it.waits, d)
	t.it.mu.Unlock()
	t.c <- time.Now()
}
func (t *instantTimer) Stop()               {}
func (t *instantTimer) C() <-chan time.Time { return t.c }

func TestReadRetriesTwo429sThenSucceeds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.insert(t, "alice@example.org", "hello", "hi")
	// Retry-After: 1 is honoured (it exceeds the 1 ms backoff); the timer
	// is instant, so the test checks the wait asked for without spending it.
	timers := &instantTimers{}
	timers.install(e.c)
	e.srv.Inject(localgmail.Fault{Op: "messages.list", Status: 429, Header: http.Header{"Retry-After": {"1"}}, Times: 2})

	res, err := e.c.Search(context.Background(), "hello", 5)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	if len(res) != 1 || res[0].Subject != "hello" {
		t.Fatalf("results = %+v", res)
	}
	e.wantCalls(t, "messages.list", 3)
	if got := strings.Count(e.logs.String(), "retrying Gmail call"); got != 2 {
		t.Errorf("logged %d retries, want 2:\n%s", got, e.logs)
	}
	if !strings.Contains(e.logs.String(), "wait=1s") {
		t.Errorf("Retry-After not honoured in the logged wait:\n%s", e.logs)
	}
	if got := timers.asked(); !slices.Equal(got, []time.Duration{time.Second, time.Second}) {
		t.Errorf("slept %v, want the server's 1s twice", got)
	}
}

func TestReadRetriesUserRateLimit403ThenSucceeds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	timers := &instantTimers{}
	timers.install(e.c)
	// 20 s is under MaxHonouredWait (30 s), so it is honoured; the instant
	// timer spends none of it.
	until := time.Now().Add(20 * time.Second).UTC().Format("2006-01-02T15:04:05.000Z")
	e.srv.Inject(localgmail.Fault{Op: "getProfile", Status: 403, Reason: "userRateLimitExceeded",
		Message: "User-rate limit exceeded.  Retry after " + until})

	email, err := e.c.Profile(context.Background())
	if err != nil {
		t.Fatalf("Profile: %v", err)
	}
	if email != "me@example.com" {
		t.Errorf("email = %q", email)
	}
	e.wantCalls(t, "getProfile", 2)
	// The wait named in the message (20 s, less the time taken to get
	// here) beats the 1 ms backoff.
	if got := timers.asked(); len(got) != 1 || got[0] <= 10*time.Second || got[0] > 20*time.Second {
		t.Errorf("slept %v, want the message's wait of up to 20s", got)
	}
}

func TestReadRateLimitBeyondMaxHonouredWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	until := time.Now().Add(3 * time.Hour).UTC().Truncate(time.Millisecond)
	e.srv.Inject(localgmail.Fault{Op: "getProfile", Status: 429, Reason: "rateLimitExceeded",
		Message: "User-rate limit exceeded.  Retry after " + until.Format("2006-01-02T15:04:05.000Z")})

	_, err := e.c.Profile(context.Background())
	var rl *RateLimitedError
	if !errors.As(err, &rl) {
		t.Fatalf("err = %v, want *RateLimitedError", err)
	}
	if d := rl.Until.Sub(until); d < -time.Second || d > time.Second {
		t.Errorf("Until = %v, want about %v", rl.Until, until)
	}
	e.wantCalls(t, "getProfile", 1, "no sleep for hours")
}

func TestReadPersistent503FailsAfterFourAttempts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	id, _ := e.insert(t, "alice@example.org", "hello", "hi")
	e.srv.Inject(localgmail.Fault{Op: "messages.get", Status: 503, HTML: true, Times: -1})

	_, err := e.c.Message(context.Background(), id)
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != 503 {
		t.Fatalf("err = %v, want the 503 surfaced", err)
	}
	if !strings.HasPrefix(err.Error(), "fetching message "+id+": ") {
		t.Errorf("err text = %q", err)
	}
	e.wantCalls(t, "messages.get", 4, "1 + MaxRetries 3")
}

func TestReadPermanentErrorsAreNotRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, f := range []localgmail.Fault{
		{Op: "getProfile", Status: 400},
		{Op: "getProfile", Status: 403, Reason: "dailyLimitExceeded"},
		{Op: "getProfile", Status: 403, Reason: "forbidden"},
		{Op: "getProfile", Status: 404},
	} {
		e.srv.ResetCounters()
		e.srv.Inject(f)
		if _, err := e.c.Profile(context.Background()); err == nil {
			t.Fatalf("%+v: no error", f)
		}
		if got := e.srv.Calls("getProfile"); got != 1 {
			t.Errorf("%d %s: %d calls, want 1", f.Status, f.Reason, got)
		}
	}
}

func TestInsufficientScopeIsAClearPermanentError(t *testing.T) {
	t.Parallel()
	e := newEnv(t, []string{ScopeCompose}) // no gmail.readonly
	e.insert(t, "alice@example.org", "hello", "hi")

	_, err := e.c.Search(context.Background(), "hello", 5)
	var pe *PermissionError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *PermissionError", err)
	}
	if pe.Scope != ScopeReadonly || !strings.Contains(err.Error(), ScopeReadonly) || !strings.Contains(err.Error(), "mailgate auth") {
		t.Errorf("err text = %q", err)
	}
	e.wantCalls(t, "messages.list", 1)
}

func TestContextCancelStopsRetrying(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, func(o *Options) { o.RetryInitial, o.RetryMax = time.Hour, time.Hour })
	e.srv.Inject(localgmail.Fault{Op: "getProfile", Status: 503, Times: -1})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel while the client sleeps before its second attempt.
		for !strings.Contains(e.logs.String(), "retrying Gmail call") {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := e.c.Profile(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if !strings.Contains(err.Error(), "503") {
		t.Errorf("the last attempt's error is not reported: %v", err)
	}
}

func TestServerWait(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 9, 11, 19, 59, 0, 0, time.UTC)
	tests := []struct {
		name string
		err  *googleapi.Error
		want time.Duration
	}{
		{"none", &googleapi.Error{Code: 429}, 0},
		{"delta seconds", &googleapi.Error{Code: 429, Header: http.Header{"Retry-After": {"7"}}}, 7 * time.Second},
		{"http date", &googleapi.Error{Code: 503, Header: http.Header{"Retry-After": {"Fri, 11 Sep 2026 20:00:00 GMT"}}}, time.Minute},
		{"message", &googleapi.Error{Code: 403, Message: "User-rate limit exceeded.  Retry after 2026-09-11T20:00:00.000Z"}, time.Minute},
		{"errors[] message", &googleapi.Error{Code: 403, Errors: []googleapi.ErrorItem{{Message: "Retry after 2026-09-11T19:59:30Z"}}}, 30 * time.Second},
		{"largest wins", &googleapi.Error{Code: 429, Header: http.Header{"Retry-After": {"5"}}, Message: "Retry after 2026-09-11T19:59:02.5Z"}, 5 * time.Second},
		{"past", &googleapi.Error{Code: 429, Message: "Retry after 2020-01-01T00:00:00Z"}, 0},
		{"garbage", &googleapi.Error{Code: 429, Header: http.Header{"Retry-After": {"soon"}}}, 0},
	}
	for _, tt := range tests {
		if got := serverWait(tt.err, now); got != tt.want {
			t.Errorf("%s: serverWait = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestReadRetriesDroppedConnection(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	id, _ := e.insert(t, "alice@example.org", "hello", "hi")
	e.srv.Inject(localgmail.Fault{Op: "messages.get", Drop: true})
	m, err := e.c.Message(context.Background(), id)
	if err != nil || m.ID != id {
		t.Fatalf("Message = %+v, %v", m, err)
	}
	e.wantCalls(t, "messages.get", 2)
}

func TestStatic401IsAReauthError(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	c, err := New(context.Background(), Options{Endpoint: e.base,
		TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "not-issued-by-the-server"})})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Profile(context.Background())
	var re *ReauthError
	var gerr *googleapi.Error
	if !errors.As(err, &re) || !errors.As(err, &gerr) || gerr.Code != 401 {
		t.Fatalf("err = %v, want *ReauthError around the 401", err)
	}
	e.wantCalls(t, "getProfile", 1, "a static token cannot be refreshed")
}

func TestInvalidClientIsNotRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	writeJSON(t, e.credFile, map[string]any{"installed": map[string]any{
		"client_id": e.clientID, "client_secret": "wrong", "token_uri": e.srv.TokenURL()}})
	c := e.newClient(t)
	_, err := c.Profile(context.Background())
	var rerr *oauth2.RetrieveError
	if !errors.As(err, &rerr) {
		t.Fatalf("err = %v, want the token endpoint's refusal", err)
	}
	if got := e.srv.TokenRequests(); got != 1 {
		t.Errorf("token requests = %d, want 1", got)
	}
}
