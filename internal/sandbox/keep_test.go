package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/testutil"
)

func connect(t *testing.T, url string) *gmail.Client {
	t.Helper()
	c, err := gmail.New(context.Background(), gmail.Options{Endpoint: url,
		TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "sandbox", TokenType: "Bearer"}),
		FetchRate:   unpaced, FetchBurst: unpaced})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func open(t *testing.T, dir string) *Mailbox {
	t.Helper()
	mb, err := Open(dir, nil)
	return testutil.Closing(t, mb, err)
}

const sentRaw = "To: Dana <dana@example.com>\r\nSubject: Kept across restarts\r\n\r\nHello.\r\n"

// TestOpenKeepsTheMailbox: what a sandbox server sends, drafts or labels is
// there when it starts again on the same folder; a fresh folder is seeded.
func TestOpenKeepsTheMailbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "sandbox")
	mb := open(t, dir)
	if mb.Kept() {
		t.Error("a new folder's mailbox says it was kept")
	}
	c := connect(t, mb.URL())
	if n := len(search(t, c, "in:sent kept")); n != 0 {
		t.Fatalf("%d sent before sending", n)
	}
	sent, err := c.Send(ctx, []byte(sentRaw), "")
	if err != nil {
		t.Fatal(err)
	}
	draft, err := c.CreateDraft(ctx, []byte("To: lena@example.org\r\nSubject: Kept draft\r\n\r\nLater.\r\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateLabel(ctx, "Kept label"); err != nil {
		t.Fatal(err)
	}
	welcome := search(t, c, "in:inbox welcome")
	if len(welcome) == 0 {
		t.Fatal("no welcome message in the seeded inbox")
	}
	if _, err := c.TrashMessage(ctx, welcome[0].ID); err != nil {
		t.Fatal(err)
	}
	mb.Close()

	again := open(t, dir)
	if !again.Kept() {
		t.Error("the restarted mailbox says it was seeded afresh")
	}
	c = connect(t, again.URL())
	got := search(t, c, "in:sent kept")
	if len(got) != 1 || got[0].ID != sent.ID || got[0].Subject != "Kept across restarts" {
		t.Errorf("Sent after restart: %+v, want message %s", got, sent.ID)
	}
	if d, err := c.GetDraft(ctx, draft); err != nil || d.Message.Subject != "Kept draft" {
		t.Errorf("draft after restart: %+v, %v", d, err)
	}
	if id, err := c.LabelID(ctx, "Kept label"); err != nil || !strings.HasPrefix(id, "Label_") {
		t.Errorf("label after restart: %q, %v", id, err)
	}
	if n := len(search(t, c, BuildsQuery)); n != Builds {
		t.Errorf("%d builds after restart, want %d (the seed once, not twice)", n, Builds)
	}
	// Trashed before the restart, untrashed after: back in the inbox, as
	// it was in the inbox when trashed.
	if ml, err := c.UntrashMessage(ctx, welcome[0].ID); err != nil || !slices.Contains(ml.Labels, "INBOX") {
		t.Errorf("untrash after restart: %+v, %v", ml, err)
	}
	// New ids keep increasing from where the last run stopped.
	next, err := c.Send(ctx, []byte(sentRaw), "")
	if err != nil || next.ID <= sent.ID {
		t.Errorf("id after restart %v (%v), before %s", next, err, sent.ID)
	}
}

// TestTwoServersShareTheMailbox: two sandbox servers on one folder (Claude
// Desktop's and a terminal's) see each other's sends, and neither loses
// the other's when it saves.
func TestTwoServersShareTheMailbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	a, b := connect(t, open(t, dir).URL()), connect(t, open(t, dir).URL())
	if _, err := a.Send(ctx, []byte(sentRaw), ""); err != nil {
		t.Fatal(err)
	}
	if n := len(search(t, b, "in:sent kept")); n != 1 {
		t.Errorf("the second server sees %d of the first's sends", n)
	}
	if _, err := b.Send(ctx, []byte(sentRaw), ""); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*gmail.Client{"first": a, "second": b} {
		if n := len(search(t, c, "in:sent kept")); n != 2 {
			t.Errorf("the %s server sees %d sends, want 2", name, n)
		}
	}
	if n := len(search(t, connect(t, open(t, dir).URL()), "in:sent kept")); n != 2 {
		t.Errorf("after both: %d sends kept", n)
	}
}

// TestOpenRefusesABrokenFile: a mailbox file that does not load stops the
// start, naming the file, rather than silently starting afresh.
func TestOpenRefusesABrokenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, File), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir, nil)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, File)) || !strings.Contains(err.Error(), "move it away") {
		t.Fatalf("err = %v", err)
	}
}
