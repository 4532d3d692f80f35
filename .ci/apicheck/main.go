// apicheck holds each module's exported API against its listing under
// api/ (one line per exported declaration, as Go's own api/ directory):
// any difference fails until the listing is written again, and a
// declaration removed or changed since the last release must be named
// under "Breaking" in CHANGELOG.md's newest section.
//
//	go run ./.ci/apicheck      check every released module
//	go run ./.ci/apicheck -w   write the listings (refused while a removal
//	                           is not named under Breaking)
//
// Run from the repository's root. The last release is the commit before
// the newest one that changed a "## vX.Y.Z" heading of CHANGELOG.md; a
// checkout without that history checks only the listings.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	write := flag.Bool("w", false, "write the listings under api/")
	flag.Parse()
	msgs, err := run(".", *write)
	for _, m := range msgs {
		fmt.Fprintln(os.Stderr, m)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicheck:", err)
		os.Exit(1)
	}
}

// run checks (or, with write, writes) the listings of every module of the
// repository at root and returns what it has to say.
func run(root string, write bool) ([]string, error) {
	mods, err := modules(root)
	if err != nil {
		return nil, err
	}
	breaking, err := breakingSection(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		return nil, err
	}
	base := lastRelease(root)
	var msgs []string
	failed := false
	for _, m := range mods {
		got, err := list(filepath.Join(root, m.dir), m.path)
		if err != nil {
			return msgs, fmt.Errorf("module %s: %w", m.path, err)
		}
		file := filepath.Join("api", m.listing())
		want, err := readLines(filepath.Join(root, file))
		if err != nil && !os.IsNotExist(err) {
			return msgs, err
		}
		added, removed := diff(want, got)
		// What the last release had and the code lost must be named
		// under Breaking, whatever the listing says now.
		released := gitLines(root, base, file)
		_, lost := diff(released, got)
		var unnamed []string
		for _, l := range union(lost, removed) {
			if !named(breaking, l) {
				unnamed = append(unnamed, l)
			}
		}
		for _, l := range unnamed {
			msgs = append(msgs, fmt.Sprintf("%s: removed or changed, and not named under Breaking in CHANGELOG.md (as `%s`): %s", file, qualified(l), l))
		}
		if write {
			if len(unnamed) == 0 && (len(added) > 0 || len(removed) > 0 || want == nil) {
				if err := writeLines(filepath.Join(root, file), got); err != nil {
					return msgs, err
				}
				msgs = append(msgs, fmt.Sprintf("%s: written (%d declarations, +%d -%d)", file, len(got), len(added), len(removed)))
			}
			failed = failed || len(unnamed) > 0
			continue
		}
		if want == nil {
			msgs = append(msgs, fmt.Sprintf("%s: missing; write it with go run ./.ci/apicheck -w", file))
			failed = true
			continue
		}
		for _, l := range added {
			msgs = append(msgs, fmt.Sprintf("%s: + %s", file, l))
		}
		for _, l := range removed {
			msgs = append(msgs, fmt.Sprintf("%s: - %s", file, l))
		}
		failed = failed || len(added) > 0 || len(removed) > 0 || len(unnamed) > 0
	}
	if failed {
		if write {
			return msgs, fmt.Errorf("listings not written: name every removed or changed declaration under Breaking first")
		}
		return msgs, fmt.Errorf("the exported API differs from api/: if the change is meant, name removals under Breaking in CHANGELOG.md and run go run ./.ci/apicheck -w")
	}
	return msgs, nil
}

// module is one released module of the repository.
type module struct{ dir, path string }

// listing is the module's file under api/: its directory with slashes as
// dashes, "steadfast" for the root.
func (m module) listing() string {
	if m.dir == "." {
		return "steadfast.txt"
	}
	return strings.ReplaceAll(m.dir, "/", "-") + ".txt"
}

// modules finds the released modules: every go.mod but bench's, the
// examples' modules and those under hidden or testdata directories.
func modules(root string) ([]module, error) {
	var mods []module
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "examples" || rel == "bench") {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "go.mod" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(data), "\n") {
			if p, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
				mods = append(mods, module{dir: filepath.ToSlash(filepath.Dir(rel)), path: strings.Trim(p, `"`)})
				return nil
			}
		}
		return fmt.Errorf("%s: no module line", path)
	})
	sort.Slice(mods, func(i, j int) bool { return mods[i].dir < mods[j].dir })
	return mods, err
}

// lastRelease is the commit before the newest that changed a release
// heading of CHANGELOG.md, or "" without git history.
func lastRelease(root string) string {
	out, err := exec.Command("git", "-C", root, "log", "-1", "--format=%H", "-G", `^## v[0-9]`, "--", "CHANGELOG.md").Output()
	if err != nil || len(strings.TrimSpace(string(out))) == 0 {
		return ""
	}
	return strings.TrimSpace(string(out)) + "^"
}

// gitLines reads a listing as it was at rev; nil when rev is "" or the
// file did not exist then.
func gitLines(root, rev, file string) []string {
	if rev == "" {
		return nil
	}
	out, err := exec.Command("git", "-C", root, "show", rev+":"+filepath.ToSlash(file)).Output()
	if err != nil {
		return nil
	}
	return splitLines(string(out))
}
