#include "symbolic/registry.h"

#include <set>

#include "symbolics/all.h"

namespace torch2onnx {

void Registry::add(const std::string& op, int since, SymbolicFn fn) {
  table_[op][since] = std::move(fn);
  if (!family_.empty()) families_.emplace(op, family_);
}


// (complex declarations: see registry.h)
void Registry::add_complex(const std::string& op, int since, SymbolicFn fn) {
  complex_table_[op][since] = std::move(fn);
  // (an operator's family is the one of its real declarations when it has some)
  if (!family_.empty()) complex_families_.emplace(op, family_);
}

const SymbolicFn* Registry::find_complex(const std::string& op, int opset) const {
  auto it = complex_table_.find(op);
  if (it != complex_table_.end()) {
    auto v = it->second.upper_bound(opset);
    if (v != it->second.begin()) return &std::prev(v)->second;
  }
  return base_ ? base_->find_complex(op, opset) : nullptr;
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
  if (it != table_.end()) {
    auto v = it->second.upper_bound(opset);  // first declaration above the target
    if (v != it->second.begin()) return &std::prev(v)->second;
  }
  return base_ ? base_->find(op, opset) : nullptr;
}

std::optional<int> Registry::resolved_since(const std::string& op, int opset) const {
  auto it = table_.find(op);
  if (it != table_.end()) {
    auto v = it->second.upper_bound(opset);
    if (v != it->second.begin()) return std::prev(v)->first;
  }
  return base_ ? base_->resolved_since(op, opset) : std::nullopt;
}

std::optional<int> Registry::first_opset(const std::string& op) const {
  std::optional<int> own;
  auto it = table_.find(op);
  if (it != table_.end() && !it->second.empty()) own = it->second.begin()->first;
  // (an operator declared for complex tensors only, view_as_real, counts too)
  auto c = complex_table_.find(op);
  if (c != complex_table_.end() && !c->second.empty() && (!own || c->second.begin()->first < *own))
    own = c->second.begin()->first;
  std::optional<int> base = base_ ? base_->first_opset(op) : std::nullopt;
  if (own && base) return std::min(*own, *base);
  return own ? own : base;
}

std::vector<std::pair<std::string, std::vector<int>>> Registry::list() const {
  std::map<std::string, std::set<int>> merged;
  if (base_)
    for (auto& [name, since] : base_->list()) merged[name].insert(since.begin(), since.end());
  for (const auto& [name, decls] : table_)
    for (const auto& d : decls) merged[name].insert(d.first);
  for (const auto& [name, decls] : complex_table_)  // (complex declarations, see registry.h)
    for (const auto& d : decls) merged[name].insert(d.first);
  std::vector<std::pair<std::string, std::vector<int>>> out;
  out.reserve(merged.size());
  for (auto& [name, since] : merged) out.emplace_back(name, std::vector<int>(since.begin(), since.end()));
  return out;
}

std::string Registry::family_of(const std::string& op) const {
  if (auto it = families_.find(op); it != families_.end()) return it->second;
  std::string base = base_ ? base_->family_of(op) : std::string();
  if (!base.empty()) return base;
  auto it = complex_families_.find(op);
  return it != complex_families_.end() ? it->second : std::string();
}

Registry& user_registry() {
  static Registry registry(&builtin_registry());
  return registry;
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
