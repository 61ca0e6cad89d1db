// Command fakeapiserver serves LIST and WATCH of ConfigMaps, Secrets and
// Pods (JSON and protobuf, WatchList included) on loopback for the
// benchmarks; see package fakeapiserver. It prints "READY <url>" once every
// body is encoded, and exits when its standard input closes.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/kubeloop/kubeloop/bench/fakeapiserver"
)

func main() {
	var cfg fakeapiserver.Config
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.IntVar(&cfg.ConfigMaps, "configmaps", 100000, "number of ConfigMaps")
	flag.IntVar(&cfg.Secrets, "secrets", 0, "number of Secrets")
	flag.IntVar(&cfg.Pods, "pods", 0, "number of Pods")
	flag.Parse()

	// Collect more often while encoding: at 1M ConfigMaps the default
	// would let the heap reach about 17 GiB before the frames are packed.
	gc := debug.SetGCPercent(25)
	srv, err := fakeapiserver.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	srv.Compact()
	debug.SetGCPercent(gc)
	// Finish the garbage of encoding now, so that no collection or
	// scavenging runs during the first client's measurements.
	runtime.GC()
	debug.FreeOSMemory()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	fmt.Printf("READY http://%s\n", ln.Addr())
	log.Fatal((&http.Server{Handler: srv}).Serve(ln))
}
