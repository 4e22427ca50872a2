#include "convert/pt2/converter.h"

#include <sys/mman.h>

#include <cstring>

namespace torch2onnx::convert::pt2 {
// A stored (uncompressed), contiguous, aligned record is read in place from a
// read-only mapping of the archive: no copy of the weights, and the writer
// gives each one's pages back once written. Anything else: nullopt (copied).
std::optional<ir::Tensor> ProgramConverter::mapped_tensor(const frontend::ZipEntry& e, const TensorMeta& m,
                                                          const std::vector<int64_t>& dims, int64_t numel) {
  const size_t elem = ir::dtype_size(m.dtype);
  const uint64_t nbytes = static_cast<uint64_t>(numel) * elem;
  if (e.method != 0 || m.storage_offset.value.value_or(0) != 0 || e.size < nbytes) return std::nullopt;
  int64_t expected = 1;
  for (size_t k = dims.size(); k-- > 0;) {  // row-major strides (or none given)
    if (m.strides.size() == dims.size() && dims[k] != 1 && m.strides[k].value != expected) return std::nullopt;
    expected *= dims[k];
  }
  auto offset = zip_->data_offset(e);
  if (!offset || *offset + nbytes > zip_->size()) return std::nullopt;
  if (!mapping_) {
    void* base = ::mmap(nullptr, static_cast<size_t>(zip_->size()), PROT_READ, MAP_PRIVATE, zip_->fd(), 0);
    if (base == MAP_FAILED) return std::nullopt;
    const size_t length = static_cast<size_t>(zip_->size());
    mapping_ = std::shared_ptr<const void>(base, [length](const void* p) { ::munmap(const_cast<void*>(p), length); });
  }
  const uint8_t* data = static_cast<const uint8_t*>(mapping_.get()) + *offset;
  if (reinterpret_cast<uintptr_t>(data) % elem != 0) return std::nullopt;
  return ir::Tensor::borrowed(m.dtype, dims, data, static_cast<size_t>(nbytes), mapping_,
                              [data, nbytes] { frontend::drop_pages(data, static_cast<size_t>(nbytes)); });
}

ir::Tensor ProgramConverter::stored_tensor(const std::string& target) {
  if (auto it = p_.in_memory.find(target); it != p_.in_memory.end()) return it->second;
  const StoredTensor* t = nullptr;
  if (auto it = p_.weights.find(target); it != p_.weights.end()) t = &it->second;
  else if (auto c = p_.constants.find(target); c != p_.constants.end()) t = &c->second;
  if (!t) fail(nullptr, "the archive holds no data for '" + target + "'");
  if (t->pickled)
    fail(nullptr, "'" + target + "' is stored pickled (torch.save), which only Python can read");
  if (t->meta.dtype == ir::DType::Undefined) fail(nullptr, "'" + target + "' is of type " + t->meta.dtype_name);
  std::vector<int64_t> dims;
  int64_t numel = 1;
  for (const SymInt& s : t->meta.sizes) {
    if (!s.value || *s.value < 0) fail(nullptr, "'" + target + "' has a size that is not a number");
    dims.push_back(*s.value);
    numel *= *s.value;
  }
  if (!zip_) zip_ = frontend::ZipFile::open(p_.archive_path);
  if (!zip_) fail(nullptr, "cannot open '" + p_.archive_path + "' again");
  for (const frontend::ZipEntry& e : zip_->entries()) {
    if (e.name != t->entry) continue;
    std::string why = zip_->size_problem(e);
    if (why.empty())
      if (auto mapped = mapped_tensor(e, t->meta, dims, numel)) return std::move(*mapped);
    auto bytes = why.empty() ? zip_->contents(e, &why) : std::nullopt;
    if (!bytes) fail(nullptr, "cannot read '" + target + "': " + why);
    return ir::Tensor::owned(t->meta.dtype, dims, gather(*bytes, t->meta, dims, numel, target));
  }
  fail(nullptr, "the archive has no entry " + t->entry);
}

std::vector<uint8_t> ProgramConverter::gather(std::vector<uint8_t>& storage, const TensorMeta& m, const std::vector<int64_t>& dims, int64_t numel, const std::string& target) const {
  const size_t elem = ir::dtype_size(m.dtype);
  std::vector<int64_t> strides(dims.size());
  int64_t contiguous = 1;
  bool is_contiguous = true;
  for (size_t k = dims.size(); k-- > 0;) {
    if (m.strides.size() == dims.size()) {
      if (!m.strides[k].value) fail(nullptr, "'" + target + "' has a stride that is not a number");
      strides[k] = *m.strides[k].value;
    } else {
      strides[k] = contiguous;
    }
    is_contiguous = is_contiguous && (dims[k] == 1 || strides[k] == contiguous);
    contiguous *= dims[k];
  }
  const int64_t offset = m.storage_offset.value.value_or(0);
  const uint64_t storage_elems = storage.size() / elem;
  // The last element's position bounds every other one (strides are not negative in PyTorch).
  int64_t last = offset;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (strides[k] < 0) fail(nullptr, "'" + target + "' has a negative stride");
    if (dims[k] > 0) last += (dims[k] - 1) * strides[k];
  }
  if (offset < 0 || (numel > 0 && static_cast<uint64_t>(last) >= storage_elems))
    fail(nullptr, "'" + target + "' reaches past its storage (" + std::to_string(storage_elems) + " elements)");
  if (is_contiguous && offset == 0) {
    storage.resize(static_cast<size_t>(numel) * elem);
    return std::move(storage);
  }
  std::vector<uint8_t> out(static_cast<size_t>(numel) * elem);
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t i = 0; i < numel; ++i) {
    int64_t src = offset;
    for (size_t k = 0; k < dims.size(); ++k) src += index[k] * strides[k];
    std::memcpy(out.data() + static_cast<size_t>(i) * elem, storage.data() + static_cast<size_t>(src) * elem, elem);
    for (size_t k = dims.size(); k-- > 0;) {  // next index, row-major
      if (++index[k] < dims[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

}  // namespace torch2onnx::convert::pt2
