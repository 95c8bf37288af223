package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// Deferred full-text indexing (migrations/0004_fts_deferred.sql): storing a
// message only queues it in am_fts_pending; the queue is indexed in batches
//
//   - by the process that stored it, indexDelay after its commit (so a burst
//     of sends costs one FTS5 flush, not one per send), and when its Store
//     closes;
//   - by any search, before it reads, when a queued message may match its
//     query (IndexPendingFor, called by agentmail.Service.Search; see
//     queued.go), so a search sees every message stored before it began,
//     by whichever process.
//
// A process killed before indexing leaves its messages queued, not lost: the
// next search or indexer run of any process indexes them. (FTS5's
// 'integrity-check' against the messages counts queued ones as missing from
// the index: run IndexPending before it.)
//
// Each indexing transaction flushes one small segment; FTS5 does not merge
// segments on writes here (automerge 0, migrations/0008_fts_prefix.sql), so
// a search bringing the index up to date never waits for a merge. The
// indexer merges them instead, after it indexed, in short transactions of
// their own (mergeSegments), keeping the index at a few segments a level
// as live sends add them.

// indexDelay is how long new messages gather before the indexer takes them.
// Nothing waits for it (searches index the queue themselves); it only sets
// the batch size: ~100 messages a transaction at 2,000 sends a second.
const indexDelay = 50 * time.Millisecond

// indexChunk bounds the messages indexed in one transaction, so a backlog
// never holds the write lock long.
const indexChunk = 2000

// closeIndexTimeout bounds the last indexing run when a Store closes; what
// it leaves stays queued for the next process.
const closeIndexTimeout = 2 * time.Second

type indexer struct {
	mu      sync.Mutex
	started bool
	stopped bool
	delay   time.Duration
	kick    chan struct{} // capacity 1: kicks while one is pending merge
	stop    chan struct{}
	done    chan struct{}
}

func newIndexer() *indexer {
	return &indexer{delay: indexDelay, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// indexSoon asks for the queue to be indexed indexDelay from now, starting
// the indexer on the first call (a Store that never stores a message never
// runs one).
func (s *Store) indexSoon() {
	s.idx.mu.Lock()
	if s.idx.stopped {
		s.idx.mu.Unlock()
		return
	}
	if !s.idx.started {
		s.idx.started = true
		go s.runIndexer()
	}
	s.idx.mu.Unlock()
	select {
	case s.idx.kick <- struct{}{}:
	default:
	}
}

func (s *Store) runIndexer() {
	defer close(s.idx.done)
	for {
		select {
		case <-s.idx.kick:
		case <-s.idx.stop:
			return
		}
		wait := time.NewTimer(s.idx.delay)
		select {
		case <-wait.C:
		case <-s.idx.stop:
			wait.Stop()
			return
		}
		if err := s.IndexPending(context.Background()); err != nil {
			s.log.Warn("indexing new messages for search failed; the next search or send retries", "err", err)
		}
		if err := s.mergeSegments(context.Background(), s.idx.stop); err != nil {
			s.log.Warn("merging the full-text index's segments failed; the next indexer run retries", "err", err)
		}
	}
}

// mergePages is the work of one merge transaction: about this many pages
// written (FTS5's 'merge' command), a few milliseconds, so sends waiting
// for the write lock wait little.
const mergePages = 128

// mergeSegments merges the full-text index's segments, one transaction of
// mergePages at a time, until FTS5 has nothing to merge (no level holds
// 'usermerge', 4, segments) or stop is closed.
func (s *Store) mergeSegments(ctx context.Context, stop <-chan struct{}) error {
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		var worked bool
		err := s.write(ctx, func(t *tx) error {
			var before, after int64
			if err := t.QueryRow(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
				return err
			}
			if _, err := t.exec(ctx, `INSERT INTO am_messages_fts(am_messages_fts, rank) VALUES ('merge', ?)`, mergePages); err != nil {
				return err
			}
			if err := t.QueryRow(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
				return err
			}
			// FTS5's documented test: fewer than two changes, no merge.
			worked = after-before >= 2
			return nil
		})
		if err != nil || !worked {
			return err
		}
	}
}

// stopIndexer stops the indexer and, when this Store queued messages,
// indexes what is still queued.
func (s *Store) stopIndexer() {
	s.idx.mu.Lock()
	started := s.idx.started && !s.idx.stopped
	s.idx.stopped = true
	s.idx.mu.Unlock()
	if !started {
		return
	}
	close(s.idx.stop)
	<-s.idx.done
	ctx, cancel := context.WithTimeout(context.Background(), closeIndexTimeout)
	defer cancel()
	if err := s.IndexPending(ctx); err != nil {
		s.log.Warn("indexing new messages for search at close failed; they stay queued for the next process", "err", err)
	}
}

// IndexPending indexes every queued message, in transactions of at most
// indexChunk messages. With nothing queued it only reads, taking no write
// lock. Having indexed, it leaves the merging of the new segments to the
// indexer (started if need be).
func (s *Store) IndexPending(ctx context.Context) error {
	indexed := false
	defer func() {
		if indexed {
			s.indexSoon()
		}
	}()
	for {
		queued, err := s.queued(ctx)
		if err != nil {
			return fmt.Errorf("indexing new messages: %w", err)
		}
		if !queued {
			return nil
		}
		var n int64
		err = s.Write(ctx, func(x agentmail.Tx) (err error) {
			n, err = x.(*tx).indexQueued(ctx)
			return err
		})
		if err != nil {
			return fmt.Errorf("indexing new messages: %w", err)
		}
		indexed = indexed || n > 0
		if n < indexChunk {
			return nil
		}
	}
}

// queued reports whether a message waits in the queue.
func (s *Store) queued(ctx context.Context) (bool, error) {
	rows, err := s.queryDB(ctx, `SELECT 1 FROM am_fts_pending LIMIT 1`)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	return rows.Next(), rows.Err()
}

// indexQueued moves the oldest indexChunk queued messages into the
// full-text index and returns how many it moved.
func (t *tx) indexQueued(ctx context.Context) (int64, error) {
	row, err := t.queryRow(ctx, `SELECT max(message_id) FROM (SELECT message_id FROM am_fts_pending ORDER BY message_id LIMIT ?)`, indexChunk)
	if err != nil {
		return 0, err
	}
	var last sql.NullInt64
	if err := row.Scan(&last); err != nil || !last.Valid {
		return 0, err
	}
	if _, err := t.exec(ctx, `INSERT INTO am_messages_fts (rowid, subject, body_md)
		SELECT m.id, m.subject, m.body_md FROM am_fts_pending p JOIN am_messages m ON m.id = p.message_id
		WHERE p.message_id <= ? ORDER BY p.message_id`, last.Int64); err != nil {
		return 0, err
	}
	// The delete also writes the messages to am_fts_batch (a trigger), whose
	// words then join the index's word list (see Search's prefixes).
	res, err := t.exec(ctx, `DELETE FROM am_fts_pending WHERE message_id <= ?`, last.Int64)
	if err != nil {
		return 0, err
	}
	if _, err := t.exec(ctx, `INSERT OR IGNORE INTO am_fts_terms (term) SELECT term FROM am_fts_batch_terms`); err != nil {
		return 0, err
	}
	if _, err := t.exec(ctx, `INSERT INTO am_fts_batch (am_fts_batch) VALUES ('delete-all')`); err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
