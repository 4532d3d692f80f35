package steadfast_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// unreleased are the directories with Go code that no user installs: the
// module's own tooling, examples and benchmarks (VERSIONING.md).
var unreleased = regexp.MustCompile(`^(\.ci|bench|examples|internal|testdata)(/|$)|/(internal|examples|testdata)(/|$)`)

// doc.go's list of packages names every package a user can import, and
// no other: each public package of the root module, and each nested
// module's own package.
func TestDocListsEveryPackage(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	item := regexp.MustCompile(`^//   - ([^:(]+)`)
	for _, line := range strings.Split(string(src), "\n") {
		m := item.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, name := range strings.FieldsFunc(strings.ReplaceAll(m[1], " and ", ","), func(r rune) bool { return r == ',' }) {
			listed[strings.TrimSpace(name)] = true
		}
	}
	if len(listed) == 0 {
		t.Fatal("doc.go lists no package")
	}
	have := map[string]bool{}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == "." {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") || unreleased.MatchString(path) {
			return fs.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
			have[filepath.ToSlash(path)] = true // a nested module: its own package is its root
			return nil
		}
		if nested, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "go.mod")); len(nested) > 0 && filepath.Dir(path) != "." {
			return fs.SkipDir // inside a nested module: not the root module's
		}
		if goFiles(t, path) {
			have[filepath.ToSlash(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var missing, extra []string
	for p := range have {
		if !listed[p] {
			missing = append(missing, p)
		}
	}
	for p := range listed {
		if !have[p] {
			extra = append(extra, p)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Errorf("doc.go's package list: missing %v, naming what is not a package %v", missing, extra)
	}
}

// goFiles reports whether dir holds a Go file that is not a test.
func goFiles(t *testing.T, dir string) bool {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(names, func(n string) bool { return !strings.HasSuffix(n, "_test.go") })
}
