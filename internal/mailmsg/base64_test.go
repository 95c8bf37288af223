package mailmsg

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestWriteBase64Lines: the batched encoder writes what wrapping the whole
// encoding at 76 characters writes, at every length around a line's and a
// batch's edges, and base64Size says its length.
func TestWriteBase64Lines(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 56, 57, 58, 113, 114, 115, 57*1024 - 1, 57 * 1024, 57*1024 + 1, 57*2048 + 5} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		enc := base64.StdEncoding.EncodeToString(data)
		var lines []string
		for len(enc) > 76 {
			lines, enc = append(lines, enc[:76]), enc[76:]
		}
		want := strings.Join(append(lines, enc), "\r\n")
		var got bytes.Buffer
		if err := writeBase64(&got, data); err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Errorf("%d bytes: the lines differ from the whole encoding wrapped", n)
		}
		if base64Size(n) != len(want) {
			t.Errorf("base64Size(%d) = %d, writeBase64 wrote %d", n, base64Size(n), len(want))
		}
	}
}
