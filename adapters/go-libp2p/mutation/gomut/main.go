// Command gomut lists the mutants of Go source files, one JSON object per line, for
// fixturegen's mutation campaigns (adapters/go-libp2p/mutate list).
//
// No maintained Go mutation tool can be used here: of those on the Go module proxy only
// gremlins is served, and it neither applies one mutant nor prints what it changes, and it
// lacks the mutations that matter most in a verifier (an error check dropped, an error
// returned as nil). So this small go/ast mutator writes the usual operators of the
// mutation-testing literature, each as a span of the file and its replacement:
//
//	negate-condition   if C / for C        -> !(C)
//	drop-error-check   if err != nil {...} -> if false {...}   (the check is skipped)
//	nil-error          return ..., E       -> return ..., nil  (E: the error result)
//	comparison         == <-> !=, < -> <=, <= -> <, > -> >=, >= -> >
//	logical            && <-> ||
//	boolean            true <-> false
//	drop-call          a call statement    -> removed (a side effect skipped)
//
// Usage: gomut [-func NAME,...] FILE... (file paths relative to the working directory, which
// is the source tree's root). Lines and columns are 1-based, columns count characters, the
// end is exclusive: fixturegen's span convention.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"unicode/utf8"
)

type mutant struct {
	ID          string  `json:"id"`
	File        string  `json:"file"`
	Line        int     `json:"line"`
	Function    *string `json:"function"`
	Operator    string  `json:"operator"`
	Start       [2]int  `json:"start"`
	End         [2]int  `json:"end"`
	Replacement string  `json:"replacement"`
	Original    string  `json:"original"`
}

type lister struct {
	fset  *token.FileSet
	file  string
	src   []byte
	funcs map[string]bool
	seen  map[string]int
	out   *json.Encoder
}

func (l *lister) pos(p token.Pos) [2]int {
	position := l.fset.Position(p)
	lineStart := position.Offset - (position.Column - 1)
	col := utf8.RuneCount(l.src[lineStart:position.Offset]) + 1
	return [2]int{position.Line, col}
}

func (l *lister) emit(fn string, operator string, from, to token.Pos, replacement string) {
	start, end := l.pos(from), l.pos(to)
	original := string(l.src[l.fset.Position(from).Offset:l.fset.Position(to).Offset])
	if original == replacement {
		return
	}
	id := fmt.Sprintf("%s:%d:%d:%s", l.file, start[0], start[1], operator)
	l.seen[id]++
	if n := l.seen[id]; n > 1 {
		id = fmt.Sprintf("%s:%d", id, n)
	}
	name := fn
	_ = l.out.Encode(mutant{ID: id, File: l.file, Line: start[0], Function: &name, Operator: operator,
		Start: start, End: end, Replacement: replacement, Original: original})
}

func (l *lister) text(n ast.Node) string {
	return string(l.src[l.fset.Position(n.Pos()).Offset:l.fset.Position(n.End()).Offset])
}

func isErrNotNil(e ast.Expr) bool {
	b, ok := e.(*ast.BinaryExpr)
	if !ok || b.Op != token.NEQ {
		return false
	}
	id, ok := b.Y.(*ast.Ident)
	x, okx := b.X.(*ast.Ident)
	return ok && okx && id.Name == "nil" && strings.Contains(strings.ToLower(x.Name), "err")
}

var swaps = map[token.Token]string{
	token.EQL: "!=", token.NEQ: "==", token.LSS: "<=", token.LEQ: "<", token.GTR: ">=",
	token.GEQ: ">", token.LAND: "||", token.LOR: "&&",
}

func (l *lister) function(name string, fd *ast.FuncDecl) {
	errResult := -1
	if fd.Type.Results != nil {
		i := 0
		for _, field := range fd.Type.Results.List {
			count := len(field.Names)
			if count == 0 {
				count = 1
			}
			if id, ok := field.Type.(*ast.Ident); ok && id.Name == "error" {
				errResult = i + count - 1
			}
			i += count
		}
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return true
		case *ast.IfStmt:
			if isErrNotNil(n.Cond) {
				l.emit(name, "drop-error-check", n.Cond.Pos(), n.Cond.End(), "false")
			} else {
				l.emit(name, "negate-condition", n.Cond.Pos(), n.Cond.End(), "!("+l.text(n.Cond)+")")
			}
		case *ast.ForStmt:
			if n.Cond != nil {
				l.emit(name, "negate-condition", n.Cond.Pos(), n.Cond.End(), "!("+l.text(n.Cond)+")")
			}
		case *ast.BinaryExpr:
			if op, ok := swaps[n.Op]; ok && !isErrNotNil(n) {
				l.emit(name, "comparison", n.OpPos, n.OpPos+token.Pos(len(n.Op.String())), op)
			}
		case *ast.Ident:
			if n.Name == "true" {
				l.emit(name, "boolean", n.Pos(), n.End(), "false")
			} else if n.Name == "false" {
				l.emit(name, "boolean", n.Pos(), n.End(), "true")
			}
		case *ast.ReturnStmt:
			if errResult >= 0 && errResult < len(n.Results) {
				e := n.Results[errResult]
				if id, ok := e.(*ast.Ident); !ok || id.Name != "nil" {
					l.emit(name, "nil-error", e.Pos(), e.End(), "nil")
				}
			}
		case *ast.ExprStmt:
			if _, ok := n.X.(*ast.CallExpr); ok {
				l.emit(name, "drop-call", n.Pos(), n.End(), "_ = 0")
			}
		}
		return true
	})
}

func main() {
	funcs := flag.String("func", "", "only these functions (comma-separated; Recv.Name or Name)")
	flag.Parse()
	wanted := map[string]bool{}
	for _, f := range strings.Split(*funcs, ",") {
		if f != "" {
			wanted[f] = true
		}
	}
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	for _, file := range flag.Args() {
		src, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gomut:", err)
			os.Exit(2)
		}
		fset := token.NewFileSet()
		parsed, err := parser.ParseFile(fset, file, src, parser.ParseComments)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gomut:", err)
			os.Exit(2)
		}
		l := &lister{fset: fset, file: file, src: src, funcs: wanted, seen: map[string]int{}, out: out}
		for _, decl := range parsed.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				t := fd.Recv.List[0].Type
				if star, ok := t.(*ast.StarExpr); ok {
					t = star.X
				}
				if id, ok := t.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			if len(wanted) > 0 && !wanted[name] && !wanted[fd.Name.Name] {
				continue
			}
			l.function(name, fd)
		}
	}
}
