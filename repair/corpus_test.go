package repair_test

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"testing"

	"github.com/steadfast-go/steadfast/repair"
)

// entry is one malformed output of testdata/corpus.json (testdata/gen.go
// writes it).
type entry struct {
	Kind   string          `json:"kind"`
	Source string          `json:"source"`
	Output string          `json:"output"`
	Want   json.RawMessage `json:"want"`
	Tools  []string        `json:"tools"`
	Tool   string          `json:"tool"`
}

func corpus(t testing.TB) []entry {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var es []entry
	if err := json.Unmarshal(b, &es); err != nil {
		t.Fatal(err)
	}
	return es
}

// fixes reports whether repairing e gives what it should: its tool, its
// JSON (for a truncation, the members before the cut, and at most the cut
// one besides), or, where it holds no answer, no repair at all.
func fixes(t *testing.T, e entry) bool {
	if e.Tools != nil {
		got, ok := repair.ToolName(e.Output, e.Tools)
		return ok == (e.Tool != "") && got == e.Tool
	}
	got, ok := repair.JSON(e.Output)
	if len(e.Want) == 0 {
		return !ok
	}
	if !ok {
		return false
	}
	var g, w any
	if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal(e.Want, &w) != nil {
		t.Fatalf("%s: %q or the corpus' want does not parse", e.Kind, got)
	}
	if reflect.DeepEqual(g, w) {
		return true
	}
	gm, gok := g.(map[string]any)
	wm, wok := w.(map[string]any)
	if !gok || !wok || (e.Kind != "truncated_tail" && e.Kind != "truncated_after_key") || len(gm) > len(wm)+1 {
		return false
	}
	for k, v := range wm {
		if !reflect.DeepEqual(gm[k], v) {
			return false
		}
	}
	return true
}

// repair.JSON and repair.ToolName fix at least 60 % of the corpus, of every
// kind, at no cost, and make nothing of an output that holds no answer.
func TestCorpus(t *testing.T) {
	es := corpus(t)
	if len(es) < 200 {
		t.Fatalf("%d entries, want at least 200", len(es))
	}
	fixed, wrong, byKind, total := 0, 0, map[string]int{}, map[string]int{}
	for _, e := range es {
		total[e.Kind]++
		if fixes(t, e) {
			byKind[e.Kind]++
			if len(e.Want) > 0 || e.Tool != "" {
				fixed++
			}
			continue
		}
		if len(e.Want) == 0 && e.Tool == "" {
			t.Errorf("%s (%s): %q was made an answer of; want none", e.Kind, e.Source, e.Output)
		} else if madeWrong(e) {
			wrong++
			t.Logf("%s: %q repaired to something else than %s", e.Kind, e.Output, e.Want)
		}
	}
	kinds := make([]string, 0, len(total))
	for k := range total {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("%-22s %3d of %3d", k, byKind[k], total[k])
	}
	t.Logf("fixed %d of %d (%.1f %%); %d repaired to something else, which only the check can catch", fixed, len(es), 100*float64(fixed)/float64(len(es)), wrong)
	if float64(fixed) < 0.6*float64(len(es)) {
		t.Errorf("fixed %d of %d, want at least 60 %%", fixed, len(es))
	}
}

// madeWrong reports whether a repair of e was made that is not its answer.
func madeWrong(e entry) bool {
	if e.Tools != nil {
		_, ok := repair.ToolName(e.Output, e.Tools)
		return ok
	}
	_, ok := repair.JSON(e.Output)
	return ok
}
