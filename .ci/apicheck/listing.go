package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// list returns the exported API of the module in dir, whose path is
// modPath: one line per declaration, as Go's own api/ files, sorted.
// internal/, examples/, testdata/, hidden directories, nested modules,
// package main and test files are not part of it.
func list(dir, modPath string) ([]string, error) {
	var lines []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel != "." {
			name := d.Name()
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "internal" || name == "examples" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		importPath := modPath
		if rel != "." {
			importPath += "/" + filepath.ToSlash(rel)
		}
		ls, err := listPackage(path, importPath)
		lines = append(lines, ls...)
		return err
	})
	sort.Strings(lines)
	return lines, err
}

// listPackage lists one directory's package, as the default build
// context (this machine's GOOS and GOARCH, no tags) sees it.
func listPackage(dir, importPath string) ([]string, error) {
	pkg, err := build.ImportDir(dir, 0)
	if _, none := err.(*build.NoGoError); none {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if pkg.Name == "main" {
		return nil, nil
	}
	fset := token.NewFileSet()
	var lines []string
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		w := &writer{fset: fset, prefix: "pkg " + importPath + ", "}
		for _, decl := range f.Decls {
			w.decl(decl)
		}
		lines = append(lines, w.lines...)
	}
	return lines, nil
}

// writer turns declarations into lines.
type writer struct {
	fset   *token.FileSet
	prefix string
	lines  []string
}

func (w *writer) emit(format string, args ...any) {
	w.lines = append(w.lines, w.prefix+fmt.Sprintf(format, args...))
}

func (w *writer) decl(decl ast.Decl) {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		w.funcDecl(d)
	case *ast.GenDecl:
		var typ, val ast.Expr // a const block's implicit repetition
		for i, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				w.typeSpec(s)
			case *ast.ValueSpec:
				if d.Tok == token.CONST && (s.Type != nil || len(s.Values) > 0 || i == 0) {
					typ, val = s.Type, nil
					if len(s.Values) > 0 {
						val = s.Values[0]
					}
				} else if d.Tok == token.VAR {
					typ = s.Type
				}
				w.valueSpec(d.Tok, s, typ, val)
			}
		}
	}
}

func (w *writer) funcDecl(d *ast.FuncDecl) {
	if !d.Name.IsExported() {
		return
	}
	sig := w.signature(d.Type)
	if d.Recv == nil {
		w.emit("func %s%s%s", d.Name.Name, w.typeParams(d.Type.TypeParams), sig)
		return
	}
	recv, ptr := receiver(d.Recv.List[0].Type)
	if recv == "" || !ast.IsExported(recv) {
		return
	}
	if ptr {
		recv = "*" + recv
	}
	w.emit("method (%s) %s%s", recv, d.Name.Name, sig)
}

func (w *writer) typeSpec(s *ast.TypeSpec) {
	if !s.Name.IsExported() {
		return
	}
	name := s.Name.Name + w.typeParams(s.TypeParams)
	if s.Assign.IsValid() {
		w.emit("type %s = %s", name, w.expr(s.Type))
		return
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		w.emit("type %s struct", name)
		for _, f := range t.Fields.List {
			ft := w.expr(f.Type)
			if len(f.Names) == 0 {
				if n, _ := receiver(f.Type); ast.IsExported(n) {
					w.emit("type %s struct, embedded %s", name, ft)
				}
				continue
			}
			for _, id := range f.Names {
				if id.IsExported() {
					w.emit("type %s struct, %s %s", name, id.Name, ft)
				}
			}
		}
	case *ast.InterfaceType:
		var methods []string
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				methods = append(methods, w.expr(m.Type)) // embedded, or a type set
				w.emit("type %s interface, embedded %s", name, w.expr(m.Type))
				continue
			}
			for _, id := range m.Names {
				methods = append(methods, id.Name)
				if id.IsExported() {
					w.emit("type %s interface, %s%s", name, id.Name, w.signature(m.Type.(*ast.FuncType)))
				}
			}
		}
		sort.Strings(methods)
		w.emit("type %s interface { %s }", name, strings.Join(methods, ", "))
	default:
		w.emit("type %s %s", name, w.expr(s.Type))
	}
}

func (w *writer) valueSpec(tok token.Token, s *ast.ValueSpec, typ, val ast.Expr) {
	for i, id := range s.Names {
		if !id.IsExported() {
			continue
		}
		line := tok.String() + " " + id.Name
		if typ != nil {
			line += " " + w.expr(typ)
		}
		if tok == token.CONST && len(s.Values) > i {
			line += " = " + w.expr(s.Values[i])
		} else if tok == token.CONST && val != nil && len(s.Values) == 0 {
			line += " = " + w.expr(val) // iota, repeated
		}
		w.emit("%s", line)
	}
}

// signature prints a func type's parameters and results without their
// names: renaming a parameter is not an API change.
func (w *writer) signature(t *ast.FuncType) string {
	s := w.expr(&ast.FuncType{Params: t.Params, Results: t.Results})
	return strings.TrimPrefix(s, "func")
}

func (w *writer) typeParams(fl *ast.FieldList) string {
	if fl == nil || len(fl.List) == 0 {
		return ""
	}
	var ps []string
	for _, f := range fl.List {
		for _, id := range f.Names {
			ps = append(ps, id.Name+" "+w.expr(f.Type))
		}
	}
	return "[" + strings.Join(ps, ", ") + "]"
}

// expr prints a type or value on one line, with every func type's
// parameter and result names dropped.
func (w *writer) expr(e ast.Expr) string {
	ast.Inspect(e, func(n ast.Node) bool {
		if ft, ok := n.(*ast.FuncType); ok {
			ft.Params = unnamed(ft.Params)
			ft.Results = unnamed(ft.Results)
		}
		return true
	})
	var b bytes.Buffer
	if err := printer.Fprint(&b, w.fset, e); err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// unnamed returns fl with one unnamed field per name.
func unnamed(fl *ast.FieldList) *ast.FieldList {
	if fl == nil {
		return nil
	}
	out := &ast.FieldList{}
	for _, f := range fl.List {
		for range max(1, len(f.Names)) {
			out.List = append(out.List, &ast.Field{Type: f.Type})
		}
	}
	return out
}

// receiver names a type expression's type, without pointer or type
// arguments, and says whether it was a pointer.
func receiver(e ast.Expr) (name string, ptr bool) {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e, ptr = t.X, true
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.SelectorExpr:
			return t.Sel.Name, ptr
		case *ast.Ident:
			return t.Name, ptr
		default:
			return "", ptr
		}
	}
}
