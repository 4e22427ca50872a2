#include "frontend/load.h"

#include "frontend/pt2/program.h"

#include <torch/csrc/jit/serialization/import.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <ATen/ATen.h>
#include <torch/version.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <sys/stat.h>
#include <unordered_set>

#include "frontend/archive_check.h"
#include "frontend/mapped_archive.h"
#include "torch2onnx/options.h"

namespace torch2onnx::frontend {
namespace {

// The first line of a message that has text (LibTorch's loader messages
// start with a newline); a line ending in ':' (an operator's schema) comes
// with the next one (what is wrong with the call).
std::string first_line(const std::string& s) {
  size_t at = 0;
  std::string out;
  while (at < s.size()) {
    size_t nl = s.find('\n', at);
    std::string line = s.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    if (line.find_first_not_of(" \t\r") != std::string::npos) {
      line = line.substr(line.find_first_not_of(" \t\r"));
      // c10's TORCH_CHECK adds a plea for a better message.
      const size_t plea = line.find("  (Could this error message be improved?");
      if (plea != std::string::npos) line = line.substr(0, plea);
      out += out.empty() ? line : " " + line;
      if (out.back() != ':' || out.size() > 2000) return out;
    }
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return out;
}

// Which PyTorch wrote the archive, as far as its records tell.
std::string producer(const ArchiveFacts& facts) {
  return facts.has_byteorder ? "PyTorch 2.1 or newer (it has a byteorder record, which PyTorch writes since 2.1)"
                             : "a PyTorch newer than this LibTorch (the archive does not record which)";
}

// Why LibTorch's loader refused an archive, in the user's terms: which
// operator or version this build lacks, who wrote the archive, and what to
// do. Only our own checks call an archive corrupt.
Error load_failure(const std::string& path, const std::string& what, const ArchiveFacts& facts) {
  const std::string torch = "LibTorch " + libtorch_version();
  std::smatch m;
  static const std::regex unknown_op("Unknown builtin op: ([A-Za-z0-9_]+::[A-Za-z0-9_.]+?)\\.?\\s");
  static const std::regex code_place("File \"([^\"]+)\", line ([0-9]+)");
  if (std::regex_search(what, m, unknown_op)) {
    const std::string op = m[1];
    std::string place;
    std::smatch pm;
    if (std::regex_search(what, pm, code_place)) place = " (" + pm[1].str() + ", line " + pm[2].str() + ")";
    const bool builtin = op.rfind("aten::", 0) == 0 || op.rfind("prim::", 0) == 0;
    std::string msg = "cannot load TorchScript archive '" + path + "': its code calls " + op + place +
                      ", an operator that this torch2onnx's " + torch + " does not have. ";
    if (builtin)
      msg += "The archive was saved by " + producer(facts) +
             ". Export it with a torch2onnx built on LibTorch at least as new as the PyTorch that saved it, or "
             "save the model with PyTorch " +
             std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + ".";
    else
      msg += "It is a custom operator: the library that registers it (TORCH_LIBRARY) must be loaded into the "
             "process that exports (the C++ API or Python, after loading the library).";
    return Error(Error::Kind::Load, msg);
  }
  static const std::regex version("file with version ([0-9]+), but the maximum supported version for reading is "
                                  "([0-9]+)");
  if (std::regex_search(what, m, version))
    return Error(Error::Kind::Load, "cannot load TorchScript archive '" + path + "': it is in archive format version " +
                                        m[1].str() + ", and this torch2onnx's " + torch + " reads versions up to " +
                                        m[2].str() + ". It was saved by a newer PyTorch" +
                                        (facts.has_byteorder ? ": " + producer(facts) : std::string()) +
                                        ". Export it with a torch2onnx built on that PyTorch's LibTorch or newer.");
  return Error(Error::Kind::Load, "cannot load TorchScript archive '" + path + "': " + torch +
                                      "'s loader refused it: " + first_line(what) +
                                      (facts.has_byteorder ? " (the archive was saved by " + producer(facts) + ")" : ""));
}

void require_regular_file(const std::string& path, Error::Kind kind, const char* what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(kind, std::string("cannot open ") + what + " '" + path + "': " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw Error(kind, std::string("cannot open ") + what + " '" + path + "': it is a directory");
}

std::vector<char> read_file(const std::string& path, Error::Kind kind, const char* what) {
  require_regular_file(path, kind, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(kind, std::string("cannot open ") + what + " '" + path + "': " + std::strerror(errno));
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool is_zip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {0, 0, 0, 0};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' &&
         ((magic[2] == 3 && magic[3] == 4) || (magic[2] == 5 && magic[3] == 6));
}

// LibTorch's loaders trust the sizes recorded in an archive: a tensor whose
// storage holds fewer bytes than its sizes and strides reach would be read
// out of bounds later. Returns "" when `t` is sound, else why not.
std::string storage_problem(const at::Tensor& t) {
  if (!t.defined() || t.is_meta() || t.is_sparse() || t.is_quantized() || !t.has_storage()) return "";
  int64_t last = t.storage_offset();
  if (last < 0) return "a negative storage offset";
  if (t.numel() == 0) return "";
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) < 0) return "a negative stride";
    last += (t.size(d) - 1) * t.stride(d);
  }
  const uint64_t needed = (static_cast<uint64_t>(last) + 1) * t.element_size();
  const uint64_t held = t.storage().data() ? t.storage().nbytes() : 0;
  if (needed > held)
    return "its sizes reach " + std::to_string(needed) + " bytes but its data holds " + std::to_string(held);
  return "";
}

void check_value(const c10::IValue& v, const std::string& where, Error::Kind kind, const std::string& path) {
  if (v.isTensor()) {
    std::string why = storage_problem(v.toTensor());
    if (!why.empty())
      throw Error(kind, "'" + path + "' is corrupt: tensor " + where + " is inconsistent (" + why + ")");
  } else if (v.isTuple()) {
    const auto& el = v.toTupleRef().elements();
    for (size_t i = 0; i < el.size(); ++i) check_value(el[i], where + "[" + std::to_string(i) + "]", kind, path);
  } else if (v.isList()) {
    const auto list = v.toListRef();
    for (size_t i = 0; i < list.size(); ++i) check_value(list[i], where + "[" + std::to_string(i) + "]", kind, path);
  } else if (v.isGenericDict()) {
    for (const auto& e : v.toGenericDict()) check_value(e.value(), where + "[...]", kind, path);
  }
}

void check_block(torch::jit::Block* b, const std::string& path) {
  for (torch::jit::Node* n : b->nodes()) {
    for (torch::jit::Block* sub : n->blocks()) check_block(sub, path);
    if (n->kind() == c10::prim::Constant && n->output()->type()->kind() == c10::TypeKind::TensorType)
      check_value(torch::jit::toIValue(n->output()).value(), "constant", Error::Kind::Load, path);
  }
}

// Every tensor of the module (parameters, buffers, attributes, constants in code).
// LibTorch sizes a storage from the pickle, not from its data entry: storages
// claiming more bytes in total than the data entries hold are corrupt.
void check_tensors(const torch::jit::Module& m, const std::string& path, int64_t data_bytes) {
  std::unordered_set<const c10::StorageImpl*> seen;
  int64_t claimed = 0;
  for (const auto& a : m.named_attributes(/*recurse=*/true)) {
    check_value(a.value, "'" + a.name + "'", Error::Kind::Load, path);
    if (a.value.isTensor() && a.value.toTensor().defined() && a.value.toTensor().has_storage()) {
      const auto& st = a.value.toTensor().storage();
      if (seen.insert(st.unsafeGetStorageImpl()).second) claimed += static_cast<int64_t>(st.nbytes());
    }
  }
  for (const auto& method : m.get_methods()) check_block(method.graph()->block(), path);
  if (data_bytes >= 0 && claimed > data_bytes)
    throw Error(Error::Kind::Load, "'" + path + "' is corrupt: its tensors need " + std::to_string(claimed) +
                                       " bytes but its data entries hold " + std::to_string(data_bytes));
}

}  // namespace

std::string libtorch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

torch::jit::Module load_archive(const std::string& path, bool for_one_export, std::unique_ptr<RecordCheck>* records) {
  require_regular_file(path, Error::Kind::Load, "model");
  if (!is_zip(path))
    throw Error(Error::Kind::Load, "'" + path +
                                       "' is not a TorchScript archive (it is not a zip file). Save models with "
                                       "torch.jit.save(torch.jit.trace(model, args), path).");
  std::shared_ptr<const ZipFile> zip = ZipFile::open(path);
  if (!zip) throw Error(Error::Kind::Load, "cannot open model '" + path + "'");
  ArchiveFacts facts = check_archive_entries(*zip, path);
  auto check = std::make_unique<RecordCheck>(zip, std::move(facts.unchecked), path, "TorchScript archive",
                                             Error::Kind::Load, /*background=*/true);
  try {
    // Weights mapped from the file where the archive allows it (T2O_NO_MMAP=1,
    // or a class with __setstate__, which runs while loading and could read
    // them: LibTorch's copying loader); a failure there is retried the usual
    // way, so that errors are LibTorch's own.
    std::optional<torch::jit::Module> mapped;
    if (!std::getenv("T2O_NO_MMAP") && !facts.has_setstate) {
      try {
        mapped = load_mapped(zip, path, for_one_export);
      } catch (const Error&) {
        throw;
      } catch (const std::exception& e) {
        if (std::getenv("T2O_TIMING")) std::cerr << "[t2o] mapped load failed: " << first_line(e.what()) << "\n";
      }
      if (!mapped && std::getenv("T2O_TIMING")) std::cerr << "[t2o] archive read without mapping\n";
    }
    zip.reset();
    torch::jit::Module m = mapped ? std::move(*mapped) : torch::jit::load(path, c10::Device(c10::kCPU));
    check_tensors(m, path, facts.data_bytes);
    if (records)
      *records = std::move(check);
    else
      check->wait();
    return m;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    std::string msg = first_line(e.what());
    if (pt2::is_pt2_archive(path))
      throw Error(Error::Kind::Load, "'" + path + "' is a torch.export program (.pt2), not a TorchScript "
                                     "archive: export it with export_program (CLI: torch2onnx export " + path +
                                     " -o OUT.onnx, no inputs needed)");
    if (msg.find("constants.pkl") != std::string::npos || msg.find("code/") != std::string::npos ||
        msg.find("file not found") != std::string::npos)
      throw Error(Error::Kind::Load, "'" + path +
                                         "' is a zip file but not a TorchScript archive (" + msg +
                                         "). A torch.save()d model cannot be loaded without Python; save it with "
                                         "torch.jit.save(torch.jit.trace(model, args), path).");
    throw load_failure(path, e.what(), facts);
  }
}

c10::IValue load_saved_value(const std::string& path) {
  std::vector<char> bytes = read_file(path, Error::Kind::Args, "example args file");
  if (is_zip(path)) {
    check_archive_entries(path, "example args file", Error::Kind::Args);
  } else {
    // A bare pickle (torch.save(..., _use_new_zipfile_serialization=False)
    // writes one first): LibTorch's reader runs past the end of anything else.
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    const std::string problem = bytes.empty() || p[0] != 0x80 ? "it is neither a zip archive nor a pickle"
                                                              : pickle_problem(p, bytes.size(), /*strict=*/true);
    if (!problem.empty())
      throw Error(Error::Kind::Args, "cannot read example args from '" + path +
                                         "' (expected a value saved with torch.save): " + problem);
  }
  c10::IValue value;
  try {
    value = torch::jit::pickle_load(bytes);
  } catch (const std::exception& e) {
    throw Error(Error::Kind::Args, "cannot read example args from '" + path +
                                       "' (expected a value saved with torch.save): " + first_line(e.what()));
  }
  check_value(value, "in the example args", Error::Kind::Args, path);
  return value;
}

std::vector<c10::IValue> args_from_value(const c10::IValue& v) {
  if (v.isTuple()) return v.toTupleRef().elements().vec();
  if (v.isList()) return v.toListRef().vec();
  return {v};
}

at::Tensor load_npy(const std::string& path) {
  std::vector<char> bytes = read_file(path, Error::Kind::Args, "input file");
  auto bad = [&](const std::string& why) { return Error(Error::Kind::Args, "'" + path + "' is not a valid .npy file: " + why); };
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) throw bad("missing the NUMPY magic");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw bad("truncated header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    throw bad("unknown version " + std::to_string(major));
  }
  if (offset + header_len > bytes.size()) throw bad("truncated header");
  std::string header(bytes.data() + offset, header_len);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr'\\s*:\\s*'([^']*)'"))) throw bad("no dtype");
  std::string descr = m[1];
  if (std::regex_search(header, m, std::regex("'fortran_order'\\s*:\\s*True"))) throw bad("Fortran order is not supported");
  if (!std::regex_search(header, m, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)"))) throw bad("no shape");
  std::vector<int64_t> shape;
  std::string dims = m[1];
  std::regex num("\\d+");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), num); it != std::sregex_iterator(); ++it)
    shape.push_back(std::stoll(it->str()));
  at::ScalarType st;
  if (descr == "<f4") st = at::kFloat;
  else if (descr == "<f8") st = at::kDouble;
  else if (descr == "<f2") st = at::kHalf;
  else if (descr == "<i8") st = at::kLong;
  else if (descr == "<i4") st = at::kInt;
  else if (descr == "<i2") st = at::kShort;
  else if (descr == "|i1") st = at::kChar;
  else if (descr == "|u1") st = at::kByte;
  else if (descr == "|b1") st = at::kBool;
  else throw bad("unsupported dtype '" + descr + "'");
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(st));
  const size_t data_at = offset + header_len;
  if (bytes.size() - data_at != t.nbytes())
    throw bad("expected " + std::to_string(t.nbytes()) + " bytes of data, found " + std::to_string(bytes.size() - data_at));
  if (t.nbytes()) std::memcpy(t.data_ptr(), bytes.data() + data_at, t.nbytes());
  return t;
}

at::Tensor random_input(const std::string& spec) {
  std::string shape_part = spec, dtype_part = "float32";
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    shape_part = spec.substr(0, colon);
    dtype_part = spec.substr(colon + 1);
  }
  auto usage = [&](const std::string& why) {
    return Error(Error::Kind::Usage, "bad --input '" + spec + "': " + why +
                                         " (expected a .npy file or a shape like 1x3x224x224[:float32])");
  };
  std::vector<int64_t> shape;
  if (shape_part != "scalar") {
    if (shape_part.empty()) throw usage("empty shape");
    size_t pos = 0;
    while (pos <= shape_part.size()) {
      size_t next = shape_part.find_first_of("x,", pos);
      std::string d = shape_part.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
      if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos) throw usage("'" + d + "' is not a size");
      if (d.size() > 12) throw usage("size '" + d + "' is too large");
      shape.push_back(std::stoll(d));
      if (next == std::string::npos) break;
      pos = next + 1;
    }
  }
  int64_t numel = 1;
  for (int64_t d : shape) {
    numel *= std::max<int64_t>(d, 1);
    if (numel > (int64_t{1} << 32)) throw usage("the tensor would be too large");
  }
  at::ScalarType st;
  const std::string& d = dtype_part;
  if (d == "float32" || d == "float") st = at::kFloat;
  else if (d == "float64" || d == "double") st = at::kDouble;
  else if (d == "float16" || d == "half") st = at::kHalf;
  else if (d == "int64" || d == "long") st = at::kLong;
  else if (d == "int32" || d == "int") st = at::kInt;
  else if (d == "int16") st = at::kShort;
  else if (d == "int8") st = at::kChar;
  else if (d == "uint8") st = at::kByte;
  else if (d == "bool") st = at::kBool;
  else throw usage("unknown dtype '" + d + "'");
  at::Generator gen = at::detail::createCPUGenerator(20240607);
  if (at::isFloatingType(st)) return at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat)).to(st);
  if (st == at::kBool) return at::randint(0, 2, shape, gen, at::TensorOptions().dtype(at::kLong)).to(st);
  return at::randint(0, 10, shape, gen, at::TensorOptions().dtype(at::kLong)).to(st);
}

at::Tensor input_from_spec(const std::string& spec) {
  if (spec.size() > 4 && spec.compare(spec.size() - 4, 4, ".npy") == 0) return load_npy(spec);
  return random_input(spec);
}

}  // namespace torch2onnx::frontend
