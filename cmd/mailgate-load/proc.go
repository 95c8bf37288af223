package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procStat is what /proc says about the server process.
type procStat struct {
	RSS     int64 // bytes (VmRSS)
	FDs     int   // entries of /proc/PID/fd
	Sockets int   // of which sockets (the listener, the sessions' connections)
	Threads int
	CPU     time.Duration // user + system
}

// userHZ is the unit of utime and stime in /proc/PID/stat: USER_HZ, fixed at
// 100 by the Linux ABI whatever the kernel's own tick rate.
const userHZ = 100

// readProc reads the process's resident memory, descriptors, threads and
// CPU time. Linux only; the load itself runs anywhere, without samples.
func readProc(pid int) (procStat, error) {
	var st procStat
	dir := fmt.Sprintf("/proc/%d", pid)
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return st, fmt.Errorf("reading %s/status: %w", dir, err)
	}
	for line := range strings.Lines(string(status)) {
		key, val, _ := strings.Cut(line, ":")
		fields := strings.Fields(val)
		if len(fields) == 0 {
			continue
		}
		switch key {
		case "VmRSS":
			kb, _ := strconv.ParseInt(fields[0], 10, 64)
			st.RSS = kb << 10
		case "Threads":
			st.Threads, _ = strconv.Atoi(fields[0])
		}
	}
	fds, err := os.ReadDir(dir + "/fd")
	if err != nil {
		return st, fmt.Errorf("listing %s/fd: %w", dir, err)
	}
	st.FDs = len(fds)
	for _, fd := range fds {
		if target, err := os.Readlink(dir + "/fd/" + fd.Name()); err == nil && strings.HasPrefix(target, "socket:") {
			st.Sockets++
		}
	}
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return st, fmt.Errorf("reading %s/stat: %w", dir, err)
	}
	// The command name in parentheses may hold spaces: count fields from the
	// last ')'. utime and stime are fields 14 and 15 of the whole line.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 {
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 12 {
			ut, _ := strconv.ParseInt(f[11], 10, 64)
			sys, _ := strconv.ParseInt(f[12], 10, 64)
			st.CPU = time.Duration(ut+sys) * time.Second / userHZ
		}
	}
	return st, nil
}

// sample is one reading, at offset At from the start of the load.
type sample struct {
	At time.Duration
	procStat
}

// sampler reads the server's /proc entry periodically during the load, for
// the peak and the drift that before/after alone would hide.
type sampler struct {
	pid     int
	mu      sync.Mutex
	samples []sample
	stop    chan struct{}
	done    chan struct{}
}

func newSampler(pid int) *sampler {
	return &sampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
}

// start takes a first sample at once and then one every interval.
func (s *sampler) start(every time.Duration) {
	t0 := time.Now()
	take := func() {
		if st, err := readProc(s.pid); err == nil {
			s.mu.Lock()
			s.samples = append(s.samples, sample{At: time.Since(t0), procStat: st})
			s.mu.Unlock()
		}
	}
	take()
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
				take()
			}
		}
	}()
}

// finish stops sampling and returns the samples in order.
func (s *sampler) finish() []sample {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

// settle samples the server after the sessions closed: the server notices
// closed connections asynchronously, and a reading taken too early would
// show a leak that is not there. It reads at once when the descriptor
// count is back to baseline, or when the sockets are (the load's
// connections are closed; the store's connection pool keeps the SQLite
// files the load made it open, a count above a cold baseline that no wait
// would lower); otherwise once the count has held still for a second (at
// most 5 s): a leaked connection shows in the reading as before, and so
// does a PostgreSQL store's pool, whose connections are sockets.
func settle(pid int, base procStat) procStat {
	deadline := time.Now().Add(5 * time.Second)
	last, since := -1, time.Now()
	for {
		st, err := readProc(pid)
		switch {
		case err != nil || st.FDs <= base.FDs || st.Sockets <= base.Sockets || time.Now().After(deadline):
			return st
		case st.FDs != last:
			last, since = st.FDs, time.Now()
		case time.Since(since) >= time.Second:
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// procName is the process's command name, printed next to its pid so a
// -pid naming a wrapper (a shell, go run) rather than the server shows.
func procName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// loadAvg is /proc/loadavg's first three fields, or "" off Linux.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// machineCPU is the whole machine's busy CPU time so far, from /proc/stat:
// on a shared machine, what the server and the load generator did not use
// themselves tells how much else was competing for the cores.
func machineCPU() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	// user nice system idle iowait irq softirq steal: all but idle and
	// iowait are busy (guest time is already counted in user).
	var busy int64
	for i, v := range f[1:9] {
		if i == 3 || i == 4 {
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	return time.Duration(busy) * time.Second / userHZ
}

// selfCPU is this process's user + system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
