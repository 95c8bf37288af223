package agentmail

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// searchWindow bounds the match set ranked by bm25 (see Search).
const searchWindow = 200

// RankRecent orders recent matches by weighted occurrences of the query's
// words (a subject hit counts three), newest first among equals, and keeps
// the first limit. It reads only ID, Subject and BodyMD.
//
// It runs on every broad search (searchWindow messages), so it sorts small
// (score, id, index) keys rather than the Messages themselves (moving a
// Message is a large copy with write barriers), and lowercases ASCII text
// into one reused buffer instead of a new string per field. Ties are
// broken by the unique ID, so the order is the same whatever the sort.
func RankRecent(ms []Message, terms []string, limit int) []Message {
	lower := make([][]byte, len(terms))
	for i, t := range terms {
		lower[i] = []byte(strings.ToLower(t))
	}
	type key struct {
		score int
		id    int64
		at    int
	}
	keys := make([]key, len(ms))
	var buf []byte
	for i, m := range ms {
		var subj, body []byte
		subj, buf = lowered(m.Subject, buf[:0])
		n := 0
		for _, t := range lower {
			n += 3 * bytes.Count(subj, t)
		}
		body, buf = lowered(m.BodyMD, buf[:0])
		for _, t := range lower {
			n += bytes.Count(body, t)
		}
		keys[i] = key{score: n, id: m.ID, at: i}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(b.id, a.id)
	})
	if len(keys) > limit {
		keys = keys[:limit]
	}
	out := make([]Message, len(keys))
	for i, k := range keys {
		out[i] = ms[k.at]
	}
	return out
}

// lowered is strings.ToLower(s) as bytes: for ASCII text written into buf
// (returned for reuse, as the result shares it), otherwise ToLower's own.
func lowered(s string, buf []byte) (low, reuse []byte) {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return []byte(strings.ToLower(s)), buf
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf, buf
}

// SearchParams are search_messages's inputs.
type SearchParams struct {
	ProjectKey string
	Query      string
	Limit      int    // 0 = 20; at most 1000
	Agent      string // optional viewer: only mail this agent sent or received
}

// pendingIndexer is a Store whose full-text index trails its writes (the
// SQLite store indexes new messages in batches after they commit). Search
// brings the index up to date for its query first, so it sees every
// message stored before it began, whichever process stored it.
type pendingIndexer interface {
	IndexPendingFor(ctx context.Context, q *QueryNode) error
}

// Search finds messages of a project by full text, best match first. Odd
// queries are repaired (see ParseQuery) and, should the engine still refuse
// one, answered with a plain LIKE search; both are reported in diagnostics.
// A query is never a protocol error.
//
// Relevance is bm25 when the query matches at most searchWindow messages.
// A query matching more (a common word in a large store) is answered from
// its searchWindow most recent matches, ranked by how often the query's
// words occur (subject first): bm25 over such a match set reads whole
// posting lists and costs hundreds of milliseconds, and in a busy mailbox
// the recent matches are the ones wanted.
func (s *Service) Search(ctx context.Context, p SearchParams) (SearchResult, error) {
	limit := listLimit(p.Limit)
	match, notes := ParseQuery(p.Query)
	if ix, ok := s.st.(pendingIndexer); ok && match != nil {
		if err := ix.IndexPendingFor(ctx, match); err != nil {
			s.log.Warn("bringing the full-text index up to date before a search failed; searching what is indexed", "err", err)
			notes = append(notes, "the newest messages may be missing: the full-text index could not be brought up to date")
		}
	}
	out := SearchResult{Result: []SearchHit{}}
	// No snapshot needed: the copies were written with their messages.
	err := s.readEach(ctx, func(tx Tx) error {
		proj, err := s.project(ctx, tx, p.ProjectKey)
		if err != nil {
			return err
		}
		q := SearchQuery{ProjectID: proj.ID, Match: match, Terms: LikeTerms(p.Query), Limit: limit, Window: searchWindow}
		if strings.TrimSpace(p.Agent) != "" {
			a, err := s.knownAgent(ctx, tx, proj, p.Agent)
			if err != nil {
				return err
			}
			q.ViewerID = a.ID
		}
		if match == nil {
			if strings.TrimSpace(p.Query) != "" {
				out.Diagnostics = &SearchDiagnostics{Query: p.Query, Mode: "none", Notes: append(notes, "nothing searchable in the query")}
			}
			return nil
		}
		mode := "fts"
		ms, ranked, err := tx.Search(ctx, q)
		if err == nil && !ranked {
			ms = RankRecent(ms, q.Terms, limit)
		}
		if err != nil {
			s.log.Warn("full-text search failed; falling back to LIKE", "query", match.String(), "err", err)
			mode, q.Match = "like", nil
			notes = append(notes, "the full-text index refused the query; used a plain substring search")
			if len(q.Terms) == 0 {
				ms, err = nil, nil
			} else {
				ms, _, err = tx.Search(ctx, q)
			}
			if err != nil {
				return err
			}
		}
		if len(notes) > 0 {
			out.Diagnostics = &SearchDiagnostics{Query: p.Query, FTSQuery: match.String(), Mode: mode, Notes: notes}
		}
		if err := s.withRecipients(ctx, tx, ms); err != nil {
			return err
		}
		for _, m := range ms {
			pl := messagePayload(m, false)
			ack := 0
			if m.AckRequired {
				ack = 1
			}
			out.Result = append(out.Result, SearchHit{ID: m.ID, Subject: m.Subject, Importance: string(m.Importance), AckRequired: ack,
				CreatedTS: ts(m.CreatedAt), ThreadID: strOrNil(m.ThreadID), From: m.SenderName, To: pl.To, CC: pl.CC})
		}
		return nil
	})
	if err != nil {
		return SearchResult{}, fmt.Errorf("searching messages: %w", err)
	}
	return out, nil
}
