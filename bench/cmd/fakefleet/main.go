// Command fakefleet serves a fleet of fake clusters on loopback for the
// multicluster benchmarks: a hub holding kubeconfig Secrets and member
// clusters under /clusters/<name>/ (see fakeapiserver.Fleet). It prints
// "READY <url>" once it serves, and exits when its standard input closes.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/kubeloop/kubeloop/bench/fakeapiserver"
)

func main() {
	var cfg fakeapiserver.FleetConfig
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.IntVar(&cfg.ConfigMaps, "configmaps", 1, "ConfigMaps of each member cluster")
	flag.StringVar(&cfg.Namespace, "namespace", fakeapiserver.FleetNamespace, "the hub's namespace of kubeconfig Secrets")
	flag.Parse()
	f, err := fakeapiserver.NewFleet(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	f.SetURL(url)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	fmt.Printf("READY %s\n", url)
	log.Fatal((&http.Server{Handler: f}).Serve(ln))
}
