package mcpserver

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/api/gmail/v1"
)

// Gmail gives an attachment a new attachmentId on every read of its message
// (the local server does the same: localgmail's TestAttachmentIDs). These
// tests hold get_attachment and forward_email to it.

// gmailAttachmentIDs reads message id straight from the local server and
// returns its attachmentIds by file name: a read of its own, so new ids.
func gmailAttachmentIDs(t *testing.T, e *emailEnv, id string) map[string]string {
	t.Helper()
	m, ok := e.gm.Message(id)
	if !ok {
		t.Fatalf("no message %s", id)
	}
	out := map[string]string{}
	var walk func(p *gmail.MessagePart)
	walk = func(p *gmail.MessagePart) {
		if p.Filename != "" && p.Body != nil && p.Body.AttachmentId != "" {
			out[p.Filename] = p.Body.AttachmentId
		}
		for _, c := range p.Parts {
			walk(c)
		}
	}
	walk(m.Payload)
	return out
}

// TestGetAttachmentWithPerReadIDs: read_email's attachment_id is the same
// on every read although Gmail's ids change; get_attachment finds the file
// by it after further reads; a Gmail attachmentId from an earlier read
// still fetches the file, named from the message by its size.
func TestGetAttachmentWithPerReadIDs(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, true)
	id := firstID(t, e, `subject:"Travel documents for Lisbon"`)
	var handles [][]string
	for range 2 {
		text, _ := callTool(t, e.cs, "read_email", map[string]any{"message_id": id})
		files := attachmentLineRe.FindAllStringSubmatch(text, -1)
		if len(files) != 3 {
			t.Fatalf("attachments: %q", text)
		}
		handles = append(handles, []string{files[0][4], files[1][4], files[2][4]})
	}
	if strings.Join(handles[0], " ") != strings.Join(handles[1], " ") || handles[0][1] != "part:2" {
		t.Fatalf("attachment_id changes between reads: %v", handles)
	}
	before, after := gmailAttachmentIDs(t, e, id), gmailAttachmentIDs(t, e, id)
	if before["boarding-pass.pdf"] == "" || before["boarding-pass.pdf"] == after["boarding-pass.pdf"] {
		t.Fatalf("the server does not change attachment ids per read: %v %v", before, after)
	}

	want, err := os.ReadFile("../sandbox/testdata/mailbox/19-travel-attachments.eml")
	if err != nil {
		t.Fatal(err)
	}
	pdf := sandboxAttachment(t, want, "boarding-pass.pdf")
	dir := e.deps.Downloads.Dir
	for i, ref := range []string{handles[0][1], before["boarding-pass.pdf"]} {
		text, isErr := callTool(t, e.cs, "get_attachment", map[string]any{"message_id": id, "attachment_id": ref})
		if isErr {
			t.Fatalf("get_attachment %s: (%v) %q", ref, isErr, text)
		}
		path := savedPath(t, text)
		wantPath := filepath.Join(dir, "boarding-pass.pdf")
		if i == 1 {
			wantPath = filepath.Join(dir, "boarding-pass-2.pdf")
		}
		got, err := os.ReadFile(path)
		if path != wantPath || err != nil || !bytes.Equal(got, pdf) {
			t.Fatalf("get_attachment %s: saved to %s (want %s), %d bytes, %v", ref, path, wantPath, len(got), err)
		}
	}
	// the small PNG comes inline (no Gmail id at all): its handle works too
	text, isErr := callTool(t, e.cs, "get_attachment", map[string]any{"message_id": id, "attachment_id": handles[0][2]})
	if isErr || savedPath(t, text) != filepath.Join(dir, "venue-map.png") {
		t.Fatalf("inline png: (%v) %q", isErr, text)
	}
	if _, ok := after["venue-map.png"]; ok {
		t.Fatal("the PNG has a Gmail attachment id; the test wants one sent inline")
	}
}

// sandboxAttachment decodes file name out of a sandbox .eml.
func sandboxAttachment(t *testing.T, eml []byte, name string) []byte {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(eml))
	if err != nil {
		t.Fatal(err)
	}
	_, params, _ := mime.ParseMediaType(m.Header.Get("Content-Type"))
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("no %s in the sandbox message: %v", name, err)
		}
		if p.FileName() == name {
			return partBytes(p)
		}
	}
}

// partBytes reads a part, undoing base64.
func partBytes(p *multipart.Part) []byte {
	b, _ := io.ReadAll(p)
	if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "base64") {
		b, _ = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(b)), ""))
	}
	return b
}

// TestForwardWithPerReadIDs: forward_email reads the message (new ids) on
// the request and again after approval, and each time fetches the files by
// the ids of that read: all three attachments (two stored apart, one
// inline) arrive byte for byte.
func TestForwardWithPerReadIDs(t *testing.T) {
	t.Parallel()
	e := newSandboxEnv(t, false)
	id := firstID(t, e, `subject:"Travel documents for Lisbon"`)
	args := map[string]any{"message_id": id, "to": "tom@example.org"}
	_, file := request(t, e, "forward_email", args)
	gmailAttachmentIDs(t, e, id) // one more read in between: every id changes again
	approveAndResend(t, e, "forward_email", file, args)
	m, _ := delivered(t, e)
	eml, err := os.ReadFile("../sandbox/testdata/mailbox/19-travel-attachments.eml")
	if err != nil {
		t.Fatal(err)
	}
	_, params, _ := mime.ParseMediaType(m.Header.Get("Content-Type"))
	mr := multipart.NewReader(m.Body, params["boundary"])
	var got []string
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		if p.FileName() == "" {
			continue
		}
		if !bytes.Equal(partBytes(p), sandboxAttachment(t, eml, p.FileName())) {
			t.Errorf("%s: forwarded bytes differ", p.FileName())
		}
		got = append(got, p.FileName())
	}
	if strings.Join(got, ",") != "itinerary.txt,boarding-pass.pdf,venue-map.png" {
		t.Fatalf("forwarded attachments %v", got)
	}
}
