# The ansible-core 2.21 leg: the lint, sanity and unit tiers again, under ansible-core 2.21 on Python 3.13, in a
# Debian 13 root file system entered with chroot (tests/core221/chroot-run.sh; built and cached by
# tests/images/build-debian13-rootfs.sh). Inside, this Makefile runs as on any machine, on the leg's own .venv and
# .build (kept in .build/core221): `make venv` there installs tests/core221/requirements-run.txt, then each tier
# adds what it adds. Included by the Makefile. As root (debootstrap, unshare, chroot).

CORE221_CHROOT       := $(ROOT)/tests/core221/chroot-run.sh
CORE221_REQUIREMENTS := tests/core221/requirements-run.txt
# The tiers of the leg; "+" joins tiers run side by side, as in TEST_TIERS. unit is not in the default yet: under 2.21
# it still fails where the chroot is not the Debian 12 controller the playbook tests assume (Debian 13 facts refused
# by the host roles' OS tables) and in tests written to Python 3.11's recursion limits;
# `make core221 CORE221_TIERS=unit` runs it.
CORE221_TIERS ?= lint+sanity

.PHONY: core221-rootfs core221-venv core221 core221-shell

core221-rootfs: ## build (or reuse) the Debian 13 root file system of the ansible-core 2.21 leg
	@tests/images/build-debian13-rootfs.sh >/dev/null

# A make of its own, so that RUN_REQUIREMENTS reaches no make the tests start. The stamps are touched after it: the
# tiers' make, which knows only tools/requirements-run.txt, must find the venv up to date and never put 2.19 in it.
core221-venv: core221-rootfs ## the leg's .venv (.build/core221/venv): ansible-core 2.21 and the test tools on Python 3.13
	$(CORE221_CHROOT) make --no-print-directory RUN_REQUIREMENTS=$(CORE221_REQUIREMENTS) test-venv
	$(CORE221_CHROOT) sh -c 'touch .venv/bin/ansible .venv/.test-requirements && .venv/bin/python -c "$$0" $(CORE221_REQUIREMENTS)' \
	  'import re, sys; from ansible.release import __version__ as core; \
	   pin = re.search(r"^ansible-core==(\S+)$$", open(sys.argv[1]).read(), re.M).group(1); \
	   print(f"ansible-core {core} on Python {sys.version.split()[0]}"); sys.exit(core != pin)'

core221: core221-venv ## the lint, sanity and unit tiers under ansible-core 2.21 on Python 3.13 (CORE221_TIERS)
	@set -e; for step in $(CORE221_TIERS); do tiers="$$(echo $$step | tr + ' ')"; echo "=== ansible-core 2.21 tier: $$tiers"; \
	  $(CORE221_CHROOT) make --no-print-directory -j "$$(echo $$tiers | wc -w)" --output-sync=target $$tiers; done
	@echo "ansible-core 2.21 tiers passed: $(subst +, ,$(CORE221_TIERS))"

# Host-role molecule scenarios under 2.21: molecule, Ansible and testinfra run in the chroot; the containers are this
# machine's podman, served to the chroot's podman client on a socket (tests/core221/podman-service.sh), from the image
# `make molecule-image` builds here. The inner make neither builds the image again nor the cluster harness nor
# kubernetes.core (-o), which the host-role scenarios do not use. One at a time: the containers have the scenarios'
# own names, as in the molecule tier.
CORE221_SCENARIOS ?= nvidia_peermem

core221-molecule: core221-venv molecule-image ## the host-role molecule scenarios CORE221_SCENARIOS (nvidia_peermem) under ansible-core 2.21
	$(CORE221_CHROOT) sh tools/bootstrap-debian.sh podman nsenter:util-linux
	tests/core221/podman-service.sh $(CORE221_CHROOT) make --no-print-directory -o molecule-image -o cluster-build \
	  -o $(KUBERNETES_CORE) molecule SCENARIO="$(CORE221_SCENARIOS)" MOLECULE_JOBS=1

core221-shell: core221-venv ## a shell in the leg's chroot, in this checkout, with its .venv
	$(CORE221_CHROOT) bash

TEST_TIERS += core221 core221-molecule
