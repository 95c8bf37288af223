package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestServeSweepsOldTempFiles: a process killed mid-write leaves a hidden
// temporary file in the vault (atomicfile's name); the next server removes it once it is an hour
// old, and leaves a recent one (another process may still be writing it).
func TestServeSweepsOldTempFiles(t *testing.T) {
	parallel(t)
	w := newWorld(t, true)
	done := filepath.Join(w.home, "vault", "Done")
	if err := os.MkdirAll(done, 0o700); err != nil {
		t.Fatal(err)
	}
	oldTmp, newTmp := filepath.Join(done, ".EMAIL_SEND_x.md1234567890123"), filepath.Join(done, ".EMAIL_SEND_x.md9876543210987")
	for _, p := range []string{oldTmp, newTmp} {
		if err := os.WriteFile(p, []byte("half a request"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	twoHoursAgo := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(oldTmp, twoHoursAgo, twoHoursAgo); err != nil {
		t.Fatal(err)
	}

	cs := w.connectHere()
	if _, isErr := call(t, cs, "search_email", map[string]any{"query": "invoice"}); isErr {
		t.Fatal("search_email failed")
	}
	cs.Close() // waits for the server to stop, and the server waits for its sweep

	if _, err := os.Stat(oldTmp); !os.IsNotExist(err) {
		t.Errorf("the two-hour-old leftover is still there (stat: %v)", err)
	}
	if _, err := os.Stat(newTmp); err != nil {
		t.Errorf("the recent temporary file was removed: %v", err)
	}
}
