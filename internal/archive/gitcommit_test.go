package archive_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/agentmail"
	"github.com/mailgate/mailgate/internal/archive"
	"github.com/mailgate/mailgate/internal/mirror"
	"github.com/mailgate/mailgate/internal/store/storetest"
	"github.com/mailgate/mailgate/internal/testutil"
)

// TestGitBatchCommits: in a vault that is a git repository, the archive is
// committed in batches (far fewer commits than messages), everything
// archived is committed by the time the archive stops, and nothing the human
// had staged elsewhere is committed.
func TestGitBatchCommits(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	old := archive.CommitInterval
	archive.CommitInterval = 100 * time.Millisecond
	defer func() { archive.CommitInterval = old }()

	vault := t.TempDir()
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", vault, "-c", "user.name=t", "-c", "user.email=t@x"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(vault, "notes.md"), []byte("mine"), 0o600)
	git("add", "notes.md") // the human's staged change: not mailgate's to commit

	ctx := context.Background()
	db := storetest.OpenDSN(t, filepath.Join(t.TempDir(), "state.db"))
	svc := testutil.AgentMail(t, db, agentmail.Options{})
	const project = "/data/projects/app"
	svc.EnsureProject(ctx, project)
	for _, a := range []string{"BlueLake", "GreenCastle"} {
		svc.RegisterAgent(ctx, agentmail.RegisterParams{ProjectKey: project, Name: a})
	}
	started := time.Now()
	stop, err := archive.Start(ctx, db, svc, vault, mirror.WorkerOptions{Poll: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	for i := 0; i < n; i++ {
		if _, err := svc.Send(ctx, agentmail.SendParams{ProjectKey: project, Sender: "BlueLake", To: []string{"GreenCastle"},
			Subject: "update", BodyMD: "hello", ThreadID: "TKT-1"}); err != nil {
			t.Fatal(err)
		}
	}
	// Wait until every message file exists, then stop: the last batch is
	// committed on the way out.
	deadline := time.Now().Add(10 * time.Second)
	for {
		files, _ := filepath.Glob(filepath.Join(vault, "AgentMail", "*", "messages", "*", "*", "*.md"))
		if len(files) == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages archived", len(files), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
