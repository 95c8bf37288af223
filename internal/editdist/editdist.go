// Package editdist measures how far apart two short names are, for the
// "did you mean" of refusals (an unknown agent, setting or command).
package editdist

// Levenshtein is the edit distance of a and b in bytes (the names compared
// are ASCII): the fewest insertions, deletions and substitutions that turn
// a into b.
func Levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
