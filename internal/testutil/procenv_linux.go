package testutil

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Proc is a live process: its pid and its command line.
type Proc struct {
	PID  int
	Args string
}

// ProcessesWithEnv lists the live processes (zombies left out: they have
// ended, only their parent has not reaped them) whose environment holds
// the entry kv ("NAME=value"). A test marks a process it starts with such
// an entry; every process that one starts inherits it, so this finds what
// outlived it.
func ProcessesWithEnv(kv string) []Proc {
	want := []byte(kv + "\x00")
	paths, _ := filepath.Glob("/proc/[0-9]*/environ")
	var out []Proc
	for _, p := range paths {
		env, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(env, want) && !bytes.Contains(env, append([]byte{0}, want...)) {
			continue
		}
		dir := filepath.Dir(p)
		stat, _ := os.ReadFile(filepath.Join(dir, "stat"))
		// "pid (comm) S …": comm may hold spaces and parentheses.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(dir))
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		out = append(out, Proc{PID: pid, Args: strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))})
	}
	return out
}
