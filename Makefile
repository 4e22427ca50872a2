# torch2onnx: the two commands of the quick start are `make demo` and `make test`.
# Both install what is missing (Debian packages; PyTorch 2.14, ONNX Runtime and
# the rest into a venv inside the build tree) and build.
#
#   build/        the default build, on the LibTorch of torch 2.14 (build/venv)
#   build-1.13/   the same sources on Debian's LibTorch 1.13.1 (make test-1.13)

BUILD_DIR ?= build
BUILD_113 ?= build-1.13
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= 2
SYSTEM_PYTHON := /usr/bin/python3
# The ONNX C++ library of the default build: the release of the onnx Python
# package pinned in requirements/torch-2.14.txt, built from its source
# (cmake/build_onnx.sh); the 1.13 build uses Debian's ONNX 1.12.
ONNX_VERSION := $(shell sed -n 's/^onnx==//p' requirements/torch-2.14.txt)
ONNX_PREFIX := $(CURDIR)/$(BUILD_DIR)/onnx/install
REQUIREMENTS := requirements/torch-2.14.txt
# Another PyTorch 2.x (issue 42): `make build TORCH=2.13.0` builds in
# build-torch-2.13.0/ with its own venv (requirements/torch-2.13.txt) and the
# default build's ONNX library; `make test-torch TORCH=2.13.0` runs the subset
# (CTest label `legacy` but the operator families: unit, CLI, a model per
# family, the Python package, the C++ API; what needs torchvision, which PyPI
# has none of beside these, reports itself skipped).
TORCH ?=
ifneq ($(TORCH),)
BUILD_DIR := build-torch-$(TORCH)
REQUIREMENTS := requirements/torch-$(basename $(TORCH)).txt
endif
VENV := $(BUILD_DIR)/venv
PYTHON := $(VENV)/bin/python
VENV_113 := $(BUILD_113)/venv
PYTHON_113 := $(VENV_113)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian packages: what the default build needs (and `make demo`), what its
# tests add, what the 1.13 build adds (Debian's LibTorch, ONNX and Python stack).
APT_CORE := build-essential cmake ccache git libprotobuf-dev protobuf-compiler zlib1g-dev \
	python3-dev python3-venv python3-pip pybind11-dev nlohmann-json3-dev googletest libgtest-dev
APT_TEST := valgrind graphviz
APT_113 := libtorch-dev libonnx-dev python3-torch python3-torchvision python3-onnx python3-numpy python3-pytest \
	python3-setuptools python3-wheel python3-packaging

# $(call apt-install,PACKAGES): installs those not installed yet.
define apt-install
	@missing=$$(for p in $(1); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime
export CCACHE_DIR ?= $(HOME)/.cache/ccache

.PHONY: all deps apt-deps apt-deps-test apt-deps-1.13 build-core venv onnx build test test-torch test-full test-zoo test-transformers test-unit test-asan test-1.13 build-1.13 test-clients demo install bench bench-llm clean

all: build

deps: apt-deps venv onnx

# The Debian packages of the default build; of its tests; of the 1.13 build.
apt-deps:
	$(call apt-install,$(APT_CORE))

apt-deps-test:
	$(call apt-install,$(APT_CORE) $(APT_TEST))

apt-deps-1.13:
	$(call apt-install,$(APT_CORE) $(APT_113))

# The Python stack of the default build (requirements/torch-2.14.txt).
venv: $(VENV)/.installed

$(VENV)/.installed: $(REQUIREMENTS) | apt-deps
	$(SYSTEM_PYTHON) -m venv $(VENV)
	$(PYTHON) -m pip install -q --disable-pip-version-check -r $<
	@touch $@

onnx: $(ONNX_PREFIX)/.installed-$(ONNX_VERSION)

# (the venv only runs the build: a newer venv does not rebuild the library)
$(ONNX_PREFIX)/.installed-$(ONNX_VERSION): cmake/build_onnx.sh | $(VENV)/.installed
	JOBS=$(JOBS) cmake/build_onnx.sh $(ONNX_VERSION) $(ONNX_PREFIX) $(CURDIR)/$(PYTHON)
	@touch $@

$(VENV_113)/.installed: requirements/torch-1.13.txt | apt-deps-1.13
	$(SYSTEM_PYTHON) -m venv --system-site-packages $(VENV_113)
	$(PYTHON_113) -m pip install -q --disable-pip-version-check --no-deps -r $<
	@touch $@

# (CMakeFiles/Makefile.cmake exists once a configuration succeeded; a failed one leaves a CMakeCache.txt.)
$(BUILD_DIR)/CMakeFiles/Makefile.cmake: CMakeLists.txt cmake/Torch.cmake $(VENV)/.installed $(ONNX_PREFIX)/.installed-$(ONNX_VERSION)
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DT2O_TORCH=wheel -DT2O_PYTHON=$(CURDIR)/$(PYTHON) \
	  -DT2O_ONNX_PREFIX=$(ONNX_PREFIX)

build: deps $(BUILD_DIR)/CMakeFiles/Makefile.cmake
	cmake --build $(BUILD_DIR) -j$(JOBS)

# What `make demo` needs of the build: the library, the CLI and the Python
# extension (the tests' programs build with `make build` / `make test`).
build-core: deps $(BUILD_DIR)/CMakeFiles/Makefile.cmake
	cmake --build $(BUILD_DIR) -j$(JOBS) --target torch2onnx_cli torch2onnx_python

# The tests' disk use outside the build tree (issue 46): tools/disk_watch.py
# runs them with TMPDIR in a folder of their own under $TMPDIR or /tmp,
# measures $TMPDIR or /tmp (and /dev/shm) every 2 s and prints, at the end,
# the size before, the peak and the size after; it removes that folder first
# (after a failure it keeps up to 300 MB of it for a look, until the next
# run). Its exit status is the tests'. (The sub-make is named through
# T2O_SUBMAKE, not $(MAKE), so that `make -n test` prints the tests' command
# instead of running it.)
DISK_WATCH := $(SYSTEM_PYTHON) $(CURDIR)/tools/disk_watch.py
T2O_SUBMAKE = $(MAKE)

# The whole suite on torch 2.14, then the 1.13 build on its subset.
test: apt-deps-test build
	$(DISK_WATCH) -- sh -c '(cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS) --timeout 900 -LE full) && \
	  $(T2O_SUBMAKE) test-1.13'

# Everything `make test` leaves out (ctest labels matching `full`): the other
# torchvision models, the whole transformers corpus, the operator sweep with
# dim 0 dynamic, the zoo at every new opset.
test-full: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS) -L full

# The subset on another PyTorch 2.x (make build TORCH=2.13.0 first; see TORCH above).
test-torch: apt-deps-test build
	@test -n "$(TORCH)" || { echo "make test-torch TORCH=2.13.0 (or 2.15.0): which PyTorch"; exit 1; }
	cd $(BUILD_DIR) && $(DISK_WATCH) -- ctest --output-on-failure -j$(JOBS) --timeout 900 -L legacy -E '^ops\.'

# Every torchvision model (the large ones take long; `make test` runs one per family).
test-zoo: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS) -L zoo

# transformers models (tests/transformers/corpus.py) through both paths at
# opsets 17, 20, 23 and 28; `make test` runs a sample.
test-transformers: build
	cd $(BUILD_DIR) && ctest --output-on-failure -L transformers-full

# Debian's LibTorch 1.13.1: every stage (unit, CLI, operators, a model per
# family, the Python package, the C++ API), labelled `legacy` in tests/.
$(BUILD_113)/CMakeFiles/Makefile.cmake: CMakeLists.txt cmake/Torch.cmake $(VENV_113)/.installed
	cmake -S . -B $(BUILD_113) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DT2O_TORCH=system -DT2O_PYTHON=$(CURDIR)/$(PYTHON_113)

build-1.13: apt-deps-1.13 $(BUILD_113)/CMakeFiles/Makefile.cmake
	cmake --build $(BUILD_113) -j$(JOBS)

# (inside `make test`, whose disk_watch watches, disk_watch only runs ctest)
test-1.13: build-1.13
	cd $(BUILD_113) && $(DISK_WATCH) -- ctest --output-on-failure -j$(JOBS) --timeout 900 -L legacy

# The CLI built with AddressSanitizer + UndefinedBehaviorSanitizer: 1,000
# mutated archives and 1,000 mutated argument lists (tests/fuzz), then the
# CLI tests, with zero crashes, hangs or sanitizer reports.
ASAN_ENV := ASAN_OPTIONS=detect_leaks=0:detect_container_overflow=0 UBSAN_OPTIONS=print_stacktrace=1
test-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DT2O_SANITIZE=ON -DT2O_TORCH=wheel -DT2O_PYTHON=$(CURDIR)/$(PYTHON) -DT2O_BUILD_PYTHON=OFF -DT2O_BUILD_TESTS=OFF \
	  -DT2O_ONNX_PREFIX=$(ONNX_PREFIX)
	cmake --build build-asan --target torch2onnx_cli -j$(JOBS)
	$(ASAN_ENV) $(PYTHON) tests/fuzz/fuzz.py --cli build-asan/torch2onnx --archives 1000 --programs 1000 --argv 1000
	$(ASAN_ENV) T2O_CLI=$(CURDIR)/build-asan/torch2onnx $(PYTHON) -m pytest -q -p no:cacheprovider tests/cli

# The programs that call torch.onnx.export for most users, optimum-onnx's
# main_export and Ultralytics' YOLO export, each run as shipped and again with
# torch.onnx.export swapped for torch2onnx.export (tests/clients/run.py; the
# table goes to build/clients/report.md). Fails if a torch2onnx export fails.
# Their own venv (requirements/clients.txt, the whole set pinned, --no-deps);
# torch2onnx from build/python. CLIENTS_ARGS="--only bert --client optimum".
VENV_CLIENTS := $(BUILD_DIR)/venv-clients

$(VENV_CLIENTS)/.installed: requirements/clients.txt | apt-deps
	$(SYSTEM_PYTHON) -m venv $(VENV_CLIENTS)
	$(VENV_CLIENTS)/bin/python -m pip install -q --disable-pip-version-check --no-deps -r $<
	@touch $@

test-clients: build $(VENV_CLIENTS)/.installed
	PYTHONPATH=$(CURDIR)/$(BUILD_DIR)/python $(VENV_CLIENTS)/bin/python tests/clients/run.py $(CLIENTS_ARGS)

test-unit: build
	cd $(BUILD_DIR) && ctest --output-on-failure -R '^(Registry|Serialize|IR|Passes|CliArgs)\.'

demo: build-core
	$(PYTHON) examples/demo/demo.py --cli $(BUILD_DIR)/torch2onnx

install: build
	cmake --install $(BUILD_DIR) $(if $(PREFIX),--prefix $(PREFIX),)

bench: deps build
	$(PYTHON) bench/bench.py --cli $(BUILD_DIR)/torch2onnx --markdown docs/benchmarks.md
	PYTHONPATH=$(CURDIR)/$(BUILD_DIR)/python $(PYTHON) bench/bench_inprocess.py --first --markdown docs/benchmarks.md

# A 0.85 B-parameter transformers Llama through both exporters' two paths:
# export() seconds and peak RSS (bench/bench_llm.py; ~5 minutes, ~10 GB of RAM).
bench-llm: deps build
	PYTHONPATH=$(CURDIR)/$(BUILD_DIR)/python $(PYTHON) bench/bench_llm.py --markdown docs/benchmarks.md

clean:
	rm -rf $(BUILD_DIR) $(BUILD_113)
