# concurrency-lab: `make lab` runs the lab locally, `make test` runs lint and tests.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Python keeps its bytecode cache (__pycache__) for what make runs, even where the environment
# says not to (PYTHONDONTWRITEBYTECODE=1 on this project's machines and in CI): every server and
# tester a lab or a test starts would otherwise compile the lab and its libraries again, about
# 0.8 s of CPU each (tests/services/test_app_knobs.py and test_server.py: 74 s of CPU -> 40 s).
unexport PYTHONDONTWRITEBYTECODE
# What `make lab` needs (the lab, its servers and its tester), then the development tools on top.
LAB_INSTALLED := $(VENV)/.lab-installed
INSTALLED := $(VENV)/.installed
# `make targets PORTS="fastapi=9001 flask-1x=9002"` moves targets off their default ports.
PORTS ?=
# `make lab N=1 K=4 R=2`: N seconds per CPU request, bursts n = 1..K, R repeats (defaults 0.5, 5, 3);
# `make lab SCENARIOS=bursts,closed,ramp,sweep,rate` adds the other load shapes (default: bursts);
# `make lab COMPARE=results/<earlier run>` sets every figure beside that run's;
# `make lab APP=module:app PATHS=/a,/b` measures a team's app in every server configuration
# (`TRAFFIC=traffic.yaml` instead of PATHS: methods, headers, bodies and weights);
# then sizes it for a pod (CORES=2 MEMORY=1Gi, default this machine's; P99=0.5 seconds; RATE=100 req/s);
# `make lab CLIENTS=2`: the load sent by 2 client processes released together, their rows merged.
#
# Each knob reaches the lab as one argument, exactly as typed on make's command line (quotes, `$`,
# commas, spaces): its value travels in the recipe's environment as LAB_<KNOB> (taken unexpanded,
# so make eats no `$`), and the shell passes "$LAB_<KNOB>" whole, never reading it as shell text.
# A knob set only in the environment (an exported APP or N) is not one: a plain `make lab` stays
# the lab's own. The lab's own variables, TESTER_*, are the way to set it from the environment.
typed = $(if $(filter command line,$(origin $(1))),$(value $(1)))
LAB_KNOBS := N K R SCENARIOS CLIENTS
APP_KNOBS := APP PATHS TRAFFIC COMPARE CORES MEMORY P99 RATE
$(foreach knob,$(LAB_KNOBS) $(APP_KNOBS),$(eval lab bench: export LAB_$(knob) := $$(call typed,$(knob))))
LAB_FLAGS = $${LAB_N:+--work-seconds "$$LAB_N"} $${LAB_K:+--burst-max "$$LAB_K"} \
	$${LAB_R:+--repeats "$$LAB_R"} $${LAB_SCENARIOS:+--scenarios "$$LAB_SCENARIOS"} \
	$${LAB_CLIENTS:+--clients "$$LAB_CLIENTS"}
APP_FLAGS = $${LAB_APP:+--app "$$LAB_APP"} $${LAB_PATHS:+--paths "$$LAB_PATHS"} \
	$${LAB_TRAFFIC:+--traffic "$$LAB_TRAFFIC"} $${LAB_COMPARE:+--compare "$$LAB_COMPARE"} \
	$${LAB_CORES:+--cores "$$LAB_CORES"} $${LAB_MEMORY:+--memory "$$LAB_MEMORY"} \
	$${LAB_P99:+--p99 "$$LAB_P99"} $${LAB_RATE:+--rate "$$LAB_RATE"}

.DEFAULT_GOAL := help

.PHONY: help install lint format test targets lab bench

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

install: $(INSTALLED) ## Create .venv with the lab and its development tools

# uv installs what pip would, from the same index, in a fraction of pip's time (resolving and
# unpacking in parallel); the venv's own pip brings it, so nothing but Python is needed first.
UV := $(BIN)/uv
# --quiet, and without the one warning setuptools' editable build prints to everyone (a box about
# folders named like the package): any other warning or error still shows.
PIP_INSTALL = PYTHONWARNINGS="ignore:Editable installation" $(UV) pip install --quiet --python $(BIN)/python

$(UV):
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install --quiet --disable-pip-version-check uv

# The editable install maps only the packages that exist when it runs; the sources' .pth puts
# services/ and tester/ themselves on the path, so a new package there imports without reinstalling.
# A folder's requirements.txt (setup.py reads them all) changes the dependencies: reinstall then.
# pip itself stays current for what still calls it (the images' wheelhouse).
$(LAB_INSTALLED): pyproject.toml setup.py $(wildcard services/*/requirements.txt services/*/*/requirements.txt) | $(UV)
	@$(PIP_INSTALL) --upgrade pip -e '.[tester]'
	@$(BIN)/python -c 'import pathlib, sysconfig; pathlib.Path(sysconfig.get_path("purelib"), \
		"concurrency-lab-sources.pth").write_text("$(CURDIR)/services\n$(CURDIR)/tester\n")'
	@touch $@

# The development tools (pytest, ruff, mypy, the browser driver, the chart checks) only where
# `make test`, `make lint` and the checks need them: a first `make lab` does not wait for them.
$(INSTALLED): $(LAB_INSTALLED)
	@$(PIP_INSTALL) -e '.[dev]'
	@touch $@

lint: install ## ruff check and format check; mypy --strict on the services, the tester and the scripts
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy services tester/labtester scripts platform examples

format: install ## Apply ruff's formatting and fixes
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint compiled tools prometheus chromium ## Lint, then every test (real servers on 127.0.0.1; helm from LAB_CACHE)
	PATH="$(LAB_BIN):$$PATH" $(BIN)/pytest

# PORTS as typed on the command line, each of its words one --port argument (no glob, no shell text).
targets: export LAB_PORTS := $(call typed,PORTS)
targets: $(LAB_INSTALLED) ## Start the measured targets (and the downstream mock) on their local ports until Ctrl-C
	@set -f; ports=(); for port in $$LAB_PORTS; do ports+=(--port "$$port"); done; \
		$(BIN)/python -m labtester targets "$${ports[@]}"

# Silent recipes (@): the lab's own output comes first, not the command that starts it.
lab: $(LAB_INSTALLED) $(if $(call typed,APP),compiled) ## Run the whole lab locally (targets on 127.0.0.1), report in results/; APP=module:app PATHS=/a,/b
	@$(BIN)/python -m labtester lab $(LAB_FLAGS) $(APP_FLAGS)

bench: $(LAB_INSTALLED) compiled $(VENV)/.bench /usr/bin/wrk ## Kernel CV, calibration error, measured/model ratios, client vs Locust and wrk
	@$(BIN)/python -m labtester bench $(LAB_FLAGS)

$(VENV)/.bench: pyproject.toml $(LAB_INSTALLED) # Locust, which `make bench` sets the lab's client beside
	$(PIP_INSTALL) -e '.[bench]'
	touch $@

# The sizing's simulation compiled with mypyc into the venv (labtester/sizing/compiled.py: the same
# runs in a quarter of the CPU), built again when a source it is made of changed (the module
# checks, in a blink where nothing did); an app's lab, the bench and the tests size with it. Where it
# cannot be built they run its sources (CI's test says so), and it is not tried again until they change.
# The default lab sizes nothing: its first run does not wait for it.
.PHONY: compiled

compiled: $(VENV)/.compile-installed ## Compile the sizing's simulation (mypyc) into .venv; the sources run without it
	@$(BIN)/python -c 'from labtester.sizing.compiled import main; main()'

$(VENV)/.compile-installed: pyproject.toml | $(LAB_INSTALLED)
	@$(PIP_INSTALL) -e '.[compile]'
	@touch $@

/usr/bin/wrk: # the reference load client `make bench` compares the tester's with
	apt-get update && apt-get install -y --no-install-recommends wrk

# The report's browser test drives Debian's chromium through Playwright (a dev dependency, whose
# wheel carries its driver): no browser is downloaded, at install or at test time.
CHROMIUM := /usr/bin/chromium

.PHONY: chromium

chromium: $(CHROMIUM) ## Install Debian's chromium (the report's test opens report.html in it)

$(CHROMIUM):
	apt-get update && apt-get install -y --no-install-recommends chromium

# -- Kubernetes (kind): pinned versions, Go-built tools and binaries, images, the lab as a Helm release.
# Pinned versions (KUBERNETES_VERSION, ETCD_VERSION, KWOK_VERSION, HELM_VERSION, KIND_VERSION).
include platform/versions.env
# What is built once and reused by every checkout, worktree and fresh clone (platform/ scripts).
LAB_CACHE ?= $(HOME)/.cache/concurrency-lab
export LAB_CACHE
LAB_BIN := $(LAB_CACHE)/bin
HELM := $(LAB_BIN)/helm
KIND := $(LAB_BIN)/kind
# What a running cluster leaves to undo (the dockerd started for it, the kernel settings recorded
# before it): on tmpfs, like the processes it describes, and private to the user (0700, refused if
# another user owns it: platform/private-dir), as kind-down acts on it as root.
LAB_UID := $(shell id -u)
LAB_STATE_DIR ?= $(if $(filter 0,$(LAB_UID)),/run/concurrency-lab,$(if $(XDG_RUNTIME_DIR),$(XDG_RUNTIME_DIR)/concurrency-lab,/tmp/concurrency-lab-$(LAB_UID)))
# auto: kind-up pulls what the engine lacks where the registry's host name resolves, and builds
# it here where it does not (scripts/pull-or-build); 1 always pulls, 0 always builds.
LAB_PULL_IMAGES ?= auto
# A kind node image to use as it is (empty: kind's own where it can be had, else one built here).
KIND_NODE_IMAGE ?=
# `make kind-up NODES=2`: one control plane and a worker, both taking pods (the tester's clients spread).
NODES ?= 1
KUBECTL ?= kubectl
PROMETHEUS := /usr/bin/prometheus
CHART := charts/concurrency-lab
CLUSTER ?= concurrency-lab
RELEASE ?= lab
NAMESPACE ?= concurrency-lab
# Empty: each image is tagged by its content (scripts/image_tag.py), so rebuilt images roll and
# unchanged ones don't; set it to tag every image alike (`make test-images` does).
IMAGE_TAG ?=
# The tags `make images` built last, as REPOSITORY=TAG lines: what kind-up loads and run-lab sets.
IMAGE_TAGS := build/image-tags
# Base of every image (also the Dockerfiles' default); `make test-images` uses a local Debian one.
BASE_IMAGE ?= python:3.12-slim
# Wheels for BASE_IMAGE's Python: the builds install from here alone (pip --no-index, no network).
WHEELHOUSE := build/wheelhouse
# Extra `helm upgrade` flags: `make run-lab HELM_ARGS="-f charts/concurrency-lab/ci/small-values.yaml"`.
# Without -f/--values, run-lab picks the largest profile that fits the cluster and says which.
HELM_ARGS ?=
# A sizing's proposal, deployed and measured: `make run-lab PROPOSAL=results/<run>/proposal-values.yaml`
# (the same as HELM_ARGS="-f ..."; it goes on top of the profile that fits).
PROPOSAL ?=
GRAFANA_URL := http://127.0.0.1:3000
# Every image the chart deploys, from its values (a line each: REPOSITORY DOCKERFILE);
# expanded only when a recipe runs, after `install` made the venv that reads them.
IMAGE_LIST = $(BIN)/python scripts/image-list
KUBE := $(KUBECTL) --context kind-$(CLUSTER) --namespace $(NAMESPACE)
RELEASE_SELECTOR := app.kubernetes.io/instance=$(RELEASE)

.PHONY: tools kubernetes-binaries cluster-check prometheus images kind-up run-lab kind-down kind-check grafana

tools: ## Install helm and kind (pinned) into $(LAB_CACHE)/bin with go install
	@platform/install-tool helm kind >/dev/null

kubernetes-binaries: ## Build Kubernetes, etcd and kwok (pinned) from Go modules into $(LAB_CACHE), once
	nice -n 15 platform/build-kubernetes

cluster-check: install tools kubernetes-binaries ## The chart on a real control plane with simulated nodes
	HELM=$(HELM) $(BIN)/python platform/cluster_check.py

prometheus: $(PROMETHEUS) ## Install Debian's prometheus (the dashboard test scrapes with it)

$(PROMETHEUS):
	apt-get update && apt-get install -y --no-install-recommends prometheus

# --network none: everything a build installs comes from the wheelhouse in its context.
images: wheelhouse ## Build the lab's images on BASE_IMAGE, offline, tagged by content (or IMAGE_TAG)
	@set -euo pipefail; mkdir -p $(dir $(IMAGE_TAGS)); : >$(IMAGE_TAGS).partial; \
	$(IMAGE_LIST) | while read -r repository dockerfile; do \
		args="--build-arg BASE_IMAGE=$(BASE_IMAGE)"; \
		tag=$(or $(IMAGE_TAG),$$(scripts/image_tag.py $$dockerfile $$args)); \
		echo "docker build $$repository:$$tag from $$dockerfile"; \
		docker build --network none $$args --tag "$$repository:$$tag" --file "$$dockerfile" . || exit 1; \
		echo "$$repository=$$tag" >>$(IMAGE_TAGS).partial; \
	done; mv $(IMAGE_TAGS).partial $(IMAGE_TAGS)

# Settings of scripts/kind-up and scripts/kind-down.
KIND_ENV = KIND=$(KIND) CLUSTER=$(CLUSTER) KIND_CONFIG=kind-config.yaml LAB_CACHE=$(LAB_CACHE) \
	LAB_STATE_DIR=$(LAB_STATE_DIR) LAB_PULL_IMAGES=$(LAB_PULL_IMAGES) KIND_NODE_IMAGE=$(KIND_NODE_IMAGE) \
	MAKE="$(MAKE)" PYTHON=$(BIN)/python NODES=$(NODES) \
	IMAGE_TAG=$(IMAGE_TAG) IMAGE_TAGS=$(IMAGE_TAGS) BASE_IMAGE=$(BASE_IMAGE) \
	LOCAL_BASE_IMAGE=$(LOCAL_BASE_IMAGE) VALUES=$(CHART)/values.yaml

kind-up: install tools ## Docker engine, images (built here where none can be pulled), kind cluster
	$(KIND_ENV) scripts/kind-up

run-lab: install tools ## Check the fit, deploy to kind, run the tester Job, copy reports to results/kind
	HELM=$(HELM) KUBECTL=$(KUBECTL) KUBE_CONTEXT=kind-$(CLUSTER) RELEASE=$(RELEASE) NAMESPACE=$(NAMESPACE) \
		CHART=$(CHART) IMAGE_TAGS=$(IMAGE_TAGS) HELM_ARGS="$(HELM_ARGS)" PROPOSAL="$(PROPOSAL)" RESULTS_DIR=results/kind \
		GRAFANA_URL=$(GRAFANA_URL) $(BIN)/python scripts/run_lab.py

kind-down: tools ## Delete the cluster, stop the engine kind-up started, restore kernel settings
	$(KIND_ENV) scripts/kind-down

# Extra `helm upgrade` flags for kind-check's run-lab (with no -f: the profile that fits the
# cluster): two clients, on the two nodes kind-check makes (KIND_CHECK_NODES).
KIND_CHECK_HELM_ARGS ?= --set tester.parallelism=2
KIND_CHECK_NODES ?= 2

kind-check: install tools ## kind-up, run-lab, assertions, kind-down; the machine as before (CI)
	MAKE="$(MAKE)" NODES=$(KIND_CHECK_NODES) KUBECTL=$(KUBECTL) HELM=$(HELM) CLUSTER=$(CLUSTER) NAMESPACE=$(NAMESPACE) \
		RELEASE=$(RELEASE) PYTHON=$(BIN)/python RESULTS_DIR=results/kind \
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
	MAKE="$(MAKE)" PYTEST=$(BIN)/pytest IMAGE_TAG=$(or $(IMAGE_TAG),dev) LOCAL_BASE_IMAGE=$(LOCAL_BASE_IMAGE) \
		LAB_CACHE=$(LAB_CACHE) LAB_STATE_DIR=$(LAB_STATE_DIR) scripts/test-images
