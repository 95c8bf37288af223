package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/mailgate/mailgate/internal/account"
	"github.com/mailgate/mailgate/internal/config"
	"github.com/mailgate/mailgate/internal/doctor"
	"github.com/mailgate/mailgate/internal/gmail"
	"github.com/mailgate/mailgate/internal/mcpserver"
	"github.com/mailgate/mailgate/internal/oauthflow"
)

// authCmd signs the user in to Google in the browser and saves the token
// where serve reads it. Everything it says goes to stderr.
func authCmd(ctx context.Context, env *environment, args []string) error {
	return runAuth(ctx, env, args, nil)
}

// runAuth is authCmd with the browser replaceable: tests pass one that
// follows Google's redirect itself. nil means the system's browser.
func runAuth(ctx context.Context, env *environment, args []string, browser func(string) error) error {
	fset := flag.NewFlagSet("auth", flag.ContinueOnError)
	port := fset.Int("port", 0, "loopback port for Google's redirect to 127.0.0.1 (default: a free port)")
	timeout := fset.Duration("timeout", oauthflow.DefaultTimeout, "how long to wait for the sign-in in the browser")
	noBrowser := fset.Bool("no-browser", false, "do not open a browser; only print the address")
	manual := fset.Bool("manual", false, "also accept, on stdin, the address the browser was sent to (for a browser on another machine)")
	acct := fset.String("account", account.Default, "the Gmail account to sign in: another name adds an account beside the first (\"default\"), with its own token and send limit")
	cfg, err := loadConfig(fset, args, env)
	if err != nil {
		return helpOrError(fset, err, env.stdout)
	}
	if fset.NArg() > 0 {
		return usageError("auth", "unexpected argument %q: auth takes only flags", fset.Arg(0))
	}
	if err := account.ValidName(*acct); err != nil {
		return usageError("auth", "--account: %v", err)
	}
	tokenFile := account.TokenFile(cfg.TokenFile, *acct)
	scopes := neededScopes(cfg)
	ocfg, err := gmail.LoadOAuthConfig(cfg.CredentialsFile, scopes...)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// The folder the user is told to save the file in exists when
			// they look for it (the home's auth/, private as the token's).
			if dir := filepath.Dir(cfg.CredentialsFile); dir == filepath.Join(cfg.Home, "auth") {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					return err
				}
			}
			fmt.Fprintf(env.stderr, authCredentialsHelp, cfg.CredentialsFile)
		}
		return err
	}
	if c, err := doctor.ReadCredentials(cfg.CredentialsFile); err == nil && c.Kind == "web" {
		fmt.Fprintf(env.stderr, "Warning: %s is a \"Web application\" client; Google accepts only the redirect URIs registered for it,\n"+
			"so this sign-in will likely end in redirect_uri_mismatch. Create a client of type \"Desktop app\" instead.\n", cfg.CredentialsFile)
	}
	fmt.Fprintf(env.stderr, "mailgate asks Google for: %s\n", shortScopes(scopes))
	if *noBrowser {
		browser = nil
	} else if browser == nil {
		browser = oauthflow.SystemBrowser(runtime.GOOS, env.getenv)
	}
	var paste io.Reader
	if *manual {
		paste = env.stdin
	}
	res, err := oauthflow.Run(ctx, oauthflow.Options{
		Config: ocfg, Port: *port, Timeout: *timeout, Browser: browser, Paste: paste, Log: env.stderr,
	})
	if errors.Is(err, context.Canceled) {
		// Not a clean exit: main treats a cancelled context as one.
		return errors.New("signing in to Google: interrupted before the sign-in finished; nothing was saved")
	}
	if err != nil {
		return fmt.Errorf("signing in to Google: %w", err)
	}
	if !account.IsDefault(*acct) {
		if err := os.MkdirAll(filepath.Dir(tokenFile), 0o700); err != nil {
			return err
		}
	}
	if err := gmail.SaveToken(tokenFile, res.Token); err != nil {
		return err
	}
	tightenTokenDir(env, cfg)
	fmt.Fprintf(env.stderr, "\nSigned in. Granted: %s.\nSaved the token to %s (mode 0600).\n", shortScopes(res.Granted), tokenFile)
	if !account.IsDefault(*acct) {
		fmt.Fprintf(env.stderr, "This is account %q: the email tools use it when called with account %q (its own send limit); without account they use \"default\".\n", *acct, *acct)
	}
	if email, err := gmailProfile(ctx, cfg, res.Token); err != nil {
		fmt.Fprintf(env.stderr, "But a test call to Gmail failed: %v\nRun \"mailgate doctor\" for the fix.\n", err)
	} else {
		fmt.Fprintf(env.stderr, "Gmail answers for %s.\n", email)
	}
	fmt.Fprint(env.stderr, authTestingNote)
	return nil
}

// tightenTokenDir makes the token's folder 0700 when it is mailgate's own
// ($MAILGATE_HOME/auth, which a git checkout creates 0755); any other folder
// (a home directory, say) is only pointed out, never changed.
func tightenTokenDir(env *environment, cfg *config.Config) {
	dir := filepath.Dir(cfg.TokenFile)
	fi, err := os.Stat(dir)
	if err != nil || runtime.GOOS == "windows" || fi.Mode().Perm()&0o077 == 0 {
		return
	}
	if dir == filepath.Join(cfg.Home, "auth") && os.Chmod(dir, 0o700) == nil {
		return
	}
	fmt.Fprintf(env.stderr, "Note: %s is open to other users; consider chmod 700 %s.\n", dir, dir)
}

// neededScopes are the OAuth scopes the configuration uses, and no more:
// those of the email tools when they are served (mcpserver.EmailScopes:
// gmail.readonly to search and read, gmail.compose for drafts, gmail.send
// to send, gmail.modify for labels and the trash), so a release that adds a
// kind of tool makes `mailgate auth` ask for its scope; mirroring agent
// threads into the mailbox adds gmail.readonly, gmail.insert and
// gmail.labels unless a scope already asked for covers them. Never
// gmail.metadata, which would override readonly. With neither (auth run for
// a later use of the email tools), the email tools' scopes.
func neededScopes(cfg *config.Config) []string {
	var s []string
	email := slices.Contains(cfg.Tools, config.ToolsEmail)
	if email || cfg.Mirror != "gmail" {
		s = mcpserver.EmailScopes()
	}
	if cfg.Mirror == "gmail" {
		for _, sc := range []string{gmail.ScopeReadonly, gmail.ScopeInsert, gmail.ScopeLabels} {
			if !oauthflow.Covers(s, sc) {
				s = append(s, sc)
			}
		}
	}
	return s
}

// toolsLeftOut is doctor's ToolsLeftOut: the email tools a token's scopes
// do not permit, when the email tools are served.
func toolsLeftOut(cfg *config.Config) func([]string) []string {
	if !slices.Contains(cfg.Tools, config.ToolsEmail) {
		return nil
	}
	return mcpserver.EmailToolsLeftOut
}

func shortScopes(scopes []string) string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = oauthflow.ShortScope(s)
	}
	return strings.Join(out, ", ")
}

// gmailProfile makes one cheap call with tok, to prove the sign-in works
// (and that the Gmail API is enabled for the Cloud project).
func gmailProfile(ctx context.Context, cfg *config.Config, tok *oauth2.Token) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := gmail.New(ctx, gmail.Options{TokenSource: oauth2.StaticTokenSource(tok), Endpoint: cfg.GmailEndpoint, MaxRetries: -1})
	if err != nil {
		return "", err
	}
	return c.Profile(ctx)
}

const authCredentialsHelp = `
mailgate signs in with an OAuth client of your own, from a Google Cloud project:
  1. https://console.cloud.google.com/ : create (or pick) a project.
  2. APIs & Services > Library > Gmail API > Enable.
  3. Google Auth Platform (OAuth consent screen): User type External; add your
     Gmail address under Audience > Test users.
  4. Google Auth Platform > Clients > Create client > Application type "Desktop app".
  5. Download its JSON and save it as
       %s
     (or set GMAIL_CREDENTIALS_FILE to where you saved it).
Then run "mailgate auth" again. Step by step:
  https://github.com/mailgate/mailgate/blob/main/docs/SETUP.md

`

const authTestingNote = `
Note: while your app's publishing status on the OAuth consent screen is "Testing",
Google ends this sign-in after 7 days (mailgate then reports invalid_grant and
asks you to run "mailgate auth" again). To stop that, publish the app:
Google Auth Platform > Audience > Publish app
(https://github.com/mailgate/mailgate/blob/main/docs/SETUP.md).
Next: "mailgate doctor", then "mailgate claude-config".
`
