# concurrency-lab: `make lab` runs the lab locally, `make test` runs lint and tests.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
# `make targets PORTS="fastapi=9001 flask-1x=9002"` moves targets off their default ports.
PORTS ?=
# `make lab N=1 K=4 R=2`: N seconds per CPU request, bursts n = 1..K, R repeats (defaults 0.5, 5, 3);
# `make lab SCENARIOS=bursts,closed,ramp,sweep,rate` adds the other load shapes (default: bursts).
LAB_FLAGS = $(if $(N),--work-seconds $(N)) $(if $(K),--burst-max $(K)) $(if $(R),--repeats $(R)) \
	$(if $(SCENARIOS),--scenarios $(SCENARIOS))

.DEFAULT_GOAL := help

.PHONY: help install lint format test targets lab bench

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

install: $(INSTALLED) ## Create .venv with the lab and its development tools

# The editable install maps only the packages that exist when it runs; the sources' .pth puts
# services/ and tester/ themselves on the path, so a new package there imports without reinstalling.
$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/python -c 'import pathlib, sysconfig; pathlib.Path(sysconfig.get_path("purelib"), \
		"concurrency-lab-sources.pth").write_text("$(CURDIR)/services\n$(CURDIR)/tester\n")'
	touch $@

lint: install ## ruff check and format check; mypy --strict on the services and the tester
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy services tester/labtester

format: install ## Apply ruff's formatting and fixes
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint tools prometheus ## Lint, then every test (real servers on 127.0.0.1; helm from .tools)
	$(BIN)/pytest

targets: install ## Start the three targets on 127.0.0.1:8001-8003 until Ctrl-C
	$(BIN)/python -m labtester targets $(foreach p,$(PORTS),--port $(p))

lab: install ## Run the whole lab locally (targets on 127.0.0.1), report in results/
	$(BIN)/python -m labtester lab $(LAB_FLAGS)

bench: install /usr/bin/wrk ## Kernel CV, calibration error, measured/model ratios, client vs wrk
	$(BIN)/python -m labtester bench $(LAB_FLAGS)

/usr/bin/wrk: # the reference load client `make bench` compares the tester's with
	apt-get update && apt-get install -y --no-install-recommends wrk

# -- Kubernetes (kind): pinned tools in .tools/bin, images, cluster, the lab as a Helm release.
TOOLS := $(CURDIR)/.tools/bin
# The pinned build in .tools/bin, else one already on PATH (from the usual installers), else build.
HELM := $(firstword $(wildcard $(TOOLS)/helm) $(shell command -v helm) $(TOOLS)/helm)
KIND := $(firstword $(wildcard $(TOOLS)/kind) $(shell command -v kind) $(TOOLS)/kind)
HELM_VERSION := v3.22.0
KIND_VERSION := v0.33.0
KUBECTL ?= kubectl
PROMETHEUS := /usr/bin/prometheus
CHART := charts/concurrency-lab
CLUSTER ?= concurrency-lab
RELEASE ?= lab
NAMESPACE ?= concurrency-lab
IMAGE_TAG ?= dev
# Base of every image (also the Dockerfiles' default); `make test-images` uses a local Debian one.
BASE_IMAGE ?= python:3.12-slim
# Wheels for BASE_IMAGE's Python: the builds install from here alone (pip --no-index, no network).
WHEELHOUSE := build/wheelhouse
# Extra `helm upgrade` flags: `make run-lab HELM_ARGS="-f charts/concurrency-lab/ci/small-values.yaml"`.
HELM_ARGS ?=
GRAFANA_URL := http://127.0.0.1:3000
# Every image the chart deploys, from its values (a line each: REPOSITORY DOCKERFILE [MODULE]);
# expanded only when a recipe runs, after `install` made the venv that reads them.
IMAGE_LIST = $(BIN)/python scripts/image-list
IMAGE_REFS = $(addsuffix :$(IMAGE_TAG),$(shell $(IMAGE_LIST) | cut -d' ' -f1))
KUBE := $(KUBECTL) --context kind-$(CLUSTER) --namespace $(NAMESPACE)
RELEASE_SELECTOR := app.kubernetes.io/instance=$(RELEASE)

.PHONY: tools prometheus images kind-up run-lab kind-down grafana

tools: $(HELM) $(KIND) ## Install helm and kind (pinned) into .tools/bin with go install

$(TOOLS)/helm:
	GOBIN=$(TOOLS) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

$(TOOLS)/kind:
	GOBIN=$(TOOLS) go install sigs.k8s.io/kind@$(KIND_VERSION)

prometheus: $(PROMETHEUS) ## Install Debian's prometheus (the dashboard test scrapes with it)

$(PROMETHEUS):
	apt-get update && apt-get install -y --no-install-recommends prometheus

# --network none: everything a build installs comes from the wheelhouse in its context.
images: wheelhouse ## Build the lab's images on BASE_IMAGE, offline, from build/wheelhouse
	@set -euo pipefail; $(IMAGE_LIST) | while read -r repository dockerfile module; do \
		echo "docker build $$repository:$(IMAGE_TAG) from $$dockerfile $${module:+(MODULE=$$module)}"; \
		docker build --network none --build-arg BASE_IMAGE=$(BASE_IMAGE) $${module:+--build-arg MODULE=$$module} \
			--tag "$$repository:$(IMAGE_TAG)" --file "$$dockerfile" . || exit 1; \
	done

kind-up: tools images ## Create the kind cluster if absent, build the images, load them into it
	$(KIND) get clusters 2>/dev/null | grep -qx '$(CLUSTER)' || \
		$(KIND) create cluster --name $(CLUSTER) --config kind-config.yaml --wait 120s
	$(KIND) load docker-image --name $(CLUSTER) $(IMAGE_REFS)

run-lab: tools ## Deploy to kind, run the tester Job, stream its log, copy reports to results/kind
	HELM=$(HELM) KUBECTL=$(KUBECTL) CLUSTER=$(CLUSTER) RELEASE=$(RELEASE) NAMESPACE=$(NAMESPACE) \
		CHART=$(CHART) IMAGE_TAG=$(IMAGE_TAG) HELM_ARGS="$(HELM_ARGS)" RESULTS_DIR=results/kind \
		GRAFANA_URL=$(GRAFANA_URL) scripts/run-lab

kind-down: tools ## Delete the kind cluster
	$(KIND) delete cluster --name $(CLUSTER)

grafana: ## Grafana's URL and admin password (anonymous visitors can already read)
	@echo "Grafana: $(GRAFANA_URL)  (the lab dashboard is the home page)"
	@echo "admin password: $$($(KUBE) get secret --selector $(RELEASE_SELECTOR),app.kubernetes.io/component=grafana \
		--output jsonpath='{.items[0].data.admin-password}' | base64 -d)"

# -- Images proven in a real Docker engine, on a Debian base built here (no image is pulled).
LOCAL_BASE_IMAGE := concurrency-lab/debian-python:bookworm
# The Debian mirror apt uses on this machine (/etc/apt/sources.list.d/debian.sources).
DEBIAN_MIRROR ?= http://deb.debian.org/debian

.PHONY: wheelhouse test-images

wheelhouse: install ## Download every image dependency as wheels for BASE_IMAGE's Python
	scripts/wheelhouse $(BASE_IMAGE) $(WHEELHOUSE) $(BIN)/python

test-images: install ## Build the images on a local Debian base, prove them in a real Docker engine
	MAKE="$(MAKE)" PYTEST=$(BIN)/pytest IMAGE_TAG=$(IMAGE_TAG) LOCAL_BASE_IMAGE=$(LOCAL_BASE_IMAGE) \
		DEBIAN_MIRROR=$(DEBIAN_MIRROR) BUILD_DIR=build scripts/test-images
