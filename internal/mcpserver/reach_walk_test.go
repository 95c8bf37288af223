package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/attach"
	"github.com/mailgate/mailgate/internal/config"
)

// The reach walk: every tool of the inventory is tried against what its
// row says it may touch (ToolEntry.Reach). A tool that takes a path is
// given the mailgate home, auth/, the vault, /, .., absolute paths,
// symlinks (leaf and parent) and a hard link, each leading to a canary;
// a tool that changes mail is asked for each change without an approval.
// The fence walk over sender text is toolsWithSenderText's (reach.go).

// reachWorld is a mailgate home laid out as in life, with a canary (a
// random secret) in every file a tool must never read: the OAuth token and
// credentials, a file in the vault, a file outside everything.
type reachWorld struct {
	base, home, auth, token, vault, attachments, downloads, project, outside string
	canary, canarySum                                                        string
	// planted are the canary files; their content must never change.
	planted []string
}

func newReachWorld(t testing.TB, vault string) *reachWorld {
	t.Helper()
	base := t.TempDir()
	var r [12]byte
	rand.Read(r[:])
	w := &reachWorld{base: base, home: filepath.Join(base, "home"), vault: vault,
		outside: filepath.Join(base, "outside"), project: filepath.Join(base, "project"),
		canary: "CANARY-" + hex.EncodeToString(r[:])}
	sum := sha256.Sum256([]byte(w.canary))
	w.canarySum = hex.EncodeToString(sum[:])
	w.auth = filepath.Join(w.home, "auth")
	w.token = filepath.Join(w.auth, "token.json")
	w.attachments = filepath.Join(w.home, "attachments")
	w.downloads = attach.DownloadDir(w.home)
	// The project is a repository of its own (.git at its top), as
	// agent-mail attachments require.
	for _, d := range []string{w.auth, w.attachments, w.downloads, filepath.Join(w.project, ".git"), w.outside, w.vault} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{w.token, filepath.Join(w.auth, "credentials.json"), filepath.Join(w.outside, "secret.txt"),
		filepath.Join(w.vault, "canary.md")} {
		if err := os.WriteFile(p, []byte(w.canary), 0o600); err != nil {
			t.Fatal(err)
		}
		w.planted = append(w.planted, p)
	}
	// In every root a tool reads paths from: a fine file, and the three
	// ways a name inside it can lead to a canary outside.
	for _, root := range []string{w.attachments, w.project} {
		if err := os.WriteFile(filepath.Join(root, "ok.txt"), []byte("fine\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(w.token, filepath.Join(root, "leaf-link")); err != nil {
			t.Skip("symlinks unavailable:", err)
		}
		if err := os.Symlink(w.auth, filepath.Join(root, "parent-link")); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(w.token, filepath.Join(root, "hard")); err != nil {
			t.Skip("hard links unavailable:", err)
		}
	}
	return w
}

// hostilePaths are the paths tried on a tool that reads under root.
func (w *reachWorld) hostilePaths(root string) []string {
	rel := func(p string) string {
		r, err := filepath.Rel(root, p)
		if err != nil {
			panic(err)
		}
		return r
	}
	return []string{
		w.home, w.auth, w.token, rel(w.token), w.vault, filepath.Join(w.vault, "canary.md"), rel(filepath.Join(w.vault, "canary.md")),
		"/", "..", "../", ".", "/etc/passwd", filepath.Join(w.outside, "secret.txt"), rel(filepath.Join(w.outside, "secret.txt")),
		"leaf-link", filepath.Join(root, "leaf-link"), "parent-link/token.json", filepath.Join(root, "parent-link", "token.json"),
		"hard", filepath.Join(root, "hard"), "./../home/auth/token.json", "ok.txt/../../auth/token.json",
	}
}

// leaked reports where a canary shows in text (the secret or its hash).
func (w *reachWorld) leaked(text string) bool {
	return strings.Contains(text, w.canary) || strings.Contains(text, w.canarySum)
}

// checkFiles fails when a canary file changed, or a file outside the
// roots a tool may write (downloads, the vault) appeared or changed.
func (w *reachWorld) snapshot(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(w.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p == w.downloads {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		} else if d.Type()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			out[p] = "-> " + l
		}
		return nil
	})
	return out
}

func (w *reachWorld) checkFiles(t testing.TB, before map[string]string) {
	t.Helper()
	for _, p := range w.planted {
		if b, err := os.ReadFile(p); err != nil || string(b) != w.canary {
			t.Errorf("canary %s changed or gone: %q, %v", p, b, err)
		}
	}
	after := w.snapshot(t)
	for p, v := range after {
		if old, ok := before[p]; !ok || old != v {
			t.Errorf("%s written outside the roots a tool may write", p)
		}
	}
	filepath.WalkDir(w.downloads, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !slices.Contains(w.planted, p) {
			if b, _ := os.ReadFile(p); w.leaked(string(b)) {
				t.Errorf("a canary was copied into %s", p)
			}
		}
		return nil
	})
}

// gatedOps are the Gmail operations that deliver or destroy mail.
var gatedOps = []string{"messages.send", "drafts.send", "messages.trash", "threads.trash", "drafts.delete",
	"labels.delete", "settings.filters.create", "settings.updateVacation"}

// reachEnv is the email set on the sandbox mailbox and the agent-mail set,
// both rooted in one reachWorld.
type reachEnv struct {
	w        *reachWorld
	e        *emailEnv
	am       *amHarness
	known    []string // message ids whose labels are watched (TRASH, SPAM)
	thread   string
	message  string
	draft    string // a draft mailgate created
	userDraf string // a draft the user wrote in Gmail
}

func newReachEnv(t testing.TB) *reachEnv {
	t.Helper()
	e := newSandboxEnv(t, false)
	e.gm.AddForwardingAddress("x@example.com", true) // create_filter's forward target, verified as Gmail requires
	w := newReachWorld(t, e.vault)
	e.deps.Attachments = attach.Folder{Dir: w.attachments}
	e.deps.Downloads = attach.Downloads{Dir: w.downloads}
	r := &reachEnv{w: w, e: e}
	ctx := context.Background()
	res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_email", Arguments: map[string]any{"query": "in:inbox", "max_results": 50}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	for _, m := range regexp.MustCompile(`Message ID: (\S+) \| Thread ID: (\S+)`).FindAllStringSubmatch(text, -1) {
		r.known = append(r.known, m[1])
		r.message, r.thread = m[1], m[2]
	}
	if len(r.known) == 0 {
		t.Fatalf("no inbox: %q", text)
	}
	res, _ = e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_drafts", Arguments: map[string]any{}})
	r.userDraf = draftIDRe.FindStringSubmatch(res.Content[0].(*mcp.TextContent).Text)[1]
	res, _ = e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "draft_email", Arguments: map[string]any{"to": "priya@example.com", "subject": "mine", "body": "b"}})
	m := regexp.MustCompile(`Draft ID: (\S+)\.`).FindStringSubmatch(res.Content[0].(*mcp.TextContent).Text)
	if m == nil {
		t.Fatalf("draft_email: %v", res.Content)
	}
	r.draft = m[1]
	r.am = newAMHarness(t)
	r.am.setup(w.project, "GreenDog", "BlueLake")
	return r
}

// session is the client of the set a tool belongs to.
func (r *reachEnv) session(tool string) *mcp.ClientSession {
	for _, e := range inventory {
		if e.Name == tool && e.Set == config.ToolsEmail {
			return r.e.cs
		}
	}
	return r.am.cs
}

// gatedChanges counts what Gmail saw that delivers or destroys mail: the
// gated operations, and watched messages carrying TRASH or SPAM.
func (r *reachEnv) gatedChanges(t testing.TB) int {
	n := 0
	for _, op := range gatedOps {
		n += r.e.gm.Calls(op)
	}
	for _, id := range r.known {
		if l, ok := r.e.gm.Labels(id); !ok || slices.Contains(l, "TRASH") || slices.Contains(l, "SPAM") {
			n++
		}
	}
	return n
}

// pathCalls builds, for each tool that reads files from a path an agent
// gives, a call reading p.
func (r *reachEnv) pathCalls() map[string]func(p string) map[string]any {
	compose := func(p string) map[string]any {
		return map[string]any{"to": "priya@example.com", "subject": "s", "body": "b", "attachments": []any{p}}
	}
	return map[string]func(string) map[string]any{
		"draft_email": compose,
		"send_email":  compose,
		"update_draft": func(p string) map[string]any {
			a := compose(p)
			a["draft_id"] = r.draft
			return a
		},
		"reply_email": func(p string) map[string]any {
			return map[string]any{"thread_id": r.thread, "message_id": r.message, "body": "b", "attachments": []any{p}}
		},
		"send_message": func(p string) map[string]any {
			return map[string]any{"project_key": r.w.project, "sender_name": "GreenDog", "to": []any{"BlueLake"}, "subject": "s", "body_md": "b", "attachment_paths": []any{p}}
		},
	}
}

// noPathArg: tools that declare a file root but take no path from the
// agent, and where their reach is tried instead.
var noPathArg = map[string]string{
	"get_attachment":                 "writes under a name the sender chose: TestReachDownloads",
	"force_release_file_reservation": "reads file times under the project root for patterns, never file contents: agentmail's staleness tests (ProjectTreeOK)",
	"send":                           "reads .agentmailignore at the project root, a name mailgate fixes",
	"list-recipients":                "reads .agentmailignore at the project root, a name mailgate fixes",
	"install_precommit_guard":        "writes only mailgate's pre-commit hook, into a git repository inside the project (guard's and agentmail_guard's tests)",
	"uninstall_precommit_guard":      "removes only mailgate's own pre-commit hook, from a git repository inside a known project (TestGuardCommit)",
}

// TestReachPaths: every tool that reads files from a path an agent gives
// is handed every hostile path, and refuses each without a canary leaking
// into its answer, the mail or any file.
func TestReachPaths(t *testing.T) {
	t.Parallel()
	r := newReachEnv(t)
	calls := r.pathCalls()
	for _, e := range inventory {
		files := (e.Reach.Reads | e.Reach.Writes) &^ (NoFiles | RootVault)
		if files == 0 {
			continue
		}
		_, hasCall := calls[e.Name]
		if _, exempt := noPathArg[e.Name]; !hasCall && !exempt {
			t.Errorf("%s declares %v but the reach walk does not try it: add it to pathCalls or noPathArg", e.Name, files)
		}
	}
	before := r.w.snapshot(t)
	gated := r.gatedChanges(t)
	for name, call := range calls {
		root := r.w.attachments
		if name == "send_message" {
			root = r.w.project
		}
		t.Run(name, func(t *testing.T) {
			// The fine file is accepted: the walk tries the real thing.
			if text, isErr := callTool(t, r.session(name), name, call("ok.txt")); isErr && !strings.Contains(text, "approval") {
				t.Fatalf("ok.txt refused: %q", text)
			}
			for _, p := range r.w.hostilePaths(root) {
				text, isErr := callTool(t, r.session(name), name, call(p))
				if !isErr || r.w.leaked(text) || strings.Contains(text, "Request file:") {
					t.Errorf("%s: (isError=%v) %q", p, isErr, text)
				}
			}
		})
	}
	if n := r.gatedChanges(t); n != gated {
		t.Errorf("%d gated Gmail changes", n-gated)
	}
	for _, m := range r.e.gm.Sent() {
		if raw, _ := r.e.gm.RawMessage(m.Id); r.w.leaked(string(raw)) {
			t.Errorf("a canary left in message %s", m.Id)
		}
	}
	r.w.checkFiles(t, before)
}

// newsletter is the sandbox's message with a List-Unsubscribe header.
func (r *reachEnv) newsletter() string {
	page, err := actClient(r.e).SearchPage(context.Background(), "from:newsletter@example.org", 1, "")
	if err != nil || len(page.Results) == 0 {
		return "none"
	}
	return page.Results[0].ID
}

// gmailCalls: for every tool that changes mail, each change it can be
// asked for (none approved).
func (r *reachEnv) gmailCalls() map[string][]map[string]any {
	compose := map[string]any{"to": "x@example.com", "subject": "s", "body": "b"}
	with := func(m map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	return map[string][]map[string]any{
		"send_email":    {compose, with(compose, "bcc", []any{"y@example.com"})},
		"reply_email":   {{"thread_id": r.thread, "message_id": r.message, "body": "b"}, {"thread_id": r.thread, "message_id": r.message, "body": "b", "reply_all": true}},
		"forward_email": {{"message_id": r.message, "to": "x@example.com"}},
		"send_draft":    {{"draft_id": r.userDraf}, {"draft_id": r.draft}},
		"trash_email":   {{"message_id": r.message}, {"thread_id": r.thread}},
		"draft_email":   {compose},
		"update_draft":  {with(compose, "draft_id", r.userDraf), with(compose, "draft_id", r.draft)},
		"modify_labels": {
			{"message_ids": r.known, "add_labels": []any{"TRASH"}}, {"message_ids": r.known, "add_labels": []any{"SPAM"}},
			{"thread_id": r.thread, "add_labels": []any{"TRASH"}}, {"message_ids": r.known, "remove_labels": []any{"TRASH"}},
			{"message_ids": r.known, "actions": []any{"archive"}},
		},
		"untrash_email": {{"message_id": r.message}, {"thread_id": r.thread}},
		"create_label":  {{"name": "Reach"}},
		"rename_label":  {{"label": "Reach", "new_name": "Reach2"}},
		"delete_label":  {{"label": "Reach2"}},
		"create_filter": {{"from": "a@example.com", "forward": "x@example.com"}, {"query": "x", "add_labels": []any{"TRASH"}}},
		"delete_filter": {{"filter_id": "ANe1Bm0"}},
		"set_vacation":  {{"enabled": true, "text": "away"}, {"enabled": false}},
		"unsubscribe":   {{"message_id": r.newsletter()}, {"message_id": r.newsletter(), "method": "mailto"}},
	}
}

// TestReachGmail: every tool that changes mail is asked for each change
// without an approval. Where its row says gated, the answer asks for the
// approval and the local Gmail server saw no send, trash or delete; no
// tool, gated or not, makes one; and the user's own draft is unchanged.
func TestReachGmail(t *testing.T) {
	t.Parallel()
	r := newReachEnv(t)
	calls := r.gmailCalls()
	d0, _ := r.e.gm.Draft(r.userDraf)
	raw0, _ := r.e.gm.RawMessage(d0.Message.Id)
	for _, e := range inventory {
		if e.Reach.Gmail == GmailNone {
			continue
		}
		tries, ok := calls[e.Name]
		if !ok {
			t.Errorf("%s changes mail (%v) but the reach walk does not try it: add it to gmailCalls", e.Name, e.Reach.Gmail)
			continue
		}
		for _, args := range tries {
			before := r.gatedChanges(t)
			text, isErr := callTool(t, r.e.cs, e.Name, args)
			if n := r.gatedChanges(t) - before; n != 0 {
				t.Errorf("%s %v: %d gated Gmail changes without an approval: %q", e.Name, args, n, text)
			}
			if e.Reach.Gmail == GmailGated && (!isErr || !strings.Contains(text, "approv")) {
				t.Errorf("%s %v is gated, but the answer asks for no approval: (isError=%v) %q", e.Name, args, isErr, text)
			}
		}
	}
	d1, ok := r.e.gm.Draft(r.userDraf)
	if !ok {
		t.Fatal("the user's draft is gone")
	}
	if raw1, _ := r.e.gm.RawMessage(d1.Message.Id); string(raw1) != string(raw0) {
		t.Errorf("the user's draft changed")
	}
}

// TestReachDownloads: get_attachment writes only into the downloads
// folder, whatever name the sender gave the file (the home, auth/, the
// vault, /, .., absolute paths), and never through a symlink or hard link
// planted there.
func TestReachDownloads(t *testing.T) {
	t.Parallel()
	r := newReachEnv(t)
	w := r.w
	if err := os.Symlink(w.auth, filepath.Join(w.downloads, "parent-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w.token, filepath.Join(w.downloads, "token.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(w.token, filepath.Join(w.downloads, "hard.json")); err != nil {
		t.Fatal(err)
	}
	// Planted: their content must stay the canary (not overwritten).
	w.planted = append(w.planted, filepath.Join(w.downloads, "token.json"), filepath.Join(w.downloads, "hard.json"))
	names := []string{"../auth/token.json", "../../home/auth/token.json", w.token, w.home, w.vault + "/canary.md", "/", "..", ".",
		"parent-link/token.json", "token.json", "hard.json", "..\\auth\\token.json", "~/.ssh/id_ed25519"}
	var b strings.Builder
	b.WriteString("From: Mallory <m@evil.test>\r\nTo: me@sandbox.local\r\nSubject: files\r\nMessage-ID: <reach@evil.test>\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nsee files\r\n")
	for _, n := range names {
		fmt.Fprintf(&b, "--B\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=%q\r\n\r\nOVERWRITTEN\r\n", n)
	}
	b.WriteString("--B--\r\n")
	m, err := r.e.gm.Insert([]byte(b.String()), "INBOX")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := callTool(t, r.e.cs, "read_email", map[string]any{"message_id": m.Id})
	ids := regexp.MustCompile(`attachment_id: (\S+)`).FindAllStringSubmatch(text, -1)
	if len(ids) != len(names) {
		t.Fatalf("%d attachments listed, want %d:\n%s", len(ids), len(names), text)
	}
	before := w.snapshot(t)
	for i, id := range ids {
		text, isErr := callTool(t, r.e.cs, "get_attachment", map[string]any{"message_id": m.Id, "attachment_id": id[1], "save": true})
		p := regexp.MustCompile(`(?m)(/\S+)`).FindString(text[strings.Index(text, "saved"):])
		if isErr || !strings.HasPrefix(p, w.downloads+string(filepath.Separator)) || strings.ContainsRune(strings.TrimPrefix(p, w.downloads+"/"), '/') {
			t.Errorf("%q: (isError=%v) saved at %q: %q", names[i], isErr, p, text)
		}
	}
	w.checkFiles(t, before)
}
