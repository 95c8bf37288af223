package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/localgmail/gmailschema"
)

// Several Gmail accounts (issue 27 item 2) through the binary: two
// mailboxes behind one local Gmail address, as Google serves a user's
// accounts (the token says whose mailbox a call reaches), the second added
// with `mailgate auth --account work`.

const workEmail = "ann@work.example"

// newAccountsWorld is a world whose home has the default account (me@…,
// w.gm) and "work" (the second server), signed in by auth --account work
// through the browser as a user would.
func newAccountsWorld(t *testing.T) (*world, *localgmail.Server) {
	t.Helper()
	def := localgmail.New(localgmail.Options{Email: userEmail, RequireAuth: true})
	work := localgmail.New(localgmail.Options{Email: workEmail, RequireAuth: true})
	front := localgmail.NewAccounts(def, work)
	base, _ := gmailschema.Serve(t, front)
	front.SetBaseURL(base)
	for _, s := range []*localgmail.Server{def, work} {
		s.AddClient(testClientID, testClientSecret)
	}
	home := t.TempDir()
	writeJSON(t, filepath.Join(home, "auth", "credentials.json"), map[string]any{"installed": map[string]any{
		"client_id": testClientID, "client_secret": testClientSecret,
		"auth_uri": def.AuthURL(), "token_uri": def.TokenURL(), "redirect_uris": []string{"http://localhost"},
	}})
	rt := def.IssueRefreshToken(testClientID, "https://www.googleapis.com/auth/gmail.modify", "https://www.googleapis.com/auth/gmail.settings.basic")
	writeJSON(t, filepath.Join(home, "auth", "token.json"), &oauth2.Token{
		AccessToken: "expired", RefreshToken: rt, TokenType: "Bearer", Expiry: time.Now().Add(-time.Hour)})
	raw, err := os.ReadFile(filepath.Join("testdata", "invoice.eml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := def.Insert(raw, "INBOX"); err != nil {
		t.Fatal(err)
	}
	if _, err := work.Insert([]byte("From: Dan <dan@client.example>\r\nTo: "+workEmail+"\r\nSubject: Contract draft\r\nDate: Tue, 10 Nov 2026 09:30:00 +0000\r\nMessage-ID: <contract@client.example>\r\n\r\nThe contract.\r\n"), "INBOX"); err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, home: home, gm: def, env: []string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + home,
		"GMAIL_API_ENDPOINT=" + def.URL(), "DEV_MODE=false", "MAILGATE_TOOLS=email", "MAILGATE_LOG_LEVEL=warn"}}

	// mailgate auth --account work: Google's account chooser picks work.
	front.SignInAs(work)
	r := newSetupRun(w.env, nil)
	b := &simBrowser{t: t, page: make(chan string, 1)}
	err = runAuth(context.Background(), r.env, []string{"--timeout", "60s", "--account", "work"}, b.open)
	<-b.page
	if err != nil || !strings.Contains(r.stderr.String(), "Gmail answers for "+workEmail) {
		t.Fatalf("auth --account work: %v\n%s", err, r.stderr)
	}
	return w, work
}

// TestAccountsThroughTheBinary: an approval for account work never sends
// from the default account: the identical call without account (or with
// another account) is a new request and sends nothing, the approved call
// reaches work's mailbox only, and every line about it names work; an
// unknown account is refused naming those configured.
func TestAccountsThroughTheBinary(t *testing.T) {
	parallel(t)
	w, work := newAccountsWorld(t)
	cs := w.connect()
	sent := func() (int, int) { return len(w.gm.Sent()), len(work.Sent()) }
	args := map[string]any{"to": "alice@example.com", "subject": "Offer", "body": "Our offer.\n", "account": "work"}
	if text, isErr := call(t, cs, "send_email", args); !isErr || !strings.HasPrefix(text, "Rejected: No matching approval") {
		t.Fatalf("first call: (isError=%v) %q", isErr, text)
	}
	if n := w.approveAll(); n != 1 {
		t.Fatalf("%d requests approved, want 1", n)
	}
	// The identical call for the default account: a new request, nothing sent.
	plain := map[string]any{"to": "alice@example.com", "subject": "Offer", "body": "Our offer.\n"}
	text, _ := call(t, cs, "send_email", plain)
	if d, wk := sent(); d+wk != 0 || strings.Contains(text, "sent successfully") {
		t.Fatalf("the default account's identical call used work's approval: sent %d from default, %d from work: %q", d, wk, text)
	}
	if len(w.files("Pending_Approval")) != 1 {
		t.Fatalf("the default account's call wrote %v, want a request of its own", w.files("Pending_Approval"))
	}
	text, isErr := call(t, cs, "send_email", args)
	if isErr || !strings.HasPrefix(text, "Email sent successfully.") {
		t.Fatalf("approved call: (isError=%v) %q", isErr, text)
	}
	if d, wk := sent(); d != 0 || wk != 1 {
		t.Fatalf("sent %d from the default account, %d from work; want 0 and 1", d, wk)
	}
	mustHave(t, text, "Account: work")
	done := w.files("Done")
	if len(done) != 1 {
		t.Fatalf("Done/ holds %v", done)
	}
	mustHave(t, w.read("Done", done[0]), "\naccount: \"work\"\n")
	mustHave(t, runCmd(t, w, "approvals"), "account work: send to alice@example.com", "account default: send to alice@example.com")
	audit, _ := os.ReadFile(filepath.Join(w.home, "audit", time.Now().UTC().Format(time.DateOnly)+".jsonl"))
	mustHave(t, string(audit), `"action_type":"gate_send","result":"success"`, `"account":"work"`)

	text, isErr = call(t, cs, "search_email", map[string]any{"query": "contract", "account": "work"})
	mustHave(t, text, "Contract draft")
	text, isErr = call(t, cs, "search_email", map[string]any{"query": "contract", "account": "home"})
	if !isErr || !strings.Contains(text, `unknown account "home": the accounts configured are default, work`) {
		t.Fatalf("unknown account: (isError=%v) %q", isErr, text)
	}
}

// TestAccountsDoctor: doctor checks every account's token, scopes and
// Gmail, and names the tools a narrower account's scopes leave out.
func TestAccountsDoctor(t *testing.T) {
	parallel(t)
	w, work := newAccountsWorld(t)
	// work signed in again with only gmail.readonly ticked.
	writeJSON(t, filepath.Join(w.home, "auth", "accounts", "work.json"), &oauth2.Token{AccessToken: "expired", TokenType: "Bearer",
		RefreshToken: work.IssueRefreshToken(testClientID, "https://www.googleapis.com/auth/gmail.readonly"), Expiry: time.Now().Add(-time.Hour)})
	out, _ := runHere(t, "", w.env, "doctor") // in-process; TestAccountsThroughTheBinary runs the binary
	mustHave(t, out, "accounts", "default, work",
		"token (account work)", "scopes (account work)", "missing", "tools left out: ", "draft_email", `mailgate auth --account work`)
	mustHave(t, out, "gmail api (account work)", "signed in as "+workEmail)
}

// TestAccountsDoctorLive: doctor --live asks every account, each its own
// mailbox: work's lines are named after it and its draft is made and
// deleted in work's mailbox; neither account sends.
func TestAccountsDoctorLive(t *testing.T) {
	parallel(t)
	w, work := newAccountsWorld(t)
	out, code := runHere(t, "", w.env, "doctor", "--live")
	for _, name := range liveChecks {
		mustHave(t, out, "  "+name+"  ", "  "+name+" (account work)  ")
	}
	for name, want := range map[string]string{
		"live profile":                "ok|" + userEmail + ": 1 messages",
		"live profile (account work)": "ok|" + workEmail + ": 1 messages",
		"live draft (account work)":   "ok|read it back, deleted it; nothing was sent",
	} {
		status, piece, _ := strings.Cut(want, "|")
		if line, _, ok := doctorLine(out, status, name); !ok || !strings.Contains(line, piece) {
			t.Errorf("want %s %s with %q; got %q in:\n%s", status, name, piece, line, out)
		}
	}
	if work.Calls("drafts.create") != 1 || work.Calls("drafts.delete") != 1 {
		t.Errorf("work's mailbox: %d drafts created, %d deleted; want 1 and 1", work.Calls("drafts.create"), work.Calls("drafts.delete"))
	}
	for _, gm := range []*localgmail.Server{w.gm, work} {
		if n := gm.Calls("messages.send") + gm.Calls("drafts.send"); n != 0 || len(gm.Sent()) != 0 {
			t.Errorf("doctor --live sent from %s: %d send calls, %d in Sent", gm.URL(), n, len(gm.Sent()))
		}
	}
	if testing.Verbose() {
		t.Logf("exit %d\n%s", code, out)
	}

	// work signed in again with only gmail.readonly ticked: its refused
	// draft's fix points at work's own sign-in.
	writeJSON(t, filepath.Join(w.home, "auth", "accounts", "work.json"), &oauth2.Token{AccessToken: "expired", TokenType: "Bearer",
		RefreshToken: work.IssueRefreshToken(testClientID, "https://www.googleapis.com/auth/gmail.readonly"), Expiry: time.Now().Add(-time.Hour)})
	out, code = runHere(t, "", w.env, "doctor", "--live")
	line, fix, ok := doctorLine(out, "FAIL", "live draft (account work)")
	if code != 1 || !ok || !strings.Contains(line, "the token lacks gmail.compose") || !strings.Contains(fix, `run "mailgate auth --account work" and tick every checkbox`) {
		t.Errorf("exit %d; live draft (account work): %q, fix %q, in:\n%s", code, line, fix, out)
	}
}

// TestSandboxServesTwoAccounts: the sandbox has a second account, "work",
// with a mailbox of its own: its search finds only its mail, and an email
// approved for it is delivered from its address into its own Sent, kept
// in the home beside the default account's mailbox.
func TestSandboxServesTwoAccounts(t *testing.T) {
	parallel(t)
	home := t.TempDir()
	w := &world{t: t, home: home}
	cs, _ := startSandbox(t, home)
	text, _ := call(t, cs, "search_email", map[string]any{"query": "contract", "account": "work"})
	mustHave(t, text, "Contract for the Atlas project")
	if text, _ := call(t, cs, "search_email", map[string]any{"query": "dana@client.example"}); !strings.HasPrefix(text, "No emails found") {
		t.Fatalf("the default account's search found work's mail: %q", text)
	}
	send := map[string]any{"to": "dana@client.example", "subject": "Signed", "body": "Signed today.\n", "account": "work"}
	if text, isErr := call(t, cs, "send_email", send); !isErr || !strings.Contains(text, "Account: work") {
		t.Fatalf("first send_email = %q", text)
	}
	mustHave(t, w.read("Pending_Approval", w.files("Pending_Approval")[0]), "\naccount: \"work\"\n")
	w.approveAll()
	text, isErr := call(t, cs, "send_email", send)
	if isErr || !strings.HasPrefix(text, "Email sent successfully.") {
		t.Fatalf("approved send_email for work = %q", text)
	}
	sentID := strings.Fields(strings.TrimPrefix(text, "Email sent successfully. Message ID: "))[0]
	text, _ = call(t, cs, "search_email", map[string]any{"query": "in:sent subject:signed", "account": "work"})
	mustHave(t, text, "Signed", "sandbox")
	if text, _ := call(t, cs, "search_email", map[string]any{"query": "in:sent subject:signed"}); !strings.HasPrefix(text, "No emails found") {
		t.Fatalf("work's email is in the default account's Sent: %q", text)
	}
	kept, err := os.ReadFile(filepath.Join(home, "sandbox", "accounts", "work", "mailbox.json"))
	if err != nil || !strings.Contains(string(kept), sentID) {
		t.Fatalf("work's mailbox is not kept in the home: %v", err)
	}
}
