package mcpserver

import (
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"regexp"
	"testing"
)

// TestSentEmailIsTheOneRequested: the email is built once per call, with
// the Message-ID its request file names, from the attachment bytes the
// request binds; after approval, those are what Gmail gets.
func TestSentEmailIsTheOneRequested(t *testing.T) {
	t.Parallel()
	e, _ := attachEnv(t)
	args := map[string]any{"to": "alice@example.com", "subject": "Report", "body": "Attached.\n", "attachments": []any{"report.txt"}}
	_, file := request(t, e, "send_email", args)
	id := regexp.MustCompile(`\noutgoing_message_id: "(<[^"]+>)"\n`).FindStringSubmatch(readVault(t, e, "Pending_Approval", file))
	if id == nil {
		t.Fatalf("no outgoing_message_id in the request file:\n%s", readVault(t, e, "Pending_Approval", file))
	}
	approveAndResend(t, e, "send_email", file, args)
	m, _ := delivered(t, e)
	if got := m.Header.Get("Message-ID"); got != id[1] {
		t.Fatalf("sent with Message-ID %q, the request names %q", got, id[1])
	}
	_, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	if _, err := mr.NextPart(); err != nil {
		t.Fatal(err)
	}
	p, err := mr.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(base64.NewDecoder(base64.StdEncoding, p)); string(b) != "Q3 numbers: 42\n" {
		t.Fatalf("attachment %q", b)
	}
}
