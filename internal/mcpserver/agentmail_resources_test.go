package mcpserver

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/config"
)

// TestAgentMailResources reads every resource through the protocol, with
// the project given as a slug, a URL-encoded path and a plain path.
func TestAgentMailResources(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	const proj = "/home/user/my project"
	enc := url.QueryEscape(proj)
	h.setup(proj, "GreenDog", "BlueLake")
	var sent agentmail.SendResult
	h.call("send_message", map[string]any{"project_key": proj, "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": "Hello", "body_md": "Body", "thread_id": "T-1"}, &sent)
	h.call("file_reservation_paths", map[string]any{"project_key": proj, "agent_name": "GreenDog", "paths": []string{"src/**"}}, nil)
	h.call("release_file_reservations", map[string]any{"project_key": proj, "agent_name": "GreenDog"}, nil)
	h.call("file_reservation_paths", map[string]any{"project_key": proj, "agent_name": "GreenDog", "paths": []string{"lib/**"}}, nil)

	templates := map[string]bool{}
	for rt, err := range h.cs.ResourceTemplates(h.ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates[rt.URITemplate] = true
	}
	for _, r := range resources {
		if r.Set == config.ToolsAgentMail && !templates[r.URITemplate] {
			t.Errorf("template %s not listed", r.URITemplate)
		}
	}

	var projects []agentmail.ProjectView
	h.read("resource://projects", &projects)
	if len(projects) != 1 || projects[0].Slug != "home-user-my-project" {
		t.Fatalf("projects: %+v", projects)
	}
	var detail agentmail.ProjectResource
	h.read("resource://project/home-user-my-project", &detail)
	if len(detail.Agents) != 2 || detail.HumanKey != proj {
		t.Fatalf("project: %+v", detail)
	}
	var agents agentmail.AgentsResource
	h.read("resource://agents/"+url.PathEscape(proj), &agents)
	if len(agents.Agents) != 2 || agents.Agents[1].UnreadCount != 1 {
		t.Fatalf("agents: %+v", agents)
	}
	for _, uri := range []string{
		"resource://inbox/BlueLake?project=" + enc + "&limit=5&include_bodies=true",
		"resource://inbox/BlueLake?project=" + proj + "&include_bodies=true&limit=5&format=json", // unencoded, extra parameter
		"resource://inbox/BlueLake?include_bodies=1&project=home-user-my-project",
	} {
		var inbox agentmail.InboxResource
		h.read(uri, &inbox)
		if inbox.Count != 1 || inbox.Messages[0].BodyMD == nil || *inbox.Messages[0].BodyMD != "Body" || inbox.Project != proj {
			t.Fatalf("%s: %+v", uri, inbox)
		}
	}
	var thread agentmail.ThreadResource
	h.read("resource://thread/T-1?project="+enc, &thread)
	if len(thread.Messages) != 1 || thread.Messages[0].To[0] != "BlueLake" || thread.Messages[0].BodyMD != nil {
		t.Fatalf("thread: %+v", thread)
	}
	var msg agentmail.MessagePayload
	h.read("resource://message/1?project=home-user-my-project", &msg)
	if msg.Subject != "Hello" || msg.BodyMD == nil {
		t.Fatalf("message: %+v", msg)
	}
	var active, all []agentmail.ReservationView
	h.read("resource://file_reservations/home-user-my-project", &active)
	h.read("resource://file_reservations/home-user-my-project?active_only=false", &all)
	if len(active) != 1 || len(all) != 2 || active[0].PathPattern != "lib/**" || len(active[0].StaleReasons) != 3 {
		t.Fatalf("reservations: active %+v all %+v", active, all)
	}

	// Misses are "resource not found" with the reason; never a crash.
	for _, uri := range []string{
		"resource://agents/nope",
		"resource://inbox/Ghost?project=" + enc,
		"resource://message/999?project=" + enc,
		"resource://message/abc?project=" + enc,
		"resource://project/" + url.PathEscape("/not/there"),
	} {
		_, err := h.cs.ReadResource(h.ctx, &mcp.ReadResourceParams{URI: uri})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != mcp.CodeResourceNotFound || !strings.Contains(je.Message, "not found") {
			t.Errorf("%s: err = %v, want resource not found", uri, err)
		}
	}
}
