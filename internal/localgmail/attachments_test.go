package localgmail

import (
	"encoding/base64"
	"strings"
	"testing"

	"google.golang.org/api/gmail/v1"
)

// attachMessage has a 600-byte attachment (stored apart, with an id) and a
// 20-byte one (small: inline, no id).
func attachMessage() []byte {
	big := strings.Repeat("0123456789", 60)
	return []byte("From: Alice <alice@example.com>\r\nTo: me@sandbox.local\r\nSubject: files\r\n" +
		"Message-ID: <files@example.com>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: text/plain\r\n\r\nsee the files\r\n" +
		"--b\r\nContent-Type: text/csv; name=big.csv\r\nContent-Disposition: attachment; filename=big.csv\r\n\r\n" + big + "\r\n" +
		"--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=small.bin\r\n\r\nsmall attachment xx\r\n" +
		"--b--\r\n")
}

// attachmentIDs collects every body.attachmentId of a payload, by part id.
func attachmentIDs(p *gmail.MessagePart, out map[string]string) map[string]string {
	if p.Body != nil && p.Body.AttachmentId != "" {
		out[p.PartId] = p.Body.AttachmentId
	}
	for _, c := range p.Parts {
		attachmentIDs(c, out)
	}
	return out
}

// TestAttachmentIDs: Gmail gives a part a new attachmentId on every read of
// the message (messages.get, threads.get, drafts.get), and every id it
// gave stays usable with messages.attachments.get; small attachments come
// inline in body.data with no id (MessagePartBody, see mime.go's render).
func TestAttachmentIDs(t *testing.T) {
	t.Parallel()
	s, svc := newService(t, Options{})
	ins := mustInsert(t, s, attachMessage(), "INBOX")
	get := func() *gmail.Message {
		t.Helper()
		m, err := svc.Users.Messages.Get("me", ins.Id).Do()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	first, second := get(), get()
	th, err := svc.Users.Threads.Get("me", ins.ThreadId).Do()
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, m := range []*gmail.Message{first, second, th.Messages[0]} {
		ids := attachmentIDs(m.Payload, map[string]string{})
		if len(ids) != 1 || ids["1"] == "" {
			t.Fatalf("want one attachmentId, on part 1 (big.csv): %v", ids)
		}
		for _, old := range seen {
			if old == ids["1"] {
				t.Errorf("attachmentId %s handed out twice: Gmail's change on every read", old)
			}
		}
		seen = append(seen, ids["1"])
	}
	for _, id := range seen { // every id ever given stays usable
		b, err := svc.Users.Messages.Attachments.Get("me", ins.Id, id).Do()
		if err != nil {
			t.Fatalf("attachments.get with an earlier id: %v", err)
		}
		data, _ := base64.RawURLEncoding.DecodeString(b.Data)
		if b.Size != 600 || string(data) != strings.Repeat("0123456789", 60) {
			t.Errorf("attachment: size %d data %.20q…", b.Size, data)
		}
	}
	small := first.Payload.Parts[2]
	data, _ := base64.RawURLEncoding.DecodeString(small.Body.Data)
	if small.Filename != "small.bin" || small.Body.AttachmentId != "" || string(data) != "small attachment xx" || small.Body.Size != 19 {
		t.Errorf("small attachment not inline: %+v body %+v", small, small.Body)
	}
	// an id of another message, a made-up one: refused
	other := mustInsert(t, s, attachMessage(), "INBOX")
	_, err = svc.Users.Messages.Attachments.Get("me", other.Id, seen[0]).Do()
	wantAPIError(t, err, 400, "invalidArgument", "Invalid attachment token")
	_, err = svc.Users.Messages.Attachments.Get("me", ins.Id, "ANGjdJbogus").Do()
	wantAPIError(t, err, 400, "invalidArgument", "Invalid attachment token")

	t.Run("InlineMax -1 gives every attachment an id", func(t *testing.T) {
		s, svc := newService(t, Options{InlineMax: -1})
		ins := mustInsert(t, s, attachMessage(), "INBOX")
		m, err := svc.Users.Messages.Get("me", ins.Id).Do()
		if err != nil {
			t.Fatal(err)
		}
		if ids := attachmentIDs(m.Payload, map[string]string{}); len(ids) != 2 || ids["2"] == "" {
			t.Errorf("ids %v", ids)
		}
	})
}
