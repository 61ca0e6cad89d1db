module example.com/plain

go 1.25.0

require k8s.io/apimachinery v0.35.0
