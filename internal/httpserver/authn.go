package httpserver

import (
	"bytes"
	"io"
	"net/http"
	"strings"
)

// authenticate says who r speaks for: everyone (the static token, or no
// authentication configured), a JWT's principal, or nil with the reason a
// presented JWT was refused ("" when none was presented).
func (h *Handler) authenticate(r *http.Request) (*Principal, string) {
	if h.opts.JWT == nil {
		if h.auth.check(r) { // true for every request when no token is set
			return everyone, ""
		}
		return nil, ""
	}
	if h.auth.set && h.auth.check(r) {
		return everyone, ""
	}
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || strings.Count(token, ".") != 2 {
		return nil, ""
	}
	p, err := h.opts.JWT.Verify(r.Context(), token)
	if err != nil {
		return nil, err.Error()
	}
	return p, ""
}

// authorizeBody checks a JWT principal's POST (its body already read by
// readBody) and answers 403 when a message in it is not allowed.
func (h *Handler) authorizeBody(w http.ResponseWriter, r *http.Request, p *Principal) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return true
	}
	body, _ := io.ReadAll(r.Body) // a bytes.Buffer's: cannot fail
	r.Body = io.NopCloser(bytes.NewReader(body))
	why, id := h.authorize(r.Context(), p, body)
	if why == "" {
		return true
	}
	h.log.Info("request refused by role", "subject", p.Subject, "role", p.Role.String(), "reason", why)
	writeErrorID(w, http.StatusForbidden, codeInvalidRequest, why, id)
	return false
}

// writeUnauthorisedWhy is writeUnauthorised, saying why a JWT was refused
// when one was presented (expired, wrong key, wrong audience, …).
func writeUnauthorisedWhy(w http.ResponseWriter, why string) {
	if why == "" {
		writeUnauthorised(w)
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="mailgate", error="invalid_token"`)
	writeError(w, http.StatusUnauthorized, codeServerError, "unauthorized: the JWT was refused: "+why)
}
