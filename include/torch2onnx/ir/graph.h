// The ONNX-side IR: a graph of nodes in topological order, SSA values with
// use lists, typed attributes and nested subgraphs (Loop/If bodies).
// Conversion builds it, ONNX-side passes rewrite it, serialization writes it.
// No LibTorch and no protobuf here.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "torch2onnx/ir/dtype.h"
#include "torch2onnx/ir/tensor.h"

namespace torch2onnx::ir {

class Graph;
class Node;
class Value;

// One dimension: a static size, a named symbolic size, or unknown.
struct Dim {
  int64_t value = -1;  // >= 0 when static
  std::string param;   // non-empty when symbolic
  bool is_static() const { return value >= 0; }
  bool is_symbolic() const { return value < 0 && !param.empty(); }
  static Dim of(int64_t v) { return Dim{v, {}}; }
  static Dim named(std::string p) { return Dim{-1, std::move(p)}; }
  bool operator==(const Dim& o) const { return value == o.value && param == o.param; }
};

struct ValueType {
  // Optional: a tensor or nothing (ONNX optional(tensor), opset 15+); dtype
  // and shape are the tensor's.
  enum class Kind { Tensor, Sequence, Optional };
  Kind kind = Kind::Tensor;
  DType dtype = DType::Undefined;  // element dtype (of the tensors, for a sequence)
  bool has_shape = false;          // rank known (of the tensor, for an optional)
  std::vector<Dim> shape;
  // Its rank is decided at run time (a squeeze of a dim that may or may not be
  // 1): never given the example's rank (has_shape stays false).
  bool rank_varies = false;

  static ValueType tensor(DType dt) { return ValueType{Kind::Tensor, dt, false, {}, false}; }
  static ValueType tensor(DType dt, const std::vector<int64_t>& dims);
  static ValueType sequence(DType dt) { return ValueType{Kind::Sequence, dt, false, {}, false}; }
  static ValueType optional(ValueType element) {
    element.kind = Kind::Optional;
    return element;
  }
  int64_t rank() const { return has_shape ? static_cast<int64_t>(shape.size()) : -1; }
  bool fully_static() const;
  std::vector<int64_t> static_dims() const;  // -1 for non-static dims
};

// Where a node came from in the PyTorch model: shared by the nodes one
// PyTorch operator became.
struct Origin {
  std::string torch_kind;     // "aten::_convolution"
  std::string module_path;    // "features.0" ("" for the top module)
  std::string module_trace;   // "AlexNet/Sequential[features]/Conv2d[0]"
  std::string source;         // innermost source line "file.py:12:0"
  std::string user_source;    // first frame outside torch itself, if known
  std::string source_stack;   // the whole Python stack as recorded, if known
};

// A use of a value: input `index` of `user`, or (user == nullptr) output
// `index` of graph `graph_output`.
struct Use {
  Node* user = nullptr;
  size_t index = 0;
  Graph* graph_output = nullptr;
  bool operator==(const Use& o) const {
    return user == o.user && index == o.index && graph_output == o.graph_output;
  }
};

// The quantization of a value that stores a quantized tensor (ONNX's
// quantization annotation): the value holds the integers q (uint8, int8 or
// int32) and stands for (q - zero_point) * scale, per tensor or along `axis`.
// Set by the symbolics that make quantized tensors; read by the ones that
// dequantize them.
struct Quantization {
  Value* scale = nullptr;       // float32: 0-d, or 1-D along axis
  Value* zero_point = nullptr;  // the storage dtype: 0-d, or 1-D along axis
  int64_t axis = -1;            // -1: per tensor
  bool per_channel() const { return axis >= 0; }
};

class Value {
 public:
  const std::string& name() const { return name_; }
  ValueType& type() { return type_; }
  const ValueType& type() const { return type_; }
  void set_type(ValueType t) { type_ = std::move(t); }
  DType dtype() const { return type_.dtype; }

  Graph* graph() const { return graph_; }
  Node* producer() const { return producer_; }
  size_t output_index() const { return output_index_; }
  const std::vector<Use>& uses() const { return uses_; }
  bool has_uses() const { return !uses_.empty(); }

  bool is_graph_input() const { return is_input_; }
  // True for initializers computed by passes (folding) rather than taken
  // from the model's parameters.
  bool is_derived() const { return derived_; }
  void set_derived(bool d) { derived_ = d; }
  bool is_initializer() const { return initializer_ != nullptr; }
  const Tensor* initializer() const { return initializer_.get(); }
  // Constant data if the value is an initializer (not also a graph input) or
  // the output of a Constant node; nullptr otherwise.
  const Tensor* constant() const;

  const Quantization* quantization() const { return quantization_.get(); }
  void set_quantization(const Quantization& q) { quantization_ = std::make_shared<Quantization>(q); }

  // Redirects every use (node inputs and graph outputs of the owning graph and
  // its subgraphs) to `other`.
  void replace_all_uses_with(Value* other);

 private:
  friend class Graph;
  friend class Node;
  std::string name_;
  ValueType type_;
  Graph* graph_ = nullptr;
  Node* producer_ = nullptr;
  size_t output_index_ = 0;
  std::vector<Use> uses_;
  bool is_input_ = false;
  bool derived_ = false;
  std::shared_ptr<Tensor> initializer_;
  std::shared_ptr<const Quantization> quantization_;
};

enum class AttrKind { Float, Int, String, Tensor, Graph, Floats, Ints, Strings, Type };

struct Attribute {
  std::string name;
  AttrKind kind = AttrKind::Int;
  double f = 0;
  int64_t i = 0;
  std::string s;
  std::shared_ptr<Tensor> t;
  std::shared_ptr<ir::Graph> g;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  ValueType type;  // an ONNX TypeProto attribute (Optional's `type`)

  Attribute() = default;
  Attribute(std::string n, int v) : name(std::move(n)), kind(AttrKind::Int), i(v) {}
  Attribute(std::string n, int64_t v) : name(std::move(n)), kind(AttrKind::Int), i(v) {}
  Attribute(std::string n, bool v) : name(std::move(n)), kind(AttrKind::Int), i(v ? 1 : 0) {}
  Attribute(std::string n, float v) : name(std::move(n)), kind(AttrKind::Float), f(v) {}
  Attribute(std::string n, double v) : name(std::move(n)), kind(AttrKind::Float), f(v) {}
  Attribute(std::string n, const char* v) : name(std::move(n)), kind(AttrKind::String), s(v) {}
  Attribute(std::string n, std::string v) : name(std::move(n)), kind(AttrKind::String), s(std::move(v)) {}
  Attribute(std::string n, std::vector<int64_t> v)
      : name(std::move(n)), kind(AttrKind::Ints), ints(std::move(v)) {}
  Attribute(std::string n, std::vector<double> v)
      : name(std::move(n)), kind(AttrKind::Floats), floats(std::move(v)) {}
  Attribute(std::string n, std::vector<std::string> v)
      : name(std::move(n)), kind(AttrKind::Strings), strings(std::move(v)) {}
  Attribute(std::string n, Tensor v)
      : name(std::move(n)), kind(AttrKind::Tensor), t(std::make_shared<Tensor>(std::move(v))) {}
  Attribute(std::string n, std::shared_ptr<ir::Graph> v)
      : name(std::move(n)), kind(AttrKind::Graph), g(std::move(v)) {}
  Attribute(std::string n, ValueType v) : name(std::move(n)), kind(AttrKind::Type), type(std::move(v)) {}
};

using Attributes = std::vector<Attribute>;

class Node {
 public:
  const std::string& op_type() const { return op_type_; }
  const std::string& domain() const { return domain_; }
  void set_domain(std::string d) { domain_ = std::move(d); }
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  Graph* graph() const { return graph_; }

  const std::vector<Value*>& inputs() const { return inputs_; }
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  size_t num_inputs() const { return inputs_.size(); }
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* output(size_t i = 0) const { return outputs_.at(i); }
  size_t num_outputs() const { return outputs_.size(); }

  void add_input(Value* v);  // nullptr = an omitted optional input
  void replace_input(size_t i, Value* v);
  void remove_input(size_t i);
  void remove_all_inputs();
  Value* add_output();

  const Attributes& attributes() const { return attrs_; }
  Attributes& attributes() { return attrs_; }
  const Attribute* attr(const std::string& name) const;
  bool has_attr(const std::string& name) const { return attr(name) != nullptr; }
  void set_attr(Attribute a);
  void remove_attr(const std::string& name);
  int64_t attr_i(const std::string& name, int64_t dflt) const;
  double attr_f(const std::string& name, double dflt) const;
  std::vector<int64_t> attr_ints(const std::string& name) const;

  const std::shared_ptr<const Origin>& origin() const { return origin_; }
  void set_origin(std::shared_ptr<const Origin> o) { origin_ = std::move(o); }
  const std::string& doc_string() const { return doc_string_; }
  void set_doc_string(std::string d) { doc_string_ = std::move(d); }

  // Subgraphs held in Graph attributes.
  std::vector<Graph*> subgraphs() const;

  // Removes the node from its graph. Its outputs must have no uses.
  void destroy();
  // Moves this node to just before `other` (same graph).
  void move_before(Node* other);

 private:
  friend class Graph;
  std::string op_type_;
  std::string domain_;
  std::string name_;
  Graph* graph_ = nullptr;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  Attributes attrs_;
  std::shared_ptr<const Origin> origin_;
  std::string doc_string_;
  std::list<std::unique_ptr<Node>>::iterator pos_;
};

// Names must be unique across a model, subgraphs included: one table is
// shared by a graph and all its subgraphs.
class NameTable {
 public:
  // Returns `base` if free, else `base_1`, `base_2`, ...; reserves it.
  std::string unique(const std::string& base);
  bool taken(const std::string& name) const { return used_.count(name) != 0; }
  void reserve(const std::string& name) { used_.insert(name); }
  void release(const std::string& name) { used_.erase(name); }

 private:
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, int64_t> next_suffix_;
};

class Graph {
 public:
  Graph();
  explicit Graph(Graph* parent);  // a subgraph sharing the parent's names
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  Graph* parent() const { return parent_; }
  NameTable& names() { return *names_; }

  // Inputs, initializers, outputs.
  Value* add_input(const std::string& name, ValueType type);
  Value* add_initializer(const std::string& name, Tensor data);
  void remove_input(Value* v);        // the value must have no uses
  void remove_initializer(Value* v);  // the value must have no uses
  // Several at once, in one sweep of the list (each must have no uses).
  void remove_initializers(const std::vector<Value*>& values);
  // Turns an initializer into a plain graph input (export_params=False).
  void make_input(Value* initializer);
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& initializers() const { return initializers_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  void add_output(Value* v);
  void set_output(size_t i, Value* v);
  void clear_outputs();

  // Nodes, in topological order.
  const std::list<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  size_t num_nodes() const { return nodes_.size(); }
  // Creates a node at the insertion point (the end by default) with
  // `num_outputs` fresh outputs named after the node.
  Node* create_node(const std::string& op_type, const std::vector<Value*>& inputs, size_t num_outputs,
                    Attributes attrs = {}, const std::string& domain = "");
  // New nodes go before `n` (nullptr: at the end).
  void set_insert_point(Node* n) { insert_before_ = n; }
  Node* insert_point() const { return insert_before_; }

  // A fresh value name derived from `base`, unique in the model.
  std::string unique_name(const std::string& base) { return names_->unique(base); }
  // Renames to exactly `name` (must be free).
  void rename(Value* v, const std::string& name);
  // Renames to `base` or, if taken, `base_<k>`; returns the new name.
  std::string rename_unique(Value* v, const std::string& base);

  // Current origin stamped on new nodes (set by the converter per PyTorch op).
  // The version a custom domain's operators are of (its opset import), noted
  // on the main graph (a subgraph passes it up); a second, different version
  // for the same domain throws.
  void note_domain_version(const std::string& domain, int64_t version);
  const std::map<std::string, int64_t>& domain_versions() const { return domain_versions_; }
  void set_current_origin(std::shared_ptr<const Origin> o) { current_origin_ = std::move(o); }
  const std::shared_ptr<const Origin>& current_origin() const { return current_origin_; }

  // Values whose type should be written as value_info (filled by inference).
  std::vector<Value*> all_values() const;

 private:
  friend class Node;
  friend class Value;
  Value* new_value(const std::string& name);
  void erase_node(Node* n);

  std::string name_ = "main_graph";
  Graph* parent_ = nullptr;
  std::map<std::string, int64_t> domain_versions_;
  std::shared_ptr<NameTable> names_;
  std::vector<std::unique_ptr<Value>> values_;
  std::list<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> inputs_;
  std::vector<Value*> initializers_;
  std::vector<Value*> outputs_;
  Node* insert_before_ = nullptr;
  std::shared_ptr<const Origin> current_origin_;
};

}  // namespace torch2onnx::ir
