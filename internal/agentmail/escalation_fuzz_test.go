package agentmail

import (
	"slices"
	"strings"
	"testing"
)

func TestReservablePaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"I am changing `src/auth.go` and `tests/*.py`.", []string{"src/auth.go", "tests/*.py"}},
		{"see `README.md`, `README.md` again", []string{"README.md"}},
		{"src/auth.go in prose is not taken", nil},
		{"`make test`, `go`, `https://x.test/a`, `--force`, `f()`, `../up/x.go`, `$HOME/x`", nil},
		{"```\ncode/block.go\n```", nil},
		{"`a/b.go` and `c.d`", []string{"a/b.go", "c.d"}},
	} {
		if got := ReservablePaths(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("ReservablePaths(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// FuzzReservablePaths: whatever an agent writes, the paths taken are code
// spans of the text that a reservation accepts, at most maxEscalationPaths.
func FuzzReservablePaths(f *testing.F) {
	for _, s := range []string{"`src/a.go`", "`a b`", "``", "`x/**`\n`y`", "`\u200bsrc/x`", "`/abs/x.go`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := ReservablePaths(text)
		if len(got) > maxEscalationPaths {
			t.Fatalf("%d paths", len(got))
		}
		for _, p := range got {
			if !strings.Contains(text, "`"+p+"`") && !strings.Contains(text, p) {
				t.Fatalf("%q is not in the text", p)
			}
			if p == "" || strings.ContainsAny(p, " \t\n`") || patternProblem(p) != "" || len(p) > maxPatternBytes {
				t.Fatalf("%q taken", p)
			}
		}
	})
}
