package mcpserver

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var attachmentLineRe = regexp.MustCompile(`Attachment \d+: (\S+) \| ([^|]+) \| ([^|]+) \| attachment_id: (\S+)\n`)

// firstID is the first message id in a search_email answer.
func firstID(t *testing.T, e *emailEnv, query string) string {
	t.Helper()
	text, isErr := callTool(t, e.cs, "search_email", map[string]any{"query": query})
	m := messageIDRe.FindStringSubmatch(text)
	if isErr || m == nil {
		t.Fatalf("search %q: %q", query, text)
	}
	return m[1]
}

// TestReadEmailListsAttachments: read_email lists every attachment with its
// id, name, type and size, inside the fence; a message without attachments
// gets no such line.
func TestReadEmailListsAttachments(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, true)
	id := firstID(t, e, `subject:"Travel documents for Lisbon"`)
	text, isErr := callTool(t, e.cs, "read_email", map[string]any{"message_id": id})
	if isErr {
		t.Fatal(text)
	}
	got := attachmentLineRe.FindAllStringSubmatch(text, -1)
	if len(got) != 3 {
		t.Fatalf("want 3 attachment lines, got %d in %q", len(got), text)
	}
	for i, want := range [][2]string{{"itinerary.txt", "text/plain"}, {"boarding-pass.pdf", "application/pdf"}, {"venue-map.png", "image/png"}} {
		if got[i][1] != want[0] || strings.TrimSpace(got[i][2]) != want[1] {
			t.Errorf("attachment %d = %q %q, want %v", i+1, got[i][1], got[i][2], want)
		}
	}
	if strings.Index(text, "Attachment 1:") > strings.Index(text, "--- END UNTRUSTED") {
		t.Fatal("attachment names outside the fence")
	}
	id = firstID(t, e, `subject:"Lunch"`)
	if text, _ := callTool(t, e.cs, "read_email", map[string]any{"message_id": id}); strings.Contains(text, "Attachment 1:") {
		t.Fatalf("a message without attachments lists one: %q", text)
	}
}

// TestGetAttachment: small text inline (fenced), a PDF saved under the
// downloads folder at the answered absolute path with the right bytes,
// never overwriting, save: true saves text too, unknown ids refused.
func TestGetAttachment(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, true)
	id := firstID(t, e, `subject:"Travel documents for Lisbon"`)
	text, _ := callTool(t, e.cs, "read_email", map[string]any{"message_id": id})
	files := attachmentLineRe.FindAllStringSubmatch(text, -1)
	if len(files) != 3 {
		t.Fatalf("attachments: %q", text)
	}
	txt, pdf := files[0][4], files[1][4]

	text, isErr := callTool(t, e.cs, "get_attachment", map[string]any{"message_id": id, "attachment_id": txt})
	if isErr || !strings.Contains(text, "fly to Lisbon (LIS)") || !strings.Contains(text, "--- BEGIN UNTRUSTED EMAIL CONTENT") || strings.Contains(text, "saved;") {
		t.Fatalf("text attachment not inline: (%v) %q", isErr, text)
	}
	dir := e.deps.Downloads.Dir
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("inline text wrote into downloads: %v", err)
	}

	var paths []string
	for range 2 {
		text, isErr = callTool(t, e.cs, "get_attachment", map[string]any{"message_id": id, "attachment_id": pdf})
		if isErr {
			t.Fatalf("pdf: (%v) %q", isErr, text)
		}
		paths = append(paths, savedPath(t, text))
	}
	if paths[0] != filepath.Join(dir, "boarding-pass.pdf") || paths[1] != filepath.Join(dir, "boarding-pass-2.pdf") {
		t.Fatalf("saved to %v (dir %s)", paths, dir)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil || !bytes.HasPrefix(data, []byte("%PDF-1.4")) {
		t.Fatalf("saved pdf: %v %.20q", err, data)
	}

	text, isErr = callTool(t, e.cs, "get_attachment", map[string]any{"message_id": id, "attachment_id": txt, "save": true})
	if isErr || savedPath(t, text) != filepath.Join(dir, "itinerary.txt") {
		t.Fatalf("save: true: (%v) %q", isErr, text)
	}

	// Over the cap: refused before the bytes are fetched, and the sizes said.
	e.deps.Downloads.MaxBytes = 100
	before := e.gm.TotalCalls()
	text, isErr = callTool(t, e.cs, "get_attachment", map[string]any{"message_id": id, "attachment_id": pdf})
	if !isErr || !strings.Contains(text, "over the 100 bytes download limit; not saved") {
		t.Fatalf("over the cap: (%v) %q", isErr, text)
	}
	if calls := e.gm.TotalCalls() - before; calls != 1 {
		t.Fatalf("over the cap: %d Gmail calls, want 1 (the message only)", calls)
	}
	e.deps.Downloads.MaxBytes = 0

	// No home, no saving: never a folder relative to the server's directory.
	e.deps.Downloads.Dir = "downloads"
	if text, isErr := callTool(t, e.cs, "get_attachment", map[string]any{"message_id": id, "attachment_id": pdf}); !isErr || !strings.Contains(text, "no downloads folder") {
		t.Fatalf("relative downloads folder: (%v) %q", isErr, text)
	}
	if _, isErr := callTool(t, e.cs, "get_attachment", map[string]any{"message_id": id, "attachment_id": txt}); isErr {
		t.Fatal("inline text refused without a downloads folder")
	}
	e.deps.Downloads.Dir = dir

	for _, args := range []map[string]any{
		{"message_id": id, "attachment_id": "nope"},
		{"message_id": id, "attachment_id": "../../etc/passwd"},
		{"message_id": "0123456789abcdef", "attachment_id": pdf},
		{"message_id": id, "attachment_id": ""},
	} {
		if text, isErr := callTool(t, e.cs, "get_attachment", args); !isErr || !strings.HasPrefix(text, "Error: ") {
			t.Errorf("%v: (%v) %q", args, isErr, text)
		}
	}
}

// savedPath is the path get_attachment answers, from inside its fence (the
// path holds the sender's file name).
func savedPath(t *testing.T, text string) string {
	t.Helper()
	inside, _ := fencedSpan(t, text, "ATTACHMENT PATH")
	return strings.TrimSuffix(inside, "\n")
}
