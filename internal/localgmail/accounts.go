package localgmail

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Accounts serves several mailboxes (one Server each) behind one address,
// as Google does for the several accounts of one user: the bearer token of
// a request says whose mailbox it reaches, so users/me resolves to the
// token's account and another account's address answers 403, as Gmail's
// "Delegation denied" (each Server checks its own); the token endpoint
// answers with the Server that issued the code or refresh token; the
// consent screen signs in the account SignInAs chose (the user picking an
// account in Google's chooser). Each Server keeps its own messages, labels,
// settings and send-as addresses.
type Accounts struct {
	mu      sync.RWMutex
	servers []*Server
	signIn  *Server
	static  map[string]*Server // access tokens of servers without RequireAuth
}

// NewAccounts serves first and more behind one address; first answers
// whatever names no account (and signs in until SignInAs).
func NewAccounts(first *Server, more ...*Server) *Accounts {
	return &Accounts{servers: append([]*Server{first}, more...), signIn: first, static: map[string]*Server{}}
}

// SignInAs makes the consent screen sign in s's account.
func (a *Accounts) SignInAs(s *Server) {
	a.mu.Lock()
	a.signIn = s
	a.mu.Unlock()
}

// Static routes requests carrying the bearer token tok to s (a Server
// without RequireAuth accepts any token; this says whose it is).
func (a *Accounts) Static(tok string, s *Server) {
	a.mu.Lock()
	a.static[tok] = s
	a.mu.Unlock()
}

// SetBaseURL sets every Server's base URL (AuthURL, TokenURL) to the
// shared address.
func (a *Accounts) SetBaseURL(u string) {
	for _, s := range a.servers {
		s.SetBaseURL(u)
	}
}

// ServeHTTP hands the request to the account it belongs to.
func (a *Accounts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.RLock()
	s := a.servers[0]
	switch r.URL.Path {
	case "/o/oauth2/auth":
		s = a.signIn
	case "/token":
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			a.mu.RUnlock()
			http.Error(w, "reading the request", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if f, err := url.ParseQuery(string(body)); err == nil {
			for _, c := range a.servers {
				if c.owns(f.Get("code"), f.Get("refresh_token")) {
					s = c
					break
				}
			}
		}
	default:
		_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		tok = strings.TrimSpace(tok)
		if c := a.static[tok]; c != nil {
			s = c
			break
		}
		for _, c := range a.servers {
			if c.owns("", "", tok) {
				s = c
				break
			}
		}
	}
	a.mu.RUnlock()
	s.ServeHTTP(w, r)
}

// owns reports whether s issued any of the given authorization code,
// refresh token or (third) access token.
func (s *Server) owns(code, refresh string, accessTok ...string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if code != "" && s.oa.codes[code] != nil {
		return true
	}
	if refresh != "" && s.oa.refresh[refresh] != nil {
		return true
	}
	for _, t := range accessTok {
		if t != "" && s.oa.access[t] != nil {
			return true
		}
	}
	return false
}
