package httpserver

import (
	"context"
	"encoding/json"
	"net/http"
)

// The health endpoints need no token: a supervisor or load balancer probes
// them without credentials, and they reveal nothing but a status word (the
// reason a store check failed goes to the log, not to the caller) and, when
// the operator must know something (Options.Notice), a notice that names no
// path. They are still rate limited like every request.

func (h *Handler) liveness(w http.ResponseWriter, r *http.Request) {
	if !healthMethod(w, r) {
		return
	}
	writeStatus(w, http.StatusOK, "alive")
}

func (h *Handler) readiness(w http.ResponseWriter, r *http.Request) {
	if !healthMethod(w, r) {
		return
	}
	if h.draining.Load() {
		writeStatus(w, http.StatusServiceUnavailable, "draining")
		return
	}
	if h.opts.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.ReadyTimeout)
		defer cancel()
		if err := h.opts.Ready(ctx); err != nil {
			h.log.Warn("readiness check failed", "error", err)
			writeStatus(w, http.StatusServiceUnavailable, "unavailable")
			return
		}
	}
	if h.opts.Notice != nil {
		if n := h.opts.Notice(); n != "" {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ready", "notice": n})
			return
		}
	}
	writeStatus(w, http.StatusOK, "ready")
}

func healthMethod(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	writeError(w, http.StatusMethodNotAllowed, codeInvalidRequest, "method not allowed")
	return false
}

func writeStatus(w http.ResponseWriter, status int, word string) {
	writeJSON(w, status, map[string]string{"status": word})
}

func writeJSON(w http.ResponseWriter, status int, body map[string]string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}
