# kubeloop: the two commands that matter are `make demo` and `make test`.
GO ?= go
GOFLAGS_TEST ?= -race -count=1 -timeout 20m

.PHONY: all test tools lint vet fmt-check filecycles demo demo-sharded demo-fleet bench bench-real bench-sharding bench-multicluster clean-tools

all: test

## tools: build etcd and kube-apiserver into the cache outside the clone (only when missing)
tools:
	@hack/tools.sh >/dev/null

## fmt-check: fail when a Go file is not gofmt'd
fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## vet: go vet the library, the otel adapter module, the zap-typed log/zap/zapraw module and the benchmark module
vet:
	$(GO) vet ./...
	cd otel && $(GO) vet ./...
	cd log/zap/zapraw && $(GO) vet ./...
	@if [ -f bench/go.mod ]; then cd bench && $(GO) vet ./...; fi

## filecycles: fail when the files of a package call each other in a circle (hack/filecycles)
filecycles:
	@out="$$(cd hack/filecycles && $(GO) run . ../.. ./...)"; \
	if [ -n "$$out" ]; then echo "files calling each other in a circle:"; echo "$$out"; exit 1; fi

lint: fmt-check vet filecycles

## test: gofmt check, go vet, then every test under -race against a real control plane (the library, the otel adapter module and the log/zap/zapraw module), and the credentials test once more without -race at klog verbosity 10
test: tools lint
	$(GO) test $(GOFLAGS_TEST) ./...
	cd otel && $(GO) test $(GOFLAGS_TEST) ./...
	cd log/zap/zapraw && $(GO) test $(GOFLAGS_TEST) ./...
	$(GO) test -count=1 -run 'TestCredentialsNeverLogged$$' ./internal/reliability/

## demo: the example App operator against a local control plane it starts itself
demo: tools
	$(GO) run ./examples/app/cmd/demo $(DEMO_ARGS)

## demo-fleet: one operator across 3 local control planes (a hub and two members), a cluster added and one removed while it runs
demo-fleet: tools
	$(GO) run ./examples/fleet/cmd/demo $(DEMO_ARGS)

## demo-sharded: 3 replicas of the sharded example operator (separate processes) against a local control plane it starts itself
demo-sharded: tools
	$(GO) run ./examples/sharded/cmd/demo $(DEMO_ARGS)

## bench: the side-by-side benchmarks (see BENCHMARKS.md)
bench:
	hack/bench.sh

## bench-real: opt-in, the end-to-end comparison against a real control plane (see BENCHMARKS-real.md)
bench-real: tools
	hack/bench-real.sh

## bench-sharding: opt-in, sharding throughput, heap, label against server-side mode and recovery after kill -9 against a real control plane (about 11 minutes with BENCH_COUNT=1; see bench/sharding)
bench-sharding: tools
	bench/sharding/run.sh

## bench-multicluster: opt-in, the fleet's engage latency, per-cluster heap and goroutines, cold start, cycles and a blackholed cluster (about 8 minutes; see BENCHMARKS-multicluster.md)
bench-multicluster: tools
	hack/bench-multicluster.sh

## soak: opt-in, minutes: an operator under load through faults in sequence, with a report (see internal/reliability/soak)
soak: tools
	KUBELOOP_SOAK=1 $(GO) test -race -count=1 -tags soak -timeout 60m -run TestSoak -v ./internal/reliability/soak/
	$(GO) test -race -count=1 -tags soak -timeout 10m -run TestSoakRecovery -v ./internal/reliability/

clean-tools:
	rm -rf "$${KUBELOOP_TOOLS_DIR:-$${XDG_CACHE_HOME:-$$HOME/.cache}/kubeloop/tools}"
