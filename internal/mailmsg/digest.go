package mailmsg

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
)

// An approval must bind everything that leaves, not only what the
// approver reads: the text part they read, the HTML part they are told
// about, and every attachment by name, type, size and content. Digest
// gives each a SHA-256 and one canonical sum over all of them, computed on
// the values Build writes (sanitized attachment names, resolved types), so
// a part changed after the approval changes the sum.

// AttachmentSum is what an approval binds of one attachment.
type AttachmentSum struct {
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"` // hex
}

// ContentDigest binds a message's parts.
type ContentDigest struct {
	TextSHA256  string          `json:"text_sha256"`
	HTMLSHA256  string          `json:"html_sha256,omitempty"` // "" when there is no HTML part
	Attachments []AttachmentSum `json:"attachments,omitempty"`
	// SHA256 is the canonical sum over all of the above (hex).
	SHA256 string `json:"sha256"`
}

// Digest returns the content digest of o: its text part, its HTML part and
// each attachment, in order. Line ends are normalised to LF first, as Build
// normalises them to CRLF: two bodies that go out the same digest the same.
// Recipients, subject and threading headers are not included; the approval
// binds those itself.
func Digest(o Outgoing) (ContentDigest, error) {
	o, err := prepare(o)
	if err != nil {
		return ContentDigest{}, err
	}
	d := ContentDigest{TextSHA256: sumHex([]byte(normalizeEOL(o.Body)))}
	if o.HTML != "" {
		d.HTMLSHA256 = sumHex([]byte(normalizeEOL(o.HTML)))
	}
	for _, a := range o.Attachments {
		d.Attachments = append(d.Attachments, AttachmentSum{
			Name: a.Name, ContentType: a.ContentType, Size: int64(len(a.Data)), SHA256: sumHex(a.Data),
		})
	}
	// Canonical form: every field length-prefixed, so no two digests can
	// be spliced into the same byte stream.
	h := sha256.New()
	field := func(h hash.Hash, k, v string) { fmt.Fprintf(h, "%s %d:%s\n", k, len(v), v) }
	field(h, "v", "mailgate-content-1")
	field(h, "text", d.TextSHA256)
	field(h, "html", d.HTMLSHA256)
	field(h, "attachments", fmt.Sprint(len(d.Attachments)))
	for _, a := range d.Attachments {
		field(h, "name", a.Name)
		field(h, "type", a.ContentType)
		field(h, "size", fmt.Sprint(a.Size))
		field(h, "sha256", a.SHA256)
	}
	d.SHA256 = hex.EncodeToString(h.Sum(nil))
	return d, nil
}

func sumHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func normalizeEOL(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}
