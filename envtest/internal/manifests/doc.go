// Package manifests reads the YAML and JSON files envtest installs from:
// CRD directories and webhook configuration directories alike.
//
// Guarantees:
//   - A directory gives its *.yaml, *.yml and *.json files (any case of
//     the extension), not its subdirectories, in name order; a file is
//     taken whatever its name.
//   - Every document of a file is decoded, YAML or JSON, separated by
//     "---"; empty documents are skipped.
//   - Errors name the file and the document's index.
package manifests
