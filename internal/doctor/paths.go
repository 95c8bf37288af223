package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mailgate/mailgate/internal/approval"
	"github.com/mailgate/mailgate/internal/store"
)

// dirProblem is why a folder mailgate writes to is unusable.
type dirProblem struct {
	path string // the path at fault (dir itself or the ancestor in the way)
	msg  string
	fix  string
}

// probeDir checks that dir is a folder mailgate can write to, or that it
// can be created (mailgate creates its folders on start). A probe file is
// written and removed, because permission bits do not tell the whole story
// (ACLs, read-only mounts, root); its name starts with a dot, which every
// reader of mailgate's folders skips.
func probeDir(dir, variable string) (exists bool, p *dirProblem) {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return true, &dirProblem{dir, dir + " is a file, not a folder", "point " + variable + " at a folder, or move the file away"}
	case err == nil:
		if err := writeProbe(dir); err != nil {
			return true, &dirProblem{dir, fmt.Sprintf("cannot write in %s (%v)", dir, unwrapPath(err)),
				"make it writable for you (chmod u+rwx " + dir + ") or point " + variable + " at a folder you own"}
		}
		return true, nil
	case !missing(err):
		return false, &dirProblem{dir, fmt.Sprintf("cannot reach %s (%v)", dir, unwrapPath(err)),
			"make its parent folders accessible to you, or point " + variable + " elsewhere"}
	}
	// Missing: the nearest existing ancestor must be a writable folder.
	anc := filepath.Dir(dir)
	for {
		fi, err := os.Stat(anc)
		if err == nil {
			if !fi.IsDir() {
				return false, &dirProblem{anc, fmt.Sprintf("%s cannot be created: %s is a file", dir, anc), "point " + variable + " at a path whose parents are folders"}
			}
			if err := writeProbe(anc); err != nil {
				return false, &dirProblem{anc, fmt.Sprintf("%s cannot be created: cannot write in %s (%v)", dir, anc, unwrapPath(err)),
					"create " + dir + " yourself, or point " + variable + " at a folder you own"}
			}
			return false, nil
		}
		if !missing(err) || filepath.Dir(anc) == anc {
			return false, &dirProblem{anc, fmt.Sprintf("%s cannot be created (%v)", dir, unwrapPath(err)), "point " + variable + " at a folder you own"}
		}
		anc = filepath.Dir(anc)
	}
}

// missing: the path does not exist, or a file stands where a parent folder
// should be (ENOTDIR), which the walk up then names.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

func writeProbe(dir string) error {
	f, err := os.CreateTemp(dir, ".mailgate-doctor-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// unwrapPath drops the *PathError wrapper, whose path the message already
// names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (r *run) vault() Check {
	root := r.cfg.VaultPath
	c := Check{Name: "vault"}
	exists, p := probeDir(root, "VAULT_PATH")
	if p != nil {
		c.Status, c.Detail, c.Fix = Fail, p.msg, p.fix
		return c
	}
	if !exists {
		c.Detail = root + " will be created on first start"
		return c
	}
	var counts []string
	loose, deadFound := "", false
	for _, d := range []string{approval.DirPending, approval.DirApproved, approval.DirRejected, approval.DirDone, approval.DirLogs} {
		dir := filepath.Join(root, d)
		exists, p := probeDir(dir, "VAULT_PATH")
		if p != nil {
			c.Status, c.Detail, c.Fix = Fail, p.msg, p.fix
			return c
		}
		if !exists {
			continue // created on start; root is writable
		}
		if r.unix() && loose == "" {
			if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o022 != 0 {
				loose = dir
			}
		}
		switch d {
		case approval.DirLogs:
		case approval.DirApproved:
			// Only approvals the gate can use count as approved; the dead
			// ones are named (dead.go).
			n := countMD(dir)
			dead := r.deadApprovals(root)
			entry := fmt.Sprintf("%d approved", n-len(dead))
			if len(dead) > 0 {
				entry += fmt.Sprintf(" (and %d in Approved/ that can never be used: %s)", len(dead), strings.Join(dead, "; "))
				deadFound = true
			}
			counts = append(counts, entry)
		default:
			counts = append(counts, fmt.Sprintf("%d %s", countMD(dir), strings.ToLower(strings.TrimSuffix(d, "_Approval"))))
		}
	}
	if r.unix() {
		if fi, err := os.Stat(root); err == nil && fi.Mode().Perm()&0o022 != 0 {
			loose = root
		}
	}
	c.Detail = root
	if len(counts) > 0 {
		c.Detail += ": " + strings.Join(counts, ", ")
	} else {
		c.Detail += " (its folders are created on first start)"
	}
	if deadFound {
		c.Status = Warn
		c.Fix = "delete each approval that can never be used, or let the agent ask again (its next identical call writes a fresh request); mailgate approvals lists them"
	}
	if loose != "" {
		// Whoever can write Approved/ can approve emails.
		c.Status = Warn
		c.Detail = loose + " is writable by other users, who could approve emails"
		c.Fix = "chmod go-w " + loose
	}
	return c
}

func countMD(dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") && strings.EqualFold(filepath.Ext(e.Name()), ".md") {
			n++
		}
	}
	return n
}

func (r *run) auditDir() Check {
	c := Check{Name: "audit log"}
	exists, p := probeDir(r.cfg.AuditDir, "AUDIT_LOG_DIR")
	switch {
	case p != nil:
		c.Status, c.Detail, c.Fix = Fail, p.msg, p.fix
	case !exists:
		c.Detail = r.cfg.AuditDir + " will be created on first start"
	default:
		c.Detail = r.cfg.AuditDir + " is writable"
	}
	return c
}

// store opens the state store as serve does, applies the migrations and
// runs SQLite's quick_check (on PostgreSQL, a round trip).
func (r *run) store() Check {
	path := r.cfg.DB
	c := Check{Name: "store"}
	fail := func(detail, fix string) Check {
		c.Status, c.Detail, c.Fix = Fail, detail, fix
		return c
	}
	if store.IsPostgres(path) {
		return r.postgresStore(c, fail)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fail(path+" is a folder, not a database file", "point MAILGATE_DB at a file path such as "+filepath.Join(path, "state.db"))
	}
	if _, p := probeDir(filepath.Dir(path), "MAILGATE_DB"); p != nil {
		return fail(p.msg, p.fix)
	}
	db, err := r.openStore()
	var damaged *store.DamagedError
	if errors.As(err, &damaged) {
		return fail(damaged.Path+" "+damaged.Problem+"; mailgate serve refuses it",
			"restore it from a backup, or move it away (mv "+damaged.Path+" "+damaged.Path+".broken) to start a new store "+
				"(the send-limit history is rebuilt from the audit log; the approval ledger and agent mail start empty)")
	}
	if err != nil {
		return fail(err.Error(),
			"point MAILGATE_DB at a file you can write; if the file is not an SQLite database, move it away")
	}
	if err := r.migrate(db, path); err != nil {
		return fail(err.Error(), "use the newest mailgate, or move the file away to start a fresh store")
	}
	var res string
	if err := db.QueryRowContext(r.ctx, "PRAGMA quick_check").Scan(&res); err != nil {
		return fail(fmt.Sprintf("checking %s: %v", path, err), "move the file away to start a fresh store")
	}
	if res != "ok" {
		return fail(fmt.Sprintf("%s is damaged (quick_check: %s)", path, res), "restore it from a backup, or move it away to start a fresh store")
	}
	c.Detail = path + ": opens, migrations applied, quick_check ok"
	return c
}

func (r *run) postgresStore(c Check, fail func(detail, fix string) Check) Check {
	where := store.Describe(r.cfg.DB)
	db, err := r.openStore()
	if err != nil {
		return fail(err.Error(), "check that the PostgreSQL server is up and that MAILGATE_DB names it, its database and a user that may create tables")
	}
	if err := r.migrate(db, where); err != nil {
		return fail(err.Error(), "use the newest mailgate; the user in MAILGATE_DB must be allowed to create tables")
	}
	var one int
	if err := db.QueryRowContext(r.ctx, "SELECT 1").Scan(&one); err != nil {
		return fail(fmt.Sprintf("querying %s: %v", where, err), "check the PostgreSQL server's log")
	}
	c.Detail = where + ": connects, migrations applied"
	return c
}

// migrate applies the migrations serve would apply (Options.Migrate, when
// given) to db, which where names.
func (r *run) migrate(db *store.DB, where string) error {
	if r.o.Migrate == nil {
		return nil
	}
	if err := r.o.Migrate(r.ctx, db); err != nil {
		return fmt.Errorf("applying migrations to %s: %v", where, err)
	}
	return nil
}

// deadApprovals names the files in Approved/ the gate can never use, each
// with why (approval.Vault.MarkDead), checking forged ones against the
// store's request ledger when there is a store.
func (r *run) deadApprovals(root string) []string {
	var ledger approval.Ledger
	if _, err := os.Stat(r.cfg.DB); err == nil || store.IsPostgres(r.cfg.DB) {
		if db, err := r.openStore(); err == nil {
			if l, err := approval.NewStoreLedger(r.ctx, db); err == nil {
				ledger = l
			}
		}
	}
	v, err := approval.Open(root, approval.Options{Mode: approval.Mode(r.cfg.ApprovalMode), TTL: r.cfg.ApprovalTTL, Ledger: ledger})
	if err != nil {
		return nil
	}
	items, err := v.List(approval.DirApproved)
	if err != nil {
		return nil
	}
	v.MarkDead(r.ctx, items, approval.DeadCheck{AttachmentsDir: r.cfg.AttachmentsDir})
	var out []string
	for _, it := range items {
		if it.Dead != "" {
			out = append(out, it.Name+": "+it.Dead)
		}
	}
	return out
}
