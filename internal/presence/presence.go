// Package presence records in the state store which mailgate servers are
// running and what each would do with an approval: whether it sends for real
// (DEV_MODE), its send limit, its approval mode, its vault.
//
// It exists because the person approving an email reads the terminal, and
// the terminal's own settings say nothing reliable about the server that
// will act on the approval: that server was started by an MCP client, with
// the client's environment. A terminal once printed "DEV_MODE is on … send
// nothing" while the server, started with DEV_MODE=false, sent the email on
// the next call. So each server writes a row when it starts, refreshes its
// heartbeat every Interval, and deletes the row when it stops cleanly; a
// reader (mailgate approvals) trusts only rows whose heartbeat is fresh
// (StaleAfter) and, on the same host, whose process still exists. When no
// row is live, the reader says it cannot know, rather than guess.
package presence

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/mailgate/mailgate/internal/store"
)

//go:embed migrations
var migrations embed.FS

const (
	// Interval is how often a running server refreshes its heartbeat.
	Interval = 15 * time.Second
	// StaleAfter is how old a heartbeat may be before its server is taken
	// for gone (killed, or its host asleep): three missed beats.
	StaleAfter = 3 * Interval
	// forgetAfter is when a stale row is deleted by the next server to
	// start: long enough to show "last seen" for a while, short enough that
	// the table stays small.
	forgetAfter = 24 * time.Hour
)

// Server is one running server's row.
type Server struct {
	ID           string
	PID          int
	Host         string
	Started      time.Time
	Heartbeat    time.Time
	DevMode      bool
	SendLimit    int    // per hour
	ApprovalMode string // content | recipient
	Vault        string // absolute path of the vault it reads approvals from
	Transport    string // stdio | http
	Tools        string // MAILGATE_TOOLS, comma-separated
	Mailbox      string // "gmail", "sandbox", or the Gmail API endpoint it was pointed at
	Version      string
}

// Options tune Register; the zero value is what serve uses.
type Options struct {
	Interval time.Duration    // default Interval
	Now      func() time.Time // default time.Now
	Logger   *slog.Logger     // default slog.Default()
}

// Registration is a running server's row, kept fresh until Close.
type Registration struct {
	db      *store.DB
	id      string
	now     func() time.Time
	stop    chan struct{}
	done    chan struct{}
	closing sync.Once
}

// Migrate creates the presence table in db if needed.
func Migrate(ctx context.Context, db *store.DB) error {
	if err := db.MigrateDialect(ctx, "presence", migrations, "migrations"); err != nil {
		return fmt.Errorf("presence: %w", err)
	}
	return nil
}

// Register writes s as a running server (its ID, PID, Host, Started and
// Heartbeat are filled in here) and refreshes its heartbeat in the
// background until Close.
func Register(ctx context.Context, db *store.DB, s Server, o Options) (*Registration, error) {
	if o.Interval <= 0 {
		o.Interval = Interval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if err := Migrate(ctx, db); err != nil {
		return nil, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("presence: %w", err)
	}
	s.ID = hex.EncodeToString(b[:])
	s.PID = os.Getpid()
	s.Host, _ = os.Hostname()
	now := o.Now()
	s.Started, s.Heartbeat = now, now
	err := db.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, db.Rebind(`DELETE FROM presence_servers WHERE heartbeat_ms < ?`), now.Add(-forgetAfter).UnixMilli()); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, db.Rebind(`INSERT INTO presence_servers
			(id, pid, host, started_ms, heartbeat_ms, dev_mode, send_limit, approval_mode, vault, transport, tools, mailbox, version)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			s.ID, s.PID, s.Host, now.UnixMilli(), now.UnixMilli(), store.Flag(s.DevMode), s.SendLimit, s.ApprovalMode,
			s.Vault, s.Transport, s.Tools, s.Mailbox, s.Version)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("presence: recording this server: %w", err)
	}
	r := &Registration{db: db, id: s.ID, now: o.Now, stop: make(chan struct{}), done: make(chan struct{})}
	go r.beat(o.Interval, o.Logger)
	return r, nil
}

// ID is the row's id.
func (r *Registration) ID() string { return r.id }

func (r *Registration) beat(every time.Duration, logger *slog.Logger) {
	defer close(r.done)
	t := time.NewTicker(every)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		_, err := r.db.ExecContext(ctx, r.db.Rebind(`UPDATE presence_servers SET heartbeat_ms = ? WHERE id = ?`), r.now().UnixMilli(), r.id)
		cancel()
		switch {
		case err != nil && !failing:
			logger.Warn("presence: refreshing this server's heartbeat in the store failed; mailgate approvals may report it gone", "err", err)
			failing = true
		case err == nil && failing:
			logger.Info("presence: heartbeat refreshed again")
			failing = false
		}
	}
}

// Close stops the heartbeat and deletes the row: a server that stopped
// cleanly is gone at once. A second call does nothing.
func (r *Registration) Close() error {
	var err error
	r.closing.Do(func() {
		close(r.stop)
		<-r.done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, e := r.db.ExecContext(ctx, r.db.Rebind(`DELETE FROM presence_servers WHERE id = ?`), r.id); e != nil {
			err = fmt.Errorf("presence: removing this server's row: %w", e)
		}
	})
	return err
}

// Live returns the servers whose heartbeat is fresh at now, oldest first.
// A row from this host whose process no longer exists is left out at once:
// a server killed a second ago is not "running".
func Live(ctx context.Context, db *store.DB, now time.Time) ([]Server, error) {
	if err := Migrate(ctx, db); err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, db.Rebind(`SELECT id, pid, host, started_ms, heartbeat_ms, dev_mode, send_limit,
		approval_mode, vault, transport, tools, mailbox, version
		FROM presence_servers WHERE heartbeat_ms > ? ORDER BY started_ms, id`), now.Add(-StaleAfter).UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("presence: listing servers: %w", err)
	}
	out, err := store.Collect(rows, func(row store.Scanner) (Server, error) {
		var s Server
		var started, beat, dev, limit, pid int64
		err := row.Scan(&s.ID, &pid, &s.Host, &started, &beat, &dev, &limit, &s.ApprovalMode, &s.Vault,
			&s.Transport, &s.Tools, &s.Mailbox, &s.Version)
		s.PID, s.SendLimit, s.DevMode = int(pid), int(limit), dev != 0
		s.Started, s.Heartbeat = time.UnixMilli(started), time.UnixMilli(beat)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("presence: listing servers: %w", err)
	}
	// A server of this host whose process is gone left without saying so.
	host, _ := os.Hostname()
	return slices.DeleteFunc(out, func(s Server) bool { return s.Host == host && !ProcessExists(s.PID) }), nil
}
