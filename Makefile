# loggp: set-up, build and the two commands of the README.
#
#   make run    builds everything and runs the main job (default sweep)
#   make test   builds everything and runs every test
#
# Each target installs what is missing first (Debian packages, the Python
# venv) and is quick when everything is already there.

BUILD   ?= build
ASAN_BUILD ?= build-asan
VENV    ?= .venv
PYTHON  ?= python3
CMAKE_FLAGS ?=
ifdef CI
CMAKE_FLAGS += -DLOGGP_WERROR=ON
endif

DEB_PACKAGES = build-essential cmake ninja-build pkg-config \
	libfabric-dev libfabric-bin openmpi-bin libopenmpi-dev \
	python3-venv python3-dev prometheus prometheus-node-exporter \
	libdpdk-dev dpdk dpdk-dev iperf3 iproute2 iputils-ping ethtool \
	libssl-dev libsqlite3-dev nlohmann-json3-dev libjansson-dev libgtest-dev httperf wrk \
	fuse3 libfuse3-dev fio libboost-context-dev libhdf5-openmpi-dev chromium-headless-shell libsimgrid-dev \
	slurm-wlm munge \
	ansible ansible-core ansible-mitogen ansible-lint yamllint openssh-server rsync vagrant vagrant-libvirt

.PHONY: all deps print-deb-packages venv build build-asan test test-c test-py run clean

all: build

# apt-get only when a package is missing, so a warm machine skips it.
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "error: need root to apt-get install:" $$missing >&2; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

# The list, for ansible/roles/loggp_deps (one source of truth).
print-deb-packages:
	@echo $(DEB_PACKAGES)

$(VENV)/.stamp: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $@

venv: deps $(VENV)/.stamp

build: deps
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) >/dev/null
	cmake --build $(BUILD)

# The shim and its conformance cases with AddressSanitizer and UBSan
# (tests/test_conform.py); only those two targets, to keep it quick.
build-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DLOGGP_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	cmake --build $(ASAN_BUILD) --target loggp-fi fi_conform

test-c: build
	ctest --test-dir $(BUILD) --output-on-failure

# Two parts: most files on PYTEST_WORKERS processes at once (a whole file to
# one worker, so its shared fixtures are made once), then the tests marked
# serial alone, since they bound time or share namespaces and the wire.  Both
# parts run; either failing fails the target.
PYTEST_WORKERS ?= 2
# As root, pytest runs where /proc/kallsyms reads empty: libfabric's verbs provider reads
# it in every process that loads it (tests/without_kallsyms.sh says why and what it changes).
# Each part names its slowest tests, so a run's log shows where the time went.
PYTEST = LOGGP_BUILD=$(abspath $(BUILD)) LOGGP_ASAN_BUILD=$(abspath $(ASAN_BUILD)) \
	tests/without_kallsyms.sh $(VENV)/bin/pytest -q --durations=15 --durations-min=10

test-py: build build-asan venv
	@start=$$(date +%s); rc=0; \
	$(PYTEST) -n $(PYTEST_WORKERS) --dist loadfile -m 'not serial' || rc=1; \
	$(PYTEST) -m serial || rc=1; \
	echo "pytest wall time: $$(( $$(date +%s) - start )) s"; exit $$rc

test: test-c test-py

run: build venv
	LOGGP_BUILD=$(abspath $(BUILD)) $(VENV)/bin/loggp run

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
