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

#include "frontend/zip.h"

#include <functional>
#include <optional>
#include <string>

namespace torch2onnx::frontend {

// nullopt when the archive is not one this handles (zip64, compressed tensor
// records, or a stub storage it could not find afterwards): load it the usual
// way then. The caller has checked the archive (check_archive_entries), and
// does not call this for classes with __setstate__, which run while loading
// and could read tensor data. Throws Error(Load) when a storage claims more
// bytes than its record holds. `exclusive`: the module is loaded for one
// export and no one else sees it, so nothing writes to its weights (see
// page_release).
std::optional<torch::jit::Module> load_mapped(std::shared_ptr<const ZipFile> zip, const std::string& path,
                                              bool exclusive);

// For a tensor whose bytes are pages of an archive mapped `exclusive`ly: a
// function that drops those pages from the process (MADV_DONTNEED; the next
// read faults them in again from the page cache). Empty for any other tensor:
// dropping a page someone wrote to would lose the write.
std::function<void()> page_release(const at::Tensor& t);

}  // namespace torch2onnx::frontend
