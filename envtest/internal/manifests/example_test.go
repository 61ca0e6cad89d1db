package manifests_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubeloop/kubeloop/envtest/internal/manifests"
)

// The documents of every manifest file of a directory, as kubebuilder's
// config/webhook holds them.
func ExampleDocuments() {
	dir, err := os.MkdirTemp("", "manifests-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "manifests.yaml"), []byte("kind: MutatingWebhookConfiguration\n---\nkind: ValidatingWebhookConfiguration\n"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "service.json"), []byte(`{"kind": "Service"}`), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "README.md"), []byte("# not a manifest"), 0o644)
	files, _ := manifests.Files(dir)
	for _, f := range files {
		docs, err := manifests.Documents(f)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, d := range docs {
			fmt.Println(filepath.Base(f), d["kind"])
		}
	}
	// Output:
	// manifests.yaml MutatingWebhookConfiguration
	// manifests.yaml ValidatingWebhookConfiguration
	// service.json Service
}
