package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// pngBytes is a 1×1 PNG: an image attachment must come back byte for byte.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
	"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// TestAgentMailAttachments: files inside the project are stored with the
// message as they are and read back through the message resource; files
// outside it (directly, by .., or through a symlink), too large, too many,
// or not regular files are refused with a clear text.
func TestAgentMailAttachments(t *testing.T) {
	t.Parallel()
	proj, outside := t.TempDir(), t.TempDir()
	write := func(path string, b []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proj, ".git", "HEAD"), []byte("ref: refs/heads/main\n")) // a work tree of its own
	write(filepath.Join(proj, "docs", "arch.png"), pngBytes)
	write(filepath.Join(proj, "notes.txt"), []byte("plan: ship it\n"))
	write(filepath.Join(proj, "big.bin"), bytes.Repeat([]byte{1}, agentmail.MaxAttachmentBytes+1))
	write(filepath.Join(outside, "secret.txt"), []byte("nope"))
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(proj, "leak.txt")))
	must(os.Symlink(outside, filepath.Join(proj, "outdir")))
	must(os.Symlink(filepath.Join(proj, "notes.txt"), filepath.Join(proj, "docs", "notes-link.txt")))

	h := newAMHarness(t)
	h.setup(proj, "GreenDog", "BlueLake")
	send := func(paths ...string) map[string]any {
		return map[string]any{"project_key": proj, "sender_name": "GreenDog", "to": []string{"BlueLake"}, "subject": "s", "body_md": "see attached", "attachment_paths": paths}
	}

	refusals := []struct {
		paths []string
		want  string
	}{
		{[]string{filepath.Join(outside, "secret.txt")}, "is outside the project"},
		{[]string{"../" + filepath.Base(outside) + "/secret.txt"}, "is outside the project"},
		{[]string{"leak.txt"}, "is outside the project " + proj + " (symlinks are resolved)"},
		{[]string{"outdir/secret.txt"}, "is outside the project"},
		{[]string{"big.bin"}, fmt.Sprintf("%d bytes; the limit is %d per attachment", agentmail.MaxAttachmentBytes+1, agentmail.MaxAttachmentBytes)},
		{[]string{"missing.txt"}, "no such file in the project"},
		{[]string{"docs"}, "not a regular file"},
		{[]string{"notes.txt", "notes.txt", "notes.txt", "notes.txt", "notes.txt"}, "5 attachments; the limit is 4 per message"},
	}
	for _, c := range refusals {
		got := h.callErr("send_message", send(c.paths...))
		if !strings.Contains(got, c.want) || (len(c.paths) == 1 && !strings.Contains(got, fmt.Sprintf("attachment %q", c.paths[0]))) {
			t.Errorf("attach %v: %q, want %q", c.paths, got, c.want)
		}
	}
	if n := len(h.inbox(map[string]any{"project_key": proj, "agent_name": "BlueLake"})); n != 0 {
		t.Fatalf("%d messages sent by refused calls", n)
	}

	var sent agentmail.SendResult
	h.call("send_message", send("docs/arch.png", filepath.Join(proj, "notes.txt"), "docs/notes-link.txt"), &sent)
	if len(sent.Attachments) != 3 {
		t.Fatalf("send answer attachments: %+v", sent.Attachments)
	}
	id := sent.Deliveries[0].Payload.ID
	var views []agentmail.AttachmentView
	b, _ := json.Marshal(sent.Attachments)
	json.Unmarshal(b, &views)
	if views[0].Path != "docs/arch.png" || views[0].MediaType != "image/png" || views[0].Bytes != int64(len(pngBytes)) ||
		views[1].Path != "notes.txt" || !strings.HasPrefix(views[1].MediaType, "text/plain") || views[2].Path != "docs/notes-link.txt" {
		t.Fatalf("attachment views: %+v", views)
	}
	// Listings show the metadata.
	inbox := h.inbox(map[string]any{"project_key": proj, "agent_name": "BlueLake"})
	if len(inbox) != 1 || len(inbox[0].Attachments) != 3 {
		t.Fatalf("fetch_inbox attachments: %+v", inbox)
	}

	var thread struct {
		Messages []struct {
			Attachments []agentmail.AttachmentView `json:"attachments"`
		} `json:"messages"`
	}
	h.read(fmt.Sprintf("resource://thread/%d?project=%s", id, proj), &thread)
	if len(thread.Messages) != 1 || len(thread.Messages[0].Attachments) != 3 || thread.Messages[0].Attachments[0] != views[0] {
		t.Fatalf("thread resource attachments: %+v", thread)
	}

	// The message resource: the JSON, then every attachment as sent.
	res, err := h.cs.ReadResource(h.ctx, &mcp.ReadResourceParams{URI: fmt.Sprintf("resource://message/%d?project=%s", id, proj)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 4 || res.Contents[0].MIMEType != "application/json" || !strings.Contains(res.Contents[0].Text, `"docs/arch.png"`) {
		t.Fatalf("message resource: %d contents %+v", len(res.Contents), res.Contents[0])
	}
	want := [][]byte{pngBytes, []byte("plan: ship it\n"), []byte("plan: ship it\n")}
	for i, c := range res.Contents[1:] {
		if !bytes.Equal(c.Blob, want[i]) || c.URI != views[i].URI {
			t.Errorf("attachment %d: %q at %s, want %q at %s", i+1, c.Blob, c.URI, want[i], views[i].URI)
		}
	}
	if res.Contents[1].MIMEType != "image/png" {
		t.Errorf("image type %q", res.Contents[1].MIMEType)
	}
	// Each attachment at its own URI (the one the views give).
	one, err := h.cs.ReadResource(h.ctx, &mcp.ReadResourceParams{URI: views[0].URI})
	if err != nil || len(one.Contents) != 1 || !bytes.Equal(one.Contents[0].Blob, pngBytes) {
		t.Fatalf("attachment resource: %v %+v", err, one)
	}
	if _, err := h.cs.ReadResource(h.ctx, &mcp.ReadResourceParams{URI: fmt.Sprintf("resource://message/%d/attachments/9?project=%s", id, proj)}); err == nil ||
		!strings.Contains(err.Error(), "has no attachment 9") {
		t.Fatalf("missing attachment: %v", err)
	}
	// The file changing later changes nothing: the message keeps what was sent.
	write(filepath.Join(proj, "notes.txt"), []byte("changed"))
	two, err := h.cs.ReadResource(h.ctx, &mcp.ReadResourceParams{URI: views[1].URI})
	if err != nil || string(two.Contents[0].Blob) != "plan: ship it\n" {
		t.Fatalf("stored attachment changed with the file: %v %+v", err, two)
	}
	// Stored bytes are checked against their SHA-256 when read back.
	if _, err := h.db.ExecContext(h.ctx, h.db.Rebind(`UPDATE am_attachments SET data = ? WHERE seq = 2`), []byte("tampered")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.cs.ReadResource(h.ctx, &mcp.ReadResourceParams{URI: views[1].URI}); err == nil {
		t.Fatal("a damaged attachment was served")
	}
}
