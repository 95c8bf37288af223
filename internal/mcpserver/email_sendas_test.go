package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/localgmail"
)

// newSendAsEnv is the email tools over a mailbox with one verified alias
// and one whose verification Gmail has not finished.
func newSendAsEnv(t *testing.T) *emailEnv {
	t.Helper()
	gm := localgmail.New(localgmail.Options{Email: "me@example.com", Aliases: []string{"team@example.com"}, PendingAliases: []string{"pending@example.com"}})
	seed(t, gm)
	return newEmailEnvOn(t, gm, false, nil)
}

// TestSendAsRefusesUnverifiedFrom: through the real protocol, a from that
// is an unverified send-as address, or no send-as address at all, is
// refused on send, draft, reply and forward before anything is written or
// sent.
func TestSendAsRefusesUnverifiedFrom(t *testing.T) {
	t.Parallel()
	e := newSendAsEnv(t)
	search, _ := callTool(t, e.cs, "search_email", map[string]any{"query": "invoice"})
	id := messageIDRe.FindStringSubmatch(search)[1]
	for _, from := range []struct{ addr, want string }{
		{"pending@example.com", "Invalid from: pending@example.com is a send-as address Gmail has not verified yet"},
		{"Pending <PENDING@example.com>", "Invalid from: PENDING@example.com is a send-as address Gmail has not verified yet"},
		{"boss@example.com", "Invalid from: boss@example.com is not one of this account's send-as addresses; use one of: me@example.com, team@example.com"},
		{"a@b.c, d@e.f", "Invalid from: "},
	} {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"send_email", map[string]any{"to": "alice@example.com", "subject": "Hi", "body": "Hello."}},
			{"draft_email", map[string]any{"to": "alice@example.com", "subject": "Hi", "body": "Hello."}},
			{"reply_email", map[string]any{"thread_id": id, "message_id": id, "body": "Noted."}},
			{"forward_email", map[string]any{"message_id": id, "to": "alice@example.com"}},
		} {
			c.args["from"] = from.addr
			text, isErr := callTool(t, e.cs, c.tool, c.args)
			if !isErr || !strings.Contains(text, from.want) {
				t.Errorf("%s from %q: (isError=%v) %q, want %q", c.tool, from.addr, isErr, text, from.want)
			}
		}
	}
	if n := len(pendingNames(t, e)); n != 0 {
		t.Errorf("%d request files written for refused senders", n)
	}
	if n := len(e.gm.Sent()); n != 0 {
		t.Errorf("%d messages sent", n)
	}
}

// TestSendAsBoundAndShownFirst: a verified send-as address is named first
// in the request file and in the agent's answer, the approved email leaves
// from it, and an approval whose from the human changed is refused.
func TestSendAsBoundAndShownFirst(t *testing.T) {
	t.Parallel()
	e := newSendAsEnv(t)
	args := map[string]any{"to": "alice@example.com", "subject": "Plan", "body": "The plan.\n", "from": "Team@example.com"}
	text, file := request(t, e, "send_email", args)
	mustContain(t, "answer", text, "From: team@example.com (send-as address)\nTo: alice@example.com")
	body := readVault(t, e, "Pending_Approval", file)
	mustContain(t, "request file", body, "outgoing_message_id: ", "\nfrom: \"team@example.com\"\nto: \"alice@example.com\"\n",
		"**From: team@example.com** (a send-as address of the account")
	if strings.Index(body, "**From: team@example.com**") > strings.Index(body, "## Email body") {
		t.Fatalf("the sender is not shown before the body:\n%s", body)
	}
	// The same email from the default address is another request.
	plain := map[string]any{"to": "alice@example.com", "subject": "Plan", "body": "The plan.\n"}
	if _, other := request(t, e, "send_email", plain); other == file {
		t.Fatalf("the email from the default address reuses the send-as request %s", file)
	}

	// The human changes from in the approved file: refused, nothing sent.
	path := filepath.Join(e.vault, "Pending_Approval", file)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(data), `from: "team@example.com"`, `from: "me@example.com"`, 1)), 0o600)
	approve(t, e.vault, file)
	text, isErr := callTool(t, e.cs, "send_email", args)
	if !isErr || !strings.Contains(text, "an approval cannot change who an email comes from") || len(e.gm.Sent()) != 0 {
		t.Fatalf("changed from: (isError=%v) %q, %d sent", isErr, text, len(e.gm.Sent()))
	}

	// Another email, approved as written: sent from the alias.
	args["body"] = "The plan, again.\n"
	_, file = request(t, e, "send_email", args)
	approveAndResend(t, e, "send_email", file, args)
	m, _ := delivered(t, e)
	if got := m.Header.Get("From"); !strings.Contains(got, "team@example.com") {
		t.Fatalf("sent with From %q", got)
	}
}
