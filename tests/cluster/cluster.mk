# The cluster tier (tests/cluster): etcd, kube-apiserver, kube-controller-manager, kube-scheduler, the MPI operator and
# kwok GPU nodes on 127.0.0.1, built from source with Go (tests/cluster/README.md). Included by the Makefile.

CLUSTER_DIR     := $(ROOT)/tests/cluster
CLUSTER_HARNESS := $(BIN)/python $(CLUSTER_DIR)/harness.py
CLUSTER_WHEELS  := $(BUILD)/cluster/wheels
KUBERNETES_CORE := $(COLLECTIONS)/ansible_collections/kubernetes/core/MANIFEST.json
GPU_NODES       ?= 18

.PHONY: cluster-build cluster-up cluster-down cluster-status cluster

cluster-build: ## build the harness binaries with Go into ~/.cache/gpufabric (each once per its pins in versions.env)
	$(CLUSTER_DIR)/build.sh

# kubernetes.core from the pinned `ansible` wheel on PyPI (Galaxy is unreachable), into our collections path.
$(KUBERNETES_CORE): tests/cluster/requirements.txt | venv collection
	rm -rf $(CLUSTER_WHEELS)
	$(BIN)/pip download --quiet --disable-pip-version-check --no-deps -r tests/cluster/requirements.txt -d $(CLUSTER_WHEELS)
	$(CLUSTER_HARNESS) install-kubernetes-core $(CLUSTER_WHEELS) $(COLLECTIONS)
	rm -rf $(CLUSTER_WHEELS)
	touch $@

cluster-up: test-venv cluster-build ## start the harness by hand (GPU_NODES=18); prints the KUBECONFIG to export
	$(CLUSTER_HARNESS) up --gpu-nodes $(GPU_NODES)

cluster-down: venv ## stop everything cluster-up started and remove its state
	$(CLUSTER_HARNESS) down

cluster-status: venv # the running harness: ports, pids, kubeconfig (JSON)
	$(CLUSTER_HARNESS) status

# CLUSTER_JOBS pytest-xdist workers, each with its own harness, a test file on one worker: a harness keeps under one core
# of a 2-core machine busy (the tests wait on the API server and the controllers), so two halve the tier's time.
CLUSTER_JOBS ?= 2

cluster: test-venv collection cluster-build $(KUBERNETES_CORE) ## the cluster tier: smoke tests against the harness (CLUSTER_JOBS=2)
	cd $(ROOT) && rc=0 && PYTHONPATH=$(COLLECTIONS):$(ZIPIMPORT_PATH) $(ZIPIMPORT_ENV) \
	  $(BIN)/pytest -q --durations=15 --numprocesses=$(CLUSTER_JOBS) --dist loadfile -m cluster tests/cluster || rc=$$?; \
	  if [ $$rc = 5 ]; then echo "pytest collected no test"; exit 1; fi; exit $$rc

TEST_TIERS += cluster
