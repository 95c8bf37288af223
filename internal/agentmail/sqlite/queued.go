package sqlite

import (
	"context"
	"fmt"
	"unicode"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// A search must see every message stored before it began, and a stored
// message waits in am_fts_pending until an indexer takes it (indexer.go).
// Indexing the queue before each search keeps that promise but puts a
// write transaction (and its flush) on the read path of every search made
// while messages arrive. Most searches cannot match any of the few queued
// messages, though, and that can be decided without the index: so a search
// reads the queue first, and indexes it only when a queued message may
// match the query, or the queue is too long to read.

// maxQueueCheck bounds the queued messages a search reads itself; a longer
// queue (an indexer that is not keeping up, or a process killed before it
// indexed) is indexed instead.
const maxQueueCheck = 256

// IndexPendingFor brings the full-text index up to date for a search of q:
// it indexes the queue (IndexPending) unless no queued message may match q.
func (s *Store) IndexPendingFor(ctx context.Context, q *agentmail.QueryNode) error {
	rows, err := s.queryDB(ctx, `SELECT m.subject, m.body_md FROM am_fts_pending p JOIN am_messages m ON m.id = p.message_id
		ORDER BY p.message_id LIMIT ?`, maxQueueCheck+1)
	if err != nil {
		return fmt.Errorf("reading the full-text queue: %w", err)
	}
	defer rows.Close()
	var pieces [][][]byte // each term's pieces, read once
	n := 0
	for rows.Next() {
		if n++; n > maxQueueCheck {
			rows.Close()
			return s.IndexPending(ctx)
		}
		var subject, body string
		if err := rows.Scan(&subject, &body); err != nil {
			return fmt.Errorf("reading the full-text queue: %w", err)
		}
		if pieces == nil {
			for _, t := range q.Terms() {
				pieces = append(pieces, termPieces(t.Text))
			}
		}
		text := foldQueued(subject + " " + body)
		term := 0
		if mayMatch(q, text, pieces, &term) {
			rows.Close()
			return s.IndexPending(ctx)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading the full-text queue: %w", err)
	}
	return nil
}

// mayMatch reports whether FTS5 may match q against a message whose text,
// folded by foldQueued, is text: never false when FTS5 would match (a
// false true only costs an indexing run). pieces are the term pieces of q
// in the order of q.Terms, term the index of the next term.
//
// It is FTS5 made coarse: a term (word, prefix or phrase) may match when
// each of its pieces occurs somewhere in the text, in either field; NOT
// keeps its left side only.
func mayMatch(n *agentmail.QueryNode, text []byte, pieces [][][]byte, term *int) bool {
	switch n.Op {
	case agentmail.QueryTerm:
		ps := pieces[*term]
		*term++
		for _, p := range ps {
			if !containsFolded(text, p) {
				return false
			}
		}
		return true
	case agentmail.QueryAnd:
		l := mayMatch(n.Left, text, pieces, term)
		r := mayMatch(n.Right, text, pieces, term)
		return l && r
	case agentmail.QueryOr:
		l := mayMatch(n.Left, text, pieces, term)
		r := mayMatch(n.Right, text, pieces, term)
		return l || r
	default: // QueryNot: the exclusion can only remove matches
		l := mayMatch(n.Left, text, pieces, term)
		mayMatch(n.Right, text, pieces, term) // keeps term in step
		return l
	}
}

// anyRune stands, in folded text, for a character FTS5 may fold to any
// letter (é to e): it matches every byte of a piece.
const anyRune = 0

// foldQueued folds a message's text for mayMatch. FTS5's tokenizer here
// (unicode61, remove_diacritics 2) makes tokens of letters and digits,
// folds their case and strips diacritics; its ASCII folding is plain lower
// case. So ASCII letters and digits are kept lower-cased, other ASCII
// characters separate words, combining marks (which FTS5 drops from a
// token) go, and every other character becomes anyRune.
func foldQueued(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r < 0x80:
			out = append(out, foldASCII(byte(r)))
		case unicode.Is(unicode.Mn, r):
		default:
			out = append(out, anyRune)
		}
	}
	return out
}

func foldASCII(c byte) byte {
	switch {
	case 'A' <= c && c <= 'Z':
		return c + 'a' - 'A'
	case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		return c
	}
	return ' '
}

// termPieces splits a term's text into the runs of ASCII letters and
// digits (lower-cased) that any text it matches contains: a character
// FTS5 could fold to one of them (é) or that may separate its tokens ends a
// piece, and a combining mark is skipped.
func termPieces(s string) [][]byte {
	var pieces [][]byte
	var cur []byte
	for _, r := range s {
		if r >= 0x80 && unicode.Is(unicode.Mn, r) {
			continue
		}
		if r < 0x80 {
			if c := foldASCII(byte(r)); c != ' ' {
				cur = append(cur, c)
				continue
			}
		}
		if len(cur) > 0 {
			pieces = append(pieces, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		pieces = append(pieces, cur)
	}
	return pieces
}

// containsFolded reports whether piece occurs in text, an anyRune of text
// matching any byte.
func containsFolded(text, piece []byte) bool {
	for i := 0; i+len(piece) <= len(text); i++ {
		j := 0
		for j < len(piece) && (text[i+j] == piece[j] || text[i+j] == anyRune) {
			j++
		}
		if j == len(piece) {
			return true
		}
	}
	return false
}
