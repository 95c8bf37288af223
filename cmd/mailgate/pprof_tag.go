//go:build pprof

package main

// A binary built with -tags pprof profiles itself when asked, for the
// benchmarks' profiles (BENCHMARKS.md): MAILGATE_CPUPROFILE=file records a
// CPU profile from start-up for MAILGATE_PROFILE_SECONDS (default 10), then
// writes it and, beside it, file.allocs (allocations since start-up). A
// timer, not the process's exit, ends the profile, so a server killed by its
// client still leaves one. The release binary has none of this.

import (
	"os"
	"runtime/pprof"
	"strconv"
	"time"
)

func init() {
	path := os.Getenv("MAILGATE_CPUPROFILE")
	if path == "" {
		return
	}
	secs, _ := strconv.Atoi(os.Getenv("MAILGATE_PROFILE_SECONDS"))
	if secs <= 0 {
		secs = 10
	}
	f, err := os.Create(path)
	if err != nil {
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return
	}
	time.AfterFunc(time.Duration(secs)*time.Second, func() {
		pprof.StopCPUProfile()
		f.Close()
		if a, err := os.Create(path + ".allocs"); err == nil {
			pprof.Lookup("allocs").WriteTo(a, 0)
			a.Close()
		}
	})
}
