package mcpserver

import (
	"slices"
	"testing"
)

// TestProductsAcrossLinkedProjects, through the real protocol: a product
// links two of three projects; fetch_inbox_product and
// search_messages_product see the mail of the linked projects only, each
// result naming its project; linking opens no contact policy (a
// contacts_only agent of a linked project still has a stranger's mail held,
// and that mail is in no product inbox); summarize_thread_product gathers a
// thread from the linked projects.
func TestProductsAcrossLinkedProjects(t *testing.T) {
	h := newAMHarness(t)
	ids := map[string]float64{}
	for _, p := range []string{"/w/backend", "/w/frontend", "/w/other"} {
		var out map[string]any
		h.call("ensure_project", map[string]any{"human_key": p}, &out)
		ids[p] = out["id"].(float64)
	}
	for _, r := range []struct{ project, name string }{
		{"/w/backend", "GreenCastle"}, {"/w/backend", "BlueLake"},
		{"/w/frontend", "GreenCastle"}, {"/w/frontend", "RedFox"},
		{"/w/other", "GreenCastle"}, {"/w/other", "PinkBear"},
	} {
		h.call("register_agent", map[string]any{"project_key": r.project, "name": r.name, "program": "test", "model": "m"}, nil)
	}
	h.call("set_contact_policy", map[string]any{"project_key": "/w/frontend", "agent_name": "RedFox", "policy": "contacts_only"}, nil)
	send := func(project, from, to, subject string) map[string]any {
		var out map[string]any
		h.call("send_message", map[string]any{"project_key": project, "sender_name": from, "to": []string{to},
			"subject": subject, "body_md": "body of " + subject}, &out)
		return out
	}
	send("/w/backend", "BlueLake", "GreenCastle", "Deploy plan alpha")
	send("/w/frontend", "RedFox", "GreenCastle", "Frontend alpha ready")
	send("/w/other", "PinkBear", "GreenCastle", "Other alpha")

	var prod map[string]any
	h.call("ensure_product", map[string]any{"product_key": "widget-bus", "name": "WidgetBus"}, &prod)
	if prod["product_uid"] != "widget-bus" || prod["name"] != "WidgetBus" || prod["id"] == nil {
		t.Fatalf("ensure_product: %v", prod)
	}
	var again map[string]any
	h.call("ensure_product", map[string]any{"product_key": "widget-bus", "name": "Renamed"}, &again)
	if again["id"] != prod["id"] || again["name"] != "WidgetBus" {
		t.Errorf("ensure_product again: %v, want the same product unchanged", again)
	}
	for _, p := range []string{"/w/backend", "/w/frontend", "/w/frontend"} {
		var link map[string]any
		h.call("products_link", map[string]any{"product_key": "widget-bus", "project_key": p}, &link)
		if link["linked"] != true || link["project"].(map[string]any)["human_key"] != p {
			t.Errorf("products_link %s: %v", p, link)
		}
	}

	type entry struct {
		ID        int     `json:"id"`
		ProjectID float64 `json:"project_id"`
		Subject   string  `json:"subject"`
		From      string  `json:"from"`
		BodyMD    *string `json:"body_md"`
	}
	var inbox []entry
	h.call("fetch_inbox_product", map[string]any{"product_key": "WidgetBus", "agent_name": "GreenCastle", "include_bodies": true}, &inbox)
	var got []string
	for _, e := range inbox {
		got = append(got, e.Subject)
		want := map[string]float64{"Deploy plan alpha": ids["/w/backend"], "Frontend alpha ready": ids["/w/frontend"]}[e.Subject]
		if e.ProjectID != want || e.BodyMD == nil || *e.BodyMD != "body of "+e.Subject {
			t.Errorf("entry %+v: want project %v and its body", e, want)
		}
	}
	if !slices.Equal(got, []string{"Frontend alpha ready", "Deploy plan alpha"}) {
		t.Errorf("fetch_inbox_product: %q, want the linked projects' mail, newest first", got)
	}

	search := func(args map[string]any) []string {
		var out struct {
			Result []struct {
				Subject   string  `json:"subject"`
				ProjectID float64 `json:"project_id"`
			} `json:"result"`
		}
		h.call("search_messages_product", args, &out)
		var subs []string
		for _, r := range out.Result {
			subs = append(subs, r.Subject)
		}
		slices.Sort(subs)
		return subs
	}
	if s := search(map[string]any{"product_key": "widget-bus", "query": "alpha"}); !slices.Equal(s, []string{"Deploy plan alpha", "Frontend alpha ready"}) {
		t.Errorf("search_messages_product alpha: %q", s)
	}
	if s := search(map[string]any{"product_key": "widget-bus", "query": "alpha", "agent_name": "BlueLake"}); !slices.Equal(s, []string{"Deploy plan alpha"}) {
		t.Errorf("search_messages_product alpha as BlueLake: %q", s)
	}
	if s := search(map[string]any{"product_key": "widget-bus", "query": "alpha", "limit": 1}); len(s) != 1 {
		t.Errorf("limit 1: %q", s)
	}

	// A thread id gathers the thread's messages in every linked project
	// (not the unlinked one's).
	for _, m := range []struct{ project, from, to string }{
		{"/w/backend", "BlueLake", "GreenCastle"}, {"/w/frontend", "RedFox", "GreenCastle"}, {"/w/other", "PinkBear", "GreenCastle"},
	} {
		h.call("send_message", map[string]any{"project_key": m.project, "sender_name": m.from, "to": []string{m.to},
			"subject": "Release " + m.project, "body_md": "- TODO: ship " + m.project, "thread_id": "REL-1"}, nil)
	}
	var sum struct {
		ThreadID string `json:"thread_id"`
		Summary  struct {
			Participants  []string `json:"participants"`
			TotalMessages int      `json:"total_messages"`
			ActionItems   []string `json:"action_items"`
		} `json:"summary"`
	}
	h.call("summarize_thread_product", map[string]any{"product_key": "widget-bus", "thread_id": "REL-1"}, &sum)
	if sum.ThreadID != "REL-1" || sum.Summary.TotalMessages != 2 || !slices.Equal(sum.Summary.Participants, []string{"BlueLake", "RedFox"}) || len(sum.Summary.ActionItems) != 2 {
		t.Errorf("summarize_thread_product: %+v, want the thread's two messages of the linked projects", sum)
	}

	// Linking opens no policy: BlueLake (backend) is a stranger to RedFox
	// (frontend, contacts_only), so the mail is held, and RedFox's product
	// inbox does not show it.
	res := send("/w/backend", "BlueLake", "RedFox@/w/frontend", "Hello from backend")
	if held, _ := res["held"].([]any); len(held) != 1 {
		t.Fatalf("send to a contacts_only agent of a linked project: %v, want it held", res)
	}
	h.call("fetch_inbox_product", map[string]any{"product_key": "widget-bus", "agent_name": "RedFox"}, &inbox)
	for _, e := range inbox {
		if e.Subject == "Hello from backend" {
			t.Errorf("held mail in RedFox's product inbox: %+v", e)
		}
	}

	h.checkRefusals([]refusal{
		{"fetch_inbox_product", map[string]any{"product_key": "nope", "agent_name": "GreenCastle"}, `Product not found: "nope"`},
		{"fetch_inbox_product", map[string]any{"product_key": "widget-bus", "agent_name": "PinkBear"}, "Agent 'PinkBear' not found in any project linked to product 'widget-bus'"},
		{"search_messages_product", map[string]any{"product_key": "widget-bus", "query": "x", "agent_name": "PinkBear"}, "Agent 'PinkBear' not found"},
		{"products_link", map[string]any{"product_key": "widget-bus", "project_key": "./rel"}, "Invalid project_key"},
		{"products_link", map[string]any{"product_key": "nope", "project_key": "/w/other"}, "Product not found"},
		{"ensure_product", map[string]any{"product_key": "bad key"}, "product_key \"bad key\" is not valid"},
	})
}
