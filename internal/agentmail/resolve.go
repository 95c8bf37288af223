package agentmail

import "context"

// CanonicalProjectKey is the project key's canonical form, the project's
// absolute path, as the tools resolve it: an absolute path (plain or
// URL-encoded) is cleaned, without asking the store (the project may not
// exist yet: ensure_project creates it); a slug is looked up. It fails for
// a relative path and for a slug that names no project. The HTTP server's
// project claims compare keys by it (a slug and a path of one project are
// the same project; two paths with the same slugified form are not).
func (s *Service) CanonicalProjectKey(ctx context.Context, key string) (string, error) {
	k := givenKey(key)
	if isAbsKey(k) {
		return cleanHumanKey(k)
	}
	p, err := s.readProject(ctx, k)
	if err != nil {
		return "", err
	}
	return p.HumanKey, nil
}

// readProject resolves a project key (see project) in a read transaction
// of its own.
func (s *Service) readProject(ctx context.Context, key string) (p Project, err error) {
	err = s.st.Read(ctx, func(tx Tx) (err error) {
		p, err = s.project(ctx, tx, key)
		return err
	})
	return p, err
}
