package mcpserver

import (
	"testing"

	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/testutil/amtest"
)

// TestArgumentErrorsAsContractsWordThem: a missing or mistyped argument is
// refused in the words of the tool set's contract, through the real
// protocol, never with the schema validator's text; the mailbox set
// accepts extra keys as the original does.
func TestArgumentErrorsAsContractsWordThem(t *testing.T) {
	t.Parallel()
	am := newAMHarness(t)
	am.setup("/p/app", "GreenDog", "BlueLake")
	ch, _ := newChannels(t, nil, SetOptions{})
	chID := chRegister(t, ch, "coder-1", "coder")
	mb, _, _, _ := mbPair(t)

	cases := []struct {
		set  string
		h    *amHarness
		tool string
		args map[string]any
		want string
	}{
		// channels: "<field> is required", missing or empty alike.
		{"channels", ch, "register", map[string]any{"name": "coder-2"}, "role is required"},
		{"channels", ch, "register", map[string]any{}, "name is required"},
		{"channels", ch, "heartbeat", map[string]any{}, "agent_id is required"},
		{"channels", ch, "send_message", map[string]any{"agent_id": chID, "body": "b"}, "subject is required"},
		{"channels", ch, "send_message", map[string]any{"agent_id": chID, "subject": "s"}, "body is required"},
		{"channels", ch, "claim_files", map[string]any{"agent_id": chID}, "files is required"},
		{"channels", ch, "announce_change", map[string]any{"agent_id": chID, "file_path": "a"}, "summary is required"},
		{"channels", ch, "register", map[string]any{"name": "coder-2", "role": 5}, "role must be a string (got integer)"},
		{"channels", ch, "claim_files", map[string]any{"agent_id": chID, "files": "a.go"}, "files must be a list of strings (got string)"},
		{"channels", ch, "claim_files", map[string]any{"agent_id": chID, "files": []any{"a.go", 3}}, "files must be a list of strings (got list)"},
		{"channels", ch, "register", map[string]any{"name": nil, "role": "coder"}, "name is required"},
		// agentmail: the argument and what the tool needs.
		{"agentmail", am, "send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": "s"},
			"body_md is required: send_message needs project_key, sender_name, to, subject and body_md"},
		{"agentmail", am, "ensure_project", map[string]any{}, "human_key is required: ensure_project needs human_key"},
		{"agentmail", am, "fetch_inbox", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "limit": "ten"}, "limit must be an integer (got string)"},
		{"agentmail", am, "fetch_inbox", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "urgent_only": "yes"}, "urgent_only must be true or false (got string)"},
		{"agentmail", am, "send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": 7, "subject": "s", "body_md": "b"},
			"to must be a list of strings or a string (got integer)"},
		{"agentmail", am, "mark_message_read", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "message_id": "abc"},
			`message_id: "abc" is not a message id (ids are integers, as returned by send_message and fetch_inbox)`},
		// mailbox: the original's own refusals.
		{"mailbox", mb, "send", map[string]any{"recipient": "bob"}, "no message provided"},
		{"mailbox", mb, "send", map[string]any{"message": "hi"}, "recipient not found"},
		{"mailbox", mb, "status", map[string]any{}, "Invalid status: . Valid: ready, work, offline"},
		{"mailbox", mb, "send", map[string]any{"recipient": "bob", "message": 5}, "failed to parse arguments: message must be a string (got integer)"},
	}
	for _, c := range cases {
		t.Run(c.set+"/"+c.tool+"/"+c.want, func(t *testing.T) {
			if got := c.h.callErr(c.tool, c.args); got != c.want {
				t.Fatalf("error %q\nwant     %q", got, c.want)
			}
		})
	}

	// Extra keys: the mailbox set accepts them (the original's schemas
	// allow them); the schema it advertises says so.
	_, bob, _, _ := mbPair(t)
	mbOK(t, bob, "status", map[string]any{"status": "ready"}) // bob exists for alice's send
	if got := mbOK(t, mb, "status", map[string]any{"status": "work", "extra": 1}); got != `{"status":"ok"}` {
		t.Fatalf("status with an extra key: %s", got)
	}
	for tool, err := range mb.cs.Tools(mb.ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := tool.InputSchema.(map[string]any); ok {
			if ap, has := s["additionalProperties"]; has && ap == false {
				t.Errorf("mailbox %s advertises additionalProperties false", tool.Name)
			}
		}
	}
	// The other sets keep refusing unknown keys, and say which.
	if got := ch.callErr("heartbeat", map[string]any{"agent_id": chID, "extra": 1}); got != `validating "arguments": validating root: unexpected additional properties ["extra"]` {
		t.Fatalf("channels extra key: %q", got)
	}
}

// TestArgumentSchemasStayHonest: the advertised schemas still list the
// required arguments (only the refusal's words changed).
func TestArgumentSchemasStayHonest(t *testing.T) {
	t.Parallel()
	svc := compatService(t, amtest.DSN(t), nil)
	h := connectCompat(t, svc, []string{config.ToolsChannels, config.ToolsMailbox}, SetOptions{ProjectKey: t.TempDir(), AgentName: "a", Getenv: noTmux})
	want := map[string][]any{"register": {"name", "role"}, "send": {"recipient", "message"}, "status": {"status"}}
	for tool, err := range h.cs.Tools(h.ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[tool.Name]
		if !ok {
			continue
		}
		s := tool.InputSchema.(map[string]any)
		req, _ := s["required"].([]any)
		if len(req) != len(w) || req[0] != w[0] {
			t.Errorf("%s: required %v, want %v", tool.Name, req, w)
		}
	}
}
