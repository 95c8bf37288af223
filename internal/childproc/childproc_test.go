//go:build linux

package childproc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mailgate/mailgate/internal/testutil"
)

// TestGroupCancelEndsGrandchildren: cancelling a grouped shell's context
// ends what the shell started, not only the shell (exec's default kills the
// shell alone and leaves its children).
func TestGroupCancelEndsGrandchildren(t *testing.T) {
	t.Parallel()
	for _, grouped := range []bool{false, true} {
		t.Run(fmt.Sprintf("grouped=%v", grouped), func(t *testing.T) {
			mark := "childproc-" + strconv.FormatBool(grouped) + "-" + strconv.Itoa(os.Getpid())
			ctx, cancel := context.WithCancel(context.Background())
			cmd := exec.CommandContext(ctx, "/bin/sh", "-c", "sleep 600 & wait")
			cmd.Env = append(os.Environ(), "CHILDPROC_MARK="+mark)
			if grouped {
				Group(cmd)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				for _, pid := range marked(mark) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			testutil.Eventually(t, 10*time.Second, func() error {
				if len(marked(mark)) < 2 {
					return fmt.Errorf("the shell has not started its child")
				}
				return nil
			})
			cancel()
			cmd.Wait()
			if !grouped {
				// The default leaves the grandchild: what Group is for.
				testutil.Eventually(t, 10*time.Second, func() error {
					if n := len(marked(mark)); n != 1 {
						return fmt.Errorf("%d marked processes, want the orphaned sleep alone", n)
					}
					return nil
				})
				return
			}
			testutil.Eventually(t, 10*time.Second, func() error {
				if ps := marked(mark); len(ps) > 0 {
					return fmt.Errorf("still running after cancel: %v", ps)
				}
				return nil
			})
		})
	}
}

func marked(mark string) []int {
	var pids []int
	for _, p := range testutil.ProcessesWithEnv("CHILDPROC_MARK=" + mark) {
		pids = append(pids, p.PID)
	}
	return pids
}
