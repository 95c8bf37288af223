package gmail

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/localgmail"
)

// TestMirrorCalls: the mirror's calls through the one Gmail adapter —
// insert into a thread with a label, find by Message-ID, labels listed and
// created, 409 as ErrLabelExists.
func TestMirrorCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t, []string{ScopeReadonly, ScopeInsert, ScopeLabels})
	ctx := context.Background()

	id, err := e.c.LabelID(ctx, "AgentMail/app")
	if err != nil || id != "" {
		t.Fatalf("LabelID of a missing label = %q, %v", id, err)
	}
	created, err := e.c.CreateLabel(ctx, "AgentMail/app")
	if err != nil || created == "" {
		t.Fatalf("CreateLabel = %q, %v", created, err)
	}
	if _, err := e.c.CreateLabel(ctx, "AgentMail/app"); !errors.Is(err, ErrLabelExists) {
		t.Fatalf("second CreateLabel: %v, want ErrLabelExists", err)
	}
	if id, err := e.c.LabelID(ctx, "agentmail/APP"); err != nil || id != created {
		t.Fatalf("LabelID is case-insensitive: %q, %v; want %q", id, err, created)
	}

	raw := []byte("From: a@x.invalid\r\nTo: b@x.invalid\r\nSubject: s\r\nDate: Mon, 02 Nov 2026 10:00:00 +0000\r\nMessage-ID: <m1@x.invalid>\r\n\r\nbody\r\n")
	ref, err := e.c.Insert(ctx, raw, "", []string{created})
	if err != nil || ref.ID == "" || ref.ThreadID == "" {
		t.Fatalf("Insert = %+v, %v", ref, err)
	}
	found, ok, err := e.c.FindRFC822(ctx, "<m1@x.invalid>")
	if err != nil || !ok || found != ref {
		t.Fatalf("FindRFC822 = %+v, %v, %v; want %+v", found, ok, err, ref)
	}
	if _, ok, err := e.c.FindRFC822(ctx, "<none@x.invalid>"); err != nil || ok {
		t.Fatalf("FindRFC822 of a missing message = %v, %v", ok, err)
	}
	raw2 := []byte("From: a@x.invalid\r\nTo: b@x.invalid\r\nSubject: Re: s\r\nDate: Mon, 02 Nov 2026 10:05:00 +0000\r\nMessage-ID: <m2@x.invalid>\r\nIn-Reply-To: <m1@x.invalid>\r\n\r\nmore\r\n")
	if ref2, err := e.c.Insert(ctx, raw2, ref.ThreadID, []string{created}); err != nil || ref2.ThreadID != ref.ThreadID {
		t.Fatalf("Insert into the thread = %+v, %v; want thread %s", ref2, err, ref.ThreadID)
	}
}

// TestInsertIsAttemptedOnce: a 503 on messages.insert comes back at once
// (a retry could file a second copy), marked transient with Gmail's wait; a
// refusal is not transient, and its status is readable.
func TestInsertIsAttemptedOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, []string{ScopeReadonly, ScopeInsert, ScopeLabels})
	ctx := context.Background()
	raw := []byte("From: a@x.invalid\r\nTo: b@x.invalid\r\nSubject: s\r\nMessage-ID: <m@x.invalid>\r\n\r\nbody\r\n")

	e.srv.Inject(localgmail.Fault{Op: "messages.insert", Status: 503, Header: http.Header{"Retry-After": {"7"}}, Times: 1})
	_, err := e.c.Insert(ctx, raw, "", nil)
	wait, ok := Transient(err)
	if err == nil || !ok || wait != 7*time.Second || StatusCode(err) != 503 {
		t.Fatalf("Insert during a 503: err=%v transient=%v wait=%v status=%d", err, ok, wait, StatusCode(err))
	}
	if _, err := e.c.Insert(ctx, raw, "", nil); err != nil {
		t.Fatalf("the one fault was consumed by a hidden retry? next Insert: %v", err)
	}

	e.srv.Inject(localgmail.Fault{Op: "messages.insert", Status: 400, Times: 1})
	_, err = e.c.Insert(ctx, raw, "no-such-thread", nil)
	if _, ok := Transient(err); ok || StatusCode(err) != 400 {
		t.Fatalf("a 400 is not transient: err=%v status=%d", err, StatusCode(err))
	}
}

func TestTransient(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"canceled", context.Canceled, false},
		{"network", errors.New("dial tcp: connection refused"), true},
		{"reauth", &ReauthError{Cause: errors.New("x")}, false},
		{"permission", &PermissionError{Scope: ScopeInsert, Err: errors.New("x")}, false},
		{"rate limited", &RateLimitedError{Until: time.Now().Add(time.Hour), Err: errors.New("x")}, true},
	} {
		if _, got := Transient(tt.err); got != tt.want {
			t.Errorf("%s: Transient = %v, want %v", tt.name, got, tt.want)
		}
	}
}
