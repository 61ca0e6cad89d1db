// filecycles reports, per package, the files whose declarations refer to
// each other in a circle (strongly connected components of more than one
// file): by default through function and method calls only; with ALL=1
// through any package-level name (types, variables, constants too).
//
//	cd hack/filecycles && go run . ../.. ./cache/...
package main

import (
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo, Dir: os.Args[1]}
	pkgs, err := packages.Load(cfg, os.Args[2:]...)
	if err != nil {
		panic(err)
	}
	for _, p := range pkgs {
		edges := map[string]map[string]bool{}
		for id, obj := range p.TypesInfo.Uses {
			if obj.Pkg() != p.Types {
				continue
			}
			// package-level objects and methods/fields of package types
			if _, ok := obj.(*types.Func); !ok && os.Getenv("ALL") == "" {
				continue
			}
			if _, ok := obj.(*types.Func); !ok && obj.Parent() != p.Types.Scope() {
				continue
			}
			from := filepath.Base(p.Fset.Position(id.Pos()).Filename)
			to := filepath.Base(p.Fset.Position(obj.Pos()).Filename)
			if from == to || strings.HasSuffix(from, "_test.go") || strings.HasSuffix(to, "_test.go") {
				continue
			}
			if edges[from] == nil {
				edges[from] = map[string]bool{}
			}
			edges[from][to] = true
		}
		// Tarjan
		index := map[string]int{}
		low := map[string]int{}
		on := map[string]bool{}
		var stack []string
		i := 0
		var sccs [][]string
		var strong func(v string)
		strong = func(v string) {
			index[v], low[v] = i, i
			i++
			stack = append(stack, v)
			on[v] = true
			for w := range edges[v] {
				if _, ok := index[w]; !ok {
					strong(w)
					low[v] = min(low[v], low[w])
				} else if on[w] {
					low[v] = min(low[v], index[w])
				}
			}
			if low[v] == index[v] {
				var c []string
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					on[w] = false
					c = append(c, w)
					if w == v {
						break
					}
				}
				if len(c) > 1 {
					sort.Strings(c)
					sccs = append(sccs, c)
				}
			}
		}
		var keys []string
		for k := range edges {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, ok := index[k]; !ok {
				strong(k)
			}
		}
		for _, c := range sccs {
			fmt.Printf("%s: %s\n", p.PkgPath, strings.Join(c, " <-> "))
		}
	}
}
