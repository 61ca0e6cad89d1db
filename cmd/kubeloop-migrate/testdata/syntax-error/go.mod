module example.com/broken

go 1.25.0

require sigs.k8s.io/controller-runtime v0.23.3
