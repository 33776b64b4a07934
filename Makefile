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

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

lint: install ## ruff check and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

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
# Pinned versions (KEY=value lines, shared with the platform/ scripts).
include platform/versions.env
# What the Kubernetes path builds (binaries, images, Debian root filesystems), outside every
# checkout so fresh clones and worktrees reuse it.
LAB_CACHE ?= $(HOME)/.cache/concurrency-lab
# What a running cluster leaves to undo (the dockerd started for it, the kernel settings recorded
# before it): on tmpfs, like the processes it describes.
LAB_STATE_DIR ?= $(if $(filter 0,$(shell id -u)),/run,$(or $(XDG_RUNTIME_DIR),/tmp))/concurrency-lab
# 1: this machine has internet, let kind and Docker pull what is missing instead of building it.
LAB_PULL_IMAGES ?= 0
# A kind node image to use as it is (empty: kind's own where it can be had, else one built here).
KIND_NODE_IMAGE ?=
TOOLS := $(CURDIR)/.tools/bin
# The pinned build in .tools/bin, else one already on PATH (from the usual installers), else build.
HELM := $(firstword $(wildcard $(TOOLS)/helm) $(shell command -v helm) $(TOOLS)/helm)
KIND := $(firstword $(wildcard $(TOOLS)/kind) $(shell command -v kind) $(TOOLS)/kind)
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
# NAME=DOCKERFILE: each image is concurrency-lab/NAME:$(IMAGE_TAG), built from the repository root.
IMAGES := fastapi-target=services/fastapi_target/Dockerfile flask-target=services/flask_target/Dockerfile \
	$(if $(wildcard tester/Dockerfile),tester=tester/Dockerfile)
IMAGE_REFS := $(foreach image,$(IMAGES),concurrency-lab/$(firstword $(subst =, ,$(image))):$(IMAGE_TAG))
KUBE := $(KUBECTL) --context kind-$(CLUSTER) --namespace $(NAMESPACE)
RELEASE_SELECTOR := app.kubernetes.io/instance=$(RELEASE)

.PHONY: tools prometheus images kind-up run-lab kind-down kind-check grafana

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
	@set -e; for image in $(IMAGES); do \
		echo "docker build concurrency-lab/$${image%%=*}:$(IMAGE_TAG) from $${image#*=}"; \
		docker build --network none --build-arg BASE_IMAGE=$(BASE_IMAGE) \
			--tag "concurrency-lab/$${image%%=*}:$(IMAGE_TAG)" --file "$${image#*=}" .; \
	done

# Settings of scripts/kind-up and scripts/kind-down.
KIND_ENV = KIND=$(KIND) CLUSTER=$(CLUSTER) KIND_CONFIG=kind-config.yaml LAB_CACHE=$(LAB_CACHE) \
	LAB_STATE_DIR=$(LAB_STATE_DIR) LAB_PULL_IMAGES=$(LAB_PULL_IMAGES) KIND_NODE_IMAGE=$(KIND_NODE_IMAGE) \
	MAKE="$(MAKE)" PYTHON=$(BIN)/python \
	IMAGE_TAG=$(IMAGE_TAG) IMAGE_REFS="$(IMAGE_REFS)" BASE_IMAGE=$(BASE_IMAGE) \
	LOCAL_BASE_IMAGE=$(LOCAL_BASE_IMAGE) VALUES=$(CHART)/values.yaml

kind-up: install tools ## Docker engine, images (built here where none can be pulled), kind cluster
	$(KIND_ENV) scripts/kind-up

run-lab: tools ## Deploy to kind, run the tester Job, stream its log, copy reports to results/kind
	HELM=$(HELM) KUBECTL=$(KUBECTL) CLUSTER=$(CLUSTER) RELEASE=$(RELEASE) NAMESPACE=$(NAMESPACE) \
		CHART=$(CHART) IMAGE_TAG=$(IMAGE_TAG) HELM_ARGS="$(HELM_ARGS)" RESULTS_DIR=results/kind \
		GRAFANA_URL=$(GRAFANA_URL) scripts/run-lab

kind-down: tools ## Delete the cluster, stop the engine kind-up started, restore kernel settings
	$(KIND_ENV) scripts/kind-down

# Extra `helm upgrade` flags for kind-check's run-lab (empty: the profile that fits the cluster).
KIND_CHECK_HELM_ARGS ?=

kind-check: install tools ## kind-up, run-lab, assertions, kind-down; the machine as before (CI)
	MAKE="$(MAKE)" KUBECTL=$(KUBECTL) CLUSTER=$(CLUSTER) NAMESPACE=$(NAMESPACE) RELEASE=$(RELEASE) \
		PYTHON=$(BIN)/python VALUES=$(CHART)/values.yaml RESULTS_DIR=results/kind \
		CHECK_HELM_ARGS="$(KIND_CHECK_HELM_ARGS)" scripts/kind-check

grafana: ## Grafana's URL and admin password (anonymous visitors can already read)
	@echo "Grafana: $(GRAFANA_URL)  (the lab dashboard is the home page)"
	@echo "admin password: $$($(KUBE) get secret --selector $(RELEASE_SELECTOR),app.kubernetes.io/component=grafana \
		--output jsonpath='{.items[0].data.admin-password}' | base64 -d)"

# -- Images proven in a real Docker engine, on a Debian base built here (no image is pulled).
# The Debian mirror comes from this machine's apt sources (platform/debian/apt_mirror.py).
LOCAL_BASE_IMAGE := concurrency-lab/debian-python:$(DEBIAN_SUITE)

.PHONY: wheelhouse test-images

wheelhouse: install ## Download every image dependency as wheels for BASE_IMAGE's Python
	scripts/wheelhouse $(BASE_IMAGE) $(WHEELHOUSE) $(BIN)/python

test-images: install ## Build the images on a local Debian base, prove them in a real Docker engine
	MAKE="$(MAKE)" PYTEST=$(BIN)/pytest IMAGE_TAG=$(IMAGE_TAG) LOCAL_BASE_IMAGE=$(LOCAL_BASE_IMAGE) \
		LAB_CACHE=$(LAB_CACHE) LAB_STATE_DIR=$(LAB_STATE_DIR) scripts/test-images
