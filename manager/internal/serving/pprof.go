package serving

import (
	"fmt"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

// Profiles serves the runtime's profiles in the format of
// net/http/pprof (which `go tool pprof` reads) without importing that
// package, whose init registers handlers on http.DefaultServeMux.
//
//	/debug/pprof/            index of the profiles
//	/debug/pprof/profile     CPU profile, ?seconds=N (default 30)
//	/debug/pprof/<name>      heap, goroutine, allocs, block, mutex,
//	                         threadcreate; ?debug=N for text, ?gc=1 for heap
func Profiles() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/debug/pprof/")
		switch name {
		case "":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			for _, p := range pprof.Profiles() {
				fmt.Fprintf(w, "%s %d\n", p.Name(), p.Count())
			}
			fmt.Fprintln(w, "profile (CPU, ?seconds=N)")
		case "profile":
			cpuProfile(w, r)
		default:
			namedProfile(w, r, name)
		}
	})
	return mux
}

func cpuProfile(w http.ResponseWriter, r *http.Request) {
	sec, err := strconv.Atoi(r.FormValue("seconds"))
	if err != nil || sec <= 0 {
		sec = 30
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="profile"`)
	if err := pprof.StartCPUProfile(w); err != nil {
		http.Error(w, "could not enable CPU profiling: "+err.Error(), http.StatusInternalServerError)
		return
	}
	select {
	case <-time.After(time.Duration(sec) * time.Second):
	case <-r.Context().Done():
	}
	pprof.StopCPUProfile()
}

func namedProfile(w http.ResponseWriter, r *http.Request, name string) {
	p := pprof.Lookup(name)
	if p == nil {
		http.Error(w, fmt.Sprintf("unknown profile %q", name), http.StatusNotFound)
		return
	}
	debug, _ := strconv.Atoi(r.FormValue("debug"))
	if name == "heap" && r.FormValue("gc") != "" {
		runtime.GC()
	}
	if debug != 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename=%q`, name))
	}
	_ = p.WriteTo(w, debug)
}
