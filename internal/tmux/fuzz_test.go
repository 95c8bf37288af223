package tmux

import (
	"strings"
	"testing"
)

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }

// FuzzFollowerLines feeds control-mode output (window names are written by
// people and agents, and tmux passes them through) to the line handler: it
// never panics, and the state it keeps names every window it lists.
func FuzzFollowerLines(f *testing.F) {
	f.Add("mgsess $0 @0\nmgwin @0 alice\nmgwin @1 bob\nmgsync 1\n%window-renamed @1 bobby\n%window-add @2\n%session-changed $1 other\n%exit")
	f.Add("%begin 1 2 1\nmgwin @7 a name with spaces\nmgwin @7\nmgsync 18446744073709551615\n%end 1 2 1")
	f.Add("mgsync x\nmgsess\nmgwin\n%window-renamed\n%window-renamed @9 ghost\n\x00\xff")
	f.Fuzz(func(t *testing.T, out string) {
		fl := &Follower{in: nopWriteCloser{}, kick: make(chan struct{}, 1), done: make(chan struct{}), wake: make(chan struct{})}
		for _, l := range strings.Split(out, "\n") {
			fl.line(l)
		}
		fl.mu.Lock()
		defer fl.mu.Unlock()
		for _, id := range fl.order {
			if _, ok := fl.names[id]; !ok {
				t.Fatalf("window %q listed without a name", id)
			}
		}
	})
}
