package account

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"work", true}, {"home-2", true}, {"a", true}, {"x_y", true}, {"0", true},
		{strings.Repeat("a", MaxName), true},
		{"", false}, {strings.Repeat("a", MaxName+1), false}, {"Work", false}, {"-x", false}, {"_x", false},
		{"a b", false}, {"a/b", false}, {"../x", false}, {"a.json", false}, {"é", false}, {"a\n", false},
	} {
		err := ValidName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("ValidName(%q) = %v, want ok %t", tc.name, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "invalid account name") {
			t.Errorf("ValidName(%q) error %q does not say what is wrong", tc.name, err)
		}
	}
}

func TestListAndTokenFile(t *testing.T) {
	dir := t.TempDir()
	def := filepath.Join(dir, "auth", "token.json")
	got, err := List(def)
	if err != nil || !slices.Equal(got, []string{Default}) {
		t.Fatalf("List of a home without accounts = %v, %v; want [default]", got, err)
	}
	if TokenFile(def, "") != def || TokenFile(def, Default) != def {
		t.Fatal("the default account's token is GMAIL_TOKEN_FILE")
	}
	for _, n := range []string{"work", "b-2", "Bad", "default"} {
		p := filepath.Join(dir, "auth", "accounts", n+".json")
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if TokenFile(def, "work") != filepath.Join(dir, "auth", "accounts", "work.json") {
		t.Fatal(TokenFile(def, "work"))
	}
	got, err = List(def)
	if err != nil || !slices.Equal(got, []string{"default", "b-2", "work"}) {
		t.Fatalf("List = %v, %v; want default first, then the valid names in order", got, err)
	}
}

// FuzzValidName: a name ValidName accepts is a plain file name inside the
// accounts folder, whatever an agent or a human typed.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"work", "default", "../x", "a/b", "A", "x\x00", "é", strings.Repeat("z", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidName(name) != nil {
			return
		}
		def := filepath.Join("/h", "auth", "token.json")
		p := TokenFile(def, name)
		if name != Default && (filepath.Dir(p) != filepath.Join("/h", "auth", "accounts") || filepath.Base(p) != name+".json") {
			t.Fatalf("valid name %q gives token file %q", name, p)
		}
	})
}
