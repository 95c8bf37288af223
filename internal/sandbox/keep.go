package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mailgate/mailgate/internal/atomicfile"
	"github.com/mailgate/mailgate/internal/filelock"
	"github.com/mailgate/mailgate/internal/localgmail"
)

// The sandbox a server serves keeps its mailbox in the home: what was sent,
// drafted, labelled or trashed is there after a restart, as the vault's
// Done/ still lists the emails approved and sent. A sandbox that started
// fresh on every start told the user, after a restart, that nothing had
// been sent while Done/ said otherwise.

// File is the mailbox file under the folder Open is given.
const File = "mailbox.json"

// Mailbox is a sandbox mailbox kept in a folder, served on loopback.
type Mailbox struct {
	srv  *localgmail.Server
	hs   *http.Server
	url  string
	dir  string
	log  *slog.Logger
	kept bool // the mailbox came from the folder, not from the seed

	mu   sync.Mutex  // one request at a time: each may reload and save the file
	seen os.FileInfo // the file as last read or written by this process
}

// Open serves the sandbox mailbox kept in dir (created 0700): the one saved
// there, or, the first time, the seeded mailbox, saved at once. Every
// request that changes the mailbox saves it; a request first reloads the
// file when another process (a second sandbox server of the same home)
// changed it, under a file lock, so the two share one mailbox. A file that
// does not load stops Open with an error naming it: starting afresh
// silently would make the sandbox's Sent disagree with Done/ again.
func Open(dir string, logger *slog.Logger) (*Mailbox, error) {
	return openMailbox(dir, localgmail.Options{Email: Email, Aliases: []string{Alias}, PendingAliases: []string{PendingAlias}, Logger: logger}, Seed, logger)
}

// OpenWork serves the sandbox's second account, "work" (WorkEmail), kept
// in dir/accounts/work like Open's: a mailbox of its own, with its own
// send-as address, for trying the email tools' account argument.
func OpenWork(dir string, logger *slog.Logger) (*Mailbox, error) {
	return openMailbox(filepath.Join(dir, "accounts", WorkAccount), localgmail.Options{Email: WorkEmail, Aliases: []string{WorkAlias}, Logger: logger}, SeedWork, logger)
}

func openMailbox(dir string, o localgmail.Options, seed func(*localgmail.Server) error, logger *slog.Logger) (*Mailbox, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("the sandbox mailbox's folder: %w", err)
	}
	mb := &Mailbox{srv: localgmail.New(o), dir: dir, log: logger}
	unlock, err := filelock.Lock(mb.lockPath())
	if err != nil {
		return nil, fmt.Errorf("the sandbox mailbox: %w", err)
	}
	err = mb.load()
	if errors.Is(err, fs.ErrNotExist) {
		if err = seed(mb.srv); err == nil {
			err = mb.save()
		}
	} else if err == nil {
		mb.kept = true
	}
	unlock()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the sandbox mailbox: %w", err)
	}
	mb.url = "http://" + ln.Addr().String() + "/"
	mb.srv.SetBaseURL(mb.url)
	mb.hs = &http.Server{Handler: mb, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug)}
	go mb.hs.Serve(ln)
	return mb, nil
}

// URL is the Gmail API base URL the mailbox answers on, ending in "/".
func (mb *Mailbox) URL() string { return mb.url }

// Path is the mailbox file.
func (mb *Mailbox) Path() string { return filepath.Join(mb.dir, File) }

// Kept reports whether the mailbox was read from the folder (false: it was
// seeded, this being the home's first sandbox start).
func (mb *Mailbox) Kept() bool { return mb.kept }

// Server is the local Gmail server behind the mailbox, for tests.
func (mb *Mailbox) Server() *localgmail.Server { return mb.srv }

// Close stops serving. Every change is already saved.
func (mb *Mailbox) Close() error { return mb.hs.Close() }

func (mb *Mailbox) lockPath() string { return filepath.Join(mb.dir, ".lock") }

// ServeHTTP serves one request on the current mailbox and saves it after a
// change.
func (mb *Mailbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	unlock, err := filelock.Lock(mb.lockPath())
	if err != nil {
		mb.log.Error("sandbox mailbox: locking", "err", err)
		http.Error(w, "the sandbox mailbox is locked: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer unlock()
	if fi, err := os.Stat(mb.Path()); err == nil && !same(fi, mb.seen) {
		if err := mb.load(); err != nil {
			mb.log.Error("sandbox mailbox: reloading the file another server changed", "file", mb.Path(), "err", err)
		}
	}
	rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	mb.srv.ServeHTTP(rec, r)
	// Gmail's reads are GETs; everything else may change the mailbox.
	if r.Method != http.MethodGet && rec.status < 300 {
		if err := mb.save(); err != nil {
			mb.log.Error("sandbox mailbox: saving; the change is kept until this server stops", "file", mb.Path(), "err", err)
		}
	}
}

func (mb *Mailbox) load() error {
	data, err := os.ReadFile(mb.Path())
	if err != nil {
		return err
	}
	if err := mb.srv.Restore(data); err != nil {
		return fmt.Errorf("the sandbox mailbox %s does not load (%w): move it away to start a fresh sandbox mailbox", mb.Path(), err)
	}
	mb.seen, _ = os.Stat(mb.Path())
	return nil
}

// save writes the mailbox atomically (atomicfile), so a reader never sees
// half a mailbox.
func (mb *Mailbox) save() error {
	data, err := mb.srv.Snapshot()
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(mb.Path(), data, 0o600); err != nil {
		return fmt.Errorf("saving the sandbox mailbox %s: %w", mb.Path(), err)
	}
	mb.seen, _ = os.Stat(mb.Path())
	return nil
}

// same reports whether a and b describe the same version of the file: a
// save replaces the file (a new inode), and size and time tell a rewrite
// apart where inodes are reused.
func same(a, b os.FileInfo) bool {
	return b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
