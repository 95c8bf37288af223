package approval

import (
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailgate/mailgate/internal/atomicfile"
)

// tmpPrefix names the files a decision holds aside while it moves a
// request (decide.go), and named the temporary files of the writer before
// atomicfile; atomicfile.IsTemp recognises today's. Readers skip both (every dot file is
// skipped), so a leftover is harmless to the protocol; it only clutters the
// folder a human looks at.
const tmpPrefix = ".tmp-"

// SweepTemp removes the temporary files a killed process left in the vault's
// folders, when they are older than minAge. A live write lasts milliseconds,
// so with minAge of minutes or more no writer can still own the file. Only
// regular files are removed (never a symlink or a folder), and the human's
// own files are never touched: the names are mailgate's. A request a killed
// decision held aside is never removed: it is recovered (recoverDecisions). It
// returns how many files it removed or recovered; a folder that cannot be
// read is reported but does not stop the others.
func (v *Vault) SweepTemp(minAge time.Duration) (int, error) {
	cutoff := v.o.Now().Add(-minAge)
	removed, errs := v.recoverDecisions(minAge)
	isTemp := func(name string) bool {
		return (strings.HasPrefix(name, tmpPrefix) || atomicfile.IsTemp(name)) &&
			!strings.HasPrefix(name, decidePrefix) // a request held by a decision: recovered, never removed
	}
	for d, e := range v.files([]string{DirPending, DirApproved, DirRejected, DirDone, DirLogs}, isTemp, "sweeping", &errs) {
		info, err := e.Info()
		if err != nil || info.ModTime().After(cutoff) {
			continue // gone already, or possibly still being written
		}
		if err := os.Remove(v.path(d, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("sweeping %s: %w", d, err))
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}

// files yields, folder by folder, the regular files of the vault's folders
// whose names keep accepts. A folder that cannot be read is reported in
// errs as "<doing> <folder>: <error>" and the others are still read.
func (v *Vault) files(folders []string, keep func(name string) bool, doing string, errs *[]error) iter.Seq2[string, fs.DirEntry] {
	return func(yield func(string, fs.DirEntry) bool) {
		for _, folder := range folders {
			entries, err := os.ReadDir(filepath.Join(v.root, folder))
			if err != nil {
				*errs = append(*errs, fmt.Errorf("%s %s: %w", doing, folder, err))
				continue
			}
			for _, e := range entries {
				if keep(e.Name()) && e.Type().IsRegular() && !yield(folder, e) {
					return
				}
			}
		}
	}
}

// A decision (decide.go) holds the request under a hidden name in its own
// folder while it checks, corrects and marks it, then moves it. A process
// killed in between leaves the held file, which every reader skips: the
// request would be neither pending nor decided. The hidden name carries
// what recovery needs, since nothing else survives the process:
//
//	.tmp-decide-<unix ms taken>-<tag>-<state>-<the request's name>
//
// state is holdHeld until the file is marked, then the folder it goes to
// (Approved or Rejected). Recovery (SweepTemp) waits until a hold is older
// than any live decision (maxDecision), then puts a held file back under
// its own name (undecided: the human decides again), and moves a marked
// one on into its folder (the decision was whole; only its last rename was
// lost).

// holdHeld is the state of a hold not yet marked.
const holdHeld = "held"

// decidePrefix starts every hold's name.
const decidePrefix = tmpPrefix + "decide-"

// maxDecision is longer than any live decision holds a file (milliseconds,
// seconds on a loaded disk): a hold older than this is a dead process's.
const maxDecision = 2 * time.Minute

// maxName is the longest file name the usual filesystems take.
const maxName = 255

// decideStep is called after each step of a decision; tests replace it to
// kill the process there.
var decideStep = func(state string) {}

// holdName is the hidden name of a request named name held since taken.
// A name too long to fit keeps its end (where mailgate's names carry the
// request's id).
func holdName(taken time.Time, tag, state, name string) string {
	head := decidePrefix + strconv.FormatInt(taken.UnixMilli(), 10) + "-" + tag + "-" + state + "-"
	for len(head)+len(name) > maxName {
		_, n := utf8.DecodeRuneInString(name)
		name = name[n:]
	}
	return head + name
}

// parseHold reads a hold's name; ok is false for a name of the format
// before holds said what they held (".tmp-decide-<hex>.md").
func parseHold(s string) (taken time.Time, state, name string, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(s, decidePrefix), "-", 4)
	if len(parts) != 4 || parts[3] == "" {
		return time.Time{}, "", "", false
	}
	ms, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return time.Time{}, "", "", false
	}
	switch parts[2] {
	case holdHeld, DirApproved, DirRejected:
	default:
		return time.Time{}, "", "", false
	}
	return time.UnixMilli(ms), parts[2], parts[3], true
}

// recoverDecisions recovers the holds of dead decisions in the folders a
// decision takes requests from: those older than maxDecision (or minAge,
// if shorter), and those of the older format (which say nothing of their
// age or name) older than minAge by their modification time. It returns
// how many it recovered.
func (v *Vault) recoverDecisions(minAge time.Duration) (int, []error) {
	now := v.o.Now()
	n := 0
	var errs []error
	isHold := func(name string) bool { return strings.HasPrefix(name, decidePrefix) }
	for folder, e := range v.files([]string{DirPending, DirApproved}, isHold, "recovering decisions in", &errs) {
		path := v.path(folder, e.Name())
		taken, state, name, ok := parseHold(e.Name())
		if !ok {
			info, err := e.Info()
			if err != nil || now.Sub(info.ModTime()) < minAge {
				continue
			}
			state, name = holdHeld, v.recoveredName(path)
		} else if now.Sub(taken) < min(minAge, maxDecision) {
			continue // perhaps a live decision
		}
		to := folder
		if state != holdHeld {
			to = state
		}
		if _, err := v.moveUnique(path, to, name); err != nil {
			if !errors.Is(err, fs.ErrNotExist) { // gone: another process recovered it
				errs = append(errs, fmt.Errorf("recovering %s/%s: %w", folder, e.Name(), err))
			}
			continue
		}
		n++
	}
	return n, errs
}

// recoveredName names a hold of the older format, which kept no name: by
// its request's id, where it is readable, so the gate finds it by name as
// it finds every request.
func (v *Vault) recoveredName(path string) string {
	name := "recovered-" + randomHex(4) + ".md"
	data, err := v.readOwn(path)
	if err != nil {
		return name
	}
	p, err := parseApproval(data)
	if err != nil {
		return name
	}
	if sha := strings.ToLower(strings.TrimSpace(p.ContentSHA256)); isHex(sha) {
		return "recovered_" + nameID(sha) + ".md"
	}
	return name
}

// moveUnique renames path into folder as name, or as name-2.md, name-3.md …
// (up to name-20.md) when that is taken: nothing is ever replaced. It
// returns the name the file has in folder.
func (v *Vault) moveUnique(path, folder, name string) (string, error) {
	base := strings.TrimSuffix(name, ".md")
	for attempt := 1; ; attempt++ {
		n := name
		if attempt > 1 {
			n = fmt.Sprintf("%s-%d.md", base, attempt)
		}
		err := atomicfile.RenameNoReplace(path, v.path(folder, n))
		if err == nil {
			return n, nil
		}
		if !isExist(err) || attempt == 20 {
			return "", err
		}
	}
}
