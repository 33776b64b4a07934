# concurrency-lab: `make lab` runs the lab locally, `make test` runs lint and tests.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
# `make targets PORTS="fastapi=9001 flask-1x=9002"` moves targets off their default ports.
PORTS ?=

.DEFAULT_GOAL := help

.PHONY: help install lint format test targets

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

test: lint ## Lint, then every test (real servers on 127.0.0.1)
	$(BIN)/pytest

targets: install ## Start the three targets on 127.0.0.1:8001-8003 until Ctrl-C
	$(BIN)/python -m labtester targets $(foreach p,$(PORTS),--port $(p))
