package testutil

import (
	"flag"
	"runtime"
	"strconv"
)

// WaitingParallel is for the TestMain of a package whose parallel tests
// mostly wait (on the processes they start, on a server's answer, on the
// store's fsync) rather than compute: it lets factor × GOMAXPROCS of them
// run at once instead of go test's GOMAXPROCS, so that the cores do not
// idle while they wait (on two cores, two tests at a time left them
// mostly idle). The CPU spent is the same; an explicit -parallel wins.
// Call it before m.Run.
func WaitingParallel(factor int) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		flag.Set("test.parallel", strconv.Itoa(factor*runtime.GOMAXPROCS(0)))
	}
}
