package main

import (
	"os"
	"regexp"
	"sort"
	"strings"
)

func readLines(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return splitLines(string(data)), nil
}

func splitLines(s string) []string {
	lines := []string{}
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

func writeLines(path string, lines []string) error {
	if err := os.MkdirAll(strings.TrimSuffix(path, "/"+lastElem(path)), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

func lastElem(path string) string { return path[strings.LastIndex(path, "/")+1:] }

// diff returns the lines of got not in want, and of want not in got.
func diff(want, got []string) (added, removed []string) {
	in := func(ls []string) map[string]bool {
		m := make(map[string]bool, len(ls))
		for _, l := range ls {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	for _, l := range got {
		if !w[l] {
			added = append(added, l)
		}
	}
	for _, l := range want {
		if !g[l] {
			removed = append(removed, l)
		}
	}
	return added, removed
}

func union(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range append(append([]string{}, a...), b...) {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

// breakingSection returns the text of the "Breaking" subsection of
// CHANGELOG.md's newest section ("" when it has none).
func breakingSection(path string) (string, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var b strings.Builder
	sections, in := 0, false
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			sections++
			in = false
		case strings.HasPrefix(l, "### "):
			in = sections == 1 && strings.HasPrefix(strings.TrimSpace(l[4:]), "Breaking")
		case in:
			b.WriteString(l + "\n")
		}
		if sections > 1 {
			break
		}
	}
	return b.String(), nil
}

var lineName = regexp.MustCompile(`^pkg ([^,]+), (?:func|const|var|type) ([A-Za-z0-9_]+)|^pkg ([^,]+), method \(\*?([A-Za-z0-9_]+)\) ([A-Za-z0-9_]+)`)

// qualified names a listing's declaration as a CHANGELOG names it:
// package.Name, package.Type.Method, or package.Type.Field for a line of a
// struct's or interface's.
func qualified(line string) string {
	m := lineName.FindStringSubmatch(line)
	if m == nil {
		return line
	}
	if m[1] != "" {
		q := lastElem(m[1]) + "." + m[2]
		if rest, ok := strings.CutPrefix(line, m[0]); ok {
			if f := strings.Fields(strings.TrimPrefix(strings.TrimPrefix(rest, " struct, "), " interface, ")); len(f) > 0 &&
				(strings.HasPrefix(rest, " struct, ") || strings.HasPrefix(rest, " interface, ")) {
				name := f[0]
				if name == "embedded" && len(f) > 1 {
					name = f[1]
				}
				q += "." + strings.SplitN(name, "(", 2)[0]
			}
		}
		return q
	}
	return lastElem(m[3]) + "." + m[4] + "." + m[5]
}

// named reports whether the Breaking text names the line's declaration.
func named(breaking, line string) bool {
	return breaking != "" && strings.Contains(breaking, qualified(line))
}
