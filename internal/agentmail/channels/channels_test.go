package channels

import (
	"regexp"
	"testing"
)

// TestChannelsNormalizeClaimPath: claims are on exact paths, so every
// spelling of one file must normalise to one key (the reference strips
// "./", cleans and uses "/"), and project-absolute paths become relative.
func TestChannelsNormalizeClaimPath(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"a/b.go", "a/b.go"},
		{"./a/b.go", "a/b.go"},
		{"././a//b.go", "a/b.go"},
		{`a\b.go`, "a/b.go"},
		{"a/x/../b.go", "a/b.go"},
		{"/proj/a/b.go", "a/b.go"}, // under the project root
		{"  a/b.go ", "a/b.go"},
		{"", ""},
		{".", ""},
		{"./", ""},
	} {
		if got := NormalizeClaimPath(c.in, "/proj"); got != c.want {
			t.Errorf("NormalizeClaimPath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestChannelsNewUUID: agent ids are random version-4 UUIDs.
func TestChannelsNewUUID(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := NewUUID()
		if !re.MatchString(id) || seen[id] {
			t.Fatalf("bad or repeated uuid %q", id)
		}
		seen[id] = true
	}
}
