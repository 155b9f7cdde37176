# gpufabric.cluster - set-up and test entry points. `make help` lists them.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

ROOT        := $(abspath .)
VENV        := $(ROOT)/.venv
BIN         := $(VENV)/bin
BUILD       := $(ROOT)/.build
COLLECTIONS := $(BUILD)/collections
LINK        := $(COLLECTIONS)/ansible_collections/gpufabric/cluster
SANITY_DIR  := $(BUILD)/sanity/ansible_collections/gpufabric/cluster
# the interpreter of .venv: PYTHON where given and not empty, else the distribution's python3 where it is 3.11+, else
# python3 (tools/venv-python.sh)
VENV_PYTHON  = $(or $(PYTHON),$(shell sh $(ROOT)/tools/venv-python.sh))
VENV_PYTHON_REFUSED = the interpreter of .venv, '$(VENV_PYTHON)' (PYTHON, else tools/venv-python.sh's choice), does \
  not run as Python 3.11 or newer, which ansible-core 2.19 needs on the controller: give one with \
  make PYTHON=/path/to/python3.11
INVENTORY   ?= inventories/local
VERSION     := $(shell sed -n 's/^version: *//p' galaxy.yml)
TARBALL     := $(BUILD)/gpufabric-cluster-$(VERSION).tar.gz
# the Python version of .venv's interpreter, which `make sanity` runs ansible-test's tests on
VENV_PYTHON_VERSION = $(shell $(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
PIP_VERSION  = $(shell sed -n "s/^ *pip='\([0-9.]*\)',*$$/\1/p" $(VENV)/lib/python3*/site-packages/ansible_test/_internal/python_requirements.py | head -n1)

export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS)
# This checkout first; then the collections this one needs (kubernetes.core, community.general, ansible.posix) from
# the pinned `ansible` package in .venv, since Galaxy is not reachable.
export ANSIBLE_COLLECTIONS_SCAN_SYS_PATH := true
export PATH := $(BIN):$(PATH)

.PHONY: help system-deps venv test-venv collection preflight test lint docs-lint docs changelog sanity unit build importer install-check hardware hardware-bundle clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 14

system-deps: ## install the OS packages running the playbooks needs (Debian/Ubuntu; only what is missing)
	@PYTHON='$(VENV_PYTHON)' sh tools/bootstrap-debian.sh

# .venv in two layers, each with a stamp so that a warm venv is not reinstalled: what running the playbooks needs
# (RUN_REQUIREMENTS, the `venv` target), then the test tools (tests/requirements.txt), which every test target adds
# itself, with the OS packages of its own (`sh tools/bootstrap-debian.sh COMMAND[:PACKAGE] ...`). RUN_REQUIREMENTS is
# tools/requirements-run.txt (ansible-core 2.19) but for the ansible-core 2.21 leg (tests/core221/core221.mk).
TEST_VENV := $(VENV)/.test-requirements
RUN_REQUIREMENTS ?= tools/requirements-run.txt

$(BIN)/ansible: $(RUN_REQUIREMENTS) requirements.txt | system-deps
	@sh tools/venv-python.sh --check '$(VENV_PYTHON)' || { echo "$(VENV_PYTHON_REFUSED)" >&2; exit 1; }
	@# where .venv is a link (a worktree sharing another checkout's), the venv module wants the directory it leads to
	$(VENV_PYTHON) -m venv "$$(readlink -m $(VENV))"
	$(BIN)/pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/pip install --quiet --disable-pip-version-check -r $(RUN_REQUIREMENTS)
	touch $@

$(TEST_VENV): tests/requirements.txt $(BIN)/ansible
	$(BIN)/pip install --quiet --disable-pip-version-check -r tests/requirements.txt
	touch $@

venv: $(BIN)/ansible ## create .venv with the pinned Ansible and the controller's Python packages

test-venv: $(TEST_VENV) ## add the pinned test tools to .venv

collection: ## make the working tree importable as gpufabric.cluster (a link under .build/collections)
	@mkdir -p $(dir $(LINK))
	@ln -sfn $(ROOT) $(LINK)

preflight: venv collection ## run the preflight playbook against $(INVENTORY) and print the readiness report
	$(BIN)/ansible-playbook -i $(INVENTORY) gpufabric.cluster.preflight $(ARGS)
	@cat "$${GPUFABRIC_REPORT_DIR:-$(ROOT)/reports}/preflight.md" 2>/dev/null || true

# Further tiers (the cluster harness, molecule scenarios) add themselves to TEST_TIERS from their own makefiles.
# Tiers joined by "+" run side by side (make -j, each one's output printed whole when it ends): lint and sanity keep
# about one core each busy, so on two cores they take the time of the longer one.
TEST_TIERS := lint+sanity unit
-include tests/cluster/cluster.mk
-include molecule/molecule.mk
-include tests/core221/core221.mk

test: ## every test tier
	@set -e; for step in $(TEST_TIERS); do tiers="$$(echo $$step | tr + ' ')"; echo "=== tier: $$tiers"; \
	  if [ "$$tiers" = "$$step" ]; then $(MAKE) --no-print-directory $$step; \
	  else $(MAKE) --no-print-directory -j "$$(echo $$tiers | wc -w)" --output-sync=target $$tiers; fi; done
	@echo "all test tiers passed: $(subst +, ,$(TEST_TIERS))"

lint: test-venv collection build ## ruff, yamllint, ansible-lint (production), docs-lint, galaxy-importer, install + ansible-doc of the tarball, the docs site
	$(BIN)/ruff check plugins tests tools bench
	$(BIN)/yamllint -s .
	@# ANSIBLE_HOME: ansible-lint's cache is then .build, whose collections/ link is this checkout, so no copy of the
	@# collection installed under ~/.ansible by another checkout or an older run can shadow it
	ANSIBLE_HOME=$(BUILD) ANSIBLE_LIBRARY=$(ROOT)/tests/molecule/library ANSIBLE_MODULE_UTILS=$(ROOT)/tests/fixtures $(BIN)/ansible-lint --offline  # the scenarios' TEST FIXTURE modules
	$(MAKE) --no-print-directory docs-lint importer install-check docs

# antsibull-docs reads the collection where .build/collections lays it out as ansible_collections/gpufabric/cluster;
# it renders every module's, filter's, callback's and role's docs as the docs site would and checks the markup and
# the references (to this collection's plugins and roles, and to those of the collections galaxy.yml names); it lints
# the guides of docs/docsite/ (extra-docs.yml and rst/*.rst: labels, markup, and with --check-extra-docs-refs their
# references to plugins and roles) the same way.
docs-lint: test-venv collection ## antsibull-docs lint-collection-docs --plugin-docs --check-extra-docs-refs; antsibull-changelog lint (the fragments)
	ANSIBLE_HOME=$(BUILD) $(BIN)/antsibull-docs lint-collection-docs --plugin-docs --check-extra-docs-refs $(LINK)
	$(BIN)/antsibull-changelog lint

# TEST FIXTURE of the test tiers (tests/zipimport_cache): every Python a tier starts on the controller, the modules
# Ansible runs there included, reads back the code it compiled from AnsiballZ zips before instead of compiling it again
# on every module run. The cache is keyed by each source's hash, so it is kept beside the harness binaries for every
# clone on the machine. Only the test recipes set it; `make preflight` and playbooks run outside the tests never do.
# `make ... ZIPIMPORT_CACHE=` turns it off.
ZIPIMPORT_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/gpufabric/zipimport
ZIPIMPORT_PATH  := $(ROOT)/tests/zipimport_cache
ZIPIMPORT_ENV    = GPUFABRIC_ZIPIMPORT_CACHE=$(ZIPIMPORT_CACHE)

# pytest-xdist workers of the unit tier: the tests are CPU-bound and independent (each builds its trees in tmp_path)
UNIT_JOBS ?= 2

unit: test-venv collection ## pytest on module_utils, modules and filters with recorded fixtures (UNIT_JOBS=2)
	@# chromium: rendering the validation report headless; accton: bench/tier_cpu.py's test; apt-ftparchive and dpkg-deb:
	@# the stand-in driver repository (tests/standin/build-repo.sh) of the driver-load tests
	@sh tools/bootstrap-debian.sh chromium accton:acct apt-ftparchive:apt-utils dpkg-deb:dpkg-dev
	@# worksteal: a worker that runs out of tests takes pending ones from the other, so the slow playbook tests at the
	@# end of one worker's queue do not leave the other idle (load scheduling fixes each worker's queue early)
	cd $(ROOT) && PYTHONPATH=$(COLLECTIONS):$(ZIPIMPORT_PATH) $(ZIPIMPORT_ENV) $(BIN)/pytest -q --numprocesses=$(UNIT_JOBS) \
	  --dist worksteal tests/unit; rc=$$?; \
	  if [ $$rc = 5 ]; then echo "pytest collected no test"; exit 1; fi; exit $$rc

sanity: test-venv ## ansible-test sanity on a copy of the tree laid out as ansible_collections/gpufabric/cluster
	@sh tools/bootstrap-debian.sh rsync shellcheck  # the copy below; ansible-test's shell script check
	@rm -rf $(SANITY_DIR) && mkdir -p $(SANITY_DIR)
	@git ls-files -z --cached --others --exclude-standard | rsync -a --from0 --files-from=- ./ $(SANITY_DIR)/
	@# its own git repository, so that ansible-test lists its files rather than the ignored .build/ of ours
	@cd $(SANITY_DIR) && git init -q && git add -A
	@mkdir -p ~/.ansible/test/cache
	@v="$(PIP_VERSION)"; cp tools/get_pip_offline.py ~/.ansible/test/cache/get_pip_$${v//./_}.py
	cd $(SANITY_DIR) && $(BIN)/ansible-test sanity --venv --python $(VENV_PYTHON_VERSION) --color no $(SANITY_ARGS)

# The docs site: antsibull-docs sphinx-init writes the Sphinx project, antsibull-docs collection the RST of every
# module, filter, callback and role (from meta/argument_specs.yml), Sphinx the HTML. Offline it still builds: the
# intersphinx inventories (Python, Jinja, docs.ansible.com) cannot be fetched, so the references to ansible.builtin
# and the other collections stay unlinked and Sphinx warns about them (hence no -W).
DOCS      := $(BUILD)/docs
DOCS_VENV := $(VENV)/.docs-requirements

$(DOCS_VENV): tools/requirements-docs.txt $(BIN)/ansible
	$(BIN)/pip install --quiet --disable-pip-version-check -r tools/requirements-docs.txt
	touch $@

docs: $(DOCS_VENV) collection ## build the docs site into .build/docs/build/html (antsibull-docs, Sphinx)
	rm -rf $(DOCS) && mkdir -p $(DOCS)
	ANSIBLE_HOME=$(BUILD) $(BIN)/antsibull-docs sphinx-init --use-current --dest-dir $(DOCS) \
	  --index-rst-source docs/site/index.rst --project gpufabric.cluster --copyright 'gpufabric.cluster contributors' \
	  --title 'gpufabric.cluster' gpufabric.cluster
	mkdir -p $(DOCS)/rst && chmod og-w $(DOCS)/rst
	cd $(DOCS) && ANSIBLE_HOME=$(BUILD) $(BIN)/antsibull-docs --config-file antsibull-docs.cfg collection \
	  --cleanup everything --use-current --dest-dir rst gpufabric.cluster
	cd $(DOCS) && $(BIN)/sphinx-build -M html rst build -c . -q
	@echo "docs site: $(DOCS)/build/html/index.html"

# changelogs/changelog.yaml has no release yet, so `antsibull-changelog generate` has nothing to write: this renders
# what the next release's CHANGELOG.md will say, by `antsibull-changelog release` on a copy of the tree (the release
# itself consumes the fragments; CONTRIBUTING.md, "Changelog").
CHANGELOG_DIR := $(BUILD)/changelog/ansible_collections/gpufabric/cluster

changelog: test-venv ## render the unreleased changes from changelogs/fragments into .build/CHANGELOG.md
	@sh tools/bootstrap-debian.sh rsync
	@rm -rf $(BUILD)/changelog && mkdir -p $(CHANGELOG_DIR)
	@git ls-files -z --cached --others --exclude-standard | rsync -a --from0 --files-from=- ./ $(CHANGELOG_DIR)/
	cd $(CHANGELOG_DIR) && $(BIN)/antsibull-changelog release --version $(VERSION) --date "$$(date -u +%F)"
	cp $(CHANGELOG_DIR)/CHANGELOG.md $(BUILD)/CHANGELOG.md && rm -rf $(BUILD)/changelog
	@echo "unreleased changes of $(VERSION): $(BUILD)/CHANGELOG.md"

build: venv ## build the collection tarball into .build/
	@mkdir -p $(BUILD)
	$(BIN)/ansible-galaxy collection build --force --output-path $(BUILD) .

importer: build ## galaxy-importer on the built tarball (local checks, no container)
	@# its ansible-lint resolves gpufabric.cluster.* in the unpacked tarball, not in a copy under ~/.ansible
	cd $(BUILD) && ANSIBLE_HOME=$(BUILD)/importer-home GALAXY_IMPORTER_CONFIG=$(ROOT)/tests/galaxy-importer.cfg $(BIN)/python -m galaxy_importer.main $(TARBALL)

# The installed copy sees only the collections galaxy.yml declares (symlinked from the pinned `ansible` package in
# .venv, as Galaxy is unreachable; no sys.path scan): every playbook is syntax-checked through it, and so is a play
# importing every task file of every role (the playbooks include the roles at run time, which a syntax check does
# not follow), so that a module of an undeclared collection fails here. That play is written under installed-home,
# away from .build/collections, which ansible-playbook would read as the collections beside a playbook in .build.
INSTALLED      := $(BUILD)/installed
INSTALLED_ENV  := ANSIBLE_COLLECTIONS_PATH=$(INSTALLED) ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false ANSIBLE_HOME=$(BUILD)/installed-home
VENV_ANSIBLE_COLLECTIONS = $(firstword $(wildcard $(VENV)/lib/python3*/site-packages/ansible_collections))

install-check: build ## install the built tarball beside its declared dependencies only; ansible-doc and syntax-check from it
	rm -rf $(INSTALLED) $(BUILD)/installed-home && mkdir -p $(BUILD)/installed-home
	$(INSTALLED_ENV) $(BIN)/ansible-galaxy collection install --force --no-deps -p $(INSTALLED) $(TARBALL)  # deps: from Galaxy for users, from .venv here
	@set -e; for dep in $$($(BIN)/python -c 'import yaml; print(" ".join(yaml.safe_load(open("galaxy.yml"))["dependencies"] or {}))'); do \
	  test -d $(VENV_ANSIBLE_COLLECTIONS)/$${dep/.//} || { echo "$$dep: not in the pinned ansible package"; exit 1; }; \
	  mkdir -p $(INSTALLED)/ansible_collections/$${dep%%.*}; \
	  ln -sfn $(VENV_ANSIBLE_COLLECTIONS)/$${dep/.//} $(INSTALLED)/ansible_collections/$${dep/.//}; \
	  echo "declared dependency $$dep: from the pinned ansible package"; done
	@set -e; for module in $$(ls plugins/modules | sed -n 's/\.py$$//p'); do \
	  $(INSTALLED_ENV) $(BIN)/ansible-doc gpufabric.cluster.$$module > /dev/null; \
	  echo "ansible-doc gpufabric.cluster.$$module: ok"; done
	@set -e; for filter in $$(ls plugins/filter | sed -n 's/\.yml$$//p'); do \
	  $(INSTALLED_ENV) $(BIN)/ansible-doc -t filter gpufabric.cluster.$$filter > /dev/null; \
	  echo "ansible-doc -t filter gpufabric.cluster.$$filter: ok"; done
	@set -e; for playbook in $$(ls playbooks | sed -n 's/\.yml$$//p'); do \
	  $(INSTALLED_ENV) $(BIN)/ansible-playbook -i localhost, --syntax-check gpufabric.cluster.$$playbook > /dev/null; \
	  echo "ansible-playbook --syntax-check gpufabric.cluster.$$playbook: ok"; done
	@cd $(INSTALLED)/ansible_collections/gpufabric/cluster && { \
	  echo "- {name: Every task file of every role, hosts: localhost, gather_facts: false, tasks: ["; \
	  for file in roles/*/tasks/*.yml; do role=$${file#roles/}; role=$${role%%/*}; tasks=$${file##*/}; \
	    echo "  {ansible.builtin.import_role: {name: gpufabric.cluster.$$role, tasks_from: $${tasks%.yml}}},"; done; \
	  echo "]}"; } > $(BUILD)/installed-home/install-check-roles.yml
	$(INSTALLED_ENV) $(BIN)/ansible-playbook -i localhost, --syntax-check $(BUILD)/installed-home/install-check-roles.yml > /dev/null
	@echo "ansible-playbook --syntax-check of every role task file ($$(grep -c import_role $(BUILD)/installed-home/install-check-roles.yml)): ok"

# The hardware tier (CONTRIBUTING.md, "The hardware tier"): tests/hardware compares the probe modules on a real GPU host
# with independent readings (NVML asked directly, nvidia-smi -q -x, the PCI functions) and says why a test does not
# apply where the host lacks a reading. `make hardware` runs it on a GPU host that reaches PyPI (it builds .venv); on a
# lent GPU machine that reaches nothing, `make hardware-bundle` here and `bash tools/hardware-run.sh` there.
hardware: test-venv collection ## probe tests against the real driver and NVML (run on a GPU host that reaches PyPI)
	PYTHONPATH=$(COLLECTIONS) $(BIN)/pytest -q -s -p no:cacheprovider tests/hardware

HARDWARE_BUNDLE := $(BUILD)/hardware-bundle
# .venv's interpreter where there is one, else the one `make venv` would take: any Python with pip downloads the bundle
# (tools/hardware_bundle.py needs the standard library only), and a checkout whose .venv is shared must not rebuild it
HARDWARE_PYTHON  = $(if $(wildcard $(BIN)/python),$(BIN)/python,$(VENV_PYTHON))

hardware-bundle: ## the wheels an offline GPU machine lacks (ansible-core at its pin) in .build/hardware-bundle, to carry there
	$(HARDWARE_PYTHON) tools/hardware_bundle.py --dest $(HARDWARE_BUNDLE)

clean: ## remove .build and the virtual environment
	rm -rf $(BUILD) $(VENV)
