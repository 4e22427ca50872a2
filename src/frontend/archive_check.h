// Checks of a TorchScript archive's bytes before LibTorch reads it. LibTorch
// 1.13 trusts its input: its zip reader skips CRCs, its unpickler allocates
// whatever length a string opcode claims, and its source importer crashes on
// some malformed class bodies. Plain C++ (no LibTorch), so it is quick to build.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/zip.h"
#include "torch2onnx/options.h"

namespace torch2onnx::frontend {

// What the check learned about an archive.
struct ArchiveFacts {
  int64_t data_bytes = -1;    // bytes of the tensor data entries (-1: not known)
  // Some class defines __setstate__ (it runs while loading), or code the
  // check could not read might.
  bool has_setstate = false;
  std::string version;          // the archive's `version` record ("" when absent)
  bool has_byteorder = false;   // a `byteorder` record: written since PyTorch 2.1
  // Records whose CRC-32 this check did not verify (tensor data, large or
  // unusual entries): frontend::RecordCheck does, while the export runs.
  std::vector<ZipEntry> unchecked;
};

// Checks the archive's small entries (code, pickles, version: everything but
// tensor data) against their CRC-32, then their content (content_problem).
// Zip64 archives are left to LibTorch. Throws Error(kind) naming the file at
// `path` as `what` when corrupt.
ArchiveFacts check_archive_entries(const ZipFile& zip, const std::string& path, const char* what = "TorchScript archive",
                                   Error::Kind kind = Error::Kind::Load);
// The same for a small archive (example args), tensor data included.
void check_archive_entries(const std::string& path, const char* what, Error::Kind kind);

// What is wrong with one entry's content that LibTorch would not survive
// ("" when nothing): in a pickle, an opcode whose length runs past the end;
// in TorchScript code, a module class attribute assigned without a type.
std::string content_problem(const std::string& name, const std::vector<unsigned char>& data);

// The pickle check on its own. `strict`: an opcode it does not know is a
// problem too (for a bare pickle, where nothing else vouches for the bytes).
std::string pickle_problem(const unsigned char* data, size_t size, bool strict = false);

}  // namespace torch2onnx::frontend
