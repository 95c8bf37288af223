package mailboxset

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
)

// Importing a four-tool system's mailbox. The original keeps its store in
// .agentmail/ at the git root: mailboxes/<window>.jsonl holds one JSON
// object per message ({id, from, to, message, read_flag, created_at}; id is
// 8 base62 characters), recipients.jsonl one object per agent ({recipient,
// status, updated_at, notified_at, last_read_at}). Import brings both into
// the store once: every message becomes mailbox mail (unread stays
// unread, so `receive` pops it in its original order), every status is
// kept unless the agent already has one here. Each message is recorded by
// its mailbox and original id, so a second import adds nothing.

// FileMessage is one line of .agentmail/mailboxes/<name>.jsonl.
type FileMessage struct {
	ID        string    `json:"id"`
	From      string    `json:"from"`
	To        string    `json:"to"`
	Message   string    `json:"message"`
	ReadFlag  bool      `json:"read_flag"`
	CreatedAt time.Time `json:"created_at"`
}

// FileRecipient is one line of .agentmail/recipients.jsonl.
type FileRecipient struct {
	Recipient  string    `json:"recipient"`
	Status     string    `json:"status"`
	UpdatedAt  time.Time `json:"updated_at"`
	NotifiedAt time.Time `json:"notified_at"`
	LastReadAt int64     `json:"last_read_at,omitempty"`
}

// Export is a parsed .agentmail/ directory.
type Export struct {
	Dir        string                   // the .agentmail directory read
	Mailboxes  map[string][]FileMessage // by mailbox (file) name, in file order
	Recipients []FileRecipient
}

// Bounds of an import: a line is one message (the original refuses
// messages over 64 KiB only on its MCP side, so allow more), and a
// mailbox name is a tmux window name.
const (
	maxImportLine    = 4 << 20
	maxMailboxName   = 256
	mailboxIDMaxSize = 64
)

// ParseMessage parses and checks one mailbox line.
func ParseMessage(line []byte) (FileMessage, error) {
	var m FileMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&m); err != nil {
		return FileMessage{}, fmt.Errorf("not a mailbox message: %w", err)
	}
	if dec.More() {
		return FileMessage{}, errors.New("not a mailbox message: more than one JSON value on the line")
	}
	switch {
	case strings.TrimSpace(m.ID) == "" || len(m.ID) > mailboxIDMaxSize:
		return FileMessage{}, fmt.Errorf("message id %q: want 1 to %d characters", m.ID, mailboxIDMaxSize)
	case validMailboxName(m.From) != nil:
		return FileMessage{}, fmt.Errorf("message %s: from: %w", m.ID, validMailboxName(m.From))
	case m.To != "" && validMailboxName(m.To) != nil:
		return FileMessage{}, fmt.Errorf("message %s: to: %w", m.ID, validMailboxName(m.To))
	}
	return m, nil
}

// ParseRecipient parses and checks one recipients.jsonl line.
func ParseRecipient(line []byte) (FileRecipient, error) {
	var r FileRecipient
	if err := json.Unmarshal(line, &r); err != nil {
		return FileRecipient{}, fmt.Errorf("not a recipient state: %w", err)
	}
	if err := validMailboxName(r.Recipient); err != nil {
		return FileRecipient{}, fmt.Errorf("recipient: %w", err)
	}
	switch r.Status {
	case Ready, Work, Offline:
	default:
		return FileRecipient{}, fmt.Errorf("recipient %s: status %q is not ready, work or offline", r.Recipient, r.Status)
	}
	return r, nil
}

func validMailboxName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("empty name")
	case len(name) > maxMailboxName:
		return fmt.Errorf("name of %d bytes; the limit is %d", len(name), maxMailboxName)
	case strings.ContainsAny(name, "\x00\n\r/"):
		return fmt.Errorf("name %q has a control character or a slash", name)
	}
	return nil
}

// ReadDir reads a .agentmail directory: dir is either it or the
// directory holding it (the original's git root). Every line must parse:
// an import is all of a mailbox or an error naming the file and line.
func ReadDir(dir string) (Export, error) {
	root := dir
	if fi, err := os.Stat(filepath.Join(dir, ".agentmail")); err == nil && fi.IsDir() {
		root = filepath.Join(dir, ".agentmail")
	}
	boxes := filepath.Join(root, "mailboxes")
	entries, err := os.ReadDir(boxes)
	if err != nil {
		return Export{}, fmt.Errorf("reading %s: %w (want a .agentmail directory, or the directory holding it)", boxes, err)
	}
	out := Export{Dir: root, Mailboxes: map[string][]FileMessage{}}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() {
			continue
		}
		if err := validMailboxName(name); err != nil {
			return Export{}, fmt.Errorf("%s: %w", e.Name(), err)
		}
		path := filepath.Join(boxes, e.Name())
		var msgs []FileMessage
		err := readJSONL(path, func(line []byte) error {
			m, err := ParseMessage(line)
			if err == nil && m.To != "" && m.To != name {
				err = fmt.Errorf("message %s is to %q but stored in %s's mailbox", m.ID, m.To, name)
			}
			msgs = append(msgs, m)
			return err
		})
		if err != nil {
			return Export{}, err
		}
		out.Mailboxes[name] = msgs
	}
	err = readJSONL(filepath.Join(root, "recipients.jsonl"), func(line []byte) error {
		r, err := ParseRecipient(line)
		out.Recipients = append(out.Recipients, r)
		return err
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Export{}, err
	}
	return out, nil
}

// readJSONL calls each with every non-blank line of path; its error is
// reported with the file and line number.
func readJSONL(path string, each func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := readBoundedLine(r, maxImportLine)
		if len(bytes.TrimSpace(line)) > 0 {
			if perr := each(line); perr != nil {
				return fmt.Errorf("%s:%d: %w", path, n, perr)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
}

func readBoundedLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, fmt.Errorf("line longer than %d bytes", max)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// ImportResult counts what an import did.
type ImportResult struct {
	Imported int // messages added
	Unread   int // of which unread
	Skipped  int // messages imported before
	Statuses int // statuses set (agents with none here yet)
}

// Import brings a parsed mailbox into the project, once: messages already
// imported (same mailbox, same original id) are skipped. Each mailbox is
// one transaction, its messages in file order, so receive pops unread mail
// oldest first as the original would.
func (m *Set) Import(ctx context.Context, exp Export) (ImportResult, error) {
	var res ImportResult
	if err := m.project.Ensure(ctx, m.s, m.projectKey); err != nil {
		return res, err // even an empty import names its project
	}
	for _, box := range slices.Sorted(maps.Keys(exp.Mailboxes)) {
		var one ImportResult
		err := m.inProject(ctx, true, func(tx Tx, p agentmail.Project) error {
			one = ImportResult{}
			now := m.s.Now()
			for _, fm := range exp.Mailboxes[box] {
				fresh, err := tx.ClaimMailboxImport(ctx, p.ID, box, fm.ID)
				if err != nil {
					return err
				}
				if !fresh {
					one.Skipped++
					continue
				}
				at := fm.CreatedAt
				if at.IsZero() || at.After(now) {
					at = now
				}
				msg, err := deliver(ctx, tx, p, fm.From, box, fm.Message, at, now)
				if err != nil {
					return err
				}
				one.Imported++
				if fm.ReadFlag {
					if err := tx.SetRead(ctx, msg.ID, msg.Recipients[0].AgentID, now); err != nil {
						return err
					}
				} else {
					one.Unread++
				}
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("importing %s's mailbox: %w", box, err)
		}
		res.Imported, res.Unread, res.Skipped = res.Imported+one.Imported, res.Unread+one.Unread, res.Skipped+one.Skipped
	}
	if len(exp.Recipients) == 0 {
		return res, nil
	}
	err := m.inProject(ctx, true, func(tx Tx, p agentmail.Project) error {
		res.Statuses = 0
		for _, r := range exp.Recipients {
			a, err := agentmail.EnsureCompatAgent(ctx, tx, p, r.Recipient, Program, m.s.Now())
			if err != nil {
				return err
			}
			if _, err := tx.MailboxState(ctx, a.ID); err == nil {
				continue // this store's own status is newer than any import
			} else if !errors.Is(err, agentmail.ErrNotFound) {
				return err
			}
			at := r.UpdatedAt
			if at.IsZero() {
				at = m.s.Now()
			}
			if err := tx.SetMailboxStatus(ctx, a.ID, r.Status, at, false); err != nil {
				return err
			}
			if !r.NotifiedAt.IsZero() {
				if err := tx.SetMailboxNotified(ctx, a.ID, r.NotifiedAt); err != nil {
					return err
				}
			}
			res.Statuses++
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("importing recipient states: %w", err)
	}
	return res, nil
}
