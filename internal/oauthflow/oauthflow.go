// Package oauthflow signs a user in to Google with the OAuth 2.0 flow for
// installed apps (RFC 8252): a loopback redirect to http://127.0.0.1:PORT/,
// PKCE (S256) and a checked state, offline access with forced consent.
//
// Why each piece: Google blocks the old out-of-band copy-the-code flow, so
// the redirect must reach a listener on this machine; PKCE binds the code to
// this process, so a code seen by anyone else (another local program, a
// browser extension) is useless to them; the state ties the browser's answer
// to this sign-in; access_type=offline with prompt=consent makes Google
// return a refresh token every time, which is what servers built without it
// lose after an hour. Machines without a browser, or whose browser runs
// elsewhere, can paste the address the browser was sent to (Options.Paste).
//
// The package knows nothing about mailgate's files: Run returns the token
// and the granted scopes, and the caller saves it.
package oauthflow

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// DefaultTimeout is how long Run waits for the browser when Options.Timeout
// is zero.
const DefaultTimeout = 5 * time.Minute

// Options configure Run.
type Options struct {
	// Config holds the client and Google's endpoints; its Scopes are
	// requested. RedirectURL is ignored: Run sets it to its listener.
	Config *oauth2.Config
	// Required are the scopes that must be granted; default Config.Scopes.
	Required []string
	// Port is the loopback port to listen on; 0 picks a free one. A port
	// that is taken is an error (*PortInUseError), never a silent switch:
	// someone who names a port has a reason to (a firewall rule, an SSH
	// tunnel).
	Port int
	// Timeout bounds the whole sign-in; default DefaultTimeout.
	Timeout time.Duration
	// Browser opens the authorization URL; nil leaves it to the user. It
	// runs on its own goroutine, so it may itself follow the redirect back
	// to the listener (tests simulate a browser that way).
	Browser func(authURL string) error
	// Paste, when non-nil, is read line by line for the address the browser
	// was redirected to (or just the code), for browsers on another machine.
	Paste io.Reader
	// Log receives the instructions for the human (mailgate: stderr).
	Log io.Writer
	// HTTPClient is used for the code exchange; nil = http.DefaultClient.
	HTTPClient *http.Client
}

// Result is a successful sign-in.
type Result struct {
	Token *oauth2.Token
	// Granted are the scopes Google reports as granted (full URLs).
	Granted []string
	// RedirectURL is the loopback address used.
	RedirectURL string
}

// Errors a sign-in can end with; test with errors.Is / errors.As. Their
// texts say what to do, because the command prints them as they are.
var (
	ErrDenied         = errors.New(`access was denied on Google's consent screen: run "mailgate auth" again and choose Continue/Allow`)
	ErrStateMismatch  = errors.New("refusing the authorization response: its state does not match this sign-in (a stale browser tab or a forged request)")
	ErrNoRefreshToken = errors.New(`Google returned no refresh token, so access would stop within an hour: remove mailgate at https://myaccount.google.com/permissions and run "mailgate auth" again`)
	ErrTimeout        = errors.New(`timed out waiting for the browser sign-in: run "mailgate auth" again (--timeout to wait longer, --manual to paste the address instead)`)
)

// PortInUseError means the requested loopback port could not be bound.
type PortInUseError struct {
	Port int
	Err  error
}

func (e *PortInUseError) Error() string {
	alt := e.Port + 1
	if alt > 65535 {
		alt = 49152
	}
	return fmt.Sprintf("port %d on 127.0.0.1 is not available (%v): stop the program using it, choose another with --port %d, or leave out --port to use a free port",
		e.Port, e.Err, alt)
}

func (e *PortInUseError) Unwrap() error { return e.Err }

// ScopeError means the user unticked permissions mailgate needs on Google's
// granular consent screen.
type ScopeError struct {
	Missing, Granted []string // full scope URLs
}

func (e *ScopeError) Error() string {
	granted := "nothing"
	if len(e.Granted) > 0 {
		granted = strings.Join(shortScopes(e.Granted), ", ")
	}
	return fmt.Sprintf(`Google granted only %s; mailgate also needs %s: run "mailgate auth" again and tick every checkbox on the consent screen`,
		granted, strings.Join(shortScopes(e.Missing), ", "))
}

// ShortScope turns https://www.googleapis.com/auth/gmail.compose into
// gmail.compose, the name Google's consent screen and docs use.
func ShortScope(s string) string { return strings.TrimPrefix(s, scopePrefix) }

const scopePrefix = "https://www.googleapis.com/auth/"

func shortScopes(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = ShortScope(s)
	}
	return out
}

// answer is one authorization response, from the listener or pasted.
type answer struct {
	query url.Values
	bare  bool       // a pasted bare code: there is no state to check
	done  chan error // the listener's page waits on it; nil when pasted
}

// Run performs the sign-in and returns the token, or an error that says
// what to do. Nothing is saved.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Config == nil {
		return nil, errors.New("signing in: no OAuth client configuration")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	required := o.Required
	if required == nil {
		required = o.Config.Scopes
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.Port)))
	if err != nil {
		if o.Port != 0 {
			return nil, &PortInUseError{Port: o.Port, Err: err}
		}
		return nil, fmt.Errorf("listening on 127.0.0.1 for the sign-in redirect: %w", err)
	}
	cfg := *o.Config
	cfg.RedirectURL = fmt.Sprintf("http://127.0.0.1:%d/", ln.Addr().(*net.TCPAddr).Port)
	state := randomState()
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL(state, oauth2.AccessTypeOffline, oauth2.ApprovalForce, oauth2.S256ChallengeOption(verifier))

	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	answers := make(chan answer)
	srv := &http.Server{Handler: &callback{ctx: ctx, answers: answers}, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer func() {
		// Let the page of the answer that ended the flow reach the browser.
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer scancel()
		srv.Shutdown(sctx)
	}()

	fmt.Fprintf(o.Log, "\nOpen this address in a browser and sign in with the Gmail account mailgate should use:\n\n    %s\n\n", authURL)
	if o.Paste != nil {
		fmt.Fprintf(o.Log, "After you allow access the browser goes to %s… If that page does not load (the browser\n"+
			"runs on another machine), copy the whole address from the address bar, paste it here and press Enter.\n\n", cfg.RedirectURL)
		go readPaste(ctx, o.Paste, answers, o.Log)
	}
	fmt.Fprintf(o.Log, "Waiting up to %s for the sign-in…\n", o.Timeout)
	if o.Browser != nil {
		go func() {
			if err := o.Browser(authURL); err != nil {
				fmt.Fprintf(o.Log, "(could not open a browser: %v; open the address above yourself)\n", err)
			}
		}()
	}

	select {
	case <-ctx.Done():
		if parent.Err() != nil {
			return nil, fmt.Errorf("signing in: %w", parent.Err())
		}
		return nil, ErrTimeout
	case a := <-answers:
		xctx := ctx
		if o.HTTPClient != nil {
			xctx = context.WithValue(ctx, oauth2.HTTPClient, o.HTTPClient)
		}
		res, err := complete(xctx, &cfg, a, state, verifier, required)
		if a.done != nil {
			a.done <- err
		}
		return res, err
	}
}

// complete checks an authorization response and exchanges its code.
func complete(ctx context.Context, cfg *oauth2.Config, a answer, state, verifier string, required []string) (*Result, error) {
	q := a.query
	if !a.bare && subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1 {
		return nil, ErrStateMismatch
	}
	if e := q.Get("error"); e != "" {
		if e == "access_denied" {
			return nil, ErrDenied
		}
		return nil, fmt.Errorf("signing in: Google answered %s (%s)", e, q.Get("error_description"))
	}
	tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		return nil, fmt.Errorf("exchanging the authorization code: %w", err)
	}
	if tok.RefreshToken == "" {
		return nil, ErrNoRefreshToken
	}
	granted := grantedScopes(tok, q.Get("scope"), cfg.Scopes)
	if missing := Missing(granted, required); len(missing) > 0 {
		return nil, &ScopeError{Missing: missing, Granted: granted}
	}
	return &Result{Token: tok, Granted: granted, RedirectURL: cfg.RedirectURL}, nil
}

// grantedScopes reads the token response's scope (Google always sends it),
// else the redirect's, else — as RFC 6749 §5.1 says an omitted scope means —
// the requested ones.
func grantedScopes(tok *oauth2.Token, redirectScope string, requested []string) []string {
	s, _ := tok.Extra("scope").(string)
	if strings.TrimSpace(s) == "" {
		s = redirectScope
	}
	if strings.TrimSpace(s) == "" {
		return slices.Clone(requested)
	}
	return ParseScopes(s)
}

// ParseScopes splits a space-separated scope string, expanding short names
// such as "gmail.readonly" to full URLs.
func ParseScopes(s string) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		if !strings.Contains(f, "://") && strings.HasPrefix(f, "gmail.") {
			f = scopePrefix + f
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func randomState() string {
	b := make([]byte, 24)
	rand.Read(b) // never fails (crypto/rand panics on a broken source)
	return base64.RawURLEncoding.EncodeToString(b)
}
