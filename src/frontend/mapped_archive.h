// Loading a TorchScript archive with its weights mapped from the file.
//
// LibTorch's loader copies every tensor record into freshly allocated memory
// (for ResNet-50 that is most of its load time). Here LibTorch reads a view of
// the archive in which each large tensor record is an 8-byte stub; once the
// module is built, each stub storage is pointed at its record's bytes in a
// private, copy-on-write mapping of the file. Nothing is copied, and the
// weights share the page cache's copy of the archive.
#pragma once

#include <torch/csrc/jit/api/module.h>

#include <optional>
#include <string>

namespace torch2onnx::frontend {

// nullopt when the archive is not one this handles (zip64, compressed tensor
// records, classes with __setstate__, which run while loading and could read
// tensor data, or a stub storage it could not find afterwards): load it the
// usual way then. Throws Error(Load) when a storage claims more bytes than its
// record holds.
std::optional<torch::jit::Module> load_mapped(const std::string& path);

}  // namespace torch2onnx::frontend
