package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/agentmail"
	agentmailsqlite "github.com/mailgate/mailgate/internal/agentmail/sqlite"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/testutil"
)

// TestStartMirror: with AGENT_MAIL_MIRROR=gmail a message sent by an agent
// reaches the mailbox under AgentMail/<project> through real OAuth, and
// the vault archive gets it; in DEV_MODE Gmail gets no request at all and
// the log says why.
func TestStartMirror(t *testing.T) {
	parallel(t)
	tests := []struct {
		name       string
		devMode    bool
		wantInsert bool
		wantLog    string
	}{
		{"mirrors", false, true, "mirroring agent mail into Gmail"},
		{"DEV_MODE mirrors nothing", true, false, "DEV_MODE is on: agent mail is not mirrored"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc.devMode)
			// The mirror needs gmail.insert and gmail.labels on top of
			// what newWorld grants (mailgate auth asks for them when
			// AGENT_MAIL_MIRROR=gmail).
			rt := w.gm.IssueRefreshToken(testClientID, "https://www.googleapis.com/auth/gmail.readonly",
				"https://www.googleapis.com/auth/gmail.insert", "https://www.googleapis.com/auth/gmail.labels")
			writeJSON(t, filepath.Join(w.home, "auth", "token.json"), &oauth2.Token{RefreshToken: rt, TokenType: "Bearer", Expiry: time.Now().Add(-time.Hour)})
			w.gm.ResetCounters()

			ctx := context.Background()
			db, err := store.Open(ctx, filepath.Join(w.home, "state.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			vault := t.TempDir()
			cfg := &config.Config{Mirror: "gmail", DevMode: tc.devMode, Tools: []string{config.ToolsAgentMail},
				CredentialsFile: filepath.Join(w.home, "auth", "credentials.json"), TokenFile: filepath.Join(w.home, "auth", "token.json"),
				GmailEndpoint: w.gm.URL(), VaultPath: vault}
			var logs testutil.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			a := &app{}
			defer a.Close()
			if err := startMirror(ctx, cfg, logger, db, a); err != nil {
				t.Fatal(err)
			}
			svc, err := agentmailsqlite.NewService(ctx, db, agentmail.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close() // before the DB: it stops the indexer
			const project = "/data/projects/app"
			if _, err := svc.EnsureProject(ctx, project); err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"BlueLake", "GreenCastle"} {
				if _, err := svc.RegisterAgent(ctx, agentmail.RegisterParams{ProjectKey: project, Name: n}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: project, Sender: "BlueLake", To: []string{"GreenCastle"},
				Subject: "hello", BodyMD: "hi"}); err != nil {
				t.Fatal(err)
			}
			// The archive runs in both cases: it is local, nothing leaves.
			testutil.Eventually(t, 10*time.Second, func() error {
				archived, _ := filepath.Glob(filepath.Join(vault, "AgentMail", "data-projects-app", "messages", "*", "*", "*.md"))
				if inserted := w.gm.Calls("messages.insert") > 0; len(archived) != 1 || inserted != tc.wantInsert {
					return fmt.Errorf("archived %d files, inserted %v (want 1, %v)\n%s", len(archived), inserted, tc.wantInsert, logs.String())
				}
				return nil
			})
			if !tc.wantInsert {
				time.Sleep(300 * time.Millisecond) // a mirror would have polled by now
				if n := w.gm.TotalCalls(); n != 0 {
					t.Errorf("DEV_MODE: Gmail received %d requests", n)
				}
			} else if _, ok := w.gm.LabelID("AgentMail/data-projects-app"); !ok {
				t.Error("label AgentMail/data-projects-app not created")
			}
			if !strings.Contains(logs.String(), tc.wantLog) {
				t.Errorf("log lacks %q:\n%s", tc.wantLog, logs.String())
			}
		})
	}
}
