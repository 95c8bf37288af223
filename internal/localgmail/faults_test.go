package localgmail

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
)

func TestFaults(t *testing.T) {
	t.Parallel()
	retryAt := "User-rate limit exceeded.  Retry after 2026-11-20T12:00:02.000Z"
	cases := []struct {
		name   string
		faults []Fault
		// check runs against the first messages.get after injection
		check func(t *testing.T, err error)
		// failures is how many gets fail before one succeeds
		failures int
	}{
		{"429 with Retry-After", []Fault{{Op: "messages.get", Status: 429, Header: http.Header{"Retry-After": {"1"}}}}, func(t *testing.T, err error) {
			wantAPIError(t, err, 429, "rateLimitExceeded", "Resource has been exhausted (e.g. check quota).")
			if ge := gerr(t, err); ge.Header.Get("Retry-After") != "1" {
				t.Errorf("Retry-After = %q", ge.Header.Get("Retry-After"))
			}
		}, 1},
		{"403 userRateLimitExceeded with a time", []Fault{{Op: "messages.get", Status: 403, Reason: "userRateLimitExceeded", Message: retryAt}}, func(t *testing.T, err error) {
			wantAPIError(t, err, 403, "userRateLimitExceeded", retryAt)
		}, 1},
		{"403 defaults", []Fault{{Status: 403}}, func(t *testing.T, err error) {
			wantAPIError(t, err, 403, "userRateLimitExceeded", "User Rate Limit Exceeded")
		}, 1},
		{"HTML 503", []Fault{{Op: "messages.get", Status: 503, HTML: true}}, func(t *testing.T, err error) {
			ge := gerr(t, err)
			if ge.Code != 503 || ge.Message != "" || ge.Errors != nil || !strings.Contains(ge.Body, "<html") {
				t.Errorf("HTML 503 surfaced as %+v", ge)
			}
		}, 1},
		{"500 backendError", []Fault{{Status: 500}}, func(t *testing.T, err error) {
			wantAPIError(t, err, 500, "backendError", "Backend Error")
		}, 1},
		{"401 authError", []Fault{{Status: 401}}, func(t *testing.T, err error) {
			wantAPIError(t, err, 401, "authError", authErrorMessage)
			if ge := gerr(t, err); !strings.Contains(ge.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
				t.Errorf("WWW-Authenticate = %q", ge.Header.Get("WWW-Authenticate"))
			}
		}, 1},
		{"Times 3", []Fault{{Op: "messages.get", Status: 503, Times: 3}}, nil, 3},
		{"other op is not affected", []Fault{{Op: "messages.list", Status: 500}}, nil, 0},
		{"FIFO across ops", []Fault{{Op: "messages.list", Status: 500}, {Status: 502}, {Op: "messages.get", Status: 504}}, func(t *testing.T, err error) {
			wantAPIError(t, err, 502, "backendError", "")
		}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, svc := newService(t, Options{})
			m := mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "x", "y"))
			for _, f := range c.faults {
				s.Inject(f)
			}
			failures := 0
			for i := 0; i < 10; i++ {
				_, err := svc.Users.Messages.Get("me", m.Id).Do()
				if err == nil {
					break
				}
				if i == 0 && c.check != nil {
					c.check(t, err)
				}
				failures++
			}
			if failures != c.failures || s.Calls("messages.get") != failures+1 {
				t.Errorf("failures = %d (calls %d), want %d", failures, s.Calls("messages.get"), c.failures)
			}
		})
	}
}

func TestFaultForeverAndTokenIsolation(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	s.Inject(Fault{Status: 503, Times: -1})
	for i := 0; i < 5; i++ {
		if _, err := svc.Users.GetProfile("me").Do(); err == nil {
			t.Fatal("forever fault answered success")
		}
	}
	// an op-less fault never hits the token endpoint
	res, err := http.PostForm(s.TokenURL(), url.Values{"grant_type": {"refresh_token"}})
	if err != nil || res.StatusCode != 401 {
		t.Errorf("token endpoint: %v %v", err, res.Status)
	}
	res.Body.Close()
	if s.PendingFaults() != 1 {
		t.Errorf("pending = %d", s.PendingFaults())
	}
	s.ClearFaults()
	if _, err := svc.Users.GetProfile("me").Do(); err != nil {
		t.Fatal(err)
	}
}

// TestDropAmbiguousSend: the server sends, then drops the connection. The
// client sees a transport error, yet the message is in SENT.
func TestDropAmbiguousSend(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	s.Inject(Fault{Op: "messages.send", Drop: true})
	raw := msg("", "bob@example.org", "ambiguous", "tok-1234abcd")
	_, err := svc.Users.Messages.Send("me", &gmail.Message{Raw: b64(raw)}).Do()
	var ge *googleapi.Error
	var ue *url.Error
	if err == nil || errors.As(err, &ge) || !errors.As(err, &ue) {
		t.Fatalf("want a transport error (*url.Error), got %T %v", err, err)
	}
	if sent := s.Sent(); len(sent) != 1 {
		t.Fatalf("Sent() = %d messages, want the dropped send", len(sent))
	}
	r, err := svc.Users.Messages.List("me").Q(`in:sent "tok-1234abcd"`).Do()
	if err != nil || len(r.Messages) != 1 {
		t.Errorf("reconcile search: %v %v", err, r)
	}

	// draft-first: after a dropped drafts.send the draft is gone and SENT has it
	d, err := svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{Raw: b64(raw)}}).Do()
	if err != nil {
		t.Fatal(err)
	}
	s.Inject(Fault{Op: "drafts.send", Drop: true})
	if _, err := svc.Users.Drafts.Send("me", &gmail.Draft{Id: d.Id}).Do(); err == nil {
		t.Fatal("dropped drafts.send returned success")
	}
	_, err = svc.Users.Drafts.Get("me", d.Id).Do()
	wantAPIError(t, err, 404, "notFound", "")
	if len(s.Sent()) != 2 {
		t.Errorf("Sent() = %d", len(s.Sent()))
	}
}

func TestConcurrencyCapAndLatency(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	m := mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "x", "y"))
	get := func() error {
		_, err := svc.Users.Messages.Get("me", m.Id).Format("minimal").Do()
		return err
	}
	s.SetConcurrencyCap(2)
	// Two requests Gmail is still working on (held), then four more, each
	// arriving while those two are in flight: over the cap, whatever the
	// machine's speed (a latency-based version lost the race under load).
	hold := make(chan struct{})
	s.Inject(Fault{Op: "messages.get", Hold: hold, Times: 2})
	held := make(chan error, 2)
	for range 2 {
		go func() { held <- get() }()
	}
	for deadline := time.Now().Add(2 * time.Minute); s.InFlight() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the two held requests never reached the server (in flight: %d)", s.InFlight())
		}
	}
	for i := range 4 {
		err := get()
		if err == nil {
			t.Errorf("cap 2, request %d beside two in flight: answered", i+3)
			continue
		}
		if ge := gerr(t, err); ge.Code != 429 || ge.Message != "Too many concurrent requests for user." || ge.Errors[0].Reason != "rateLimitExceeded" {
			t.Errorf("cap 2, request %d: %v", i+3, err)
		}
	}
	close(hold)
	for range 2 {
		if err := <-held; err != nil {
			t.Errorf("cap 2, a held request: %v", err)
		}
	}
	s.SetConcurrencyCap(0)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() { errs <- get() })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("no cap: %v", err)
		}
	}
	// The latency is a floor on every answer (slowness cannot fail this).
	s.SetLatency(100 * time.Millisecond)
	start := time.Now()
	if err := get(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("latency not applied: answered in %v", d)
	}
}

func TestAccounting(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	m := mustInsert(t, s, msg("a@example.com", "me@sandbox.local", "x", "y"))
	s.Inject(Fault{Op: "messages.get", Status: 500})
	calls := []func() error{
		func() error { _, e := svc.Users.Messages.List("me").Do(); return e },
		func() error { _, e := svc.Users.Messages.Get("me", m.Id).Do(); return e }, // faulted, still counted
		func() error { _, e := svc.Users.Messages.Get("me", m.Id).Do(); return e },
		func() error { _, e := svc.Users.Threads.Get("me", m.ThreadId).Do(); return e },
		func() error {
			_, e := svc.Users.Messages.Send("me", &gmail.Message{Raw: b64(msg("", "b@example.org", "s", "b"))}).Do()
			return e
		},
		func() error {
			_, e := svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{Raw: b64(msg("", "", "d", "b"))}}).Do()
			return e
		},
		func() error {
			_, e := svc.Users.Messages.Insert("me", &gmail.Message{Raw: b64(msg("", "", "i", "b"))}).Do()
			return e
		},
		func() error { _, e := svc.Users.Labels.List("me").Do(); return e },
		func() error { _, e := svc.Users.Labels.Create("me", &gmail.Label{Name: "L"}).Do(); return e },
		func() error { _, e := svc.Users.GetProfile("me").Do(); return e },
	}
	for _, c := range calls {
		c()
	}
	want := 5 + 5 + 5 + 10 + 100 + 10 + 25 + 1 + 5 + 1
	if s.QuotaUnits() != want || s.Calls("messages.get") != 2 || s.TotalCalls() != len(calls) {
		t.Errorf("units %d (want %d), gets %d, total %d", s.QuotaUnits(), want, s.Calls("messages.get"), s.TotalCalls())
	}
	res, err := http.Get(s.URL() + "gmail/v1/users/me/bogus")
	if err != nil || res.StatusCode != 404 || s.TotalCalls() != len(calls)+1 {
		t.Errorf("unknown route: %v %v total %d", err, res.Status, s.TotalCalls())
	}
	res.Body.Close()
	s.ResetCounters()
	if s.TotalCalls() != 0 || s.QuotaUnits() != 0 || s.Calls("messages.send") != 0 {
		t.Error("ResetCounters left counts")
	}
}
