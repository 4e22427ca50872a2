# torch2onnx: the two commands of the quick start are `make demo` and `make test`.
# Both install what is missing (Debian packages, onnxruntime-node) and build.

BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= 2
PYTHON := /usr/bin/python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

APT_PACKAGES := build-essential cmake ccache git \
	libtorch-dev libonnx-dev libprotobuf-dev protobuf-compiler zlib1g-dev \
	python3-torch python3-torchvision python3-onnx python3-numpy python3-pytest \
	python3-venv python3-pip python3-setuptools python3-wheel \
	pybind11-dev googletest libgtest-dev valgrind

export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime
export CCACHE_DIR ?= $(HOME)/.cache/ccache

.PHONY: all deps apt-deps ort-deps build test test-zoo test-unit test-asan demo install bench clean

all: build

deps: apt-deps ort-deps

# Installs the Debian packages that are not installed yet.
apt-deps:
	@missing=$$(for p in $(APT_PACKAGES); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done; \
	  command -v node >/dev/null || echo nodejs; command -v npm >/dev/null || echo npm); \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# ONNX Runtime for the tests and the demo (its postinstall download is skipped:
# the npm package bundles the runtime library).
ort-deps: tools/ort/node_modules/onnxruntime-node/package.json

tools/ort/node_modules/onnxruntime-node/package.json: tools/ort/package.json tools/ort/package-lock.json
	cd tools/ort && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error
	@touch $@

$(BUILD_DIR)/CMakeCache.txt: CMakeLists.txt
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: apt-deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j$(JOBS)

test: deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS) --timeout 1800 -LE zoo-full

# Every torchvision model (the large ones take long; `make test` runs one per family).
test-zoo: deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS) -L zoo

# The CLI built with AddressSanitizer + UndefinedBehaviorSanitizer: 1,000
# mutated archives and 1,000 mutated argument lists (tests/fuzz), then the
# CLI tests, with zero crashes, hangs or sanitizer reports.
ASAN_ENV := ASAN_OPTIONS=detect_leaks=0:detect_container_overflow=0 UBSAN_OPTIONS=print_stacktrace=1
test-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DT2O_SANITIZE=ON -DT2O_BUILD_PYTHON=OFF -DT2O_BUILD_TESTS=OFF
	cmake --build build-asan --target torch2onnx_cli -j$(JOBS)
	$(ASAN_ENV) $(PYTHON) tests/fuzz/fuzz.py --cli build-asan/torch2onnx --archives 1000 --argv 1000
	$(ASAN_ENV) T2O_CLI=$(CURDIR)/build-asan/torch2onnx $(PYTHON) -m pytest -q -p no:cacheprovider tests/cli

test-unit: build
	cd $(BUILD_DIR) && ctest --output-on-failure -R '^(Registry|Serialize|IR|Passes|CliArgs)\.'

demo: deps build
	$(PYTHON) examples/demo/demo.py --cli $(BUILD_DIR)/torch2onnx

install: build
	cmake --install $(BUILD_DIR) $(if $(PREFIX),--prefix $(PREFIX),)

bench: deps build
	$(PYTHON) bench/bench.py --cli $(BUILD_DIR)/torch2onnx --markdown docs/benchmarks.md

clean:
	rm -rf $(BUILD_DIR)
