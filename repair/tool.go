package repair

import "strings"

// ToolName returns the tool of tools that name stands for, when exactly
// one is that near: the same name; the same but for case, separators
// (get_weather, getWeather, get-weather) or a namespace before it
// (functions.get_weather); else the one closest by edits, at most one for
// a name of up to eight letters and two for a longer one. It reports false
// for an empty name, for none that near, and for two or more equally near,
// where choosing would be a guess.
func ToolName(name string, tools []string) (string, bool) {
	if name == "" {
		return "", false
	}
	for _, t := range tools {
		if t == name {
			return t, true
		}
	}
	key := fold(name)
	if i := strings.LastIndexAny(name, ".:/"); i >= 0 && i+1 < len(name) {
		if t, ok := unique(tools, func(t string) bool { return fold(t) == fold(name[i+1:]) }); ok {
			return t, true
		}
	}
	if t, ok := unique(tools, func(t string) bool { return fold(t) == key }); ok {
		return t, true
	}
	most := 1
	if len(key) > 8 {
		most = 2
	}
	best, bestTools := most+1, []string(nil)
	for _, t := range tools {
		switch d := edits(key, fold(t)); {
		case d < best:
			best, bestTools = d, []string{t}
		case d == best:
			bestTools = append(bestTools, t)
		}
	}
	if len(bestTools) == 1 {
		return bestTools[0], true
	}
	return "", false
}

// unique returns the one tool that match holds for.
func unique(tools []string, match func(string) bool) (string, bool) {
	found, n := "", 0
	for _, t := range tools {
		if match(t) {
			found, n = t, n+1
		}
	}
	return found, n == 1
}

// fold is a name without case or separators.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ', '.':
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// edits is the Levenshtein distance between a and b, in bytes.
func edits(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
