//go:build ignore

// funclen fails when a library function of any module is longer than 60
// lines (tests, examples, bench/ and .ci/ aside): a function that long
// does more than one thing (issue #52).
//
// Run from the repository's root: go run .ci/funclen.go
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const most = 60

func main() {
	var long []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(name, ".") || name == "examples" || name == "testdata" || path == "bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			what := "a func literal"
			switch d := n.(type) {
			case *ast.FuncDecl:
				body, what = d.Body, d.Name.Name
			case *ast.FuncLit:
				body = d.Body
			}
			if body != nil {
				start := fset.Position(n.Pos())
				if lines := fset.Position(body.Rbrace).Line - start.Line + 1; lines > most {
					long = append(long, fmt.Sprintf("%s:%d: %s is %d lines", path, start.Line, what, lines))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	for _, l := range long {
		fmt.Println(l)
	}
	if len(long) > 0 {
		fmt.Fprintf(os.Stderr, "funclen: %d library functions over %d lines\n", len(long), most)
		os.Exit(1)
	}
	fmt.Printf("no library function over %d lines\n", most)
}
