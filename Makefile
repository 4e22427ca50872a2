# torch2onnx: the two commands of the quick start are `make demo` and `make test`.
# Both install what is missing (Debian packages, onnxruntime-node) and build.

BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= 2
PYTHON := /usr/bin/python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

APT_PACKAGES := build-essential cmake ccache git \
	libtorch-dev libonnx-dev libprotobuf-dev protobuf-compiler \
	python3-torch python3-torchvision python3-onnx python3-numpy python3-pytest \
	python3-venv python3-pip python3-setuptools python3-wheel \
	pybind11-dev googletest libgtest-dev

export CCACHE_SLOPPINESS := pch_defines,time_macros,include_file_mtime,include_file_ctime
export CCACHE_DIR ?= $(HOME)/.cache/ccache

.PHONY: all deps apt-deps ort-deps build test test-zoo test-unit demo install bench clean

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

test-unit: build
	cd $(BUILD_DIR) && ctest --output-on-failure -R '^(Registry|Serialize|IR|Passes|CliArgs)\.'

demo: deps build
	$(PYTHON) examples/demo/demo.py --cli $(BUILD_DIR)/torch2onnx

install: build
	cmake --install $(BUILD_DIR) $(if $(PREFIX),--prefix $(PREFIX),)

bench: deps build
	$(PYTHON) bench/bench.py --cli $(BUILD_DIR)/torch2onnx

clean:
	rm -rf $(BUILD_DIR)
