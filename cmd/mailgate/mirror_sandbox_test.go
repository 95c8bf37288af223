package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestMirrorVisibleInSandbox: with the mirror on, a message between agents
// is inserted into the (sandbox) mailbox under AgentMail/<slug>, where the
// email tools find it; nothing is sent.
func TestMirrorVisibleInSandbox(t *testing.T) {
	parallel(t)
	home, project := t.TempDir(), t.TempDir()
	// In-process (serveHere): what the server does with a message is the
	// subject, not the process.
	cs := serveHere(t, []string{"PATH=" + os.Getenv("PATH"), "MAILGATE_HOME=" + home, "DEV_MODE=false",
		"AGENT_MAIL_MIRROR=gmail", "MAILGATE_TOOLS=email,agentmail", "MAILGATE_LOG_LEVEL=warn"}, &testWriter{t: t}, "serve", "--sandbox")
	defer cs.Close()
	structured := func(name string, args map[string]any) map[string]any {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	slug, _ := structured("ensure_project", map[string]any{"human_key": project})["slug"].(string)
	structured("register_agent", map[string]any{"project_key": project, "name": "BlueLake", "program": "t", "model": "x"})
	structured("register_agent", map[string]any{"project_key": project, "name": "GreenCastle", "program": "t", "model": "x"})
	structured("send_message", map[string]any{"project_key": project, "sender_name": "BlueLake", "to": []string{"GreenCastle"},
		"subject": "Parser refactor plan", "body_md": "I will take the lexer."})

	// The sender's domain is the slug as a DNS label: at most 63
	// characters (a long temporary folder makes a longer slug).
	label := slug
	if len(label) > 63 {
		label = strings.TrimRight(label[:63], "-")
	}
	testutil.Eventually(t, 15*time.Second, func() error {
		text, _ := call(t, cs, "search_email", map[string]any{"query": "label:AgentMail/" + slug})
		if !strings.Contains(text, "Subject: Parser refactor plan") || !strings.Contains(text, "bluelake@"+label+".agentmail.invalid") {
			return fmt.Errorf("the agent message never appeared under label AgentMail/%s: %q", slug, text)
		}
		return nil
	})
	if text, _ := call(t, cs, "search_email", map[string]any{"query": "in:sent Parser"}); !strings.HasPrefix(text, "No emails found") {
		t.Fatalf("a mirrored message must be inserted, never sent: %q", text)
	}
}
