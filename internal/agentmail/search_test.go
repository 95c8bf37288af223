package agentmail

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// rankRecentReference is RankRecent as first written: a map of scores and
// a stable sort of the Messages themselves. RankRecent must order as it.
func rankRecentReference(ms []Message, terms []string, limit int) []Message {
	lower := make([]string, len(terms))
	for i, t := range terms {
		lower[i] = strings.ToLower(t)
	}
	score := make(map[int64]int, len(ms))
	for _, m := range ms {
		subj, body := strings.ToLower(m.Subject), strings.ToLower(m.BodyMD)
		n := 0
		for _, t := range lower {
			n += 3*strings.Count(subj, t) + strings.Count(body, t)
		}
		score[m.ID] = n
	}
	sort.SliceStable(ms, func(i, j int) bool {
		if score[ms[i].ID] != score[ms[j].ID] {
			return score[ms[i].ID] > score[ms[j].ID]
		}
		return ms[i].ID > ms[j].ID
	})
	if len(ms) > limit {
		ms = ms[:limit]
	}
	return ms
}

// TestRankRecentAsReference ranks random windows (ASCII and not, mixed
// case, words that lowercase to other lengths) as the reference does.
func TestRankRecentAsReference(t *testing.T) {
	words := []string{"Deploy", "deploy", "DEPLOY", "cache42", "Cache4", "ÉCOLE", "école", "ǅemal", "İstanbul", "ßtraße", "K", "k", "migra", "a"}
	rng := rand.New(rand.NewPCG(1, 2))
	text := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteString([]string{" ", "-", ", ", "`"}[rng.IntN(4)])
		}
		return b.String()
	}
	for round := range 300 {
		n := rng.IntN(60)
		ms := make([]Message, n)
		for i := range ms {
			ms[i] = Message{ID: int64(rng.IntN(1000)*1000 + i), Subject: text(rng.IntN(4)), BodyMD: text(rng.IntN(30))}
		}
		terms := []string{words[rng.IntN(len(words))]}
		if rng.IntN(2) == 0 {
			terms = append(terms, words[rng.IntN(len(words))])
		}
		limit := 1 + rng.IntN(25)
		want := rankRecentReference(slices.Clone(ms), terms, limit)
		got := RankRecent(slices.Clone(ms), terms, limit)
		if fmt.Sprint(ids(got)) != fmt.Sprint(ids(want)) {
			t.Fatalf("round %d, terms %q, limit %d: got %v, want %v", round, terms, limit, ids(got), ids(want))
		}
	}
}

func ids(ms []Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// BenchmarkRankRecent ranks a broad search's window of 200 messages;
// BenchmarkRankRecentReference does so with the old code, for comparison.
func BenchmarkRankRecent(b *testing.B)          { benchRank(b, RankRecent) }
func BenchmarkRankRecentReference(b *testing.B) { benchRank(b, rankRecentReference) }

func benchRank(b *testing.B, rank func([]Message, []string, int) []Message) {
	ms := make([]Message, searchWindow)
	for i := range ms {
		ms[i] = Message{ID: int64(i + 1), Subject: fmt.Sprintf("[t%03d] Deploy cache%d", i%500, i%100),
			BodyMD: strings.Repeat(fmt.Sprintf("Working on t%03d: `cache%d` needs a review before the Release. ", i, i%7), 3)}
	}
	b.ReportAllocs()
	for b.Loop() {
		rank(slices.Clone(ms), []string{"deploy"}, 20)
	}
}
