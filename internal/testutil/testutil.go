// Package testutil holds the helpers several packages' tests share, so that
// each is written once.
package testutil

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that several goroutines may write and read at
// once: a log sink for servers and clients under test.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Reset forgets what was written.
func (l *Buffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Reset()
}
