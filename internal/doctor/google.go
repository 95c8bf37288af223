package doctor

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/account"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/oauthflow"
)

// scopeMetadata is never requested by mailgate: granted next to
// gmail.readonly it wins, and Gmail then refuses search queries and full
// messages.
const scopeMetadata = "https://www.googleapis.com/auth/gmail.metadata"

// SetupDoc is where the fixes point for the longer story: its address, not
// a path in a clone, which a binary-only install (go install) does not have.
const SetupDoc = "https://github.com/mailgate/mailgate/blob/main/docs/SETUP.md"

const (
	fixAuth        = `run "mailgate auth"`
	fixCredentials = "in Google Cloud Console create an OAuth client of type Desktop app, download its JSON and save it as %s (see " + SetupDoc + ")"
)

// Credentials describes an OAuth client file.
type Credentials struct {
	Kind     string // "installed" (Desktop app) or "web"
	ClientID string
	TokenURI string // "" when the file leaves it to the default
}

// ReadCredentials parses an OAuth client file downloaded from Google Cloud
// Console. gmail.LoadOAuthConfig accepts the same files; this also says
// which kind of client it is, which decides whether a loopback sign-in can
// work.
func ReadCredentials(path string) (*Credentials, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading OAuth client %s: %w", path, err)
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parsing OAuth client %s: %w", path, err)
	}
	for _, kind := range []string{"installed", "web"} {
		raw, ok := f[kind]
		if !ok {
			continue
		}
		var sec struct {
			ClientID string `json:"client_id"`
			TokenURI string `json:"token_uri"`
		}
		if err := json.Unmarshal(raw, &sec); err != nil {
			return nil, fmt.Errorf("parsing OAuth client %s: %w", path, err)
		}
		if sec.ClientID == "" {
			continue
		}
		return &Credentials{Kind: kind, ClientID: sec.ClientID, TokenURI: sec.TokenURI}, nil
	}
	return nil, fmt.Errorf("parsing OAuth client %s: no \"installed\" or \"web\" client with a client_id", path)
}

// google runs the Gmail checks; each needs the ones before it, so the first
// failure ends them (its fix comes first anyway).
func (r *run) google() {
	credOK := r.credentials()
	tok, tokOK := r.token()
	if !credOK || !tokOK {
		return
	}
	fresh, ok := r.refresh(tok)
	if !ok {
		return
	}
	r.scopes(fresh)
	r.gmailAPI(fresh)
}

func (r *run) credentials() bool {
	path := r.cfg.CredentialsFile
	c := Check{Name: "credentials"}
	creds, err := ReadCredentials(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Status, c.Detail, c.Fix = Fail, "no OAuth client at "+path, fmt.Sprintf(fixCredentials, path)
	case err != nil:
		c.Status, c.Detail = Fail, err.Error()
		c.Fix = "download the client's JSON again (Google Cloud Console → Credentials → your Desktop client → Download JSON) and save it as " + path
	case creds.Kind == "web":
		c.Status, c.Detail = Warn, path+" is a Web application client: Google accepts only the redirect URIs registered for it, so mailgate auth's loopback sign-in fails"
		c.Fix = "create an OAuth client of type Desktop app and save its JSON as " + path
	default:
		c.Detail = fmt.Sprintf("%s: Desktop client %s, token_uri %s", path, shortID(creds.ClientID), cmp.Or(creds.TokenURI, "Google's default"))
		if u, err := url.Parse(creds.TokenURI); creds.TokenURI != "" && (err != nil || u.Scheme != "https" && !isLoopback(u.Hostname())) {
			c.Status = Warn
			c.Detail = fmt.Sprintf("%s: token_uri %q is not an https address, so tokens would travel in clear", path, creds.TokenURI)
			c.Fix = "download the client's JSON again from Google Cloud Console"
		} else if r.unix() && fileMode(path)&0o022 != 0 {
			// token_uri is honoured: whoever can edit this file can
			// send the refresh token to a server of their choosing.
			c.Status, c.Detail, c.Fix = Warn, path+" is writable by other users, who could redirect token refreshes", "chmod 600 "+path
		}
	}
	r.add(c)
	return err == nil
}

func (r *run) token() (*oauth2.Token, bool) {
	path := r.cfg.TokenFile
	c := Check{Name: "token"}
	fail := func(detail, fix string) (*oauth2.Token, bool) {
		c.Status, c.Detail, c.Fix = Fail, detail, fix
		r.add(c)
		return nil, false
	}
	tok, err := gmail.LoadToken(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail("no token at "+path+" (not signed in yet)", fixAuth)
	case err != nil:
		return fail(err.Error(), fixAuth+" (it rewrites the file)")
	case tok.RefreshToken == "":
		return fail(path+" has no refresh token, so Gmail access stops when the access token expires", fixAuth+" (it asks Google for offline access)")
	}
	if r.unix() {
		if m := fileMode(path); m&0o077 != 0 {
			// Still usable: report it and go on to the refresh.
			fail(fmt.Sprintf("%s is mode %04o: other users can read your Gmail token", path, m), "chmod 600 "+path)
			return tok, true
		}
		if dir := filepath.Dir(path); fileMode(dir)&0o007 != 0 {
			c.Status, c.Detail, c.Fix = Warn, fmt.Sprintf("%s (0600), but its folder %s is open to other users", path, dir), "chmod 700 "+dir
			r.add(c)
			return tok, true
		}
	}
	c.Detail = path + " (0600) has a refresh token"
	r.add(c)
	return tok, true
}

// refresh asks the token endpoint for a new access token, as serve does on
// its first Gmail call. The file is rewritten only if Google rotated the
// refresh token, so that the new one is not lost; otherwise it is left
// alone.
func (r *run) refresh(tok *oauth2.Token) (*oauth2.Token, bool) {
	c := Check{Name: "token refresh"}
	cfg, err := gmail.LoadOAuthConfig(r.cfg.CredentialsFile, r.o.Scopes...)
	if err != nil {
		c.Status, c.Detail, c.Fix = Fail, err.Error(), fmt.Sprintf(fixCredentials, r.cfg.CredentialsFile)
		r.add(c)
		return nil, false
	}
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	ctx = context.WithValue(ctx, oauth2.HTTPClient, r.o.HTTPClient)
	stale := &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Hour)}
	fresh, err := cfg.TokenSource(ctx, stale).Token()
	if err != nil {
		c.Status = Fail
		var re *oauth2.RetrieveError
		switch {
		case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
			c.Detail = "Google refused the refresh token (invalid_grant): access expired or was revoked"
			c.Fix = fixAuth + `; if this comes back every 7 days, your OAuth consent screen is in "Testing": publish it (see ` + SetupDoc + ")"
		case errors.As(err, &re) && (re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client"):
			c.Detail = fmt.Sprintf("the token endpoint refused the OAuth client (%s)", re.ErrorCode)
			c.Fix = "download the client's JSON again; if it is a new client, " + fixAuth + " afterwards"
		default:
			c.Detail = fmt.Sprintf("could not refresh at %s: %v", cfg.Endpoint.TokenURL, err)
			c.Fix = "check the network connection (and any proxy), then run mailgate doctor again"
		}
		r.add(c)
		return nil, false
	}
	if fresh.RefreshToken != "" && fresh.RefreshToken != tok.RefreshToken {
		if err := gmail.SaveToken(r.cfg.TokenFile, fresh); err != nil {
			c.Status, c.Detail, c.Fix = Fail, "Google rotated the refresh token but it could not be saved: "+err.Error(), fixAuth
			r.add(c)
			return nil, false
		}
	}
	if fresh.RefreshToken == "" {
		fresh.RefreshToken = tok.RefreshToken
	}
	c.Detail = fmt.Sprintf("new access token from %s, valid until %s", hostOf(cfg.Endpoint.TokenURL), fresh.Expiry.Local().Format("15:04"))
	r.add(c)
	return fresh, true
}

// scopes compares what the token endpoint says was granted (the scope field
// of the refresh answer, which Google always sends) with what the
// configuration needs. No tokeninfo call: the refresh already made says it.
func (r *run) scopes(tok *oauth2.Token) {
	c := Check{Name: "scopes"}
	s, _ := tok.Extra("scope").(string)
	granted := oauthflow.ParseScopes(s)
	// A broader grant stands in for a narrower scope (gmail.modify for
	// gmail.readonly, gmail.compose for gmail.send): oauthflow.Covers.
	missing := oauthflow.Missing(granted, r.o.Scopes)
	switch {
	case len(granted) == 0:
		c.Status, c.Detail = Warn, "the token endpoint did not say which scopes were granted, so they cannot be checked"
		c.Fix = "nothing if the gmail api check passes and tools work; otherwise " + fixAuth
	case slices.Contains(granted, scopeMetadata):
		c.Status, c.Detail = Fail, "gmail.metadata is granted, and Google lets it override gmail.readonly: search and read fail"
		c.Fix = "remove mailgate's access at https://myaccount.google.com/permissions, then " + fixAuth
	case len(missing) > 0:
		c.Status = Fail
		c.Detail = fmt.Sprintf("granted %s; missing %s", short(granted), short(missing))
		if r.o.ToolsLeftOut != nil {
			if left := r.o.ToolsLeftOut(granted); len(left) > 0 {
				c.Detail += "; tools left out: " + strings.Join(left, ", ")
			}
		}
		c.Fix = fixAuth + " and tick every checkbox on Google's consent screen"
	default:
		c.Detail = short(granted)
	}
	r.add(c)
}

// gmailAPI makes one cheap Gmail call (the profile) with the new access
// token: it proves the API is enabled for the Cloud project and the
// endpoint is reachable.
func (r *run) gmailAPI(tok *oauth2.Token) {
	c := Check{Name: "gmail api"}
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	cl, err := gmail.New(ctx, gmail.Options{TokenSource: oauth2.StaticTokenSource(tok), Endpoint: r.cfg.GmailEndpoint,
		HTTPClient: r.o.HTTPClient, MaxRetries: -1})
	var email string
	if err == nil {
		email, err = cl.Profile(ctx)
	}
	if err != nil {
		c.Status, c.Detail = Fail, err.Error()
		var pe *gmail.PermissionError
		msg := err.Error()
		switch {
		case errors.As(err, &pe):
			c.Fix = fixAuth + " and tick every checkbox on Google's consent screen"
		case strings.Contains(msg, "accessNotConfigured") || strings.Contains(msg, "SERVICE_DISABLED") || strings.Contains(msg, "has not been used"):
			c.Fix = "enable the Gmail API for your Cloud project (APIs & Services → Library → Gmail API → Enable), wait a minute, run mailgate doctor again"
		default:
			c.Fix = "check the network connection and GMAIL_API_ENDPOINT, then run mailgate doctor again"
		}
		r.add(c)
		return
	}
	where := "Gmail"
	if r.cfg.GmailEndpoint != "" {
		where = r.cfg.GmailEndpoint
	}
	c.Detail = fmt.Sprintf("signed in as %s (%s)", email, where)
	r.add(c)
}

func fileMode(path string) fs.FileMode {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Mode().Perm()
}

func short(scopes []string) string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = oauthflow.ShortScope(s)
	}
	return strings.Join(out, ", ")
}

// shortID keeps enough of a client id to recognise it.
func shortID(id string) string {
	if i := strings.IndexByte(id, '-'); i > 0 && i < len(id)-1 {
		return id[:i] + "-…"
	}
	return id
}

func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return u
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// accountRun is the checks of one account besides the default one.
type accountRun struct {
	*run
	name string
}

// accounts runs the token, refresh, scope and Gmail checks of every
// account besides the default one (mailgate auth --account NAME), each
// check named after its account and its fixes pointing at that account's
// sign-in. The default account's checks are google's, named as always.
// It returns the accounts' runs, for the live checks.
func (r *run) accounts() []accountRun {
	names, err := account.List(r.cfg.TokenFile)
	if err != nil {
		r.add(Check{Name: "accounts", Status: Warn, Detail: err.Error(), Fix: "check the permissions of " + filepath.Dir(account.TokenFile(r.cfg.TokenFile, "x"))})
		return nil
	}
	if len(names) > 1 {
		r.add(Check{Name: "accounts", Detail: strings.Join(names, ", ") + ` (the email tools' account argument; without it, "default")`})
	}
	var out []accountRun
	for _, n := range names[1:] {
		cfg := *r.cfg
		cfg.TokenFile = account.TokenFile(r.cfg.TokenFile, n)
		a := accountRun{run: &run{ctx: r.ctx, cfg: &cfg, o: r.o}, name: n}
		if tok, ok := a.token(); ok {
			if fresh, ok := a.refresh(tok); ok {
				a.scopes(fresh)
				a.gmailAPI(fresh)
			}
		}
		r.addFrom(a, 0)
		out = append(out, a)
	}
	return out
}

// addFrom adds a's checks from the i-th on, named after its account.
func (r *run) addFrom(a accountRun, i int) {
	for _, c := range a.checks[i:] {
		c.Name += " (account " + a.name + ")"
		c.Fix = strings.ReplaceAll(c.Fix, fixAuth, `run "mailgate auth --account `+a.name+`"`)
		r.add(c)
	}
}
