package archive_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/archive"
	"github.com/mailgate/mailgate/internal/outbox"
	"github.com/mailgate/mailgate/internal/testutil"
)

// TestGitBatchCommits: in a vault that is a git repository, the archive is
// committed in batches (far fewer commits than messages), everything
// archived is committed by the time the archive stops, and nothing the human
// had staged elsewhere is committed.
func TestGitBatchCommits(t *testing.T) {
	vault := gitRepo(t)
	old := archive.CommitInterval
	archive.CommitInterval = 100 * time.Millisecond
	defer func() { archive.CommitInterval = old }()

	git := func(args ...string) string { return testutil.Git(t, vault, args...) }
	os.WriteFile(filepath.Join(vault, "notes.md"), []byte("mine"), 0o600)
	git("add", "notes.md") // the human's staged change: not mailgate's to commit

	a := newAgents(t, "/data/projects/app")
	started := time.Now()
	stop := a.archive(t, vault, outbox.WorkerOptions{Poll: 40 * time.Millisecond})
	const n = 40
	for range n {
		a.send(t, "BlueLake", "GreenCastle", "hello")
	}
	// Wait until every message file exists, then stop: the last batch is
	// committed on the way out.
	testutil.Eventually(t, 2*time.Minute, func() error { // generous: a loaded machine is no failure
		if got := countFiles(vault); got != n {
			return fmt.Errorf("%d of %d messages archived", got, n)
		}
		return nil
	})
	stop()
	elapsed := time.Since(started)

	// At most one commit per interval, plus the last one on stopping.
	commits := strings.Split(git("log", "--format=%s"), "\n")
	if max := int(elapsed/archive.CommitInterval) + 1; len(commits) < 1 || len(commits) > max || len(commits) >= n {
		t.Fatalf("%d commits for %d messages in %v: want at most %d (one per interval)", len(commits), n, elapsed, max)
	}
	if status := git("status", "--porcelain", "--", "AgentMail"); status != "" {
		t.Fatalf("archived files left uncommitted:\n%s", status)
	}
	if committed := git("log", "--name-only", "--format="); strings.Contains(committed, "notes.md") {
		t.Fatal("mailgate committed the human's staged notes.md")
	}
	if staged := git("diff", "--cached", "--name-only"); staged != "notes.md" {
		t.Fatalf("the human's staged change was disturbed: %q", staged)
	}
	t.Logf("%d messages archived in %d commits", n, len(commits))
}
