// Package audit writes mailgate's append-only audit log: one JSON object per
// line, one file per UTC day, in a directory shared by every mailgate process
// on the machine.
//
// The log is evidence, so it is written the boring way. Each entry is encoded
// in memory and handed to the kernel in ONE write(2) on a descriptor opened
// with O_APPEND, then fsynced before Record returns: an entry that Record
// acknowledged is wholly in the file and survives a crash. The one partial
// line possible is a writer's killed in the middle of its write (Linux may
// stop a write between pages on SIGKILL): the next Record ends it with a
// newline first, so it never swallows a whole entry, and ReadFile names it. O_APPEND makes every write land at the current end of file even when
// several processes append at once; an exclusive flock around write+fsync
// additionally keeps long lines from interleaving on filesystems where large
// appends are not atomic. Nothing is ever rewritten or truncated
// (the original implementation re-wrote a JSON array per entry and could lose
// the whole day on a crash).
//
// The log never holds message bodies, OAuth tokens or full addresses: Target
// must already be masked (see MaskAddress) and Detail is a short reason; as a
// last line of defence Record masks anything address-like in Detail and
// truncates it to MaxDetail bytes.
package audit

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mailgate/mailgate/internal/ctxkey"
)

// Results written in Entry.Result.
const (
	ResultSuccess     = "success"
	ResultRejected    = "rejected"
	ResultRateLimited = "rate_limited"
	ResultDevMode     = "dev_mode"
	ResultError       = "error"
	ResultUnknown     = "unknown"
	ResultPending     = "pending"
)

// MaxDetail bounds Entry.Detail so a careless caller cannot pour a body into
// the log.
const MaxDetail = 300

// Entry is one audit line.
type Entry struct {
	Time          time.Time `json:"time"`
	CorrelationID string    `json:"correlation_id"`
	Tool          string    `json:"tool"`
	// Account is the Gmail account the call or decision is about (issue
	// 27 item 2); absent for the default account of a home with one.
	Account        string `json:"account,omitempty"`
	ActionType     string `json:"action_type"`
	Result         string `json:"result"` // one of the Result* constants
	Target         string `json:"target,omitempty"`
	ApprovalFile   string `json:"approval_file,omitempty"`
	ApprovalSHA256 string `json:"approval_sha256,omitempty"`
	GmailMessageID string `json:"gmail_message_id,omitempty"`
	GmailThreadID  string `json:"gmail_thread_id,omitempty"`
	// RFC822MessageID is the Message-ID header of the email a gate claim
	// line is about to send: what settles an unknown outcome (in Sent).
	RFC822MessageID string `json:"rfc822_message_id,omitempty"`
	DurationMS      int64  `json:"duration_ms"`
	Detail          string `json:"detail,omitempty"`
	PID             int    `json:"pid"`
}

// Log appends entries to <dir>/<UTC YYYY-MM-DD>.jsonl. It is safe for
// concurrent use by goroutines and by several processes sharing dir.
type Log struct {
	dir string
	now func() time.Time
	pid int

	mu   sync.Mutex
	day  string
	file *os.File
}

// Open prepares dir (absolute; created 0700 if missing) for appending.
func Open(dir string) (*Log, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("opening audit log: dir %q is not absolute", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("opening audit log: %w", err)
	}
	return &Log{dir: dir, now: time.Now, pid: os.Getpid()}, nil
}

// Record appends e as one line and fsyncs it. A zero Time is set to now and
// PID is always the calling process. A nil *Log records nothing, so callers
// may run without an audit log in tests.
func (l *Log) Record(e Entry) error {
	if l == nil {
		return nil
	}
	if e.Time.IsZero() {
		e.Time = l.now()
	}
	e.Time = e.Time.UTC()
	e.PID = l.pid
	e.Detail = truncate(maskAddresses(e.Detail), MaxDetail)
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding audit entry: %w", err)
	}
	line = append(line, '\n')

	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := l.fileFor(e.Time.Format(time.DateOnly))
	if err != nil {
		return err
	}
	if err := lockFile(f); err != nil {
		return fmt.Errorf("locking audit log: %w", err)
	}
	defer unlockFile(f)
	// A process killed in the middle of its write can leave a prefix of its
	// line (Linux stops a write between pages when SIGKILL arrives). Under
	// the lock, before appending, end such a fragment with a newline so that
	// it stays a line of its own (ReadFile reports it as torn) instead of
	// swallowing this entry.
	if torn, err := endsMidLine(f); err != nil {
		return fmt.Errorf("reading audit log end: %w", err)
	} else if torn {
		line = append([]byte{'\n'}, line...)
	}
	// One write call: with O_APPEND the kernel positions and writes the whole
	// buffer under the inode lock. A short write would be a disk-full or
	// quota error, reported as such.
	n, err := f.Write(line)
	if err == nil && n != len(line) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(line))
	}
	if err != nil {
		return fmt.Errorf("writing audit log: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing audit log: %w", err)
	}
	return nil
}

// endsMidLine reports whether f's last byte is not a newline (a torn line
// left by a killed writer).
func endsMidLine(f *os.File) (bool, error) {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return false, err
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], st.Size()-1); err != nil {
		return false, err
	}
	return last[0] != '\n', nil
}

// fileFor returns the open file for day, reopening when the day changes.
func (l *Log) fileFor(day string) (*os.File, error) {
	if l.file != nil && l.day == day {
		return l.file, nil
	}
	path := filepath.Join(l.dir, day+".jsonl")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening audit file: %w", err)
	}
	if l.file != nil {
		l.file.Close()
	}
	l.file, l.day = f, day
	return f, nil
}

// Dir is the directory the log writes to (for ReadDir).
func (l *Log) Dir() string {
	if l == nil {
		return ""
	}
	return l.dir
}

// Close closes the current day's file. Record may still be called after
// Close; it reopens the file.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil {
		return nil
	}
	err := l.file.Close()
	l.file, l.day = nil, ""
	if err != nil {
		return fmt.Errorf("closing audit log: %w", err)
	}
	return nil
}

// NewCorrelationID returns a short random identifier (12 hex digits) that ties
// together the entries of one tool call.
func NewCorrelationID() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// TornError names the lines of a day's file that are not whole entries:
// what a writer killed in the middle of its write left (or something other
// than mailgate wrote). ReadFile returns it with every whole entry.
type TornError struct {
	Path  string
	Lines []int
}

func (e *TornError) Error() string {
	return fmt.Sprintf("%s: %d line(s) are not whole audit entries (a writer killed mid-write?): lines %v", e.Path, len(e.Lines), e.Lines)
}

// ReadFile parses one day's file, line by line. Lines that are not one
// whole JSON object are skipped and named in a *TornError returned with the
// whole entries; any other error returns no entries.
func ReadFile(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Entry
	var torn *TornError
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			if torn == nil {
				torn = &TornError{Path: path}
			}
			torn.Lines = append(torn.Lines, n)
			continue
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if torn != nil {
		return out, torn
	}
	return out, nil
}

// ReadDir parses every day's file in dir, oldest day first. Torn lines are
// skipped and reported (errors.As *TornError) with every whole entry.
func ReadDir(dir string) ([]Entry, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var out []Entry
	var torn error
	for _, f := range files {
		es, err := ReadFile(f)
		var te *TornError
		if errors.As(err, &te) {
			torn = errors.Join(torn, err)
		} else if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	return out, torn
}

var correlationKey = ctxkey.New[string]("audit.correlation_id")

// WithCorrelationID returns a context carrying id, so every layer of one tool
// call (MCP middleware, gate, Gmail adapter) logs the same correlation id.
func WithCorrelationID(ctx context.Context, id string) context.Context {
	return correlationKey.With(ctx, id)
}

// CorrelationID returns the id stored by WithCorrelationID, or "".
func CorrelationID(ctx context.Context) string {
	return correlationKey.Value(ctx)
}

func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	s = s[:max]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
