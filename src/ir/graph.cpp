#include "ir/graph.h"

#include <algorithm>
#include <unordered_set>
#include <stdexcept>

namespace torch2onnx::ir {

ValueType ValueType::tensor(DType dt, const std::vector<int64_t>& dims) {
  ValueType t{Kind::Tensor, dt, true, {}};
  t.shape.reserve(dims.size());
  for (int64_t d : dims) t.shape.push_back(d >= 0 ? Dim::of(d) : Dim{});
  return t;
}

bool ValueType::fully_static() const {
  if (!has_shape) return false;
  for (const Dim& d : shape)
    if (!d.is_static()) return false;
  return true;
}

std::vector<int64_t> ValueType::static_dims() const {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const Dim& d : shape) out.push_back(d.is_static() ? d.value : -1);
  return out;
}

// ---------------------------------------------------------------- Value

const Tensor* Value::constant() const {
  if (initializer_ && !is_input_) return initializer_.get();
  if (producer_ && producer_->op_type() == "Constant" && producer_->domain().empty()) {
    const Attribute* a = producer_->attr("value");
    if (a && a->kind == AttrKind::Tensor) return a->t.get();
  }
  return nullptr;
}

void Value::replace_all_uses_with(Value* other) {
  if (other == this) return;
  std::vector<Use> uses = uses_;
  for (const Use& u : uses) {
    if (u.user)
      u.user->replace_input(u.index, other);
    else
      u.graph_output->set_output(u.index, other);
  }
}

// ---------------------------------------------------------------- Node

void Node::add_input(Value* v) {
  inputs_.push_back(v);
  if (v) v->uses_.push_back(Use{this, inputs_.size() - 1, nullptr});
}

void Node::replace_input(size_t i, Value* v) {
  Value* old = inputs_.at(i);
  if (old == v) return;
  if (old) {
    auto& u = old->uses_;
    auto it = std::find(u.begin(), u.end(), Use{this, i, nullptr});
    if (it != u.end()) u.erase(it);
  }
  inputs_[i] = v;
  if (v) v->uses_.push_back(Use{this, i, nullptr});
}

void Node::remove_input(size_t i) {
  // Drop all uses from index i on, shift, re-add.
  for (size_t k = i; k < inputs_.size(); ++k) {
    if (Value* old = inputs_[k]) {
      auto& u = old->uses_;
      auto it = std::find(u.begin(), u.end(), Use{this, k, nullptr});
      if (it != u.end()) u.erase(it);
    }
  }
  inputs_.erase(inputs_.begin() + static_cast<std::ptrdiff_t>(i));
  for (size_t k = i; k < inputs_.size(); ++k)
    if (inputs_[k]) inputs_[k]->uses_.push_back(Use{this, k, nullptr});
}

void Node::remove_all_inputs() {
  while (!inputs_.empty()) remove_input(inputs_.size() - 1);
}

Value* Node::add_output() {
  std::string base = name_.empty() ? op_type_ : name_;
  Value* v = graph_->new_value(base + "_output_" + std::to_string(outputs_.size()));
  v->producer_ = this;
  v->output_index_ = outputs_.size();
  outputs_.push_back(v);
  return v;
}

const Attribute* Node::attr(const std::string& name) const {
  for (const Attribute& a : attrs_)
    if (a.name == name) return &a;
  return nullptr;
}

void Node::set_attr(Attribute a) {
  for (Attribute& x : attrs_) {
    if (x.name == a.name) {
      x = std::move(a);
      return;
    }
  }
  attrs_.push_back(std::move(a));
}

void Node::remove_attr(const std::string& name) {
  attrs_.erase(std::remove_if(attrs_.begin(), attrs_.end(), [&](const Attribute& a) { return a.name == name; }),
               attrs_.end());
}

int64_t Node::attr_i(const std::string& name, int64_t dflt) const {
  const Attribute* a = attr(name);
  return a && a->kind == AttrKind::Int ? a->i : dflt;
}

double Node::attr_f(const std::string& name, double dflt) const {
  const Attribute* a = attr(name);
  return a && a->kind == AttrKind::Float ? a->f : dflt;
}

std::vector<int64_t> Node::attr_ints(const std::string& name) const {
  const Attribute* a = attr(name);
  return a && a->kind == AttrKind::Ints ? a->ints : std::vector<int64_t>{};
}

std::vector<Graph*> Node::subgraphs() const {
  std::vector<Graph*> out;
  for (const Attribute& a : attrs_)
    if (a.kind == AttrKind::Graph && a.g) out.push_back(a.g.get());
  return out;
}

namespace {

// The nodes of a subgraph that dies with its node (a Loop or If body only it
// holds) stop using what they read, outer values included: otherwise those
// keep uses by freed nodes.
void release_uses(Node& n) {
  for (Attribute& a : n.attributes())
    if (a.kind == AttrKind::Graph && a.g && a.g.use_count() == 1)
      for (const auto& inner : a.g->nodes()) release_uses(*inner);
  n.remove_all_inputs();
}

}  // namespace

void Node::destroy() {
  for (Value* o : outputs_)
    if (o->has_uses())
      throw std::logic_error("Node::destroy: output '" + o->name() + "' of " + op_type_ + " still has uses");
  release_uses(*this);
  graph_->erase_node(this);
}

void Node::move_before(Node* other) {
  auto& list = graph_->nodes_;
  auto it = pos_;
  list.splice(other->pos_, list, it);
}

// ---------------------------------------------------------------- NameTable

std::string NameTable::unique(const std::string& base_in) {
  std::string base = base_in.empty() ? std::string("v") : base_in;
  if (!used_.count(base)) {
    used_.insert(base);
    return base;
  }
  int64_t& k = next_suffix_[base];
  std::string cand;
  do {
    cand = base + "_" + std::to_string(++k);
  } while (used_.count(cand));
  used_.insert(cand);
  return cand;
}

// ---------------------------------------------------------------- Graph

Graph::Graph() : names_(std::make_shared<NameTable>()) {}

Graph::Graph(Graph* parent) : parent_(parent), names_(parent->names_) {}

Graph::~Graph() {
  // Nodes own subgraphs through attributes; values are owned by the arena.
  nodes_.clear();
}

Value* Graph::new_value(const std::string& name) {
  auto v = std::make_unique<Value>();
  v->name_ = names_->unique(name);
  v->graph_ = this;
  values_.push_back(std::move(v));
  return values_.back().get();
}

Value* Graph::add_input(const std::string& name, ValueType type) {
  Value* v = new_value(name);
  v->type_ = std::move(type);
  v->is_input_ = true;
  inputs_.push_back(v);
  return v;
}

Value* Graph::add_initializer(const std::string& name, Tensor data) {
  Value* v = new_value(name);
  v->type_ = ValueType::tensor(data.dtype(), data.dims());
  v->initializer_ = std::make_shared<Tensor>(std::move(data));
  initializers_.push_back(v);
  return v;
}

void Graph::remove_input(Value* v) {
  if (v->has_uses()) throw std::logic_error("Graph::remove_input: '" + v->name() + "' still has uses");
  inputs_.erase(std::remove(inputs_.begin(), inputs_.end(), v), inputs_.end());
  v->is_input_ = false;
}

void Graph::remove_initializer(Value* v) { remove_initializers({v}); }

void Graph::remove_initializers(const std::vector<Value*>& values) {
  std::unordered_set<const Value*> gone;
  for (Value* v : values) {
    if (v->has_uses()) throw std::logic_error("Graph::remove_initializers: '" + v->name() + "' still has uses");
    gone.insert(v);
  }
  initializers_.erase(std::remove_if(initializers_.begin(), initializers_.end(),
                                     [&gone](const Value* v) { return gone.count(v) != 0; }),
                      initializers_.end());
  for (Value* v : values) {
    if (v->is_input_) remove_input(v);
    v->initializer_.reset();
  }
}

void Graph::make_input(Value* init) {
  initializers_.erase(std::remove(initializers_.begin(), initializers_.end(), init), initializers_.end());
  init->initializer_.reset();
  init->is_input_ = true;
  inputs_.push_back(init);
}

void Graph::add_output(Value* v) {
  outputs_.push_back(v);
  v->uses_.push_back(Use{nullptr, outputs_.size() - 1, this});
}

void Graph::set_output(size_t i, Value* v) {
  Value* old = outputs_.at(i);
  auto& u = old->uses_;
  auto it = std::find(u.begin(), u.end(), Use{nullptr, i, this});
  if (it != u.end()) u.erase(it);
  outputs_[i] = v;
  v->uses_.push_back(Use{nullptr, i, this});
}

void Graph::clear_outputs() {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    auto& u = outputs_[i]->uses_;
    auto it = std::find(u.begin(), u.end(), Use{nullptr, i, this});
    if (it != u.end()) u.erase(it);
  }
  outputs_.clear();
}

Node* Graph::create_node(const std::string& op_type, const std::vector<Value*>& inputs, size_t num_outputs,
                         Attributes attrs, const std::string& domain) {
  auto owned = std::make_unique<Node>();
  Node* n = owned.get();
  n->op_type_ = op_type;
  n->domain_ = domain;
  n->graph_ = this;
  n->attrs_ = std::move(attrs);
  n->origin_ = current_origin_;
  std::string scope = current_origin_ && !current_origin_->module_path.empty()
                          ? "/" + current_origin_->module_path + "/"
                          : std::string("/");
  n->name_ = names_->unique(scope + op_type);
  auto where = insert_before_ ? insert_before_->pos_ : nodes_.end();
  n->pos_ = nodes_.insert(where, std::move(owned));
  for (Value* v : inputs) n->add_input(v);
  for (size_t i = 0; i < num_outputs; ++i) n->add_output();
  return n;
}

void Graph::erase_node(Node* n) {
  if (insert_before_ == n) insert_before_ = nullptr;
  nodes_.erase(n->pos_);
}

void Graph::rename(Value* v, const std::string& name) {
  if (v->name_ == name) return;
  if (names_->taken(name)) throw std::logic_error("Graph::rename: name '" + name + "' is taken");
  names_->release(v->name_);
  names_->reserve(name);
  v->name_ = name;
}

std::string Graph::rename_unique(Value* v, const std::string& base) {
  if (v->name_ == base) return base;
  std::string name = names_->unique(base);  // reserves it
  names_->release(v->name_);
  v->name_ = name;
  return name;
}

std::vector<Value*> Graph::all_values() const {
  std::vector<Value*> out(inputs_.begin(), inputs_.end());
  for (Value* v : initializers_)
    if (!v->is_input_) out.push_back(v);
  for (const auto& n : nodes_)
    for (Value* o : n->outputs_) out.push_back(o);
  return out;
}

void Graph::note_domain_version(const std::string& domain, int64_t version) {
  if (parent_) return parent_->note_domain_version(domain, version);
  auto [it, fresh] = domain_versions_.emplace(domain, version);
  if (!fresh && it->second != version)
    throw std::runtime_error("operators of domain '" + domain + "' asked for versions " + std::to_string(it->second) +
                             " and " + std::to_string(version) + ": a model imports one version of a domain");
}

}  // namespace torch2onnx::ir
