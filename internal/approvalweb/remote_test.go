package approvalweb

import (
	"slices"
	"testing"
)

func TestRemoteResources(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, html string
		want       []string
	}{
		{"none", `<p>Hello <a href="https://example.com/">link</a></p>`, nil},
		{"image", `<p><img src="https://t.example/p.png?u=1"></p>`, []string{"https://t.example/p.png?u=1"}},
		{"srcset and repeat", `<img srcset="https://a.example/1x.png 1x, https://a.example/2x.png 2x"><img src="https://a.example/1x.png">`,
			[]string{"https://a.example/1x.png", "https://a.example/2x.png"}},
		{"css", `<style>@import "https://c.example/s.css"; body{background:url('https://c.example/bg.png')}</style><div style="background-image: url(https://c.example/d.png)">x</div>`,
			[]string{"https://c.example/s.css", "https://c.example/bg.png", "https://c.example/d.png"}},
		{"stylesheet, frame, refresh", `<link rel=stylesheet href="https://l.example/a.css"><iframe src="https://f.example/"></iframe><meta http-equiv="refresh" content="0; url=https://r.example/">`,
			[]string{"https://l.example/a.css", "https://f.example/", "https://r.example/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := remoteResources(tt.html); !slices.Equal(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzRemoteResources: any HTML an agent or a foreign request holds is
// read without a panic, and every URL listed is taken from the document.
func FuzzRemoteResources(f *testing.F) {
	f.Add(`<img src="https://t.example/p.png"><style>a{background:url(x)}</style>`)
	f.Add(`<div style="background:url('`)
	f.Add(`<meta http-equiv=refresh content="0;url=`)
	f.Fuzz(func(t *testing.T, doc string) {
		for _, u := range remoteResources(doc) {
			if u == "" {
				t.Fatalf("empty URL listed for %q", doc)
			}
		}
	})
}
