// Package startgc raises the garbage collector's target (GOGC) of a
// `mailgate serve` process from its package initialisation on, before the
// libraries' own initialisation has run.
//
// Go initialises every linked package before main, and mailgate's
// libraries allocate ~2.8 MB doing so (regular expressions, tables): at the
// runtime's first heap target of 4 MB, a collection began at the end of
// initialisation, just before serve raised the target for its start
// (serve.go, startGCPercent), and its workers took the cores the start
// needed. From here the target is raised before most of that garbage is
// made, so no collection runs until the store is open. (A serve --sandbox
// start on a used home, GOGC=400 from the process's start against the
// default: 2–3 ms less CPU of ~23, ~200 fewer page faults, the same RSS;
// BENCHMARKS.md, issue 34.)
//
// Only serve is changed, and only when the user has not set GOGC: every
// other command, and every test binary, keeps the runtime's default. The
// package must stay a leaf (the standard library's os and runtime/debug
// only) so that it is initialised before the libraries: among the packages
// whose imports are ready, Go initialises them in the order of their
// import paths.
package startgc

import (
	"os"
	"runtime/debug"
)

// Percent is the target of a serve process until its store is open (GOGC
// 400: four times the live heap may accumulate before a collection).
const Percent = 400

func init() {
	if len(os.Args) > 1 && os.Args[1] == "serve" && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
}
