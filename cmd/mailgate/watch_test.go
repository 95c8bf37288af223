package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/agentmail/amstore"
	"github.com/mailgate/mailgate/internal/store"
	"github.com/mailgate/mailgate/internal/testutil"
)

// TestWatch: against a store with messages and a reservation, --once
// prints one readable line per message (project, who → whom, thread,
// subject) and the live reservation, and exits; following, it shows a new
// message and a released reservation as they happen, neutralises escape
// sequences an agent put in a subject, and ends cleanly when its context
// is cancelled.
func TestWatch(t *testing.T) {
	parallel(t)
	ctx := context.Background()
	home := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc, err := amstore.NewService(ctx, db, agentmail.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if _, err := svc.EnsureProject(ctx, "/src/app"); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"BlueLake", "GreenCastle"} {
		if _, err := svc.RegisterAgent(ctx, agentmail.RegisterParams{ProjectKey: "/src/app", Name: a}); err != nil {
			t.Fatal(err)
		}
	}
	send := func(from, to, subject, thread string) {
		t.Helper()
		if _, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: "/src/app", Sender: from, To: []string{to}, Subject: subject, BodyMD: "body never shown", ThreadID: thread}); err != nil {
			t.Fatal(err)
		}
	}
	send("BlueLake", "GreenCastle", "Plan for the auth refactor", "TKT-7")
	send("GreenCastle", "BlueLake", "Re: Plan for the auth refactor", "TKT-7")
	if _, err := svc.Reserve(ctx, agentmail.ReserveParams{ProjectKey: "/src/app", Agent: "BlueLake", Paths: []string{"src/auth/**"}, Reason: "TKT-7"}); err != nil {
		t.Fatal(err)
	}
	vars := []string{"MAILGATE_HOME=" + home, "HOME=" + t.TempDir()}

	r := newSetupRun(vars, nil, "watch", "--once")
	if code := r.run(t); code != 0 {
		t.Fatalf("watch --once: exit %d\n%s", code, r.stderr)
	}
	out := r.stdout.String()
	const at = `(?:\d\d:\d\d:\d\d|[A-Z][a-z]{2} \d\d \d\d:\d\d)` // today, or another day
	for _, re := range []string{
		`(?m)^` + at + `  src-app  #\d+  BlueLake → GreenCastle  \[TKT-7\]  "Plan for the auth refactor"$`,
		`(?m)^` + at + `  src-app  #\d+  GreenCastle → BlueLake  \[TKT-7\]  "Re: Plan for the auth refactor"$`,
		`(?m)^` + at + `  src-app  BlueLake reserved src/auth/\*\* \(exclusive, until ` + at + `\) "TKT-7"$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("watch --once output lacks %s:\n%s", re, out)
		}
	}
	if strings.Contains(out, "body never shown") {
		t.Errorf("watch shows a body:\n%s", out)
	}

	// Following.
	wctx, cancel := context.WithCancel(ctx)
	r = newSetupRun(vars, nil)
	done := make(chan error, 1)
	go func() { done <- watchCmd(wctx, r.env, []string{"--interval", "20ms", "--limit", "1"}) }()
	waitFor := func(what string) string {
		t.Helper()
		testutil.Eventually(t, 20*time.Second, func() error {
			if !strings.Contains(r.stdout.String(), what) {
				return fmt.Errorf("watch never showed %q:\n%s", what, r.stdout)
			}
			return nil
		})
		return r.stdout.String()
	}
	first := waitFor("BlueLake reserved src/auth/**")
	if strings.Contains(first, `"Plan for the auth refactor"`) || !strings.Contains(first, `"Re: Plan for the auth refactor"`) {
		t.Errorf("--limit 1 should show only the last earlier message:\n%s", first)
	}
	send("BlueLake", "GreenCastle", "Done \x1b[2J\x1b]0;pwned\x07 \u202eevil", "")
	got := waitFor("Done ")
	if strings.ContainsAny(got, "\x1b\x07\u202e") || !strings.Contains(got, "\ufffd[2J") {
		t.Errorf("escape sequences reach the terminal:\n%q", got)
	}
	if _, err := svc.Release(ctx, agentmail.SelectParams{ProjectKey: "/src/app", Agent: "BlueLake"}); err != nil {
		t.Fatal(err)
	}
	waitFor("BlueLake no longer holds src/auth/** (released or expired)")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("watch after cancel: %v", err)
	}
	if n := strings.Count(r.stdout.String(), "#"); n != 2 {
		t.Errorf("want 2 message lines (the last earlier one and the new one), got %d:\n%s", n, r.stdout)
	}
}

// TestAgentsSnippet: the snippet names the project key it was made for and
// only tools that the agent-mail server really lists (so it cannot drift
// from the tool names), and asks for the four habits.
func TestAgentsSnippet(t *testing.T) {
	parallel(t)
	project := t.TempDir()
	out, code := runIn(t, project, []string{"HOME=" + t.TempDir()}, "agents-snippet")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"`" + project + "`", `human_key: "` + project + `"`, "register", "fetch_inbox", "file_reservation_paths", "release_file_reservations", "mailgate watch"} {
		if !strings.Contains(out, want) {
			t.Errorf("snippet lacks %q:\n%s", want, out)
		}
	}
	other := t.TempDir()
	if out2, _ := runIn(t, project, []string{"HOME=" + t.TempDir()}, "agents-snippet", "--project", other); !strings.Contains(out2, `"`+other+`"`) || strings.Contains(out2, `"`+project+`"`) {
		t.Errorf("--project not used:\n%s", out2)
	}

	home := t.TempDir()
	w := &world{t: t, home: home, env: []string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + home, "MAILGATE_TOOLS=agentmail", "MAILGATE_LOG_LEVEL=warn"}}
	cs := w.connectHere() // the tools the agent-mail server lists
	listed := map[string]bool{}
	for _, name := range toolNames(t, cs) {
		listed[name] = true
	}
	for _, m := range regexp.MustCompile("`([a-z]+(?:_[a-z]+)+)`").FindAllStringSubmatch(out, -1) {
		if !listed[m[1]] && !isArgName(m[1]) {
			t.Errorf("the snippet names %s, which the agent-mail server does not list", m[1])
		}
	}
}

// isArgName reports the argument names the snippet quotes next to tools.
func isArgName(s string) bool {
	switch s {
	case "human_key", "project_key", "sender_name", "agent_name", "ttl_seconds", "thread_id":
		return true
	}
	return false
}

// TestWatchOnceInTimeOrder: --once shows messages and reservations as they
// happened; a reservation taken before a message comes before it (it came
// after every message, whatever its time).
func TestWatchOnceInTimeOrder(t *testing.T) {
	parallel(t)
	ctx := context.Background()
	home := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// A fabricated clock: the reservation ten minutes ago, the message five.
	clock := time.Now().Add(-10 * time.Minute)
	svc, err := amstore.NewService(ctx, db, agentmail.Options{Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if _, err := svc.EnsureProject(ctx, "/src/app"); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"BlueLake", "GreenCastle"} {
		if _, err := svc.RegisterAgent(ctx, agentmail.RegisterParams{ProjectKey: "/src/app", Name: a}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.Reserve(ctx, agentmail.ReserveParams{ProjectKey: "/src/app", Agent: "BlueLake", Paths: []string{"src/auth/**"}, Reason: "first"}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(5 * time.Minute)
	if _, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: "/src/app", Sender: "GreenCastle", To: []string{"BlueLake"}, Subject: "second", BodyMD: "x"}); err != nil {
		t.Fatal(err)
	}
	r := newSetupRun([]string{"MAILGATE_HOME=" + home, "HOME=" + t.TempDir()}, nil, "watch", "--once")
	if code := r.run(t); code != 0 {
		t.Fatalf("watch --once: exit %d\n%s", code, r.stderr)
	}
	out := r.stdout.String()
	res, msg := strings.Index(out, `reserved src/auth/**`), strings.Index(out, `"second"`)
	if res < 0 || msg < 0 || res > msg {
		t.Errorf("watch --once: the reservation (taken first) is not shown before the message:\n%s", out)
	}
}
