package localgmail

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"

	"github.com/mailgate/mailgate/internal/testutil"
)

func TestLifecycle(t *testing.T) {
	t.Parallel()
	s := New(Options{})
	if s.URL() != "" || s.Close() != nil {
		t.Fatal("before Start: URL must be empty and Close a no-op")
	}
	base, err := s.Start("127.0.0.1:0")
	if err != nil || !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/") || s.URL() != base {
		t.Fatalf("Start: %q %v", base, err)
	}
	if _, err := s.Start("127.0.0.1:0"); err == nil {
		t.Error("second Start succeeded")
	}
	if s.AuthURL() != base+"o/oauth2/auth" || s.TokenURL() != base+"token" {
		t.Errorf("AuthURL %q TokenURL %q", s.AuthURL(), s.TokenURL())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(base + "gmail/v1/users/me/profile"); err == nil {
		t.Error("server still answering after Close")
	}
}

// TestHTTPTestMount: the Server is a plain http.Handler, so httptest works,
// including the Drop fault's hijack; SetBaseURL makes the OAuth URLs right.
func TestHTTPTestMount(t *testing.T) {
	t.Parallel()
	logs := &testutil.Buffer{}
	s := New(Options{Now: fixedClock, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ts := httptest.NewServer(s)
	defer ts.Close()
	s.SetBaseURL(ts.URL)
	if s.TokenURL() != ts.URL+"/token" {
		t.Errorf("TokenURL = %q", s.TokenURL())
	}
	svc, err := gmail.NewService(context.Background(), option.WithEndpoint(ts.URL+"/"), option.WithHTTPClient(ts.Client()))
	if err != nil {
		t.Fatal(err)
	}
	s.Inject(Fault{Op: "messages.send", Drop: true})
	if _, err := svc.Users.Messages.Send("me", &gmail.Message{Raw: b64(msg("", "b@example.org", "s", "x"))}).Do(); err == nil {
		t.Error("dropped send succeeded")
	}
	if len(s.Sent()) != 1 {
		t.Errorf("Sent() = %d", len(s.Sent()))
	}
	if _, err := svc.Users.GetProfile("me").Do(); err != nil {
		t.Fatal(err)
	}
	// the line is written after the response is flushed: wait for it
	testutil.Eventually(t, time.Minute, func() error {
		if !strings.Contains(logs.String(), "op=getProfile status=200") {
			return fmt.Errorf("debug log lacks the request: %s", logs.String())
		}
		return nil
	})
}

// TestLatencyHonoursCancellation: a client giving up does not leave the
// request waiting out the latency (an hour: the handler must end long
// before, when the client goes).
func TestLatencyHonoursCancellation(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	s.SetLatency(time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := svc.Users.GetProfile("me").Context(ctx).Do(); err == nil {
		t.Fatal("expected a deadline error")
	}
	testutil.Eventually(t, time.Minute, func() error {
		if n := s.inflight.Load(); n != 0 {
			return fmt.Errorf("%d requests still waiting out the latency after their client left", n)
		}
		return nil
	})
}
