package mcpserver

import (
	"strings"
	"testing"
)

// FuzzOrganiseInputs: what an agent hands back as ids and page tokens is
// either refused or passed on as something that can go into a Gmail URL
// path or query without escaping surprises: never a control character, a
// space, a slash or a quote.
func FuzzOrganiseInputs(f *testing.F) {
	for _, s := range []string{"", "18c2f0a1b2c3d4e5", "r-1234567890", "../x", "a b", "tok\r\n", "CAUQAA", strings.Repeat("x", 600), "\u202e", "\"q\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if id, err := gmailID("message_id", s); err == nil {
			if id == "" || len(id) > 128 || strings.ContainsAny(id, "/ \"%?#\r\n\t") {
				t.Fatalf("gmailID accepted %q as %q", s, id)
			}
		}
		if checkPageToken(s) == nil {
			for _, r := range s {
				if r < 0x21 || r > 0x7e {
					t.Fatalf("page token %q accepted with %U", s, r)
				}
			}
			if len(s) > maxPageToken {
				t.Fatalf("page token of %d bytes accepted", len(s))
			}
		}
		ids, thread, err := messagesOrThread(strings.Split(s, ","), "")
		if err == nil && (thread != "" || len(ids) == 0) {
			t.Fatalf("messagesOrThread(%q) = %v %q", s, ids, thread)
		}
	})
}
