package mcpserver

import (
	"slices"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// Rows of the integration contract (specs/agent-mail-integration-contracts.md)
// where it states a value, a default or a text, each through the real
// protocol. Where the reference recording differs, the contract wins (see
// docs/compat.md and testdata/agentmail_deviations.json).

// TestContractHealthReady: "Response: { "status": "ready" } on success".
func TestContractHealthReady(t *testing.T) {
	t.Parallel()
	h := newAMHarness(t)
	var got map[string]any
	h.call("health_check", map[string]any{}, &got)
	if got["status"] != "ready" {
		t.Fatalf("health_check status = %v, want ready (%v)", got["status"], got)
	}
}

// TestContractFetchInboxUrgentOnly: urgent_only is "Filter to ack_required
// only", whatever the importance.
func TestContractFetchInboxUrgentOnly(t *testing.T) {
	t.Parallel()
	h, clock := newAMHarnessClocked(t)
	h.setup("/p/app", "GreenDog", "BlueLake")
	send := func(importance string, ack bool) int64 {
		var out agentmail.SendResult
		h.call("send_message", map[string]any{"project_key": "/p/app", "sender_name": "GreenDog", "to": []string{"BlueLake"},
			"subject": importance, "body_md": "b", "importance": importance, "ack_required": ack}, &out)
		clock.Advance(time.Second)
		return out.Deliveries[0].Payload.ID
	}
	urgentNoAck := send("urgent", false)
	lowAck := send("low", true)
	highNoAck := send("high", false)
	normalAck := send("normal", true)
	var got []int64
	for _, e := range h.inbox(map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "urgent_only": true}) {
		got = append(got, e.ID)
	}
	if want := []int64{normalAck, lowAck}; !slices.Equal(got, want) {
		t.Fatalf("urgent_only: got %v, want the ack_required messages %v (not %d, %d: high/urgent without ack)", got, want, urgentNoAck, highNoAck)
	}
}

// TestContractReservationDefaults: file_reservation_paths defaults to
// exclusive false and ttl_seconds 600; macro_file_reservation_cycle
// reserves with the same defaults.
func TestContractReservationDefaults(t *testing.T) {
	t.Parallel()
	h, clock := newAMHarnessClocked(t)
	h.setup("/p/app", "GreenDog", "BlueLake")
	var a, b agentmail.ReserveResult
	h.call("file_reservation_paths", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "paths": []string{"docs/**"}}, &a)
	h.call("file_reservation_paths", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "paths": []string{"docs/a.md"}}, &b)
	wantExp := clock.Now().Add(600 * time.Second)
	for _, r := range []agentmail.ReserveResult{a, b} {
		if len(r.Granted) != 1 || r.Granted[0].Exclusive {
			t.Fatalf("default reservation not shared: %+v", r)
		}
		exp, err := time.Parse(time.RFC3339Nano, *r.Granted[0].ExpiresTS)
		if err != nil || !exp.Equal(wantExp) {
			t.Fatalf("expires_ts %v (%v), want now+600s = %v", *r.Granted[0].ExpiresTS, err, wantExp)
		}
	}
	if len(b.Conflicts) != 0 {
		t.Fatalf("two shared reservations conflict: %+v", b.Conflicts)
	}
	var c agentmail.CycleResult
	h.call("macro_file_reservation_cycle", map[string]any{"project_key": "/p/app", "agent_name": "GreenDog", "paths": []string{"src/x.go"}}, &c)
	if len(c.FileReservations.Granted) != 1 || c.FileReservations.Granted[0].Exclusive {
		t.Fatalf("cycle default not shared: %+v", c)
	}
	// Asked for explicitly, the lock is exclusive and conflicts.
	var d agentmail.ReserveResult
	h.call("file_reservation_paths", map[string]any{"project_key": "/p/app", "agent_name": "BlueLake", "paths": []string{"docs/b.md"}, "exclusive": true, "ttl_seconds": 3600}, &d)
	if len(d.Conflicts) != 1 || !d.Granted[0].Exclusive {
		t.Fatalf("explicit exclusive: %+v", d)
	}
}
