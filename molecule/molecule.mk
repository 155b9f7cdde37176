# The molecule tier: every scenario under molecule/*/molecule.yml (or SCENARIO=name), on podman systemd hosts
# from the locally built Debian 12 image. Included by the main Makefile.
MOLECULE_SCENARIOS := $(patsubst molecule/%/molecule.yml,%,$(wildcard molecule/*/molecule.yml))
SCENARIO ?=

.PHONY: molecule-image molecule

molecule-image: ## build (or reuse) the Debian 12 systemd image of the host-role scenarios
	@tests/images/build-debian12-systemd.sh

molecule: venv collection molecule-image cluster-build $(KUBERNETES_CORE) ## molecule test of every scenario (or SCENARIO=name); leaves no container behind
	@set -u; failed=""; \
	  for scenario in $(or $(SCENARIO),$(MOLECULE_SCENARIOS)); do \
	    [ -f "molecule/$$scenario/molecule.yml" ] || { echo "no scenario molecule/$$scenario"; exit 2; }; \
	    echo "=== molecule scenario: $$scenario"; start=$$(date +%s); \
	    if NO_COLOR=1 $(BIN)/molecule test -s "$$scenario"; then \
	      echo "=== molecule scenario $$scenario passed in $$(( $$(date +%s) - start ))s"; \
	    else \
	      echo "=== molecule scenario $$scenario FAILED after $$(( $$(date +%s) - start ))s"; failed="$$failed $$scenario"; \
	      $(BIN)/molecule destroy -s "$$scenario" >/dev/null 2>&1 || true; \
	    fi; \
	  done; \
	  if [ -n "$$failed" ]; then echo "failed molecule scenario(s):$$failed"; exit 1; fi

TEST_TIERS += molecule
