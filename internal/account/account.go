// Package account names the Gmail accounts of one mailgate home (issue 27
// item 2): the account whose token is GMAIL_TOKEN_FILE is "default", the
// first account, which every email tool uses when no account is named;
// `mailgate auth --account NAME` adds another, whose token lives beside the
// default one, in <token folder>/accounts/NAME.json. A name is part of file
// names, request files, audit lines and rate-limit buckets, so it is kept
// short and plain: 1 to 32 lower-case letters, digits, '-' or '_', starting
// with a letter or digit.
//
// Nothing is migrated: a home with one token has one account, "default",
// exactly as before.
package account

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Default is the name of the account of GMAIL_TOKEN_FILE: the first one.
const Default = "default"

// MaxName is the longest account name.
const MaxName = 32

// NameError is a refused account name.
type NameError struct{ Name string }

func (e *NameError) Error() string {
	return fmt.Sprintf("invalid account name %q: use 1 to %d lower-case letters, digits, '-' or '_', starting with a letter or digit (for example work or home-2)", e.Name, MaxName)
}

// ValidName checks name (see the package comment).
func ValidName(name string) error {
	if name == "" || len(name) > MaxName {
		return &NameError{Name: name}
	}
	for i, c := range []byte(name) {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '-' || c == '_') && i > 0:
		default:
			return &NameError{Name: name}
		}
	}
	return nil
}

// Resolve is the account a call names: "" is Default.
func Resolve(name string) string {
	if name == "" {
		return Default
	}
	return name
}

// IsDefault reports the default account ("" included).
func IsDefault(name string) bool { return name == "" || name == Default }

// TokenFile is where account name's token is kept, given the default
// account's token file (GMAIL_TOKEN_FILE).
func TokenFile(defaultToken, name string) string {
	if IsDefault(name) {
		return defaultToken
	}
	return filepath.Join(filepath.Dir(defaultToken), "accounts", name+".json")
}

// List returns the configured accounts: Default first (always: it is the
// account used when none is named, connected or not), then every account
// that has a token beside it, by name.
func List(defaultToken string) ([]string, error) {
	names := []string{Default}
	entries, err := os.ReadDir(filepath.Join(filepath.Dir(defaultToken), "accounts"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return names, fmt.Errorf("listing the accounts: %w", err)
	}
	var more []string
	for _, e := range entries {
		n, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || ValidName(n) != nil || n == Default {
			continue
		}
		more = append(more, n)
	}
	slices.Sort(more)
	return append(names, more...), nil
}

// UnknownError is an account no token was saved for.
type UnknownError struct {
	Name       string
	Configured []string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("Error: unknown account %q: the accounts configured are %s (add one with `mailgate auth --account %s`)",
		e.Name, strings.Join(e.Configured, ", "), e.Name)
}
