package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeStartsWithoutGmail: before `mailgate auth`, serve still starts
// (Claude Desktop would otherwise show only "disconnected"): it answers
// initialize, lists every configured tool, serves agent mail at once, and
// every email tool answers one actionable text naming the home and the file
// it looks for, writing nothing. Once `mailgate auth` has saved a token, the
// same server answers for real, without a restart.
func TestServeStartsWithoutGmail(t *testing.T) {
	parallel(t)
	for _, tt := range []struct {
		name      string
		remove    []string // files of the home's auth/ folder missing at start
		wantNamed string   // the file the answer must name
	}{
		{"no token", []string{"token.json"}, "token.json"},
		{"no credentials", []string{"token.json", "credentials.json"}, "credentials.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, true, "MAILGATE_TOOLS=email,agentmail")
			saved := map[string][]byte{}
			for _, f := range tt.remove {
				p := filepath.Join(w.home, "auth", f)
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				saved[f] = b
				os.Remove(p)
			}
			cs := w.connectHere() // what the server answers is the subject, not the process
			names := toolNames(t, cs)
			list := strings.Join(names, " ")
			for _, want := range []string{"search_email", "send_email", "reply_email", "register_agent", "send_message"} {
				if !strings.Contains(" "+list+" ", " "+want+" ") {
					t.Errorf("tools/list lacks %s: %s", want, list)
				}
			}
			if text, isErr := call(t, cs, "ensure_project", map[string]any{"human_key": "/tmp/proj"}); isErr {
				t.Errorf("agent mail does not work without Gmail: %s", text)
			}
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"search_email", map[string]any{"query": "invoice"}},
				{"send_email", map[string]any{"to": "alice@example.com", "subject": "s", "body": "b"}},
				{"reply_email", map[string]any{"thread_id": "t1", "message_id": "m1", "body": "b"}},
			} {
				text, isErr := call(t, cs, c.tool, c.args)
				if !isErr || !strings.HasPrefix(text, "Gmail is not connected yet: run `mailgate auth`") ||
					!strings.Contains(text, w.home) || !strings.Contains(text, tt.wantNamed) || !strings.Contains(text, "No restart is needed") {
					t.Errorf("%s before auth answered (error %t):\n%s", c.tool, isErr, text)
				}
			}
			if got := w.files("Pending_Approval"); len(got) != 0 {
				t.Errorf("a request file was written for an email that cannot be sent: %v", got)
			}

			// The user follows the answer: the OAuth client file, then auth.
			if b, ok := saved["credentials.json"]; ok {
				if err := os.WriteFile(filepath.Join(w.home, "auth", "credentials.json"), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			b := &simBrowser{t: t, w: w, page: make(chan string, 1)}
			r := newSetupRun(w.env, nil)
			if err := runAuth(context.Background(), r.env, []string{"--timeout", "20s"}, b.open); err != nil {
				t.Fatalf("auth: %v\n%s", err, r.stderr)
			}
			<-b.page
			text, isErr := call(t, cs, "search_email", map[string]any{"query": "invoice"})
			if isErr || !strings.Contains(text, "Message ID:") {
				t.Fatalf("search_email after auth, same server (error %t):\n%s", isErr, text)
			}
		})
	}
}
