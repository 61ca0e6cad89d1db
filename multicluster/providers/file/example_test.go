package file_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/multicluster/providers/file"
)

// A directory of kubeconfig files is a fleet: each file is a cluster named
// after the file without its extension. (manager.Options.Clusters would
// normally run the provider.)
func Example() {
	dir, _ := os.MkdirTemp("", "fleet")
	defer os.RemoveAll(dir)
	kc := "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: c, cluster: {server: https://eu-1.example:6443}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
	_ = os.WriteFile(filepath.Join(dir, "eu-1.yaml"), []byte(kc), 0o600)

	p, err := file.New(file.Options{Dirs: []string{dir}})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	engaged := make(chan string, 1)
	sink := multicluster.SinkFunc(func(_ context.Context, name string, cfg *rest.Config) error {
		engaged <- name + " at " + cfg.Host
		return nil
	})
	done := make(chan error)
	go func() { done <- p.Run(ctx, sink) }()
	fmt.Println(<-engaged)
	cancel()
	fmt.Println("Run returned", <-done)
	// Output:
	// eu-1 at https://eu-1.example:6443
	// Run returned <nil>
}
