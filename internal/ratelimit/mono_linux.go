package ratelimit

import (
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// SystemClock is the machine's clock since boot (CLOCK_BOOTTIME, which
// counts suspended time too, so a laptop asleep for an hour has let an hour
// pass), named by the boot's id: every process on the machine reads the
// same clock, so a slot one process took is aged exactly by every other
// until the next reboot. Where the boot id cannot be read, it falls back to
// the process's own monotonic clock.
func SystemClock() (string, int64) {
	id := bootID()
	if id == "" {
		return processClock()
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return processClock()
	}
	return id, ts.Nano() / 1e6
}

// bootID is read once, on the first reading (not at package
// initialisation: a process that never takes a slot never reads it).
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	if id := strings.TrimSpace(string(b)); id != "" {
		return "boot:" + id
	}
	return ""
})
