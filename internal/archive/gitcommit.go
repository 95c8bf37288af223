package archive

import (
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// CommitInterval is how often, at most, the archive is committed when the
// vault is a git repository: commits come in batches, never one per message.
var CommitInterval = 30 * time.Second

// committer commits AgentMail/ in the vault's git repository, off the
// agents' path: the sink only marks the archive dirty; a background loop
// commits what accumulated. Only the AgentMail/ path is committed (git
// commit -- AgentMail), so whatever else the human has staged stays theirs.
type committer struct {
	vault  string
	gitDir string
	log    *slog.Logger
	dirty  atomic.Bool
	stop   chan struct{}
	done   sync.WaitGroup
}

// startCommitter returns nil when the vault is not in a git work tree (or
// git is not installed): then there is nothing to commit.
func startCommitter(vault string, log *slog.Logger) *committer {
	out, err := exec.Command("git", "-C", vault, "rev-parse", "--is-inside-work-tree", "--absolute-git-dir").Output()
	lines := strings.Fields(string(out))
	if err != nil || len(lines) != 2 || lines[0] != "true" {
		return nil
	}
	c := &committer{vault: vault, gitDir: lines[1], log: log, stop: make(chan struct{})}
	c.done.Go(c.loop)
	return c
}

func (c *committer) mark() { c.dirty.Store(true) }

func (c *committer) loop() {
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
	unlock, err := lockFile(filepath.Join(c.gitDir, "mailgate-archive.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	git := func(args ...string) error {
		cmd := exec.Command("git", append([]string{"-C", c.vault,
			"-c", "user.name=mailgate", "-c", "user.email=mailgate@localhost.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := git("add", "-A", "--", "AgentMail"); err != nil {
		return err
	}
	// Nothing staged under AgentMail/ (another process committed it): done.
	if exec.Command("git", "-C", c.vault, "diff", "--cached", "--quiet", "--", "AgentMail").Run() == nil {
		return nil
	}
	return git("commit", "-q", "-m", "mailgate: archive agent mail", "--", "AgentMail")
}

// close stops the loop after a last commit.
func (c *committer) close() {
	close(c.stop)
	c.done.Wait()
}
