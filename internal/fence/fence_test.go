package fence

import (
	"bytes"
	"strings"
	"testing"
)

// TestNewAvoidsMarkersInContent: content that holds the drawn marker (the
// one way left to forge the end line) makes New draw again.
func TestNewAvoidsMarkersInContent(t *testing.T) {
	old := Rand
	t.Cleanup(func() { Rand = old })
	// The first draw gives 0101…, the second 0202….
	Rand = bytes.NewReader(append(bytes.Repeat([]byte{1}, 8), bytes.Repeat([]byte{2}, 8)...))
	f := New("content with 0101010101010101 in it")
	if f.Marker() != "0202020202020202" {
		t.Fatalf("marker = %q, want the second draw", f.Marker())
	}
}

func TestWrapEndsEveryLine(t *testing.T) {
	t.Parallel()
	f := New()
	got := f.Wrap("X", "a\nb")
	want := f.Begin("X") + "a\nb\n" + f.End("X")
	if got != want || !strings.HasSuffix(got, " ---\n") {
		t.Fatalf("Wrap = %q, want %q", got, want)
	}
}
