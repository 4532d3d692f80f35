package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo lays out a one-module repository with a package p exporting src's
// declarations, and a CHANGELOG.
func repo(t *testing.T, src, changelog string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":             "module example.com/m\n\ngo 1.26\n",
		"p/p.go":             "package p\n\n" + src,
		"CHANGELOG.md":       changelog,
		"internal/x/x.go":    "package x\n\nfunc Hidden() {}\n",
		"examples/e/main.go": "package main\n\nfunc Exported() {}\nfunc main() {}\n",
	}
	for name, body := range files {
		writeFile(t, filepath.Join(dir, name), body)
	}
	return dir
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

const unreleased = "# Changelog\n\n## Unreleased\n\n### Added\n- things\n"

func TestListingIsTheExportedAPI(t *testing.T) {
	dir := repo(t, `
// Config is documented.
type Config struct {
	Max  int
	hidden int
	Hook func(ctx interface{}, n int) (ok bool)
}
const (
	A Kind = iota
	B
)
type Kind int
type Runner interface{ Run(name string) error }
func New(c Config, opts ...string) (*Config, error) { return nil, nil }
func (c *Config) Apply(n int) {}
func (c Config) unexported() {}
func helper() {}
var ErrX error
`, unreleased)
	if _, err := run(dir, true); err != nil {
		t.Fatal(err)
	}
	got, err := readLines(filepath.Join(dir, "api", "steadfast.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg example.com/m/p, const A Kind = iota",
		"pkg example.com/m/p, const B Kind = iota",
		"pkg example.com/m/p, func New(Config, ...string) (*Config, error)",
		"pkg example.com/m/p, method (*Config) Apply(int)",
		"pkg example.com/m/p, type Config struct",
		"pkg example.com/m/p, type Config struct, Hook func(interface{}, int) bool",
		"pkg example.com/m/p, type Config struct, Max int",
		"pkg example.com/m/p, type Kind int",
		"pkg example.com/m/p, type Runner interface { Run }",
		"pkg example.com/m/p, type Runner interface, Run(string) error",
		"pkg example.com/m/p, var ErrX error",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("listing:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := run(dir, false); err != nil {
		t.Errorf("check of a listing just written: %v", err)
	}
}

// Renaming an exported function fails the check, and the listing cannot
// be written again until CHANGELOG names the old name under Breaking.
func TestRenamingAnExportedFunctionFails(t *testing.T) {
	dir := repo(t, "func Old() {}\n", unreleased)
	if _, err := run(dir, true); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "p/p.go"), "package p\n\nfunc New() {}\n")
	msgs, err := run(dir, false)
	if err == nil {
		t.Fatal("check passed after an exported function was renamed")
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"+ pkg example.com/m/p, func New()", "- pkg example.com/m/p, func Old()", "`p.Old`"} {
		if !strings.Contains(all, want) {
			t.Errorf("messages do not say %q:\n%s", want, all)
		}
	}
	if _, err := run(dir, true); err == nil {
		t.Error("-w wrote the listing with the removal not named under Breaking")
	}
	writeFile(t, filepath.Join(dir, "CHANGELOG.md"), unreleased+"\n### Breaking\n- `p.Old` is now `p.New`.\n\n## v0.1.0\n\n### Breaking\n- nothing\n")
	if _, err := run(dir, true); err != nil {
		t.Fatalf("-w with the removal named under Breaking: %v", err)
	}
	if _, err := run(dir, false); err != nil {
		t.Errorf("check after the listing was written: %v", err)
	}
}

// An addition fails the check too, until the listing is written; it
// needs no Breaking line.
func TestAnAdditionFailsUntilWritten(t *testing.T) {
	dir := repo(t, "func A() {}\n", unreleased)
	if _, err := run(dir, true); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "p/p.go"), "package p\n\nfunc A() {}\n\n// B is new.\nfunc B(n int) string { return \"\" }\n")
	if _, err := run(dir, false); err == nil {
		t.Fatal("check passed with a new exported function not in the listing")
	}
	if _, err := run(dir, true); err != nil {
		t.Fatal(err)
	}
	if _, err := run(dir, false); err != nil {
		t.Error(err)
	}
}

// A listing edited by hand to match a changed signature still fails: the
// last release's listing had the old one, and Breaking does not name it.
func TestAChangeSinceTheReleaseMustBeNamed(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := repo(t, "func F(n int) {}\n", "# Changelog\n\n## v0.1.0\n\n### Added\n- F\n")
	if _, err := run(dir, true); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "before")
	writeFile(t, filepath.Join(dir, "CHANGELOG.md"), "# Changelog\n\n## v1.0.0\n\n### Added\n- G\n\n## v0.1.0\n\n### Added\n- F\n")
	git("commit", "-qam", "release v1.0.0")
	writeFile(t, filepath.Join(dir, "p/p.go"), "package p\n\nfunc F(s string) {}\n")
	writeFile(t, filepath.Join(dir, "api/steadfast.txt"), "pkg example.com/m/p, func F(string)\n")
	git("commit", "-qam", "change F, listing by hand")
	msgs, err := run(dir, false)
	if err == nil || !strings.Contains(strings.Join(msgs, "\n"), "func F(int)") {
		t.Fatalf("check = %v, %q; want a failure naming F(int), removed since the release", err, msgs)
	}
}
