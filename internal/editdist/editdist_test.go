package editdist

import "testing"

func TestLevenshtein(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"DEVMODE", "DEV_MODE", 1},
		{"recieve", "receive", 2}, {"GreenDgo", "GreenDog", 2}, {"kitten", "sitting", 3}, {"same", "same", 0},
	} {
		if got := Levenshtein(c.a, c.b); got != c.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Levenshtein(c.b, c.a); got != c.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d (not symmetric)", c.b, c.a, got, c.want)
		}
	}
}
