# Kuota build, test and demo entry points. Run `make help` for the list.

SHELL := /usr/bin/env bash -o pipefail
GO ?= go
KUBE_VERSION := v1.37.2
# Cached, ignored folder for control-plane binaries and code generators.
TOOLS_BIN ?= $(CURDIR)/.cache/bin
CLUSTER_TOOLS := hack/tools/cluster
CODEGEN_TOOLS := hack/tools/codegen
OPERATOR_TOOLS := hack/tools/operators
KUBE_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 \
	-X k8s.io/component-base/version.gitTreeState=clean


ETCD := $(TOOLS_BIN)/etcd
KUBE_APISERVER := $(TOOLS_BIN)/kube-apiserver
KUBE_CONTROLLER_MANAGER := $(TOOLS_BIN)/kube-controller-manager
KUBE_SCHEDULER := $(TOOLS_BIN)/kube-scheduler
KUBECTL := $(TOOLS_BIN)/kubectl
KWOK := $(TOOLS_BIN)/kwok
KWOKCTL := $(TOOLS_BIN)/kwokctl
CONTROLLER_GEN := $(TOOLS_BIN)/controller-gen
# Third-party controllers the e2e tests run next to the local cluster.
JOBSET_CONTROLLER := $(TOOLS_BIN)/jobset-controller
OPERATORS := $(JOBSET_CONTROLLER)

CONTROL_PLANE := $(ETCD) $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(KUBECTL) $(KWOK) $(KWOKCTL)

export KUBEBUILDER_ASSETS := $(TOOLS_BIN)
export KUOTA_TOOLS_BIN := $(TOOLS_BIN)

.PHONY: help
help: ## Show this help.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

##@ Control-plane binaries (built from source once, cached in .cache/bin)

.PHONY: tools
tools: $(CONTROL_PLANE) $(CONTROLLER_GEN) $(OPERATORS) ## Build every cached tool that is missing.

$(TOOLS_BIN):
	mkdir -p $@

$(ETCD): | $(TOOLS_BIN)
	cd $(CLUSTER_TOOLS) && $(GO) build -o $@ go.etcd.io/etcd/server/v3

$(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(KUBECTL): | $(TOOLS_BIN)
	cd $(CLUSTER_TOOLS) && $(GO) build -ldflags "$(KUBE_LDFLAGS)" -o $@ k8s.io/kubernetes/cmd/$(notdir $@)

$(KWOK) $(KWOKCTL): | $(TOOLS_BIN)
	cd $(CLUSTER_TOOLS) && $(GO) build -o $@ sigs.k8s.io/kwok/cmd/$(notdir $@)

$(CONTROLLER_GEN): | $(TOOLS_BIN)
	cd $(CODEGEN_TOOLS) && $(GO) build -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen

$(JOBSET_CONTROLLER): | $(TOOLS_BIN)
	cd $(OPERATOR_TOOLS) && $(GO) build -o $@ sigs.k8s.io/jobset

##@ Code generation

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy code, CRDs (config/crd/bases), RBAC (config/rbac) and webhooks (config/webhook).
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/kueue/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./... output:rbac:artifacts:config=config/rbac
	rm -f config/webhook/manifests.yaml
	$(CONTROLLER_GEN) webhook paths=./... output:webhook:artifacts:config=config/webhook
	$(GO) run ./hack/webhookgen config/webhook/manifests.yaml internal/localwebhook/zz_generated.manifests.yaml

.PHONY: verify
verify: $(CONTROLLER_GEN) ## Fail if generated files are stale, code is unformatted or go vet complains.
	hack/verify-generated.sh
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './.cache/*' -not -path './hack/tools/*')); test -z "$$out" || { echo "gofmt needed:"; echo "$$out"; exit 1; }
	$(GO) vet ./...

##@ Build

BIN ?= $(CURDIR)/bin

.PHONY: build
build: ## Build Kuota's commands into bin/ (bin/kubectl-kuota is kuota as a kubectl plugin).
	$(GO) build -o $(BIN)/ ./cmd/...
	ln -sf kuota $(BIN)/kubectl-kuota

.PHONY: dist
dist: $(KUBECTL) ## Build the install bundle dist/install.yaml from config/default (kustomize).
	@mkdir -p dist
	$(KUBECTL) kustomize config/default > dist/install.yaml.tmp
	mv dist/install.yaml.tmp dist/install.yaml

##@ Test

.PHONY: test
test: tools verify ## Build what is missing, check generated files, run every test (unit, envtest, local cluster) and a short fuzzing pass.
	$(GO) test ./... -count=1 -timeout 20m
	$(MAKE) fuzz FUZZTIME=20000x

.PHONY: test-unit
test-unit: ## Run the tests that need no control plane.
	$(GO) test $$($(GO) list ./... | grep -v -e /test/ -e /bench/internal/runner) -count=1

.PHONY: torture
torture: tools ## Run the full crash test (200 SIGKILLs, 10 leader pauses, 20 dropped connections, 5 kube-apiserver and 2 etcd restarts, 2 manager replicas) and 12 manager kills under Jobs, pod groups and JobSets on the local cluster, and print their figures.
	KUOTA_TORTURE=1 $(GO) test ./test/integration/crash/ -run TestSurvivesSIGKILL -count=1 -v -timeout 60m
	KUOTA_TORTURE=1 $(GO) test ./test/e2e/ -run TestJobsAndPodGroupsThroughManagerKills -count=1 -v -timeout 30m

.PHONY: fuzz
FUZZTIME ?= 10s
# Every package with a FuzzXxx test: the configuration parser and the webhooks.
FUZZ_PACKAGES = $(shell grep -rl --include='*_test.go' '^func Fuzz' api internal | xargs -n1 dirname | sort -u | sed 's|^|./|')
# FUZZTIME may be a duration or a count of inputs (20000x). `make test` uses a
# count: with a duration, Go 1.26's fuzzing coordinator can report a spurious
# "context deadline exceeded" when the time runs out (golang/go#75804).
fuzz: ## Run each webhook fuzz test (FuzzXxx) for FUZZTIME (default 10s).
	@for p in $(FUZZ_PACKAGES); do \
		for f in $$($(GO) test -list '^Fuzz' $$p | grep '^Fuzz'); do \
			echo "fuzzing $$p $$f for $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $$p || exit 1; \
		done; \
	done

##@ Benchmark

# Scenario of `make bench`: a name in bench/scenarios (baseline, one-cohort,
# large-scale, smoke) or a path to a generator file.
SCENARIO ?= baseline
# Extra flags of kuota-bench, e.g. make bench BENCH_FLAGS="--pprof --timeout 30m".
BENCH_FLAGS ?=

.PHONY: bench
bench: tools build ## Run a scalability scenario (SCENARIO=baseline); results in bench/results/<scenario>-<time>/ (bench/README.md).
	$(GO) run ./bench/cmd/kuota-bench --scenario $(SCENARIO) --manager $(BIN)/kuota-manager $(BENCH_FLAGS)

.PHONY: bench-floor
bench-floor: tools ## Run a scenario with a stand-in manager that admits everything at once: the API server's floor (bench/README.md).
	$(GO) build -o $(BIN)/floor-manager ./bench/cmd/floor-manager
	$(GO) run ./bench/cmd/kuota-bench --scenario $(SCENARIO) --manager $(BIN)/floor-manager $(BENCH_FLAGS)

##@ Demo

# Extra flags of `kuota demo`, e.g. make demo DEMO_FLAGS="--keep --seed 7".
DEMO_FLAGS ?=

.PHONY: demo
demo: tools build ## Show Kuota at work (about 2 minutes): two teams' GPU jobs queued, borrowed and preempted on a local cluster.
	$(BIN)/kuota demo --manager $(BIN)/kuota-manager $(DEMO_FLAGS)

.PHONY: demo-down
demo-down: build ## Stop the local demo cluster.
	$(BIN)/kuota dev down
