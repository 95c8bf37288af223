package gmail

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/localgmail"
)

// labelsOf is a message's labels on the server, sorted and joined.
func (e *env) labelsOf(t *testing.T, id string) string {
	t.Helper()
	l, ok := e.srv.Labels(id)
	if !ok {
		t.Fatalf("message %s gone", id)
	}
	return strings.Join(l, ",")
}

func TestLabelsModifyAndTrash(t *testing.T) {
	t.Parallel()
	e := newEnv(t, []string{ScopeModify})
	ctx := context.Background()
	id, err := e.c.CreateLabel(ctx, "Receipts")
	if err != nil {
		t.Fatal(err)
	}
	labels, err := e.c.ListLabels(ctx)
	if err != nil || !slices.Contains(labels, Label{ID: id, Name: "Receipts", Type: "user"}) || !slices.Contains(labels, Label{ID: "INBOX", Name: "INBOX", Type: "system"}) {
		t.Fatalf("ListLabels: %+v %v", labels, err)
	}
	if got, _ := e.c.LabelID(ctx, "receipts"); got != id {
		t.Errorf("LabelID = %q", got)
	}

	ids := e.insertMany(t, 2500, "INBOX", "UNREAD")
	e.srv.ResetCounters()
	e.srv.Inject(localgmail.Fault{Op: "messages.batchModify", Status: 503}) // retried
	done, err := e.c.ModifyMessages(ctx, ids, LabelChange{Add: []string{id}, Remove: []string{"UNREAD", "INBOX"}})
	if err != nil || done != 2500 || e.srv.Calls("messages.batchModify") != 4 {
		t.Fatalf("ModifyMessages: done %d, %v, %d calls (3 chunks + 1 retry)", done, err, e.srv.Calls("messages.batchModify"))
	}
	if got := e.labelsOf(t, ids[2499]); got != id {
		t.Errorf("labels after batch: %s", got)
	}
	e.srv.Inject(localgmail.Fault{Op: "messages.batchModify", Status: 400, Reason: "invalidArgument"})
	done, err = e.c.ModifyMessages(ctx, ids, LabelChange{Add: []string{"STARRED"}})
	if err == nil || done != 0 || !strings.Contains(err.Error(), "0 of 2500 messages done") {
		t.Errorf("refused batch: done %d, %v", done, err)
	}
	if _, err := e.c.ModifyMessages(ctx, ids, LabelChange{}); !errors.Is(err, ErrNoLabelChange) {
		t.Errorf("empty change: %v", err)
	}

	first, thread := e.insert(t, "a@example.org", "Trip", "one", "Message-ID: <trip@example.org>")
	second, _ := e.insert(t, "b@example.org", "Re: Trip", "two", "In-Reply-To: <trip@example.org>")
	got, err := e.c.ModifyThread(ctx, thread, LabelChange{Add: []string{"STARRED"}, Remove: []string{"INBOX"}})
	if err != nil || len(got) != 2 || !slices.Equal(got[1].Labels, []string{"STARRED"}) {
		t.Fatalf("ModifyThread: %+v %v", got, err)
	}
	if _, err := e.c.ModifyThread(ctx, thread, LabelChange{Add: []string{"Label_404"}}); err == nil || errors.Is(err, ErrThreadNotFound) {
		t.Errorf("bad label on a thread must not read as a missing thread: %v", err)
	}
	if _, err := e.c.ModifyThread(ctx, "0123456789abcdef", LabelChange{Add: []string{"STARRED"}}); !errors.Is(err, ErrThreadNotFound) {
		t.Errorf("unknown thread: %v", err)
	}

	if ml, err := e.c.TrashMessage(ctx, first); err != nil || !slices.Contains(ml.Labels, "TRASH") {
		t.Fatalf("TrashMessage: %+v %v", ml, err)
	}
	if _, err := e.c.UntrashMessage(ctx, first); err != nil || e.labelsOf(t, first) != "STARRED" {
		t.Fatalf("UntrashMessage: %v %s", err, e.labelsOf(t, first))
	}
	if _, err := e.c.TrashThread(ctx, thread); err != nil || e.labelsOf(t, second) != "STARRED,TRASH" {
		t.Fatalf("TrashThread: %v %s", err, e.labelsOf(t, second))
	}
	if _, err := e.c.UntrashThread(ctx, thread); err != nil || e.labelsOf(t, second) != "STARRED" {
		t.Fatalf("UntrashThread: %v %s", err, e.labelsOf(t, second))
	}
	if _, err := e.c.TrashMessage(ctx, "0123456789abcdef"); !errors.Is(err, ErrNotFound) {
		t.Errorf("TrashMessage unknown: %v", err)
	}
	if _, err := e.c.TrashThread(ctx, "web-url-token"); !errors.Is(err, ErrThreadNotFound) {
		t.Errorf("TrashThread malformed: %v", err)
	}
}

func TestOrganisingNeedsModifyScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil) // readonly + compose
	id, _ := e.insert(t, "a@example.org", "x", "y")
	ctx := context.Background()
	var perm *PermissionError
	if _, err := e.c.ModifyMessages(ctx, []string{id}, LabelChange{Remove: []string{"UNREAD"}}); !errors.As(err, &perm) || perm.Scope != ScopeModify {
		t.Errorf("ModifyMessages: %v", err)
	}
	if _, err := e.c.TrashMessage(ctx, id); !errors.As(err, &perm) || perm.Scope != ScopeModify {
		t.Errorf("TrashMessage: %v", err)
	}
	if e.srv.Calls("messages.trash") != 1 {
		t.Errorf("a missing scope was retried: %d calls", e.srv.Calls("messages.trash"))
	}
}

func TestProfileAndAliases(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, localgmail.Options{Aliases: []string{"Team@Example.com", "me@example.com"}}, nil)
	ctx := context.Background()
	p, err := e.c.GetProfile(ctx)
	if err != nil || p.EmailAddress != "me@example.com" {
		t.Fatalf("GetProfile: %+v %v", p, err)
	}
	aliases, err := e.c.SendAsAliases(ctx)
	if err != nil || len(aliases) != 3 || !aliases[0].Primary || aliases[1].Email != "Team@Example.com" || !aliases[1].Verified {
		t.Fatalf("SendAsAliases: %+v %v", aliases, err)
	}
	own, err := e.c.OwnAddresses(ctx)
	if err != nil || !slices.Equal(own, []string{"me@example.com", "team@example.com"}) {
		t.Errorf("OwnAddresses: %v %v", own, err)
	}
}
