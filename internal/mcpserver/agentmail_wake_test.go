package mcpserver

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/config"
)

// subscriber is a client whose resources/updated notifications arrive on a
// channel.
func subscriber(t testing.TB, srv *mcp.Server) (*mcp.ClientSession, chan string) {
	t.Helper()
	updated := make(chan string, 16)
	cs := connectWith(t, srv, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
	})
	return cs, updated
}

// TestInboxSubscriptionWakes: an agent subscribed to its inbox through one
// server is notified when another server on the same store (another
// process's view of it) delivers mail to it, and only then: mail to another
// agent, or after unsubscribing, wakes nobody. A resource that cannot be
// read cannot be subscribed to.
func TestInboxSubscriptionWakes(t *testing.T) {
	t.Parallel()
	writer := newAMHarness(t)
	writer.setup("/p/app", "GreenDog", "BlueLake", "RedFox")

	// A second service on the same store: what a second server process sees.
	svc, _ := openService(t, writer.path)
	srv, err := New(Deps{Version: "test", Tools: []string{config.ToolsAgentMail}, AgentMail: svc, SetStores: setStores(t, svc)})
	if err != nil {
		t.Fatal(err)
	}
	cs, updated := subscriber(t, srv)
	if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
		t.Fatalf("the server does not declare resource subscriptions: %+v", caps.Resources)
	}
	ctx := t.Context()
	inbox := "resource://inbox/BlueLake?project=" + url.QueryEscape("/p/app")
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: inbox}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "resource://inbox/Nobody?project=" + url.QueryEscape("/p/app")}); err == nil ||
		!strings.Contains(err.Error(), "Nobody") {
		t.Errorf("subscribing to an agent that does not exist: %v", err)
	}

	send := func(to, subject string) {
		writer.call("send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{to}, "subject": subject, "body_md": "b"}, nil)
	}
	send("RedFox", "not for BlueLake")
	send("BlueLake", "for BlueLake")
	start := time.Now()
	select {
	case got := <-updated:
		if got != inbox {
			t.Fatalf("notified for %q, want %q", got, inbox)
		}
		t.Logf("notified %v after the send", time.Since(start).Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		t.Fatal("no notifications/resources/updated after mail arrived")
	}

	// The notification says "read it again"; the read has the new mail.
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: inbox})
	if err != nil || !strings.Contains(res.Contents[0].Text, "for BlueLake") {
		t.Fatalf("inbox after the notification: %v %v", res, err)
	}

	// A second subscriber, to another inbox: each of its notifications
	// proves the loop ran past the sends before it.
	cs2, updated2 := subscriber(t, srv)
	other := "resource://inbox/RedFox?project=" + url.QueryEscape("/p/app")
	if err := cs2.Subscribe(ctx, &mcp.SubscribeParams{URI: other}); err != nil {
		t.Fatal(err)
	}
	waitSecond := func(step string) {
		t.Helper()
		send("RedFox", step)
		select {
		case got := <-updated2:
			if got != other {
				t.Fatalf("%s: the second subscriber was notified for %q", step, got)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the second subscriber was not notified", step)
		}
	}
	noneForFirst := func(step string) {
		t.Helper()
		select {
		case got := <-updated:
			t.Fatalf("%s: the first subscriber was notified for %q", step, got)
		default:
		}
	}
	// BlueLake's inbox did not change: its reads stay the same (nothing in
	// them moves with the clock), so no notification.
	waitSecond("unchanged")
	noneForFirst("an unchanged inbox")

	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: inbox}); err != nil {
		t.Fatal(err)
	}
	send("BlueLake", "after unsubscribing")
	waitSecond("after unsubscribing")
	noneForFirst("after unsubscribing")
}

// BenchmarkInboxWake: the time from a send through one server to the
// subscribed client's notifications/resources/updated from another server
// on the same store (ns/op is that latency; the read interval is
// wakeInterval, so the mean is about half of it plus one inbox read).
func BenchmarkInboxWake(b *testing.B) {
	writer := newAMHarness(b)
	writer.setup("/p/app", "GreenDog", "BlueLake")
	svc, _ := openService(b, writer.path)
	srv, err := New(Deps{Version: "test", Tools: []string{config.ToolsAgentMail}, AgentMail: svc, SetStores: setStores(b, svc)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cs, updated := subscriber(b, srv)
	inbox := "resource://inbox/BlueLake?project=" + url.QueryEscape("/p/app")
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: inbox}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		writer.call("send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": fmt.Sprint("n", i), "body_md": "b"}, nil)
		select {
		case <-updated:
		case <-time.After(30 * time.Second):
			b.Fatal("no notification")
		}
	}
}
