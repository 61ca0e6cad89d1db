package manifests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Files returns path, or the *.yaml, *.yml and *.json files of the
// directory path, in name order.
func Files(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, ent := range entries {
		switch strings.ToLower(filepath.Ext(ent.Name())) {
		case ".yaml", ".yml", ".json":
			if !ent.IsDir() {
				files = append(files, filepath.Join(path, ent.Name()))
			}
		}
	}
	return files, nil
}

// Documents decodes every YAML or JSON document of file, skipping empty
// ones.
func Documents(file string) ([]map[string]any, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("envtest: read %s: %w", file, err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []map[string]any
	for i := 0; ; i++ {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("envtest: %s: document %d: %w", file, i, err)
		}
		if len(obj) > 0 {
			out = append(out, obj)
		}
	}
}
