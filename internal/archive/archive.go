// Package archive keeps a human-readable copy of agent mail in the vault:
// one Markdown file per message with YAML frontmatter, and one digest per
// agent thread, under
//
//	<vault>/AgentMail/<project-slug>/messages/YYYY/MM/<created>__<id>.md
//	<vault>/AgentMail/<project-slug>/threads/<thread>.md
//
// and, for agents and file reservations (state.go),
//
//	<vault>/AgentMail/<project-slug>/agents/<Name>/profile.json
//	<vault>/AgentMail/<project-slug>/file_reservations/<id>.json
//
// (after the reference's messages/YYYY/MM layout), so that a person reads
// and searches agent conversations in the vault where they approve email.
// It is fed by the outbox (internal/outbox, sink "archive"): every message is written
// once it commits, off the agent's call path, and rewritten harmlessly if a
// crash makes the outbox hand it out again.
package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v2"

	"github.com/mailgate/mailgate/internal/outbox"
	"github.com/mailgate/mailgate/internal/store"
)

// SinkName is the archive's outbox name.
const SinkName = "archive"

// Record is a message file's frontmatter.
type Record struct {
	ID          int64    `yaml:"id" json:"id"`
	Project     string   `yaml:"project" json:"project"`
	From        string   `yaml:"from" json:"from"`
	To          []string `yaml:"to" json:"to"`
	CC          []string `yaml:"cc" json:"cc"`
	ThreadID    string   `yaml:"thread_id" json:"thread_id"` // the agent thread (the first message's id when none was named)
	Subject     string   `yaml:"subject" json:"subject"`
	Importance  string   `yaml:"importance" json:"importance"`
	AckRequired bool     `yaml:"ack_required" json:"ack_required"`
	CreatedTS   string   `yaml:"created_ts" json:"created_ts"`
}

// Archive writes under Root/AgentMail.
type Archive struct {
	Root string // the vault
}

func (a *Archive) projectDir(slug string) string {
	return filepath.Join(a.Root, "AgentMail", safeName(slug))
}

// MessagePath is where message m is archived.
func (a *Archive) MessagePath(m *outbox.Message) string {
	t := m.CreatedAt.UTC()
	return filepath.Join(a.projectDir(m.ProjectSlug), "messages", t.Format("2006"), t.Format("01"),
		fmt.Sprintf("%s__%d.md", t.Format("20060102T150405.000000Z"), m.ID))
}

// ThreadPath is the digest of m's agent thread.
func (a *Archive) ThreadPath(m *outbox.Message) string {
	return filepath.Join(a.projectDir(m.ProjectSlug), "threads", safeName(m.ThreadKey)+".md")
}

// Write archives m: its own file, then its entry in the thread digest.
// Both writes are atomic and idempotent, so a repeat after a crash is
// harmless.
func (a *Archive) Write(m *outbox.Message) error {
	if err := writeAtomic(a.MessagePath(m), renderMessage(m)); err != nil {
		return fmt.Errorf("archiving message %d: %w", m.ID, err)
	}
	if err := a.addToDigest(m); err != nil {
		return fmt.Errorf("archiving message %d in its thread digest: %w", m.ID, err)
	}
	return nil
}

func record(m *outbox.Message) Record {
	return Record{ID: m.ID, Project: m.ProjectSlug, From: m.From, To: nonNil(m.To), CC: nonNil(m.CC), ThreadID: m.ThreadKey,
		Subject: m.Subject, Importance: m.Importance, AckRequired: m.AckRequired, CreatedTS: ts(m.CreatedAt)}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// renderMessage is the message file: YAML frontmatter, a blank line, the
// body exactly as the agent wrote it. Every value is written as a JSON
// scalar or flow sequence, which YAML reads back unchanged whatever the
// characters (quotes, colons, newlines, "---").
func renderMessage(m *outbox.Message) []byte {
	var b bytes.Buffer
	r := record(m)
	b.WriteString("---\n")
	field := func(k string, v any) {
		var j bytes.Buffer
		enc := json.NewEncoder(&j)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v) // strings, ints, bools and string slices always encode
		fmt.Fprintf(&b, "%s: %s", k, j.String())
	}
	field("id", r.ID)
	field("project", r.Project)
	field("from", r.From)
	field("to", r.To)
	field("cc", r.CC)
	field("thread_id", r.ThreadID)
	field("subject", r.Subject)
	field("importance", r.Importance)
	field("ack_required", r.AckRequired)
	field("created_ts", r.CreatedTS)
	b.WriteString("---\n\n")
	b.WriteString(m.BodyMD)
	return b.Bytes()
}

// ParseMessage reads a message file back into its frontmatter and body.
func ParseMessage(data []byte) (Record, string, error) {
	var r Record
	// YAML only: a file anyone can edit never reaches the library's TOML
	// parser, which can panic on malformed input.
	rest, err := frontmatter.MustParse(bytes.NewReader(data), &r, frontmatter.NewFormat("---", "---", yaml.Unmarshal))
	if err != nil {
		return Record{}, "", fmt.Errorf("parsing archived message: %w", err)
	}
	body := strings.TrimPrefix(string(rest), "\n")
	return r, body, nil
}

// maxNameBytes bounds a path element the archive makes from a slug or a
// thread id: file systems refuse names over 255 bytes, and the digest's
// lock file adds a few. Thread ids (128) and the slugs of project keys
// within their bound never reach it; a longer one (a project created
// before keys were bounded) is cut and given a hash of the whole, so it
// stays distinct.
const maxNameBytes = 200

// safeName makes s usable as one path element on every platform.
func safeName(s string) string {
	out := safeChars(s)
	if len(out) > maxNameBytes {
		sum := sha256.Sum256([]byte(s))
		out = out[:maxNameBytes-17] + "-" + hex.EncodeToString(sum[:8])
	}
	return out
}

func safeChars(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.TrimLeft(b.String(), ".")
	if out == "" {
		out = "_"
	}
	return out
}

// Sink feeds the archive from the outbox.
type Sink struct {
	Messages outbox.Messages // the agent mail it archives
	Archive  *Archive
	written  func() // called after each message is archived (marks git dirty)
}

// Name implements outbox.Sink.
func (s *Sink) Name() string { return SinkName }

// Process implements outbox.Sink.
func (s *Sink) Process(ctx context.Context, it outbox.Item) (func(context.Context, *sql.Tx) error, error) {
	m, err := outbox.LoadMessage(ctx, s.Messages, it.MessageID)
	if errors.Is(err, outbox.ErrNoMessage) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := s.Archive.Write(m); err != nil {
		if neverWritable(err) {
			return nil, &outbox.PermanentError{Err: err}
		}
		return nil, err
	}
	if s.written != nil {
		s.written()
	}
	return nil, nil
}

// neverWritable reports a write error no retry can cure: the file system
// refuses the name itself (too long, or not a valid name). Anything else (a
// full disk, a permission a person can fix) is retried.
func neverWritable(err error) bool {
	return errors.Is(err, syscall.ENAMETOOLONG) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EILSEQ)
}

// DrainOnStop bounds how long a stopping process keeps archiving what is
// still queued before its last commit.
var DrainOnStop = 10 * time.Second

// Start archives every agent-mail message src reads, and every agent
// profile and file reservation (state.go), into vault until stop
// is called. When the vault folder is the top of a git work tree, the
// archive is also committed in batches (CommitInterval). stop archives every message still
// queued (within DrainOnStop, with a log line when it cannot) and then
// makes the last commit, so a clean stop leaves everything sent archived
// and committed.
func Start(ctx context.Context, db *store.DB, src Source, vault string, o outbox.WorkerOptions) (func() error, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sink := &Sink{Messages: src, Archive: &Archive{Root: vault}}
	if o.DrainOnStop <= 0 {
		o.DrainOnStop = DrainOnStop
	}
	poll := o.Poll
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	if err := openState(ctx, db); err != nil {
		return nil, fmt.Errorf("starting the agent-mail archive: %w", err)
	}
	state := &stateSync{db: db, src: src, archive: sink.Archive}
	git := newCommitter(vault, log)
	sink.written = git.mark
	state.written = git.mark
	stop, err := outbox.Start(ctx, db, sink, 0, o)
	if err != nil {
		git.close()
		return nil, fmt.Errorf("starting the agent-mail archive: %w", err)
	}
	sctx, scancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { state.run(sctx, poll, log) })
	return func() error {
		err := stop()
		scancel()
		wg.Wait()
		// As for messages: what changed before the stop is written (within
		// DrainOnStop) and committed.
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), o.DrainOnStop)
		if serr := state.sync(dctx); serr != nil {
			log.Warn("archive: stopping before every profile and reservation was written; the next mailgate process will finish", "err", serr)
		}
		dcancel()
		git.close()
		return err
	}, nil
}

// Source is what the archive reads: messages and their threads, agents
// and reservations (*agentmail.Service).
type Source interface {
	outbox.Messages
	State
}
