package agentmail

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mailgate/mailgate/internal/testutil"
)

func TestAgentMailNormalizePattern(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, root, want string }{
		{"src/main.py", "", "src/main.py"},
		{"./src//a.py", "", "src/a.py"},
		{`src\win\a.py`, "", "src/win/a.py"},
		{"/abs/repo/src/**", "/abs/repo", "src/**"},
		{"/abs/repo", "/abs/repo", "**"},
		{"/src/x", "/abs/repo", "src/x"},
		{"", "", "**"},
		{"tool://build", "", "tool://build"},
	}
	for _, c := range cases {
		if got := NormalizePattern(c.in, c.root); got != c.want {
			t.Errorf("NormalizePattern(%q, %q) = %q, want %q", c.in, c.root, got, c.want)
		}
	}
}

func TestAgentMailPatternMatch(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pat, path string
		want      bool
	}{
		{"src/main.py", "src/main.py", true},
		{"src/main.py", "src/main.pyc", false},
		{"src", "src/a/b.go", true}, // a directory covers its contents
		{"src/", "src/a.go", true},
		{"src", "lib/src/a.go", false},  // bare names are anchored at the root
		{"*.py", "lib/deep/x.py", true}, // wildcards without / match at any depth
		{"*.py", "x.py", true},
		{"*.py", "x.pyc", false},
		{"src/*.py", "src/a.py", true},
		{"src/*.py", "src/sub/a.py", false},
		{"src/*", "src/sub/a.py", true},
		{"src/**", "src/a/b/c.txt", true},
		{"src/**/test_*.py", "src/a/b/test_x.py", true},
		{"src/**/test_*.py", "src/test_x.py", true},
		{"file?.txt", "file1.txt", true},
		{"file?.txt", "file12.txt", false},
		{"[abc].go", "b.go", true},
		{"[!abc].go", "b.go", false},
		{"[a-c]x", "cx", true},
		{"[unclosed", "[unclosed", true},
		{"**", "anything/at/all", true},
		{"tool://build", "tool://build", true},
		{"tool://build", "build", false},
	}
	for _, c := range cases {
		if got := CompilePattern(c.pat).Match(c.path); got != c.want {
			t.Errorf("%q.Match(%q) = %v, want %v", c.pat, c.path, got, c.want)
		}
	}
}

// TestOverlapBothDirections: overlap is decided on the patterns, the same
// whichever is the requested one and whichever is held.
func TestAgentMailOverlapBothDirections(t *testing.T) {
	t.Parallel()
	cases := []struct {
		a, b string
		want bool
	}{
		{"src/main.py", "src/main.py", true},
		{"src/main.py", "src/util.py", false},
		{"src/**", "src/main.py", true},
		{"src/**", "src/*.py", true},
		{"src/*.py", "src/a*.py", true},
		{"src/*.py", "src/*.go", false},
		{"*.py", "lib/**", true},
		{"*.py", "*.md", false},
		{"src", "src/api/handler.go", true},
		{"src", "lib", false},
		{"docs/*.md", "README.md", false},
		{"apps/web/src/**", "apps/*/src/index.ts", true},
		{"apps/web/**", "apps/api/**", false},
		{"a/**/z.txt", "a/b/c/*.txt", true},
		{"a/**/z.txt", "a/b/c/*.md", false},
		{"**/test_*.py", "tests/test_a.py", true},
		{"test_[ab].py", "test_c.py", false},
		{"test_[ab].py", "test_?.py", true},
		{"x*y", "*z", false},
		{"x*y", "*y", true},
		{"**", "anything", true},
		{"tool://build", "tool://build", true},
		{"tool://build", "**", false},
	}
	for _, c := range cases {
		a, b := CompilePattern(c.a), CompilePattern(c.b)
		if got, back := Overlap(a, b), Overlap(b, a); got != c.want || back != c.want {
			t.Errorf("Overlap(%q, %q) = %v, reverse %v; want %v", c.a, c.b, got, back, c.want)
		}
	}
}

// TestOverlapSound cross-checks Overlap against brute force: whenever some
// concrete path matches both random patterns, Overlap must say so, and when
// Overlap says so for simple patterns, a witness usually exists among the
// sampled paths (checked only for soundness: no false "no overlap").
// 3,000 pairs in make test, 500 in a quick run (testutil.Size): each pair
// is matched against 2,800 paths.
func TestAgentMailOverlapSound(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	segs := []string{"a", "b", "ab", "*", "a*", "*b", "?", "**", "[ab]", "x.py", "*.py"}
	names := []string{"a", "b", "ab", "ba", "x.py", "y.py", "c"}
	randPat := func() string {
		n := 1 + rng.IntN(3)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = segs[rng.IntN(len(segs))]
		}
		return strings.Join(parts, "/")
	}
	var paths []string
	var gen func(prefix string, depth int)
	gen = func(prefix string, depth int) {
		if depth == 0 {
			return
		}
		for _, n := range names {
			p := n
			if prefix != "" {
				p = prefix + "/" + n
			}
			paths = append(paths, p)
			gen(p, depth-1)
		}
	}
	gen("", 4)
	for range testutil.Size(500, 3000) {
		pa, pb := randPat(), randPat()
		a, b := CompilePattern(pa), CompilePattern(pb)
		witness := ""
		for _, p := range paths {
			if a.Match(p) && b.Match(p) {
				witness = p
				break
			}
		}
		if witness != "" && !Overlap(a, b) {
			t.Fatalf("Overlap(%q, %q) = false, but both match %q", pa, pb, witness)
		}
		if Overlap(a, b) != Overlap(b, a) {
			t.Fatalf("Overlap(%q, %q) is not symmetric", pa, pb)
		}
	}
}

func BenchmarkOverlap(b *testing.B) {
	held := CompilePattern("apps/web/src/**/components/*.tsx")
	req := CompilePattern("apps/*/src/**/Button.tsx")
	for b.Loop() {
		Overlap(req, held)
	}
}
