package gmail

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/localgmail/gmailschema"
	"github.com/mailgate/mailgate/internal/testutil"
)

// env is a local Gmail server plus a Client wired to it through real
// credential and token files.
type env struct {
	srv       *localgmail.Server
	rec       *gmailschema.Recorder
	base      string
	credFile  string
	tokFile   string
	refresh   string // the refresh token in the token file
	logs      *testutil.Buffer
	c         *Client
	clientID  string
	clientSec string
}

// newEnv starts the server and builds a Client with tiny retry intervals.
// The token file holds only a refresh token, so the first call refreshes.
func newEnv(t testing.TB, scopes []string, mod ...func(*Options)) *env {
	t.Helper()
	return newEnvWith(t, localgmail.Options{}, scopes, mod...)
}

// newEnvWith is newEnv with server options (Email and RequireAuth are set).
func newEnvWith(t testing.TB, so localgmail.Options, scopes []string, mod ...func(*Options)) *env {
	t.Helper()
	so.Email, so.RequireAuth = "me@example.com", true
	srv := localgmail.New(so)
	// Every answer the client gets is held to Gmail's discovery document.
	base, rec := gmailschema.Serve(t, srv)
	recorders.add(rec)
	srv.SetBaseURL(base)
	e := &env{srv: srv, base: base, rec: rec, logs: &testutil.Buffer{}, clientID: "client-1", clientSec: "secret-1"}
	srv.AddClient(e.clientID, e.clientSec)
	if scopes == nil {
		scopes = []string{ScopeReadonly, ScopeCompose}
	}
	e.refresh = srv.IssueRefreshToken(e.clientID, scopes...)

	dir := t.TempDir()
	e.credFile = filepath.Join(dir, "credentials.json")
	cred := map[string]any{"installed": map[string]any{
		"client_id": e.clientID, "client_secret": e.clientSec,
		"auth_uri": srv.AuthURL(), "token_uri": srv.TokenURL(),
		"redirect_uris": []string{"http://127.0.0.1"},
	}}
	writeJSON(t, e.credFile, cred)
	e.tokFile = filepath.Join(dir, "state", "token.json")
	if err := SaveToken(e.tokFile, &oauth2.Token{RefreshToken: e.refresh, Expiry: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	e.c = e.newClient(t, mod...)
	return e
}

func (e *env) newClient(t testing.TB, mod ...func(*Options)) *Client {
	t.Helper()
	o := Options{
		CredentialsFile: e.credFile,
		TokenFile:       e.tokFile,
		Endpoint:        e.base,
		Logger:          slog.New(slog.NewTextHandler(e.logs, nil)),
		RetryInitial:    time.Millisecond,
		RetryMax:        5 * time.Millisecond,
	}
	for _, m := range mod {
		m(&o)
	}
	c, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// insert stores a simple message in the INBOX and returns its Gmail ids.
func (e *env) insert(t testing.TB, from, subject, body string, extra ...string) (id, threadID string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: me@example.com\r\nSubject: %s\r\n", from, subject)
	for _, h := range extra {
		b.WriteString(h + "\r\n")
	}
	if !strings.Contains(strings.ToLower(strings.Join(extra, "\n")), "message-id:") {
		fmt.Fprintf(&b, "Message-ID: <%d.%s@example.org>\r\n", time.Now().UnixNano(), strings.ReplaceAll(subject, " ", "-"))
	}
	if !strings.Contains(strings.ToLower(strings.Join(extra, "\n")), "content-type:") {
		b.WriteString("Content-Type: text/plain; charset=UTF-8\r\n")
	}
	b.WriteString("Date: Mon, 02 Feb 2026 10:00:00 +0000\r\n\r\n" + body)
	m, err := e.srv.Insert([]byte(b.String()), "INBOX")
	if err != nil {
		t.Fatal(err)
	}
	return m.Id, m.ThreadId
}

// insertMany stores n small messages with labels and returns their ids.
func (e *env) insertMany(t testing.TB, n int, labels ...string) []string {
	t.Helper()
	ids := make([]string, 0, n)
	for i := range n {
		m, err := e.srv.Insert([]byte(fmt.Sprintf("From: a@example.org\r\nSubject: n%d\r\n\r\nx", i)), labels...)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.Id)
	}
	return ids
}

func readToken(t testing.TB, path string) *oauth2.Token {
	t.Helper()
	tok, err := LoadToken(path)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// wantCalls checks that the server received want calls of op; why, if
// given, says what the count stands for.
func (e *env) wantCalls(t testing.TB, op string, want int, why ...string) {
	t.Helper()
	if got := e.srv.Calls(op); got != want {
		note := ""
		if len(why) > 0 {
			note = " (" + strings.Join(why, " ") + ")"
		}
		t.Errorf("%s calls = %d, want %d%s", op, got, want, note)
	}
}
