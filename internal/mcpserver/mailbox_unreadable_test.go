package mcpserver

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/agentmail/mailboxset"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// TestMailboxSendToChannelsAgentRefused: a mailbox send to an agent of the
// channels set (which reads channels and has no inbox) is refused with a
// clear text instead of "Message #N sent" for mail nobody can read; such
// agents are not listed as recipients. Once that name uses the mailbox
// itself, it is a recipient like any other.
func TestMailboxSendToChannelsAgentRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	svc := compatService(t, amtest.DSN(t), nil)
	ch := connectCompat(t, svc, []string{config.ToolsChannels}, SetOptions{ProjectKey: dir})
	chRegister(t, ch, "coder-1", "coder")
	alice := connectCompat(t, svc, []string{config.ToolsMailbox}, SetOptions{ProjectKey: dir, AgentName: "alice", Getenv: noTmux})

	got, isErr := mbText(t, alice, "send", map[string]any{"recipient": "coder-1", "message": "hi"})
	if !isErr || !strings.HasPrefix(got, "recipient not found: coder-1 is an agent of the channels tool set") {
		t.Fatalf("send to a channels agent = %q (isError %v)", got, isErr)
	}
	var rs mbRecipients
	json.Unmarshal([]byte(mbOK(t, alice, "list-recipients", nil)), &rs)
	if slices.ContainsFunc(rs.Recipients, func(r mailboxset.Recipient) bool { return r.Name == "coder-1" }) {
		t.Fatalf("a channels agent listed as a mailbox recipient: %+v", rs)
	}

	// The same name as a mailbox identity reads its inbox: mail goes through.
	coder := connectCompat(t, svc, []string{config.ToolsMailbox}, SetOptions{ProjectKey: dir, AgentName: "coder-1", Getenv: noTmux})
	mbOK(t, coder, "status", map[string]any{"status": "ready"})
	if got := mbOK(t, alice, "send", map[string]any{"recipient": "coder-1", "message": "hi"}); !strings.HasPrefix(got, "Message #") {
		t.Fatalf("send once coder-1 uses the mailbox: %q", got)
	}
	if got := mbOK(t, coder, "receive", nil); !strings.Contains(got, `"message":"hi"`) {
		t.Fatalf("receive: %s", got)
	}
}
