package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/audit"
	"github.com/mailgate/mailgate/internal/gate"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/localgmail/gmailschema"
	"github.com/mailgate/mailgate/internal/ratelimit"
	"github.com/mailgate/mailgate/internal/schedule"
)

// Several Gmail accounts (issue 27 item 2), through the real protocol:
// each account its own local Gmail mailbox, the email tools' account
// argument choosing one.

// newAccountsEnv is the email tools over two accounts: the default one
// (me@example.com, e.gm) and "work" (ann@work.example, the second server).
func newAccountsEnv(t *testing.T) (*emailEnv, *localgmail.Server) {
	t.Helper()
	e := newEmailEnv(t, false, nil)
	work := localgmail.New(localgmail.Options{Email: "ann@work.example", Aliases: []string{"team@work.example"}})
	if _, err := work.Insert([]byte("From: Dan <dan@client.example>\r\nTo: ann@work.example\r\nSubject: Contract draft\r\nDate: Tue, 10 Nov 2026 09:30:00 +0000\r\nMessage-ID: <contract@client.example>\r\n\r\nThe contract.\r\n"), "INBOX"); err != nil {
		t.Fatal(err)
	}
	base, _ := gmailschema.Serve(t, work)
	work.SetBaseURL(base)
	c, err := gmail.New(context.Background(), gmail.Options{Endpoint: work.URL(),
		TokenSource:  oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "w"}),
		RetryInitial: time.Millisecond, RetryMax: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e.deps.Gmail = GmailAccounts(map[string]Mailbox{"default": e.client, "work": c})
	e.deps.Accounts = func() []string { return []string{"default", "work"} }
	e.deps.Gate.Sent = SentLookup(e.deps.Gmail)
	return e, work
}

// TestAccountApprovalNeverSendsFromAnother: an approval for account A never
// sends from account B. The request names its account first; the
// identical call for the other account is a new request and sends
// nothing; the approved call sends from A's mailbox only and says so; a
// request file whose account was edited before approval is refused and
// sends nothing from either.
func TestAccountApprovalNeverSendsFromAnother(t *testing.T) {
	t.Parallel()
	e, work := newAccountsEnv(t)
	sentBy := func() (int, int) { return len(e.gm.Sent()), len(work.Sent()) }
	args := map[string]any{"to": "alice@example.com", "subject": "Offer", "body": "Our offer.\n", "account": "work"}
	text, file := request(t, e, "send_email", args)
	mustContain(t, "answer", text, "Account: work\nTo: alice@example.com", "Account: work (the Gmail account this request is for)")
	body := readVault(t, e, "Pending_Approval", file)
	mustContain(t, "request file", body, "request_id: ", "\naccount: \"work\"\nto: \"alice@example.com\"\n", "**Account: work** (the Gmail account")
	if strings.Index(body, "**Account: work**") > strings.Index(body, "## Email body") {
		t.Fatalf("the account is not shown before the body:\n%s", body)
	}
	approve(t, e.vault, file)

	// The identical call for the default account (named or not) is another
	// request: the approval for work does not send it, from either account.
	for _, acct := range []any{nil, "default"} {
		other := map[string]any{"to": "alice@example.com", "subject": "Offer", "body": "Our offer.\n"}
		if acct != nil {
			other["account"] = acct
		}
		text, otherFile := request(t, e, "send_email", other)
		if otherFile == file {
			t.Fatalf("the default account's call reuses work's request %s", file)
		}
		mustContain(t, "default account's answer", text, "Account: default\n")
		if d, w := sentBy(); d+w != 0 {
			t.Fatalf("account %v: sent %d from default, %d from work", acct, d, w)
		}
	}
	if _, err := os.Stat(filepath.Join(e.vault, "Approved", file)); err != nil {
		t.Fatalf("work's approval was used or moved by the default account's call: %v", err)
	}

	// The approved call: sent once, from work's mailbox only.
	text, isErr := callTool(t, e.cs, "send_email", args)
	if isErr || !strings.HasPrefix(text, "Email sent successfully.") || !strings.Contains(text, "Account: work") {
		t.Fatalf("approved send: (isError=%v) %q", isErr, text)
	}
	if d, w := sentBy(); d != 0 || w != 1 {
		t.Fatalf("sent %d from default, %d from work; want 0 and 1", d, w)
	}
	d, _ := work.Delivered(work.Sent()[0].Id)
	if m, err := mail.ReadMessage(bytes.NewReader(d.Raw)); err != nil || !strings.Contains(m.Header.Get("From"), "ann@work.example") {
		t.Fatalf("work's email left with From %q (%v)", m.Header.Get("From"), err)
	}
	done, _ := filepath.Glob(filepath.Join(e.vault, "Done", strings.TrimSuffix(file, ".md")+"*"))
	if len(done) != 1 {
		t.Fatalf("Done/ holds %v for %s", done, file)
	}
	mustContain(t, "Done file", readVault(t, e, "Done", filepath.Base(done[0])), "\naccount: \"work\"\n", "status: sent")
	lines := auditLines(t, e, "send_email")
	if last := lines[len(lines)-1]; last.Account != "work" || last.Result != audit.ResultSuccess {
		t.Fatalf("the send's audit line: %+v", last)
	}
	gateLines := 0
	all, _ := audit.ReadDir(filepath.Join(filepath.Dir(e.vault), "audit"))
	for _, en := range all {
		if en.ActionType == gate.ActionSend {
			gateLines++
			if en.Account != "work" {
				t.Fatalf("the gate's send line names account %q", en.Account)
			}
		}
	}
	if gateLines != 1 {
		t.Fatalf("%d gate send lines, want 1", gateLines)
	}

	// A request for work whose account the human changed to default before
	// approving: refused for good, nothing sent from either account.
	args["body"] = "Our second offer.\n"
	_, file = request(t, e, "send_email", args)
	edit(`account: "work"`, `account: "default"`, true)(t, e.vault, file)
	text, isErr = callTool(t, e.cs, "send_email", args)
	if !isErr || !strings.Contains(text, "an approval cannot move an email or an action to another Gmail account") {
		t.Fatalf("edited account: (isError=%v) %q", isErr, text)
	}
	if _, err := os.Stat(filepath.Join(e.vault, "Rejected", file)); err != nil {
		t.Fatalf("the edited approval was not moved to Rejected/: %v", err)
	}
	delete(args, "account")
	text, _ = callTool(t, e.cs, "send_email", args)
	if strings.Contains(text, "sent successfully") {
		t.Fatalf("the edited approval sent from the default account: %q", text)
	}
	if d, w := sentBy(); d != 0 || w != 1 {
		t.Fatalf("after the edited approval: sent %d from default, %d from work; want 0 and 1", d, w)
	}
}

// TestAccountUnknownAndInvalidRefused: an account without a token, or a
// name mailgate never accepts, is refused by every kind of tool, naming
// the accounts configured; nothing is written or sent.
func TestAccountUnknownAndInvalidRefused(t *testing.T) {
	t.Parallel()
	e, work := newAccountsEnv(t)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"search_email", map[string]any{"query": "invoice"}},
		{"send_email", map[string]any{"to": "alice@example.com", "subject": "Hi", "body": "Hello."}},
		{"list_labels", map[string]any{}},
	} {
		c.args["account"] = "home"
		text, isErr := callTool(t, e.cs, c.tool, c.args)
		if !isErr || !strings.Contains(text, `unknown account "home": the accounts configured are default, work`) {
			t.Errorf("%s for an unknown account: (isError=%v) %q", c.tool, isErr, text)
		}
		c.args["account"] = "../Work"
		text, isErr = callTool(t, e.cs, c.tool, c.args)
		if !isErr || !strings.Contains(text, `invalid account name "../Work"`) {
			t.Errorf("%s for an invalid account: (isError=%v) %q", c.tool, isErr, text)
		}
	}
	if n := len(pendingNames(t, e)); n != 0 {
		t.Errorf("%d request files written for unknown accounts", n)
	}
	if len(e.gm.Sent())+len(work.Sent()) != 0 {
		t.Error("something was sent")
	}
}

// TestAccountReadsItsOwnMailbox: reads go to the named account's mailbox.
func TestAccountReadsItsOwnMailbox(t *testing.T) {
	t.Parallel()
	e, _ := newAccountsEnv(t)
	text, _ := callTool(t, e.cs, "search_email", map[string]any{"query": "contract", "account": "work"})
	mustContain(t, "work's search", text, "Contract draft")
	text, _ = callTool(t, e.cs, "search_email", map[string]any{"query": "contract"})
	if !strings.HasPrefix(text, "No emails found") {
		t.Fatalf("the default account's search found work's mail: %q", text)
	}
}

// TestAccountSendLimitsApart: each account has its own rolling limit, held
// in the store: a full window of the default account does not stop work's
// approved email, and a full window of work's stops work's only.
func TestAccountSendLimitsApart(t *testing.T) {
	t.Parallel()
	e, work := newAccountsEnv(t)
	ctx := context.Background()
	fill := func(acct string) {
		l := e.deps.Gate.Limiter.WithBucket(gate.SendBucket(acct))
		for {
			_, err := l.Reserve(ctx, time.Now(), "earlier-"+acct)
			var le *ratelimit.LimitError
			if errors.As(err, &le) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	fill("default")
	send := func(acct, body string) (string, bool) {
		args := map[string]any{"to": "alice@example.com", "subject": "Limit", "body": body, "account": acct}
		_, file := request(t, e, "send_email", args)
		approve(t, e.vault, file)
		return callTool(t, e.cs, "send_email", args)
	}
	if text, isErr := send("default", "From the default account.\n"); !isErr || !strings.Contains(text, "Rate limit exceeded") {
		t.Fatalf("default account over its limit: (isError=%v) %q", isErr, text)
	}
	if text, isErr := send("work", "From work.\n"); isErr || !strings.HasPrefix(text, "Email sent successfully.") {
		t.Fatalf("work with the default account's window full: (isError=%v) %q", isErr, text)
	}
	fill("work")
	if text, isErr := send("work", "From work again.\n"); !isErr || !strings.Contains(text, "Rate limit exceeded") {
		t.Fatalf("work over its own limit: (isError=%v) %q", isErr, text)
	}
	if len(e.gm.Sent()) != 0 || len(work.Sent()) != 1 {
		t.Fatalf("sent %d from default, %d from work; want 0 and 1", len(e.gm.Sent()), len(work.Sent()))
	}
}

// TestEveryEmailToolTakesAccount: every email tool advertises the account
// argument (an input type without the embedded accountArg would silently
// use the default account).
func TestEveryEmailToolTakesAccount(t *testing.T) {
	t.Parallel()
	e := newEmailEnv(t, true, nil)
	res, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		s, _ := tool.InputSchema.(map[string]any)
		props, _ := s["properties"].(map[string]any)
		if _, ok := props["account"]; !ok {
			t.Errorf("%s does not take account", tool.Name)
		}
	}
}

// TestAccountScheduledSendLeavesFromItsAccount: an email approved for work
// with a send time is kept with its account and, at its time, sent from
// work's mailbox only, counted in work's own limit.
func TestAccountScheduledSendLeavesFromItsAccount(t *testing.T) {
	t.Parallel()
	e, work := newAccountsEnv(t)
	ctx := context.Background()
	st, err := schedule.New(ctx, e.db)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Now().UTC().Truncate(time.Second)}
	g := e.deps.Gate
	g.Scheduler, g.Now = st, clock.Now
	later := &gate.Later{Store: st, Vault: g.Vault, Limiter: g.Limiter, Audit: e.deps.Audit, Now: clock.Now, Owner: "one",
		Send: LaterSend(e.deps.Gmail)}
	at := clock.Now().Add(time.Hour)
	args := map[string]any{"to": "alice@example.com", "subject": "Later", "body": "At its time.\n", "account": "work", "send_at": at.Format(time.RFC3339)}
	_, file := request(t, e, "send_email", args)
	approve(t, e.vault, file)
	if text, isErr := callTool(t, e.cs, "send_email", args); isErr || !strings.HasPrefix(text, "Approved and scheduled") || !strings.Contains(text, "Account: work") {
		t.Fatalf("scheduling: (isError=%v) %q", isErr, text)
	}
	clock.Set(at.Add(time.Minute))
	if n, err := later.RunDue(ctx); err != nil || n != 1 {
		t.Fatalf("RunDue sent %d (%v), want 1", n, err)
	}
	if len(e.gm.Sent()) != 0 || len(work.Sent()) != 1 {
		t.Fatalf("sent %d from default, %d from work; want 0 and 1", len(e.gm.Sent()), len(work.Sent()))
	}
	used, err := g.Limiter.WithBucket(gate.SendBucket("work")).Used(ctx, clock.Now())
	if err != nil || used != 1 {
		t.Fatalf("work's window holds %d (%v), want the scheduled send", used, err)
	}
	if used, _ := g.Limiter.Used(ctx, clock.Now()); used != 0 {
		t.Fatalf("the default account's window holds %d, want 0", used)
	}
}
