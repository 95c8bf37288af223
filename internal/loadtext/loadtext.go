// Package loadtext writes the messages and searches of the agent-mail load
// (cmd/mailgate-load), so that a benchmark of one engine
// (internal/agentmail/sqlite) times the same shapes the HTTP load sends.
package loadtext

import (
	"fmt"
	"math/rand/v2"
)

// The text of messages mixes a few common words with many identifiers, as
// agents' notes about code do, so that searches have realistic selectivity:
// a common word matches a large share of the store (answered from its most
// recent matches), an identifier (cache42) or a ticket tag (t042) matches a
// few dozen messages (ranked by bm25). With common words alone every search
// would be a broad one, and the load would measure that path only.
var words = []string{"deploy", "migration", "schema", "review", "build", "test", "flaky", "release", "api", "docs",
	"frontend", "backend", "cache", "index", "query", "latency", "timeout", "retry", "token", "config",
	"refactor", "parser", "handler", "router", "storage", "metrics", "tracing", "lint", "fixture", "rollback"}

const (
	tickets = 500 // distinct ticket tags, t000 … t499
	idents  = 100 // identifiers per word: cache0 … cache99, 3,000 in all
)

// Text draws words, messages and queries from rng (not safe for
// concurrent use: one per client).
type Text struct{ rng *rand.Rand }

// New is the Text of rng.
func New(rng *rand.Rand) Text { return Text{rng} }

// Word is one of the common words.
func (t Text) Word() string { return words[t.rng.IntN(len(words))] }

// Ident is an identifier: a common word and a number (cache42).
func (t Text) Ident() string { return fmt.Sprintf("%s%d", t.Word(), t.rng.IntN(idents)) }

// Message is a short Markdown message about a ticket, in one of a few
// threads per ticket: its subject, body and thread id. step numbers the
// writer's messages.
func (t Text) Message(step int) (subject, body, thread string) {
	ticket := t.rng.IntN(tickets)
	body = fmt.Sprintf("Working on t%03d: `%s` needs a %s before the %s.\n\n- [ ] %s `%s`\n- [x] %s `%s`\n\nSee `internal/%s/%s.go` (step %d).",
		ticket, t.Ident(), t.Word(), t.Word(), t.Word(), t.Ident(), t.Word(), t.Ident(), t.Word(), t.Ident(), step)
	return fmt.Sprintf("[t%03d] %s %s", ticket, t.Word(), t.Ident()), body, fmt.Sprintf("T-%03d", ticket)
}

// Query is a search of the shapes search_messages documents: half of them
// selective (a ticket tag, an identifier, two identifiers), half broad (a
// common word, alone or in the subject).
func (t Text) Query() string {
	switch t.rng.IntN(6) {
	case 0:
		return fmt.Sprintf("t%03d", t.rng.IntN(tickets))
	case 1:
		return t.Ident()
	case 2:
		return t.Ident() + " OR " + t.Ident()
	case 3, 4:
		return t.Word()
	default:
		return "subject:" + t.Word()
	}
}
