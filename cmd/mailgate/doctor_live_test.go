package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
	gmailapi "google.golang.org/api/gmail/v1"

	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/mailmsg"
)

// liveWorld is a home whose token the local Gmail server issued with the
// given scopes, over a mailbox holding msgs (raw messages, in the inbox).
// ids, when not "", is the kind of attachment ids the server gives
// (attachmentIDs); "" is the local server's own.
func liveWorld(t *testing.T, ids string, scopes []string, msgs ...[]byte) (*localgmail.Server, []string) {
	t.Helper()
	gm := localgmail.New(localgmail.Options{Email: userEmail, RequireAuth: true})
	if ids != "" {
		hs := httptest.NewServer(attachmentIDs(gm, ids))
		t.Cleanup(hs.Close)
		gm.SetBaseURL(hs.URL)
	} else {
		if _, err := gm.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { gm.Close() })
	}
	gm.AddClient(testClientID, testClientSecret)
	full := make([]string, len(scopes))
	for i, s := range scopes {
		full[i] = "https://www.googleapis.com/auth/" + s
	}
	rt := gm.IssueRefreshToken(testClientID, full...)
	home := t.TempDir()
	writeJSON(t, filepath.Join(home, "auth", "credentials.json"), map[string]any{"installed": map[string]any{
		"client_id": testClientID, "client_secret": testClientSecret,
		"auth_uri": gm.AuthURL(), "token_uri": gm.TokenURL(), "redirect_uris": []string{"http://localhost"},
	}})
	writeJSON(t, filepath.Join(home, "auth", "token.json"), &oauth2.Token{
		AccessToken: "expired", RefreshToken: rt, TokenType: "Bearer", Expiry: time.Now().Add(-time.Hour),
	})
	for _, raw := range msgs {
		if _, err := gm.Insert(raw, "INBOX"); err != nil {
			t.Fatal(err)
		}
	}
	return gm, []string{"PATH=/usr/bin:/bin", "HOME=" + home, "MAILGATE_HOME=" + home, "GMAIL_API_ENDPOINT=" + gm.URL(),
		"MAILGATE_TOOLS=email", "MAILGATE_LOG_LEVEL=warn"}
}

// attachmentIDs serves the local Gmail server with attachment ids of
// another kind than its own (a new id on every read, each staying valid,
// as Gmail's): "stable" answers each part's first id on every read; "latest"
// keeps the new id per read but refuses any but a part's latest one, the
// server on which get_attachment breaks for an id from an earlier read.
func attachmentIDs(gm *localgmail.Server, kind string) http.Handler {
	var mu sync.Mutex
	first := map[string]string{}  // message id + part id → the first attachment id
	latest := map[string]string{} // message id + part id → the latest attachment id
	part := map[string]string{}   // attachment id → message id + part id
	var fix func(msgID string, p *gmailapi.MessagePart)
	fix = func(msgID string, p *gmailapi.MessagePart) {
		if p == nil {
			return
		}
		if p.Body != nil && p.Body.AttachmentId != "" {
			k := msgID + "/" + p.PartId
			if _, ok := first[k]; !ok {
				first[k] = p.Body.AttachmentId
			}
			if kind == "stable" {
				p.Body.AttachmentId = first[k]
			}
			latest[k], part[p.Body.AttachmentId] = p.Body.AttachmentId, k
		}
		for _, c := range p.Parts {
			fix(msgID, c)
		}
	}
	getMessage := regexp.MustCompile(`/gmail/v1/users/[^/]+/messages/[0-9a-f]+$`)
	getAttachment := regexp.MustCompile(`/gmail/v1/users/[^/]+/messages/[0-9a-f]+/attachments/([^/]+)$`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := getAttachment.FindStringSubmatch(r.URL.Path); m != nil && kind == "latest" {
			mu.Lock()
			k, known := part[m[1]]
			stale := known && latest[k] != m[1]
			mu.Unlock()
			if stale {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				w.Write([]byte(`{"error":{"code":400,"message":"Invalid attachment token","errors":[{"reason":"invalidArgument","message":"Invalid attachment token"}]}}`))
				return
			}
		}
		if r.Method != http.MethodGet || !getMessage.MatchString(r.URL.Path) {
			gm.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		gm.ServeHTTP(rec, r)
		var m gmailapi.Message
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &m) != nil {
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		mu.Lock()
		fix(m.Id, m.Payload)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(&m)
	})
}

// liveMessage is a message from a stranger, with an attachment of n bytes
// when n > 0 (large enough that Gmail stores it apart, under an id).
func liveMessage(t *testing.T, subject string, n int) []byte {
	t.Helper()
	o := mailmsg.Outgoing{From: "Dana <dana@example.com>", To: &mail.Address{Address: userEmail}, Subject: subject,
		Body: "See attached.\n", Date: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}
	if n > 0 {
		o.Attachments = []mailmsg.Attachment{{Name: "report.pdf", ContentType: "application/pdf", Data: bytes.Repeat([]byte("%PDF-1.4 live "), n/14+1)[:n]}}
	}
	raw, err := mailmsg.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

var (
	liveScopes = []string{"gmail.readonly", "gmail.compose", "gmail.send", "gmail.modify", "gmail.settings.basic"}
	liveChecks = []string{"live profile", "live labels", "live search", "live thread", "live attachment", "live draft", "live scopes"}
)

// TestDoctorLive runs `doctor --live` against the local Gmail server over
// the path serve uses (token refreshed at the server's OAuth endpoint),
// one case per kind of account: each case names the lines it expects, and
// every case checks that nothing was sent and the draft is gone. In-process
// (main's dispatch, its streams and exit status: no process start, ~20 ms
// of CPU each); TestDoctorBinary runs doctor through the binary.
func TestDoctorLive(t *testing.T) {
	parallel(t)
	tests := []struct {
		name   string
		ids    string // the kind of attachment ids (attachmentIDs); "" for the local server's
		scopes []string
		msgs   func(t *testing.T) [][]byte
		want   map[string]string // check → status and a piece of its line ("ok|…")
		fix    map[string]string // check → a piece of its fix line
		exit   int
	}{
		{name: "attachment ids that change on every read", scopes: liveScopes,
			msgs: func(t *testing.T) [][]byte {
				return [][]byte{liveMessage(t, "Quarterly report", 20000), liveMessage(t, "Lunch", 0)}
			},
			want: map[string]string{
				"live profile": "ok|me@example.com: 2 messages, 2 threads", "live labels": "ok|labels:",
				"live search": `ok|"in:inbox": 2 shown`, "live thread": "ok|1 message(s)",
				"live attachment": "ok|(application/pdf, 20000 bytes): a new attachment id on each read (Gmail's ephemeral ids), both usable and giving the same bytes",
				"live draft":      "ok|read it back, deleted it; nothing was sent", "live scopes": "ok|Gmail allowed every call",
			}},
		{name: "attachment ids that do not change", ids: "stable", scopes: liveScopes,
			msgs: func(t *testing.T) [][]byte { return [][]byte{liveMessage(t, "Quarterly report", 20000)} },
			want: map[string]string{
				"live attachment": "ok|(application/pdf, 20000 bytes): the same attachment id on both reads, and it fetched the bytes",
				"live draft":      "ok|nothing was sent", "live scopes": "ok|Gmail allowed every call",
			}},
		// A server stricter than Gmail is known to be: an id from an earlier
		// read is refused once the message was read again. get_attachment's
		// part:N ids still work; a Gmail attachmentId kept from before does
		// not: a warning.
		{name: "attachment ids that expire on the next read", ids: "latest", scopes: liveScopes,
			msgs: func(t *testing.T) [][]byte { return [][]byte{liveMessage(t, "Quarterly report", 20000)} },
			want: map[string]string{
				"live attachment": "warn|(application/pdf, 20000 bytes): the id from the first read stopped working once the message was read again",
				"live draft":      "ok|nothing was sent",
			},
			fix: map[string]string{"live attachment": "give get_attachment the attachment_id read_email lists (part:N)"}},
		{name: "no attachments", scopes: liveScopes,
			msgs: func(t *testing.T) [][]byte { return [][]byte{liveMessage(t, "Lunch", 0)} },
			want: map[string]string{
				"live attachment": `ok|not checked: no message found by "has:attachment" has an attachment`,
				"live draft":      "ok|nothing was sent", "live scopes": "ok|Gmail allowed every call",
			}},
		{name: "empty mailbox", scopes: liveScopes,
			msgs: func(t *testing.T) [][]byte { return nil },
			want: map[string]string{
				"live search": "ok|an empty inbox", "live thread": "ok|not checked", "live attachment": "ok|not checked",
				"live draft": "ok|nothing was sent",
			}},
		// A token granted reading only: the draft is refused with 403
		// insufficientPermissions, and the scopes line names the call.
		{name: "token missing a scope", scopes: []string{"gmail.readonly"},
			msgs: func(t *testing.T) [][]byte { return [][]byte{liveMessage(t, "Quarterly report", 20000)} },
			want: map[string]string{
				"live profile": "ok|me@example.com", "live attachment": "ok|20000 bytes",
				"live draft":  "FAIL|drafts.create: Gmail refused it: the token lacks gmail.compose",
				"live scopes": "FAIL|Gmail refused for a missing scope: drafts.create (gmail.compose)",
			},
			fix:  map[string]string{"live draft": `run "mailgate auth" and tick every checkbox`, "live scopes": "tick every checkbox"},
			exit: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gm, env := liveWorld(t, tt.ids, tt.scopes, tt.msgs(t)...)
			r := newSetupRun(env, nil, "doctor", "--live")
			code := r.run(t)
			out := r.stdout.String()
			if code != tt.exit {
				t.Errorf("exit %d, want %d\n%s%s", code, tt.exit, out, r.stderr.String())
			}
			for _, name := range liveChecks {
				if !strings.Contains(out, "  "+name+"  ") {
					t.Errorf("no %s line in:\n%s", name, out)
				}
			}
			for name, w := range tt.want {
				status, piece, _ := strings.Cut(w, "|")
				line, fix, ok := doctorLine(out, status, name)
				if !ok || !strings.Contains(line, piece) {
					t.Errorf("want %s %s with %q; got %q in:\n%s", status, name, piece, line, out)
				}
				if f := tt.fix[name]; f != "" && !strings.Contains(fix, f) {
					t.Errorf("%s: fix %q, want %q", name, fix, f)
				}
			}
			// It never sends, and leaves no draft behind.
			if n := gm.Calls("messages.send") + gm.Calls("drafts.send"); n != 0 || len(gm.Sent()) != 0 {
				t.Errorf("doctor --live sent: %d send calls, %d in Sent", n, len(gm.Sent()))
			}
			if strings.HasPrefix(tt.want["live draft"], "ok|") && (gm.Calls("drafts.create") != 1 || gm.Calls("drafts.delete") != 1) {
				t.Errorf("%d drafts created, %d deleted", gm.Calls("drafts.create"), gm.Calls("drafts.delete"))
			}
			if testing.Verbose() {
				t.Logf("\n%s", out)
			}
		})
	}
}

// TestDoctorWithoutLiveMakesNoLiveCalls: plain doctor stays one profile
// call; the live lines appear only when asked for. In-process, as
// TestDoctorLive.
func TestDoctorWithoutLiveMakesNoLiveCalls(t *testing.T) {
	parallel(t)
	gm, env := liveWorld(t, "", liveScopes, liveMessage(t, "Quarterly report", 20000))
	r := newSetupRun(env, nil, "doctor")
	if code := r.run(t); code != 0 || strings.Contains(r.stdout.String(), "live ") {
		t.Fatalf("exit %d\n%s%s", code, r.stdout, r.stderr)
	}
	if n := gm.TotalCalls(); n != 1 || gm.Calls("getProfile") != 1 {
		t.Errorf("%d Gmail calls, want the profile only", n)
	}
}
