#!/bin/sh
# Builds the ONNX C++ library (checker, shape inference, operator schemas) from
# the ONNX source distribution on PyPI, with Debian's protobuf, into the build
# tree: the default build needs opsets 18 to 23, which Debian's ONNX 1.12 does
# not know. Never vendored: the source is fetched by pip and cached here.
#
#   cmake/build_onnx.sh VERSION PREFIX PYTHON
#
# VERSION is the onnx pinned in requirements/torch-2.14.txt (the Python
# package the tests check with is the same release); PREFIX receives
# lib/libonnx.a, lib/libonnx_proto.a, the headers and lib/cmake/ONNX;
# PYTHON is the build venv's interpreter (its pip fetches the source, its
# cmake builds: ONNX needs CMake 3.26, Debian 12 has 3.25).
set -eu
version=$1 prefix=$2 python=$3
work=$(dirname "$prefix")/src
bin=$(dirname "$python")
mkdir -p "$work"
if [ ! -f "$work/onnx-$version.tar.gz" ]; then
  "$python" -m pip download -q --disable-pip-version-check --no-deps --no-binary onnx \
    "onnx==$version" -d "$work"
fi
rm -rf "$work/onnx-$version" "$work/build"
tar xzf "$work/onnx-$version.tar.gz" -C "$work"
launcher=$(command -v ccache || true)
"$bin/cmake" -S "$work/onnx-$version" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=OFF \
  -DONNX_USE_PROTOBUF_SHARED_LIBS=ON -DONNX_ML=1 -DONNX_NAMESPACE=onnx \
  -DONNX_BUILD_PYTHON=OFF -DONNX_GEN_PB_TYPE_STUBS=OFF -DONNX_BUILD_TESTS=OFF \
  ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER=$launcher} > "$work/configure.log" 2>&1 ||
  { tail -40 "$work/configure.log"; exit 1; }
"$bin/cmake" --build "$work/build" -j"${JOBS:-2}" > "$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log"; exit 1; }
"$bin/cmake" --install "$work/build" > /dev/null
rm -rf "$work/onnx-$version" "$work/build"
echo "ONNX $version built into $prefix"
