package kubeconfigs_test

import (
	"fmt"

	"github.com/kubeloop/kubeloop/multicluster/providers/internal/kubeconfigs"
)

// A kubeconfig from a Secret may not run commands in the operator's pod.
func ExampleFromBytes() {
	kc := []byte(`apiVersion: v1
kind: Config
current-context: c
clusters: [{name: c, cluster: {server: "https://eu-1.example"}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: sh, interactiveMode: Never}}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
`)
	_, err := kubeconfigs.FromBytes(kc, kubeconfigs.Policy{})
	fmt.Println(err)
	cfg, err := kubeconfigs.FromBytes(kc, kubeconfigs.Policy{AllowLocalCredentials: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.Host, cfg.ExecProvider.Command)
	// Output:
	// user "u" of context "c" runs an exec plugin "sh" (local credentials are not allowed for this provider; see its AllowLocalCredentials option)
	// https://eu-1.example sh
}
