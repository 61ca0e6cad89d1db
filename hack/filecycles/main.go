// filecycles reports, per package, the files whose declarations refer to
// each other in a circle (strongly connected components of more than one
// file): by default through function and method calls only; with ALL=1
// through any package-level name (types, variables, constants too). With
// EDGES=1 it lists, under each circle, the edges between its files and the
// names each uses.
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
		why := map[[2]string]map[string]bool{} // file pair -> names used
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
			k := [2]string{from, to}
			if why[k] == nil {
				why[k] = map[string]bool{}
			}
			why[k][obj.Name()] = true
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
			if os.Getenv("EDGES") == "" {
				continue
			}
			in := map[string]bool{}
			for _, f := range c {
				in[f] = true
			}
			for _, f := range c {
				for t := range edges[f] {
					if in[t] {
						var names []string
						for n := range why[[2]string{f, t}] {
							names = append(names, n)
						}
						sort.Strings(names)
						fmt.Printf("\t%s -> %s: %s\n", f, t, strings.Join(names, ", "))
					}
				}
			}
		}
	}
}
