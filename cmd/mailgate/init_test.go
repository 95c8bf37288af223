package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPackageInitialisationIsSmall: Go initialises every linked package
// before main, so what a package's variables compute is paid by every
// mailgate start, the mailbox server's and `mailgate version` included.
// mailgate's own packages keep that to their tables (the tool inventory is
// the largest); what costs (a regular expression, the zone database, SQL for
// an engine not in use) is built on first use. The runtime's inittrace
// counts each package's allocations, which do not vary between runs.
func TestPackageInitialisationIsSmall(t *testing.T) {
	parallel(t)
	cmd := exec.Command(builtBinary(t), "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mailgate version: %v\n%s", err, stderr.String())
	}
	const perPackage, all = 200, 700
	line := regexp.MustCompile(`(?m)^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)
	total, seen := 0, 0
	for _, m := range line.FindAllStringSubmatch(stderr.String(), -1) {
		pkg := m[1]
		if pkg != "main" && !strings.HasPrefix(pkg, "github.com/mailgate/mailgate/") {
			continue
		}
		seen++
		allocs, _ := strconv.Atoi(m[3])
		total += allocs
		if allocs > perPackage {
			t.Errorf("%s allocates %d times (%s bytes) at initialisation, over %d: build what it computes on first use (sync.OnceValue)", pkg, allocs, m[2], perPackage)
		}
	}
	if seen == 0 {
		t.Fatalf("no inittrace line for mailgate's packages:\n%s", stderr.String())
	}
	if total > all {
		t.Errorf("mailgate's packages allocate %d times at initialisation, over %d", total, all)
	}
}
