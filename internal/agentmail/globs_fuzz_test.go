package agentmail

import (
	"strings"
	"testing"
)

// TestPatternMatchManyDoubleStars: a pattern with many "**" against a deep
// path. Matching by backtracking took 4.9 s for 12 of them and grows
// exponentially; with 40 this test would not finish. The automaton answers
// at once.
func TestPatternMatchManyDoubleStars(t *testing.T) {
	t.Parallel()
	p := CompilePattern(strings.Repeat("**/a/", 40) + "b.go")
	if p.Match(strings.Repeat("a/", 60) + "c.go") {
		t.Error("matched a path that does not end in b.go")
	}
	if !p.Match(strings.Repeat("a/", 60) + "b.go") {
		t.Error("did not match 60 a/ then b.go")
	}
	if p.Match(strings.Repeat("a/", 39) + "b.go") {
		t.Error("matched a path with too few a/ segments")
	}
}

// backtrackMatch is the straightforward matcher, kept as the fuzz oracle
// for Match: every way of splitting the path at each "**".
func backtrackMatch(segs []segment, parts []string) bool {
	if len(segs) == 0 {
		return len(parts) == 0
	}
	if segs[0].any {
		for k := 0; k <= len(parts); k++ {
			if backtrackMatch(segs[1:], parts[k:]) {
				return true
			}
		}
		return false
	}
	return len(parts) > 0 && segs[0].matches(parts[0]) && backtrackMatch(segs[1:], parts[1:])
}

// FuzzPatternOverlap reads reservation patterns as agents write them. For
// any two patterns and a path: nothing panics; Match agrees with the
// backtracking oracle; Overlap is symmetric; and if the path matches both
// patterns, Overlap must report the conflict (a missed conflict lets two
// agents edit the same file).
func FuzzPatternOverlap(f *testing.F) {
	for _, s := range [][3]string{
		{"src/**", "src/*.py", "src/a/b.py"},
		{"*.py", "lib/**", "lib/x.py"},
		{"apps/web/src/**/components/*.tsx", "apps/*/src/**/Button.tsx", "apps/web/src/ui/components/Button.tsx"},
		{"[!a-c]?/**", "d*/x", "dd/x"},
		{"tool://build", "tool://build", "tool://build"},
		{"./a//b/", "/a/b/c", "a/b/c"},
		{"[", "[]]", "]"},
		{"**/**/x", "x/**", "x/x"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, ra, rb, path string) {
		if len(ra) > 256 || len(rb) > 256 || len(path) > 256 {
			return
		}
		a, b := compile(NormalizePattern(ra, "")), compile(NormalizePattern(rb, ""))
		ma, mb := a.Match(path), b.Match(path)
		if !a.exact && strings.Count(ra, "**") <= 3 {
			if want := backtrackMatch(a.segs, pathParts(path)); ma != want {
				t.Fatalf("compile(%q).Match(%q) = %v, the oracle says %v", ra, path, ma, want)
			}
		}
		ov := Overlap(a, b)
		if ov != Overlap(b, a) {
			t.Fatalf("Overlap(%q, %q) is not symmetric", ra, rb)
		}
		if ma && mb && !ov {
			t.Fatalf("Overlap(%q, %q) = false, but both match %q", ra, rb, path)
		}
	})
}

// pathParts splits a path as Match does.
func pathParts(path string) []string {
	var parts []string
	for _, s := range strings.Split(NormalizePattern(path, ""), "/") {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return parts
}
