package archive

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mailgate/mailgate/internal/atomicfile"
	"github.com/mailgate/mailgate/internal/filelock"
)

// CommitInterval is how often, at most, the archive is committed when the
// vault is a git repository: commits come in batches, never one per message.
var CommitInterval = 30 * time.Second

// commitTimeout bounds one commit (git add, diff, commit), so that a hook
// or a stuck lock cannot hold up a stopping process for long.
const commitTimeout = 10 * time.Second

// committer commits AgentMail/ in the vault's git repository, off the
// agents' path: the sink only marks the archive dirty; a background loop
// commits what accumulated. Only the AgentMail/ path is committed (git
// commit -- AgentMail), so whatever else the human has staged stays theirs.
type committer struct {
	vault  string
	gitDir string // set by the loop before its first commit
	log    *slog.Logger
	dirty  atomic.Bool
	start  sync.Once
	stop   chan struct{}
	done   sync.WaitGroup
}

// newCommitter returns the vault's committer. It looks for the vault's
// repository (a git process) and starts its loop only when the archive is
// first written (mark): most processes archive nothing, and every server
// start paid for that git process. It commits only when the vault folder
// is itself the top of a git work tree (and git is installed): a vault
// merely inside a work tree (a home in a project folder, or in the
// mailgate clone) belongs to someone else's repository, whose branch must
// never receive archive commits.
func newCommitter(vault string, log *slog.Logger) *committer {
	return &committer{vault: vault, log: log, stop: make(chan struct{})}
}

// vaultRepo returns the git directory of the repository whose work tree
// top is exactly the vault folder (symbolic links resolved on both sides).
func vaultRepo(vault string) (gitDir string, ok bool) {
	out, err := exec.Command("git", "-C", vault, "rev-parse", "--show-toplevel", "--absolute-git-dir").Output()
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if err != nil || len(lines) != 2 {
		return "", false
	}
	top, err1 := filepath.EvalSymlinks(lines[0])
	want, err2 := filepath.EvalSymlinks(vault)
	if err1 != nil || err2 != nil {
		return "", false
	}
	if abs, err := filepath.Abs(want); err == nil {
		want = abs
	}
	if filepath.Clean(top) != filepath.Clean(want) {
		return "", false
	}
	return lines[1], true
}

// archivePaths is what a commit takes: AgentMail/, minus the digest lock
// files and the temporary files of atomic writes, which are never content.
// (".tmp-*" the writer's before atomicfile).
var archivePaths = []string{"AgentMail", ":(exclude)AgentMail/*.lock", ":(exclude)AgentMail/*.tmp-*",
	":(exclude)AgentMail/*/" + atomicfile.TempGlob}

// gitignore is AgentMail/.gitignore in a vault repository.
const gitignore = "# Written by mailgate: locks and unfinished writes are never archive content.\n*.lock\n.tmp-*\n" +
	atomicfile.TempGlob + "\n"

func (c *committer) mark() {
	c.dirty.Store(true)
	c.start.Do(func() { c.done.Go(c.loop) })
}

func (c *committer) loop() {
	gitDir, ok := vaultRepo(c.vault)
	if !ok {
		return // not the vault's own repository: nothing is ever committed
	}
	c.gitDir = gitDir
	t := time.NewTicker(CommitInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-c.stop:
			c.flush() // what was archived before stopping is committed too
			return
		}
		c.flush()
	}
}

func (c *committer) flush() {
	if !c.dirty.Swap(false) {
		return
	}
	if err := c.commit(); err != nil {
		c.dirty.Store(true) // try again next time
		c.log.Warn("archive: committing to the vault's git repository failed", "err", err)
	}
}

// commit adds and commits AgentMail/ under a lock in the git directory, so
// that several mailgate processes sharing the vault commit one at a time.
func (c *committer) commit() error {
	unlock, err := filelock.Lock(filepath.Join(c.gitDir, "mailgate-archive.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	git := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", c.vault,
			"-c", "user.name=mailgate", "-c", "user.email=mailgate@localhost.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	// The ignore file keeps the lock and temporary files out of the
	// human's own "git add -A" too.
	ignore := filepath.Join(c.vault, "AgentMail", ".gitignore")
	if _, err := os.Stat(ignore); errors.Is(err, fs.ErrNotExist) {
		if err := os.WriteFile(ignore, []byte(gitignore), 0o600); err != nil {
			return err
		}
	}
	if err := git(append([]string{"add", "-A", "--"}, archivePaths...)...); err != nil {
		return err
	}
	// Nothing staged under AgentMail/ (another process committed it): done.
	if exec.CommandContext(ctx, "git", append([]string{"-C", c.vault, "diff", "--cached", "--quiet", "--"}, archivePaths...)...).Run() == nil {
		return nil
	}
	return git(append([]string{"commit", "-q", "-m", "mailgate: archive agent mail", "--"}, archivePaths...)...)
}

// close stops the loop after a last commit. A later mark starts no loop.
func (c *committer) close() {
	c.start.Do(func() {})
	close(c.stop)
	c.done.Wait()
}
