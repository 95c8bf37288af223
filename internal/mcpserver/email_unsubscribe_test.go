package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/unsubscribe"
)

// TestUnsubscribeGatedAndOnce: both ways of unsubscribing (RFC 8058's
// one-click POST, a mailto email) are a request first, show where they
// go, and happen exactly once after the approval; nothing reaches the
// list before it.
func TestUnsubscribeGatedAndOnce(t *testing.T) {
	e := newEmailEnv(t, false, nil)
	var posts atomic.Int32
	var body string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPost && r.URL.Path == "/u" && r.URL.Query().Get("id") == "42" {
			posts.Add(1)
			body = string(b)
		}
	}))
	defer srv.Close()
	e.deps.Unsubscribe = &unsubscribe.Client{HTTP: srv.Client()}
	raw := "From: Weekly News <news@list.example>\r\nTo: me@example.com\r\nSubject: This week\r\nDate: Tue, 10 Nov 2026 09:30:00 +0000\r\n" +
		"Message-ID: <w1@list.example>\r\nAuthentication-Results: mx.google.com; dkim=pass header.i=@list.example\r\n" +
		"List-Unsubscribe: <mailto:leave@list.example?subject=unsubscribe%20me>, <" + srv.URL + "/u?id=42>\r\n" +
		"List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n\r\nnews\r\n"
	m, err := e.gm.Insert([]byte(raw), "INBOX")
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"message_id": m.Id}
	text, file := request(t, e, "unsubscribe", args)
	mustContain(t, "answer", text, "to unsubscribe by one-click POST to 127.0.0.1 as it is now", "BEGIN UNTRUSTED EMAIL REQUEST",
		"POST "+srv.URL+"/u?id=42", "The unsubscribe request goes to 127.0.0.1, not to the sender's domain list.example.")
	req := readVault(t, e, "Pending_Approval", file)
	mustContain(t, "request file", req, "type: email_unsubscribe\n", `target: "message:`+m.Id+`"`, "## Where the unsubscribe request goes (sent on your behalf)",
		"Method: one-click (RFC 8058): an HTTPS POST, no cookies, no redirect followed\n", "Body: List-Unsubscribe=One-Click\n")
	if posts.Load() != 0 {
		t.Fatal("POSTed before the approval")
	}
	approve(t, e.vault, file)
	text, isErr := callTool(t, e.cs, "unsubscribe", args)
	if isErr || !strings.HasPrefix(text, "Done, as the user approved: unsubscribe by one-click POST to 127.0.0.1.") {
		t.Fatalf("approved: (isError=%v) %q", isErr, text)
	}
	if posts.Load() != 1 || body != unsubscribe.OneClickBody {
		t.Fatalf("%d POSTs, body %q", posts.Load(), body)
	}
	// Once: the next identical call is a new request, not a second POST.
	if text, isErr := callTool(t, e.cs, "unsubscribe", args); !isErr || !strings.Contains(text, "Request file:") {
		t.Fatalf("second call: (isError=%v) %q", isErr, text)
	}
	if posts.Load() != 1 {
		t.Fatalf("%d POSTs", posts.Load())
	}

	// The mailto way: an email to the list's address, once, counted as a send.
	margs := map[string]any{"message_id": m.Id, "method": "mailto"}
	text, file = request(t, e, "unsubscribe", margs)
	mustContain(t, "answer", text, "to unsubscribe by email to leave@list.example as it is now", "To: leave@list.example\nSubject: unsubscribe me\nBody:\nunsubscribe\n")
	if n := len(e.gm.Sent()); n != 0 {
		t.Fatalf("sent %d before the approval", n)
	}
	approve(t, e.vault, file)
	if text, isErr := callTool(t, e.cs, "unsubscribe", margs); isErr || !strings.Contains(text, "Message ID: ") {
		t.Fatalf("mailto approved: (isError=%v) %q", isErr, text)
	}
	callTool(t, e.cs, "unsubscribe", margs)
	sent := e.gm.Sent()
	if len(sent) != 1 {
		t.Fatalf("sent %d", len(sent))
	}
	if raw, _ := e.gm.RawMessage(sent[0].Id); !strings.Contains(string(raw), "To: <leave@list.example>") || !strings.Contains(string(raw), "Subject: unsubscribe me") {
		t.Fatalf("sent:\n%s", raw)
	}
	// Both took a slot of the send limit.
	if used := 10 - remaining(t, e); used != 2 {
		t.Fatalf("%d send slots used, want 2", used)
	}
	// A message without the header: nothing to do, and no request.
	plain, _ := e.gm.Insert([]byte("From: a@example.org\r\nTo: me@example.com\r\nSubject: hi\r\n\r\nx\r\n"), "INBOX")
	if text, isErr := callTool(t, e.cs, "unsubscribe", map[string]any{"message_id": plain.Id}); !isErr || !strings.Contains(text, "no List-Unsubscribe header") {
		t.Fatalf("no header: (isError=%v) %q", isErr, text)
	}
}

// remaining counts the free slots of e's send limit (taking them all).
func remaining(t *testing.T, e *emailEnv) int {
	t.Helper()
	n := 0
	for ; n < 100; n++ {
		if _, err := e.deps.Gate.Limiter.Reserve(context.Background(), time.Now(), fmt.Sprintf("probe-%d", n)); err != nil {
			var le *ratelimit.LimitError
			if !errors.As(err, &le) {
				t.Fatal(err)
			}
			break
		}
	}
	return n
}
