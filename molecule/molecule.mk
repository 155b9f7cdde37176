# The molecule tier: every scenario under molecule/*/molecule.yml (or SCENARIO=name), on podman systemd hosts
# from the locally built Debian 12 image. Included by the main Makefile.
# molecule/demo is `make demo`, not a test scenario: left out.
MOLECULE_SCENARIOS := $(filter-out demo,$(patsubst molecule/%/molecule.yml,%,$(wildcard molecule/*/molecule.yml)))
SCENARIO ?=

.PHONY: molecule-image molecule hardware-offline demo demo-down

molecule-image: ## build (or reuse) the Debian 12 systemd image of the host-role scenarios
	@tests/images/build-debian12-systemd.sh

# Scenarios run MOLECULE_JOBS at a time (each with its own containers or control plane), longest first by the
# durations of their last passing run on this machine (kept beside the harness binaries, so a fresh clone has them;
# on a machine with none, those of a recorded run, tests/molecule/expected-durations.json);
# each one's log (every line prefixed with its second) is printed whole when it ends and kept in
# .build/molecule/<scenario>.log, and the line that ends it gives each molecule step's seconds.
MOLECULE_JOBS      ?= 2
MOLECULE_DURATIONS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/gpufabric/molecule-durations.json

molecule: test-venv collection molecule-image cluster-build $(KUBERNETES_CORE) ## molecule test of every scenario (or SCENARIO=name, MOLECULE_JOBS=2); leaves no container behind
	PYTHONPATH=$(ZIPIMPORT_PATH) $(ZIPIMPORT_ENV) \
	  $(BIN)/python tests/molecule/run_scenarios.py --jobs $(MOLECULE_JOBS) --log-dir $(BUILD)/molecule \
	  --durations $(MOLECULE_DURATIONS) --expected tests/molecule/expected-durations.json \
	  --molecule $(BIN)/molecule $(or $(SCENARIO),$(MOLECULE_SCENARIOS))

TEST_TIERS += molecule

# The hardware tier's offline path proven where no GPU is (tests/molecule/hardware_offline.py): tools/hardware-run.sh
# in a container of the test image with --network=none, this checkout read-only and the bundle in it; the bundle must
# install offline, the probe modules run and report no GPU, and every hardware test say "no NVIDIA GPU here".
hardware-offline: test-venv molecule-image hardware-bundle ## the offline hardware run in a container of the test image, no network, no GPU
	$(BIN)/python tests/molecule/hardware_offline.py --out $(BUILD)/hardware-offline

TEST_TIERS += hardware-offline

# `make demo`: gpufabric.cluster.site on a simulated GB200 NVL72 rack (tools/demo.py, molecule/demo): the test control
# plane with 18 kwok trays in two cliques, podman trays probing recorded trees, one of them with a rail down on purpose.
demo: test-venv collection molecule-image cluster-build $(KUBERNETES_CORE) ## site.yml on a simulated GB200 NVL72 rack, reports in reports/demo
	$(BIN)/python tools/demo.py up --molecule $(BIN)/molecule

demo-down: test-venv collection ## remove the containers and stop the control plane make demo started
	$(BIN)/python tools/demo.py down --molecule $(BIN)/molecule
