package localgmail

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/mailgate/mailgate/internal/localgmail/gmailschema"
)

// Test helpers: every test talks to the server through the real Gmail client
// over real HTTP, so what passes here is what mailgate will see.

// fixedNow is the clock of most tests: shortly after the sandbox mailbox.
var fixedNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func fixedClock() time.Time { return fixedNow }

// startServer starts s on loopback and closes it when the test ends.
func startServer(t testing.TB, s *Server) string {
	t.Helper()
	base, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return base
}

// newService returns a started server and a Gmail client for it that sends
// no credentials. The server answers through gmailschema's Recorder, so
// every answer of every test is held to Gmail's discovery document.
func newService(t testing.TB, o Options) (*Server, *gmail.Service) {
	t.Helper()
	if o.Now == nil {
		o.Now = fixedClock
	}
	s := New(o)
	base, _ := gmailschema.Serve(t, s)
	s.SetBaseURL(base)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	svc, err := gmail.NewService(context.Background(), option.WithEndpoint(base),
		option.WithHTTPClient(&http.Client{Transport: tr, Timeout: 2 * time.Minute})) // generous: a loaded machine is no failure
	if err != nil {
		t.Fatal(err)
	}
	return s, svc
}

// msg builds an RFC 822 message; extra are "Name: value" header lines.
func msg(from, to, subject, body string, extra ...string) []byte {
	var b strings.Builder
	if from != "" {
		fmt.Fprintf(&b, "From: %s\r\n", from)
	}
	if to != "" {
		fmt.Fprintf(&b, "To: %s\r\n", to)
	}
	fmt.Fprintf(&b, "Subject: %s\r\n", subject)
	for _, e := range extra {
		b.WriteString(e + "\r\n")
	}
	b.WriteString("Content-Type: text/plain; charset=UTF-8\r\n\r\n")
	b.WriteString(body)
	return []byte(b.String())
}

func b64(raw []byte) string { return base64.RawURLEncoding.EncodeToString(raw) }

// mustInsert seeds a message or fails the test.
func mustInsert(t testing.TB, s *Server, raw []byte, labels ...string) *gmail.Message {
	t.Helper()
	m, err := s.Insert(raw, labels...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// gerr extracts a *googleapi.Error, failing the test when err is not one.
func gerr(t *testing.T, err error) *googleapi.Error {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		t.Fatalf("want *googleapi.Error, got %T: %v", err, err)
	}
	return ge
}

// wantAPIError checks status, reason and (if non-empty) message.
func wantAPIError(t *testing.T, err error, code int, reason, message string) {
	t.Helper()
	ge := gerr(t, err)
	if ge.Code != code {
		t.Errorf("code = %d, want %d (%v)", ge.Code, code, err)
	}
	if len(ge.Errors) == 0 || ge.Errors[0].Reason != reason {
		t.Errorf("reason: got %+v, want %q", ge.Errors, reason)
	}
	if message != "" && ge.Message != message {
		t.Errorf("message = %q, want %q", ge.Message, message)
	}
}

func header(p *gmail.MessagePart, name string) string {
	if p == nil {
		return ""
	}
	for _, h := range p.Headers {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

func dateHdr(t time.Time) string { return "Date: " + t.Format(time.RFC1123Z) }
