package retry_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The package doc names every telemetry name the package's code spells
// (a "retry." string, a span event, an attribute key) and every Outcome
// constant among the ways a call stops: a name added to the code and not
// to the doc fails here.
func TestPackageDocNamesEveryNameAndOutcome(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(doc), "//", " ")), " ")
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	telemetry := regexp.MustCompile(`^(retry|repair)\.[a-z_.]+$`)
	names := map[string]bool{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && telemetry.MatchString(s) {
					names[s] = true
				}
			case *ast.ValueSpec:
				for _, id := range n.Names {
					if strings.HasPrefix(id.Name, "Outcome") && id.IsExported() {
						names[id.Name] = true
					}
				}
			}
			return true
		})
	}
	if len(names) < 20 {
		t.Fatalf("found %d names in the code, want the package's telemetry names and outcomes", len(names))
	}
	for name := range names {
		if !regexp.MustCompile(`(^|[^a-z_.])` + regexp.QuoteMeta(name) + `([^a-z_]|$)`).MatchString(text) {
			t.Errorf("doc.go does not name %s", name)
		}
	}
}
