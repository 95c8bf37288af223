package unsubscribe

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, header, post string
		oneClick, mailto   string
		other              int
		err                error
	}{
		{name: "both, one-click", header: "<mailto:unsub@list.example?subject=stop>, <https://list.example/u?id=1>", post: OneClickBody,
			oneClick: "https://list.example/u?id=1", mailto: "unsub@list.example|stop|unsubscribe"},
		{name: "https without Post header", header: "<https://list.example/u?id=1>", other: 1},
		{name: "http never", header: "<http://list.example/u>", post: OneClickBody, other: 1},
		{name: "mailto with body", header: "<mailto:leave%40list.example?body=remove%20me>", mailto: "leave@list.example|unsubscribe|remove me"},
		{name: "mailto with two addresses", header: "<mailto:a@x.example,b@x.example>", other: 1},
		{name: "text around", header: "(use this) <mailto:u@x.example> ", mailto: "u@x.example|unsubscribe|unsubscribe"},
		{name: "empty", header: " ", err: ErrNone},
		{name: "no brackets", header: "mailto:u@x.example", err: ErrNone},
		{name: "control character", header: "<https://x.example/\x01>", post: OneClickBody, err: ErrNone},
		{name: "userinfo", header: "<https://user@x.example/u>", post: OneClickBody, other: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := Parse(c.header, c.post)
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v", err)
			}
			got := ""
			if o.OneClick != nil {
				got = o.OneClick.String()
			}
			m := ""
			if o.Mailto != nil {
				m = o.Mailto.To + "|" + o.Mailto.Subject + "|" + o.Mailto.Body
			}
			if got != c.oneClick || m != c.mailto || len(o.Other) != c.other {
				t.Fatalf("got %q %q %v", got, m, o.Other)
			}
		})
	}
}

func TestPost(t *testing.T) {
	var n atomic.Int32
	var body, ctype string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		b, _ := io.ReadAll(r.Body)
		body, ctype = string(b), r.Header.Get("Content-Type")
		switch r.URL.Path {
		case "/gone":
			w.WriteHeader(http.StatusGone)
		case "/moved":
			http.Redirect(w, r, "https://elsewhere.example/", http.StatusFound)
		}
	}))
	defer srv.Close()
	c := &Client{HTTP: srv.Client()}
	c.HTTP.CheckRedirect = noRedirect
	u, _ := url.Parse(srv.URL + "/ok")
	if err := c.Post(context.Background(), u); err != nil || body != OneClickBody || ctype != "application/x-www-form-urlencoded" {
		t.Fatalf("post: %v %q %q", err, body, ctype)
	}
	for _, p := range []string{"/gone", "/moved"} {
		u, _ := url.Parse(srv.URL + p)
		var e *Error
		if err := c.Post(context.Background(), u); !errors.As(err, &e) || !e.Refused() || e.NeverReached() {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if n.Load() != 3 {
		t.Fatalf("%d requests", n.Load())
	}
	// The default client never reaches this machine, and an http URI is refused before any connection.
	var e *Error
	if err := NewClient().Post(context.Background(), u); !errors.As(err, &e) || !e.NeverReached() || !errors.Is(err, ErrNotPublic) {
		t.Fatalf("loopback: %v", err)
	}
	h, _ := url.Parse(strings.Replace(srv.URL, "https", "http", 1))
	if err := c.Post(context.Background(), h); !errors.As(err, &e) || !e.NeverReached() {
		t.Fatalf("http: %v", err)
	}
	if n.Load() != 3 {
		t.Fatalf("%d requests", n.Load())
	}
}

func FuzzParse(f *testing.F) {
	f.Add("<mailto:u@x.example?subject=a>, <https://x.example/u>", OneClickBody)
	f.Add("<http://x>", "")
	f.Fuzz(func(t *testing.T, header, post string) {
		o, err := Parse(header, post)
		if err != nil {
			return
		}
		if o.OneClick != nil && (o.OneClick.Scheme != "https" || o.OneClick.Host == "" || strings.TrimSpace(post) != OneClickBody) {
			t.Fatalf("one-click to %v", o.OneClick)
		}
		if o.Mailto != nil && (strings.ContainsAny(o.Mailto.Subject, "\r\n") || o.Mailto.To == "") {
			t.Fatalf("mailto %+v", o.Mailto)
		}
	})
}
