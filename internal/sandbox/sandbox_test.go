package sandbox

import (
	"context"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/localgmail"
	"github.com/mailgate/mailgate/internal/testutil"
)

// client starts the sandbox and connects mailgate's Gmail client to it the
// way `serve --sandbox` does.
// unpaced lifts the Gmail client's quota pacer (internal/gmail tests it):
// a search of the sandbox's 120 builds waited on it for nearly 2 s.
const unpaced = 1e6

func client(t *testing.T) (*localgmail.Server, *gmail.Client) {
	t.Helper()
	srv, err := Start(nil)
	testutil.Closing(t, srv, err)
	c, err := gmail.New(context.Background(), gmail.Options{Endpoint: srv.URL(),
		TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "sandbox", TokenType: "Bearer"}),
		FetchRate:   unpaced, FetchBurst: unpaced})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func search(t *testing.T, c *gmail.Client, q string) []gmail.Summary {
	t.Helper()
	res, err := c.Search(context.Background(), q, 500)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestExistingQueriesUnchanged: the mail added for issue 17 leaves the
// answers the demo and the cmd/mailgate tests rely on as they were with
// files 01–16 only.
func TestExistingQueriesUnchanged(t *testing.T) {
	t.Parallel()
	old := localgmail.New(localgmail.Options{Email: Email})
	files := fstest.MapFS{}
	entries, _ := fs.ReadDir(mailbox, "testdata/mailbox")
	for _, e := range entries {
		if e.Name() < "17" {
			b, _ := fs.ReadFile(mailbox, "testdata/mailbox/"+e.Name())
			files[e.Name()] = &fstest.MapFile{Data: b}
		}
	}
	if err := old.SeedFS(files, "."); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	oc, _ := gmail.New(context.Background(), gmail.Options{Endpoint: old.URL(), TokenSource: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "x"})})
	_, c := client(t)
	for _, q := range []string{"invoice", "subject:kickoff", "in:sent paid", "in:sent Parser", "is:unread", "is:starred",
		"in:sent", "in:spam", "from:dana@example.com", "has:attachment filename:csv"} {
		was, now := search(t, oc, q), search(t, c, q)
		if len(was) != len(now) {
			t.Errorf("q=%q: %d results, was %d", q, len(now), len(was))
		}
	}
}

func TestBuildsSearchPages(t *testing.T) {
	t.Parallel()
	_, c := client(t)
	ctx := context.Background()
	seen := map[string]bool{}
	tok, pages := "", 0
	for {
		p, err := c.SearchPage(ctx, BuildsQuery, 50, tok)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, s := range p.Results {
			if seen[s.ID] || !strings.HasPrefix(s.Subject, "Nightly build #") {
				t.Errorf("repeated or foreign result %+v", s)
			}
			seen[s.ID] = true
		}
		if tok = p.NextPageToken; tok == "" {
			break
		}
	}
	if pages != 3 || len(seen) != Builds {
		t.Errorf("%d pages, %d builds", pages, len(seen))
	}
	if n := len(search(t, c, "in:inbox nightly")); n != 0 {
		t.Errorf("builds in the inbox: %d", n)
	}
}

func TestReplyAllThreadNamesAlias(t *testing.T) {
	t.Parallel()
	_, c := client(t)
	ctx := context.Background()
	res := search(t, c, `subject:"atlas design review on thursday"`)
	if len(res) != 2 || res[0].ThreadID != res[1].ThreadID {
		t.Fatalf("reply-all thread: %+v", res)
	}
	msgs, err := c.Thread(ctx, res[0].ThreadID)
	if err != nil || len(msgs) != 2 {
		t.Fatal(msgs, err)
	}
	last := msgs[1]
	if !strings.Contains(last.Cc, Alias) || !strings.Contains(last.Cc, Email) || !strings.Contains(last.Cc, "lena@example.org") || !strings.Contains(msgs[0].To, Alias) {
		t.Errorf("recipients: to %q cc %q", last.To, last.Cc)
	}
	own, err := c.OwnAddresses(ctx)
	if err != nil || !slices.Equal(own, []string{Email, Alias}) {
		t.Errorf("OwnAddresses = %v, %v", own, err)
	}
	if m, _ := c.Message(ctx, res[0].ID); !slices.Contains(m.Labels, "INBOX") || len(m.Labels) != 2 {
		t.Errorf("labels %v", m.Labels)
	}
}

func TestAttachmentsHTMLDraftLabels(t *testing.T) {
	t.Parallel()
	_, c := client(t)
	ctx := context.Background()
	res := search(t, c, "label:travel has:attachment")
	if len(res) != 1 {
		t.Fatalf("travel: %+v", res)
	}
	m, err := c.Message(ctx, res[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !m.HTML || !strings.HasPrefix(m.Text, "Hi,\n\nHere are the documents") || m.Cc != "Tom Becker <tom@example.org>" || len(m.Files) != 3 {
		t.Fatalf("travel message: html %v text %q cc %q files %+v", m.HTML, m.Text, m.Cc, m.Files)
	}
	for i, want := range []struct{ name, mime, prefix string }{
		{"itinerary.txt", "text/plain", "Thu 26 Nov 2026"}, {"boarding-pass.pdf", "application/pdf", "%PDF-1.4"}, {"venue-map.png", "image/png", "\x89PNG\r\n"},
	} {
		// Small files come inline (Data), the others by an attachmentId of
		// this read; both shapes are in this message.
		f := m.Files[i]
		data, err := f.Data, error(nil)
		if f.ID != "" {
			data, err = c.GetAttachment(ctx, m.ID, f.ID)
		}
		if (f.ID == "") != (i == 2) {
			t.Errorf("file %d: attachmentId %q: want only the small map inline", i, f.ID)
		}
		if err != nil || f.Filename != want.name || f.MimeType != want.mime || int64(len(data)) != f.Size || !strings.HasPrefix(string(data), want.prefix) {
			t.Errorf("file %d: %+v, %d bytes %q…, %v", i, f, len(data), data[:min(len(data), 10)], err)
		}
	}

	alt := search(t, c, `subject:"scheduled maintenance"`)
	if len(alt) != 1 {
		t.Fatalf("maintenance: %+v", alt)
	}
	if m, _ := c.Message(ctx, alt[0].ID); !m.HTML || !strings.Contains(m.Text, "read-only on Saturday 28 November from 02:00 to 04:00 UTC") {
		t.Errorf("multipart/alternative: %+v", m)
	}

	drafts, err := c.ListDrafts(ctx, "", 10, "")
	if err != nil || len(drafts.Drafts) != 1 || drafts.Drafts[0].Message.Cc != "Tom Becker <tom@example.org>" ||
		drafts.Drafts[0].Message.Subject != "Topics for the Atlas design review" {
		t.Fatalf("drafts: %+v %v", drafts, err)
	}

	labels, err := c.ListLabels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var user []string
	for _, l := range labels {
		if l.Type == "user" {
			user = append(user, l.Name)
		}
	}
	slices.Sort(user)
	if !slices.Equal(user, []string{"Builds", "Projects/Atlas", "Travel"}) {
		t.Errorf("user labels %v", user)
	}
}

// TestReadmeListsEveryFile keeps the mailbox README's table in step with the
// files.
func TestReadmeListsEveryFile(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("testdata/mailbox/README.md")
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := fs.ReadDir(mailbox, "testdata/mailbox")
	for _, e := range entries {
		if !strings.Contains(string(readme), "| "+e.Name()+" |") {
			t.Errorf("README.md does not list %s", e.Name())
		}
	}
}
