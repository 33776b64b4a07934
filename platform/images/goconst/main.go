// goconst prints the value of a Go string constant in the Go file on its standard input. The lab
// reads kind's source in Go's module cache with it:
// the node image ships kind's own storage manifest and names its images exactly as kind does,
// and the default node image's name is kind's, so none of them is copied into the lab.
//
// Usage: go run platform/images/goconst/main.go NAME < FILE.go
// FILE.go must not import anything (kind's const_*.go and defaults/image.go do not).
package main

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: goconst NAME < FILE.go")
		os.Exit(2)
	}
	name := os.Args[1]
	source, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "stdin.go", source, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pkg, err := new(types.Config).Check(file.Name.Name, fset, []*ast.File{file}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	object, ok := pkg.Scope().Lookup(name).(*types.Const)
	if !ok || object.Val().Kind() != constant.String {
		fmt.Fprintf(os.Stderr, "no string constant %s\n", name)
		os.Exit(1)
	}
	fmt.Print(constant.StringVal(object.Val()))
}
