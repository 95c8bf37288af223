package testutil

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// BenchWords is the vocabulary of the agent-mail benchmarks' messages:
// twenty words agents write, then fillers (w0020x …) up to 2,000 words, so
// that a Zipf draw over it gives queries realistic numbers of matches.
func BenchWords() []string {
	words := []string{"deploy", "migration", "schema", "review", "build", "test", "flaky", "release", "api", "docs",
		"frontend", "backend", "cache", "index", "query", "latency", "timeout", "retry", "token", "config"}
	for i := len(words); i < 2000; i++ {
		words = append(words, fmt.Sprintf("w%04dx", i))
	}
	return words
}

// ZipfText returns a maker of k-word texts drawn from BenchWords by a Zipf
// law (s 1.1), seeded: the same seeds make the same texts. It is not safe
// for concurrent use (one per goroutine).
func ZipfText(seed1, seed2 uint64) func(k int) string {
	words := BenchWords()
	zipf := rand.NewZipf(rand.New(rand.NewPCG(seed1, seed2)), 1.1, 1, uint64(len(words)-1))
	return func(k int) string {
		var sb strings.Builder
		for i := range k {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[zipf.Uint64()])
		}
		return sb.String()
	}
}
