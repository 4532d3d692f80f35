//go:build ignore

// apicount prints how many names each package of the root module exports
// and fails when a package, or the module as a whole, is above its budget
// (DESIGN §10, lowered to what v1.0.0-rc.1 exports, plus the names §11
// adds: restarts, and ratelimit's Concurrency with its priorities, which
// take the module past §10's 290): exported funcs, methods on exported types, types, consts and
// vars, in non-test files. internal/ and examples/ are not counted; chaos is
// counted apart from the module's total. Nested modules (a directory with a
// go.mod of its own) are not part of the root module.
//
// Run from the repository's root: go run .ci/apicount.go
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// budgets are the most names a package may export; total bounds the
// packages counted together. DESIGN §11 names repair.JSON and
// repair.ToolName (#57); a provider's Reask needs the answer a check
// rejected (retry.RejectedOutput) and the one text every provider's
// re-ask says (llmhttp.ReaskText): the total is 302 with them. §11's
// fleet.NewConcurrency needs a Concurrency to take its limit from a
// store another module keeps (ratelimit.SharedLimit, and the Outcome it
// is handed): 304. §12's budget law (#69) is one fewer: 303. §12's
// concurrency limit "readable by a method" (Concurrency.Limit, #70) is
// one more, named by §12 itself: 304. §12's freeze asks core for 40 at
// most: core.StateContextKey and core.ItemContextKey, mutable, made
// unexported with core.ItemContext in their place: core 43, and the name
// saved pays for breaker.WithSlowCalls (§12's slow-call rate). §12's
// routing constraints (package route, 7 names, and pool.Runnable.RouteTags)
// are paid by ratelimit.BurstError folded into LimitedError (ratelimit 43),
// retry.TokenBudget.Tokens and hedge.ErrLost; a run's budget (budget.Run,
// WithRun, Spent, RunError, RunError.Error) by retry.BackoffSource, its
// String and its three constants (retry 73). (SharedLimit and Outcome, which only
// the fleet module needs, cannot move to internal/: a released nested
// module stands on the root's public API, .ci/internals.) §12's freeze
// (#74): retry at most 65, core at most 40, the root at most 300. retry
// gave up CallAttributer (a CallAttributes method is the protocol, as
// Retryable() is), Policies and its Options (ParsePolicies returns the
// default policy and the options), ConfigError and its Error (the message
// names the field), ErrAttemptAbandoned (a breaker counts any cause),
// OutcomeSuccess (no *Error has it) and HTTPStatus: 65. core gave up
// ItemContext and AcceptsResets (only the module's own layers read them:
// internal/ctxkeys) and StateKey.Update (pool's one use takes a lock of
// its own): 40. The root: 293.
var (
	budgets = map[string]int{"retry": 65, "core": 40, "llmhttp": 31, "ratelimit": 43, "repair": 2}
	total   = 293
	apart   = map[string]bool{"chaos": true}
)

func main() {
	verbose := len(os.Args) > 1 && os.Args[1] == "-v"
	counts, names, err := count(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicount:", err)
		os.Exit(2)
	}
	pkgs := make([]string, 0, len(counts))
	for p := range counts {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	sum, failed := 0, false
	for _, p := range pkgs {
		n := counts[p]
		line := fmt.Sprintf("%-28s %4d", p, n)
		if b, ok := budgets[p]; ok {
			line += fmt.Sprintf("   (budget %d)", b)
			if n > b {
				line += "   OVER"
				failed = true
			}
		}
		if apart[p] {
			line += "   (counted apart)"
		} else {
			sum += n
		}
		fmt.Println(line)
		if verbose {
			fmt.Println("    " + strings.Join(names[p], " "))
		}
	}
	line := fmt.Sprintf("%-28s %4d   (budget %d)", "root module", sum, total)
	if sum > total {
		line += "   OVER"
		failed = true
	}
	fmt.Println(line)
	if failed {
		fmt.Fprintln(os.Stderr, "apicount: the exported surface is above its budget (DESIGN §10)")
		os.Exit(1)
	}
}

// count walks the root module and returns the exported names per package
// directory (relative, slash-separated; "." is the root package).
func count(root string) (map[string]int, map[string][]string, error) {
	counts, names := map[string]int{}, map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel := filepath.ToSlash(path)
		name := d.Name()
		if rel != "." {
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" ||
				name == "internal" || name == "examples" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
		}
		ns, ok, err := exported(path)
		if err != nil {
			return err
		}
		if ok {
			counts[rel], names[rel] = len(ns), ns
		}
		return nil
	})
	return counts, names, err
}

// exported lists one directory's exported names; ok is false when it holds
// no library package.
func exported(dir string) (names []string, ok bool, err error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.SkipObjectResolution)
	if err != nil || len(pkgs) == 0 {
		return nil, false, err
	}
	for _, pkg := range pkgs {
		if pkg.Name == "main" {
			return nil, false, nil
		}
		for _, f := range pkg.Files {
			if ignored(f) {
				continue
			}
			for _, decl := range f.Decls {
				names = append(names, declared(decl)...)
			}
		}
	}
	sort.Strings(names)
	return names, true, nil
}

func ignored(f *ast.File) bool {
	for _, c := range f.Comments {
		for _, l := range c.List {
			if strings.HasPrefix(l.Text, "//go:build ignore") {
				return true
			}
		}
	}
	return false
}

func declared(decl ast.Decl) []string {
	var names []string
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return nil
		}
		if d.Recv == nil {
			return []string{d.Name.Name}
		}
		if recv := receiver(d.Recv.List[0].Type); recv != "" && ast.IsExported(recv) {
			return []string{recv + "." + d.Name.Name}
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					names = append(names, s.Name.Name)
				}
			case *ast.ValueSpec:
				for _, id := range s.Names {
					if id.IsExported() {
						names = append(names, id.Name)
					}
				}
			}
		}
	}
	return names
}

// receiver names a method's receiver type, without pointer or type
// parameters.
func receiver(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}
