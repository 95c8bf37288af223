package gmail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/oauth2"
	gmailapi "google.golang.org/api/gmail/v1"

	"github.com/mailgate/mailgate/internal/atomicfile"
)

// OAuth scopes mailgate may ask for. mailgate needs ScopeReadonly (search,
// read) plus ScopeCompose (drafts, send). Never ask for gmail.metadata: it
// forbids q and format=full and wins when granted next to readonly.
const (
	ScopeReadonly = gmailapi.GmailReadonlyScope
	ScopeCompose  = gmailapi.GmailComposeScope
	ScopeSend     = gmailapi.GmailSendScope
	ScopeModify   = gmailapi.GmailModifyScope
	ScopeLabels   = gmailapi.GmailLabelsScope
	ScopeInsert   = gmailapi.GmailInsertScope
)

// Google's endpoints, used when the credentials file leaves them out.
const (
	defaultAuthURL  = "https://accounts.google.com/o/oauth2/auth"
	defaultTokenURL = "https://oauth2.googleapis.com/token"
)

// clientFile is the OAuth client JSON downloaded from Google Cloud Console.
type clientFile struct {
	Installed *clientSection `json:"installed"`
	Web       *clientSection `json:"web"`
}

type clientSection struct {
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret"`
	AuthURI      string   `json:"auth_uri"`
	TokenURI     string   `json:"token_uri"`
	RedirectURIs []string `json:"redirect_uris"`
}

// LoadOAuthConfig reads an OAuth client file ({"installed": {...}} for a
// Desktop app, or {"web": {...}}). Its token_uri is honoured so tests and
// proxies can point refreshes elsewhere. Credentials go in the form body
// (AuthStyleInParams), as Google expects; the default would first try HTTP
// Basic auth.
func LoadOAuthConfig(credentialsFile string, scopes ...string) (*oauth2.Config, error) {
	data, err := os.ReadFile(credentialsFile)
	if err != nil {
		return nil, fmt.Errorf("reading OAuth client credentials %s: %w (download the Desktop-app OAuth client JSON from Google Cloud Console)", credentialsFile, err)
	}
	var f clientFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parsing OAuth client credentials %s: %w", credentialsFile, err)
	}
	sec := f.Installed
	if sec == nil {
		sec = f.Web
	}
	if sec == nil || sec.ClientID == "" {
		return nil, fmt.Errorf("parsing OAuth client credentials %s: no \"installed\" or \"web\" client with a client_id (is this an OAuth client JSON?)", credentialsFile)
	}
	cfg := &oauth2.Config{
		ClientID:     sec.ClientID,
		ClientSecret: sec.ClientSecret,
		Scopes:       scopes,
		Endpoint: oauth2.Endpoint{
			AuthURL:   sec.AuthURI,
			TokenURL:  sec.TokenURI,
			AuthStyle: oauth2.AuthStyleInParams,
		},
	}
	if cfg.Endpoint.AuthURL == "" {
		cfg.Endpoint.AuthURL = defaultAuthURL
	}
	if cfg.Endpoint.TokenURL == "" {
		cfg.Endpoint.TokenURL = defaultTokenURL
	}
	return cfg, nil
}

// LoadToken reads a token saved by SaveToken (the golang.org/x/oauth2 Token
// JSON). A missing file keeps fs.ErrNotExist in its chain.
func LoadToken(path string) (*oauth2.Token, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading OAuth token %s: %w", path, err)
	}
	var tok oauth2.Token
	if err := json.Unmarshal(data, &tok); err != nil {
		return nil, fmt.Errorf("parsing OAuth token %s: %w", path, err)
	}
	if tok.AccessToken == "" && tok.RefreshToken == "" {
		return nil, fmt.Errorf("parsing OAuth token %s: neither access_token nor refresh_token is set", path)
	}
	return &tok, nil
}

// SaveToken writes tok to path atomically (atomicfile: a temporary file in
// the same directory, fsynced and made 0600, then renamed over path), so a
// crash or a concurrent reader never sees half a token. The directory is
// created 0700.
func SaveToken(path string, tok *oauth2.Token) error {
	if tok == nil {
		return errors.New("saving OAuth token: nil token")
	}
	t := *tok
	t.ExpiresIn = 0 // relative to an unknown "now"; Expiry is what counts
	data, err := json.MarshalIndent(&t, "", "  ")
	if err != nil {
		return fmt.Errorf("saving OAuth token %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("saving OAuth token %s: %w", path, err)
	}
	err = atomicfile.WriteFile(path, append(data, '\n'), 0o600)
	if err == nil {
		// Make the rename itself durable; best effort (not all systems
		// allow syncing a folder).
		_ = atomicfile.SyncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("saving OAuth token %s: %w", path, err)
	}
	return nil
}

// persistingSource refreshes through the oauth2 config and writes every new
// token back to disk, so a refresh (and a rotated refresh token) survives a
// restart. It also turns "expired and no refresh token" and invalid_grant
// into *ReauthError, and can be told to drop the cached access token after
// Gmail answers 401. When the grant it holds is gone, it first looks for a
// newer token in the file: `mailgate auth`, run while the server is up,
// then restores access without a restart.
type persistingSource struct {
	mu      sync.Mutex
	cfg     *oauth2.Config
	path    string
	ctx     context.Context // long-lived; carries oauth2.HTTPClient for refreshes
	log     *slog.Logger
	base    oauth2.TokenSource
	last    *oauth2.Token
	invalid bool      // force a refresh on the next Token call
	changed time.Time // when last last changed
}

func newPersistingSource(ctx context.Context, cfg *oauth2.Config, path string, tok *oauth2.Token, log *slog.Logger) *persistingSource {
	return &persistingSource{cfg: cfg, path: path, ctx: ctx, log: log,
		base: cfg.TokenSource(ctx, tok), last: tok}
}

func (p *persistingSource) Token() (*oauth2.Token, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.invalid {
		// Rebuild the refresher from a copy whose expiry is in the past:
		// the only way to make x/oauth2 refresh a token it thinks is valid.
		t := *p.last
		t.Expiry = time.Now().Add(-time.Hour)
		p.base = p.cfg.TokenSource(p.ctx, &t)
		p.invalid = false
	}
	tok, err := p.base.Token()
	if err != nil && (isInvalidGrant(err) || p.last.RefreshToken == "") && p.reload() {
		tok, err = p.base.Token()
	}
	if err != nil {
		if isInvalidGrant(err) {
			return nil, &ReauthError{Cause: err}
		}
		if p.last.RefreshToken == "" {
			return nil, &ReauthError{Cause: ErrNoRefreshToken}
		}
		return nil, fmt.Errorf("refreshing the Gmail access token: %w", err)
	}
	if tok.AccessToken != p.last.AccessToken {
		if tok.RefreshToken == "" {
			// Google usually omits refresh_token from refresh responses;
			// losing it would force a new sign-in.
			c := *tok
			c.RefreshToken = p.last.RefreshToken
			tok = &c
		}
		if err := SaveToken(p.path, tok); err != nil {
			// The call can still proceed with the new token; the next
			// refresh tries to save again.
			p.log.Warn("could not persist refreshed Gmail token", "err", err)
		} else {
			p.log.Info("refreshed Gmail access token", "expiry", tok.Expiry)
		}
		p.last = tok
		p.changed = time.Now()
	}
	return tok, nil
}

// reload adopts the token in the file when it differs from the one in use
// (a new sign-in saved it since), reporting whether it did.
func (p *persistingSource) reload() bool {
	tok, err := LoadToken(p.path)
	if err != nil || (tok.RefreshToken == p.last.RefreshToken && tok.AccessToken == p.last.AccessToken) {
		return false
	}
	p.log.Info("using the Gmail token saved since this server started (mailgate auth)", "file", p.path)
	p.base = p.cfg.TokenSource(p.ctx, tok)
	p.last = tok
	p.changed = time.Now()
	return true
}

// invalidate makes the next Token call refresh, whatever the expiry says,
// after a call started at since was answered 401. If the token already
// changed after since (a concurrent call saw the 401 first), the new token
// is used as is: one refresh per burst of 401s, not one per request. It
// reports false when there is nothing to refresh with.
func (p *persistingSource) invalidate(since time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last.RefreshToken == "" {
		return false
	}
	if p.changed.Before(since) {
		p.invalid = true
	}
	return true
}
