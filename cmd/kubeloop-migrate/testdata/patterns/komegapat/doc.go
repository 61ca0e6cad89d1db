// Package komegapat uses envtest's komega helpers with Gomega in plain Go
// tests.
package komegapat
