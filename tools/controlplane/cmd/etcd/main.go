// Command etcd is the upstream etcd server, built from the module proxy so
// that kubeloop's tests can run against a real control plane. It contains no
// code of its own beyond this entry point.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
