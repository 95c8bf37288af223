package approval

import (
	"strings"
	"testing"
)

// TestAccountHashedAndBound: the default account hashes as a request
// without one (a home's first account keeps its files and approvals);
// another account is another request; a file's account must be the call's.
func TestAccountHashedAndBound(t *testing.T) {
	t.Parallel()
	base := Request{Kind: KindSend, To: "a@example.com", Subject: "s", Body: "b"}
	def, work := base, base
	def.Account, work.Account = "default", "work"
	if base.SHA256() != def.SHA256() {
		t.Fatal("the default account changes the hash")
	}
	if base.SHA256() == work.SHA256() {
		t.Fatal("another account hashes as the default")
	}
	for _, tc := range []struct {
		file, call string
		ok         bool
	}{
		{"", "", true}, {"", "default", true}, {"default", "", true}, {"work", "work", true}, {" work ", "work", true},
		{"work", "", false}, {"", "work", false}, {"default", "work", false}, {"Work", "work", false}, {"home", "work", false},
	} {
		req := base
		req.Account = tc.call
		r := accountChange(&parsedFile{fields: fields{Account: tc.file}}, req)
		if (r == "") != tc.ok {
			t.Errorf("file account %q, call %q: %q", tc.file, tc.call, r)
		}
		if r != "" && !strings.Contains(r, "an approval cannot move an email or an action to another Gmail account") {
			t.Errorf("reason %q", r)
		}
	}
	bad := base
	bad.Account = "../x"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "Invalid account") {
		t.Fatalf("an invalid account validates: %v", err)
	}
}
