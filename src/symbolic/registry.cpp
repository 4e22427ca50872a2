#include "symbolic/registry.h"

#include "symbolics/all.h"

namespace torch2onnx {

void Registry::add(const std::string& op, int since, SymbolicFn fn) {
  table_[op][since] = std::move(fn);
  if (!family_.empty()) families_.emplace(op, family_);
}

std::string Registry::family_of(const std::string& op) const {
  auto it = families_.find(op);
  return it == families_.end() ? std::string() : it->second;
}

bool Registry::remove(const std::string& op, int since) {
  auto it = table_.find(op);
  if (it == table_.end()) return false;
  bool erased = it->second.erase(since) != 0;
  if (it->second.empty()) table_.erase(it);
  return erased;
}

const SymbolicFn* Registry::find(const std::string& op, int opset) const {
  auto it = table_.find(op);
  if (it == table_.end()) return nullptr;
  auto v = it->second.upper_bound(opset);  // first declaration above the target
  if (v == it->second.begin()) return nullptr;
  --v;
  return &v->second;
}

std::optional<int> Registry::resolved_since(const std::string& op, int opset) const {
  auto it = table_.find(op);
  if (it == table_.end()) return std::nullopt;
  auto v = it->second.upper_bound(opset);
  if (v == it->second.begin()) return std::nullopt;
  return std::prev(v)->first;
}

std::optional<int> Registry::first_opset(const std::string& op) const {
  auto it = table_.find(op);
  if (it == table_.end() || it->second.empty()) return std::nullopt;
  return it->second.begin()->first;
}

std::vector<std::pair<std::string, std::vector<int>>> Registry::list() const {
  std::vector<std::pair<std::string, std::vector<int>>> out;
  out.reserve(table_.size());
  for (const auto& [name, decls] : table_) {
    std::vector<int> since;
    for (const auto& d : decls) since.push_back(d.first);
    out.emplace_back(name, std::move(since));
  }
  return out;
}

const Registry& builtin_registry() {
  static const Registry registry = [] {
    Registry r;
    symbolics::register_all(r);
    return r;
  }();
  return registry;
}

}  // namespace torch2onnx
