// Command kube-apiserver is the upstream Kubernetes API server, built from the
// module proxy so that kubeloop's tests can run against a real control plane.
// It contains no code of its own beyond this entry point.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
