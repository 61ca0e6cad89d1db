// Command kubeloop-migrate ports a controller-runtime module to kubeloop in
// place:
//
//	go run github.com/kubeloop/kubeloop/cmd/kubeloop-migrate@<version> [-dry-run] [-version v] [dir]
//
// or, from a checkout of kubeloop, build it first and run the binary on
// the module (go run /path/to/kubeloop/cmd/kubeloop-migrate from inside
// the target module fails: the go command looks for that directory among
// the target's own packages):
//
//	go build -o /tmp/kubeloop-migrate ./cmd/kubeloop-migrate
//	/tmp/kubeloop-migrate [-dry-run] /path/to/operator
//
// Built from a checkout, it requires kubeloop at defaultVersion and prints
// the go mod edit -replace line that points the module at the checkout (two
// lines when the module also needs kubeloop's log/zap/zapraw module).
//
// It rewrites import paths, the ctrl alias package's names, renamed
// identifiers and option fields, event types, event recorder calls, the
// metrics server options, webhook builders and CustomDefaulter and
// CustomValidator implementations (to kubeloop's typed forms, where that is
// safe), controller-runtime's pkg/log/zap (to kubeloop's log/zap on
// log/slog, with zapcore's levels and time encoders; or, in a package that
// uses its go.uber.org/zap types such as NewRaw's *zap.Logger, to the
// log/zap/zapraw module, which keeps them),
// interceptor.Funcs callbacks (client.WithWatch parameters to
// client.Client), and go.mod (kubeloop added, the requirements kubeloop has
// at newer versions raised, controller-runtime dropped once nothing imports
// it). What it cannot rewrite safely it leaves in place under a
// "// kubeloop-migrate: <what to do>" comment, once per file and symbol. It
// prints a summary: the files changed, the rewrites by kind, each raised
// requirement and every manual item with its number of uses. Running it
// again changes nothing. With -dry-run it writes nothing and prints a
// unified diff of what it would change.
//
// A module in which no file imports controller-runtime is left alone (a
// controller-runtime require line without imports is dropped). The run is
// all or nothing: every file is parsed and rewritten in memory first, and
// nothing is written when a file does not parse (each such file is
// reported with its position) or when a write fails (the files written
// before it get their old content back).
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
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
)

// defaultVersion is the kubeloop version written to go.mod when the
// command was built from a checkout of kubeloop (its own version is a
// commit that may be on no module proxy, or unknown) and -version is not
// given. The summary then says how to point go.mod at the checkout with a
// replace directive, which works with any version written here.
const defaultVersion = "v0.1.0"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	own, fromCheckout := ownVersion()
	fs := flag.NewFlagSet("kubeloop-migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dryRun := fs.Bool("dry-run", false, "print a unified diff of the changes instead of writing them")
	version := fs.String("version", own, "kubeloop version to require in go.mod")
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
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "version" {
			fromCheckout = false
		}
	})
	dir := "."
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	m := &migration{root: dir, version: *version, dryRun: *dryRun, diff: stdout, rep: newReport()}
	if err := m.run(); err != nil {
		fmt.Fprintf(stderr, "kubeloop-migrate: %v\n", err)
		return 1
	}
	if fromCheckout {
		var mods []string // required now, not replaced yet
		if !m.klReplaced && slices.Contains(m.rep.gomod, "require "+klModule+" "+*version) {
			mods = append(mods, klModule)
		}
		if !m.zaprawReplaced && slices.Contains(m.rep.gomod, "require "+zaprawModule+" "+*version) {
			mods = append(mods, zaprawModule)
		}
		if len(mods) > 0 {
			m.rep.notes = append(m.rep.notes, checkoutHint(*version, mods))
		}
	}
	summary := stdout
	if *dryRun {
		summary = stderr // stdout holds the diff
	}
	m.rep.print(summary, *dryRun)
	return 0
}

// pseudoVersion matches the end of a pseudo-version's pre-release part:
// the commit time and the commit's 12-digit prefix.
var pseudoVersion = regexp.MustCompile(`[0-9]{14}-[0-9a-f]{12}$`)

// ownVersion is the version this command was built at (go run ...@v1.2.3,
// or @<commit>, whose pseudo-version the module proxy serves), else
// defaultVersion with fromCheckout true: a build in a checkout of kubeloop
// ((devel), a +dirty version, or the pseudo-version of a local commit).
func ownVersion() (version string, fromCheckout bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return defaultVersion, true
	}
	return versionOf(bi)
}

// versionOf is ownVersion for the build information bi.
func versionOf(bi *debug.BuildInfo) (version string, fromCheckout bool) {
	v := bi.Main.Version
	if bi.Main.Path != klModule || !strings.HasPrefix(v, "v") || strings.Contains(v, "+") {
		return defaultVersion, true
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && pseudoVersion.MatchString(v) {
			return defaultVersion, true
		}
	}
	return v, false
}

// checkoutHint says how to build the migrated module against the kubeloop
// checkout this command was built from: a replace directive for each of
// mods (kubeloop, and its zapraw module, which lives in the checkout's
// log/zap/zapraw).
func checkoutHint(version string, mods []string) string {
	dir := "<your kubeloop checkout>"
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err == nil && strings.Contains(string(b), "module "+klModule+"\n") {
			dir = root
		}
	}
	var req, edits []string
	for _, mod := range mods {
		req = append(req, mod+" "+version)
		edits = append(edits, "  go mod edit -replace "+mod+"="+dir+strings.TrimPrefix(mod, klModule)+"\n")
	}
	return "kubeloop-migrate was built from a checkout of kubeloop, so go.mod now requires " + strings.Join(req, " and ") +
		", which no module proxy may serve: point it at the checkout with\n" + strings.Join(edits, "") +
		"or run again with -version <a released version>"
}
