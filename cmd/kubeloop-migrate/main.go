// Command kubeloop-migrate ports a controller-runtime module to kubeloop in
// place:
//
//	go run github.com/kubeloop/kubeloop/cmd/kubeloop-migrate@<version> [-dry-run] [-version v] [dir]
//
// It rewrites import paths, the ctrl alias package's names, renamed
// identifiers and option fields, event types, event recorder calls, the
// metrics server options, webhook builders and CustomDefaulter and
// CustomValidator implementations (to kubeloop's typed forms, where that is
// safe), and go.mod (kubeloop added, controller-runtime dropped once
// nothing imports it). What it cannot rewrite safely it leaves in place
// under a "// kubeloop-migrate: <what to do>" comment. It prints a summary:
// the files changed, the rewrites by kind and every manual item. Running
// it again changes nothing. With -dry-run it writes nothing and prints a
// unified diff of what it would change.
//
// dir (default ".") is the module root, the directory holding go.mod.
// vendor and testdata directories, hidden directories and nested modules
// are skipped.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

// defaultVersion is the kubeloop version written to go.mod when the
// command's own version is unknown (built from a checkout) and -version is
// not given.
const defaultVersion = "v0.1.0"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kubeloop-migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dryRun := fs.Bool("dry-run", false, "print a unified diff of the changes instead of writing them")
	version := fs.String("version", ownVersion(), "kubeloop version to require in go.mod")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kubeloop-migrate [-dry-run] [-version v] [dir]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return 2
	}
	dir := "."
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	m := &migration{root: dir, version: *version, dryRun: *dryRun, diff: stdout, rep: newReport()}
	if err := m.run(); err != nil {
		fmt.Fprintf(stderr, "kubeloop-migrate: %v\n", err)
		return 1
	}
	summary := stdout
	if *dryRun {
		summary = stderr // stdout holds the diff
	}
	m.rep.print(summary, *dryRun)
	return 0
}

// ownVersion is the version this command was built at (go run ...@v1.2.3),
// else defaultVersion.
func ownVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && strings.HasPrefix(bi.Main.Version, "v") && bi.Main.Path == klModule {
		return bi.Main.Version
	}
	return defaultVersion
}
