// What a symbolic function sees: the PyTorch node's arguments through a typed
// binder (constant int / int list / float / bool / optional / tensor ...) and
// a builder that emits ONNX nodes into the graph being built.
//
//   void relu(SymbolicContext& ctx) { ctx.out(ctx.op("Relu", {ctx.in(0)})); }
//
// No LibTorch here: the converter translates PyTorch values into Args.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "torch2onnx/ir/graph.h"

namespace torch2onnx {

// A conversion failure inside one operator; the converter adds where it happened.
class SymbolicError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One argument of a PyTorch node.
struct Arg {
  enum class Kind { None, Tensor, Int, Float, Bool, String, Device, List, Tuple, Other };
  Kind kind = Kind::Other;
  std::string name;      // schema argument name ("padding"); may be empty
  std::string type_str;  // PyTorch type as text ("int[]"), for messages

  bool constant = false;  // value known at export time
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;
  std::shared_ptr<const ir::Tensor> tensor;  // constant tensor data (constants, parameters)
  std::vector<Arg> elements;                 // List / Tuple elements

  ir::Value* value = nullptr;  // the ONNX value, once there is one
  int64_t id = -1;             // the converter's handle, for memoized materialization

  // What the example run saw: the tensor's dtype (for scalars: Int64, Double
  // or Bool) and sizes.
  ir::DType dtype = ir::DType::Undefined;
  bool has_sizes = false;
  std::vector<int64_t> sizes;
  // Which sizes are the same for every input the export accepts: all of them
  // (static_shape), per dim (dynamic_dims, true where a size varies: what a
  // .pt2 program's symbolic sizes say), or neither known (then ONNX's
  // inference on the value decides; see SymbolicContext::dim_is_dynamic).
  bool static_shape = false;
  std::vector<bool> dynamic_dims;
  // For an Int/Float/Bool computed at run time: the value in the example run.
  std::optional<double> example;
  // A quantized tensor (dtype: its stored integers; its ONNX value carries
  // ir::Quantization): the scale and zero point the example run saw, if per tensor.
  std::optional<std::pair<double, int64_t>> qparams;

  bool is_none() const { return kind == Kind::None; }
  bool is_tensor() const { return kind == Kind::Tensor; }
  bool is_scalar() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  bool is_list() const { return kind == Kind::List || kind == Kind::Tuple; }
  int64_t rank() const { return has_sizes ? static_cast<int64_t>(sizes.size()) : -1; }
};

// What a PyTorch output is (from the example run).
struct OutputInfo {
  Arg::Kind kind = Arg::Kind::Tensor;
  ir::DType dtype = ir::DType::Undefined;
  bool has_sizes = false;
  std::vector<int64_t> sizes;
  int64_t list_length = -1;  // for Tensor[] outputs: number of elements in the example run
  bool quantized = false;    // a quantized tensor (dtype: its stored integers)
  std::optional<std::pair<double, int64_t>> qparams;  // its per-tensor scale and zero point in the example
  int64_t rank() const { return has_sizes ? static_cast<int64_t>(sizes.size()) : -1; }
};

// What a symbolic produces for one output: a value, a fixed-length list, or
// a list whose length is known at run time only (an ONNX sequence value).
struct OutputSlot {
  ir::Value* value = nullptr;
  bool is_list = false;
  std::vector<ir::Value*> elements;
  bool is_sequence = false;
  bool set = false;
};

// Turns constant Args into ONNX values, once per graph (implemented by the converter).
class ArgMaterializer {
 public:
  virtual ~ArgMaterializer() = default;
  virtual ir::Value* lookup(const Arg& a, ir::DType dtype, ir::Graph* g) = 0;
  virtual void remember(const Arg& a, ir::DType dtype, ir::Graph* g, ir::Value* v) = 0;
};

class SymbolicContext {
 public:
  SymbolicContext(std::string kind, std::vector<Arg> args, std::vector<OutputInfo> outputs, ir::Graph* graph,
                  int64_t opset, ArgMaterializer* materializer = nullptr);

  // ---- the node
  const std::string& kind() const { return kind_; }
  int64_t opset() const { return opset_; }
  ir::Graph& graph() { return *graph_; }
  size_t num_args() const { return args_.size(); }
  const Arg& arg(size_t i) const;

  // ---- typed binder (throw SymbolicError naming the argument on mismatch)
  ir::Value* in(size_t i);                 // tensor (constants and scalars materialized)
  ir::Value* opt_in(size_t i);             // tensor or nullptr for None
  ir::Value* in_as(size_t i, ir::DType t); // tensor/scalar cast (or created) as dtype t
  std::vector<ir::Value*> list(size_t i);  // Tensor[] with a known number of elements
  // Tensor?[] (e.g. aten::index's indices): nullptr for None elements.
  std::vector<ir::Value*> opt_list(size_t i);
  // Element k of list argument i as a tensor value (constants materialized).
  ir::Value* elem(size_t i, size_t k);
  int64_t i(size_t idx) const;             // constant int
  double f(size_t idx) const;              // constant float (ints accepted)
  bool b(size_t idx) const;                // constant bool
  std::string s(size_t idx) const;         // constant string
  std::vector<int64_t> is(size_t idx) const;  // constant int list (a single int is broadcast to 1 element)
  std::vector<double> fs(size_t idx) const;   // constant float list
  std::optional<int64_t> opt_i(size_t idx) const;
  std::optional<double> opt_f(size_t idx) const;
  std::optional<std::vector<int64_t>> opt_is(size_t idx) const;
  bool none(size_t idx) const { return idx >= args_.size() || args_[idx].is_none(); }
  bool constant(size_t idx) const { return idx < args_.size() && args_[idx].constant; }
  // An int list as a 1-D int64 tensor value: constant, or built from run-time ints.
  ir::Value* ints_value(size_t idx);
  // A scalar (constant or run-time) as a 0-d value of dtype t.
  ir::Value* scalar_value(size_t idx, ir::DType t);

  // Example-run information.
  ir::DType dtype(size_t idx) const { return arg(idx).dtype; }
  int64_t rank(size_t idx) const;  // throws when unknown
  const std::vector<int64_t>& sizes(size_t idx) const;
  // Sizes a lowering builds into the graph (loop trip counts, constants
  // shaped like the input): the example's, when the size is the same for
  // every input the export accepts; a size dynamic_axes makes vary fails the
  // conversion, naming the argument and the dim (no graph that only works at
  // the example's size). Dims compute at run time (Shape) need neither.
  int64_t static_dim(size_t idx, int64_t d) const;  // d < 0 counts from the end
  const std::vector<int64_t>& static_sizes(size_t idx) const;
  bool dim_is_dynamic(size_t idx, int64_t d) const;
  // The size of dim d when it is the same for every input the export accepts
  // and known (the example computed it, or ONNX's inference shows it); none
  // otherwise (a lowering then computes it at run time).
  std::optional<int64_t> known_static_dim(size_t idx, int64_t d) const;
  // Only what is known to vary (the second meta run, a .pt2 program's symbolic
  // sizes), not what ONNX's inference cannot tell.
  bool dim_known_dynamic(size_t idx, int64_t d) const;
  const std::vector<int64_t>& static_element_sizes(size_t idx, size_t k) const;  // of a Tensor[]'s element k
  // Whether any input of the export has a dynamic size (set by the converter):
  // without one, every size is static.
  void set_dynamic_export(bool dynamic) { dynamic_export_ = dynamic; }
  // Why some sizes are not known to be static or dynamic (the run at other
  // sizes stopped early), for the message of a lowering that needs one.
  void set_dynamic_note(const std::string* note) { dynamic_note_ = note; }
  // Whether the outputs' ranks are the program's (a .pt2, whose guards fixed
  // every size test) rather than one example run's (a trace: an op whose
  // result rank depends on a size, squeeze, decides it at run time).
  void set_output_ranks_fixed(bool fixed) { output_ranks_fixed_ = fixed; }
  bool output_ranks_fixed() const { return output_ranks_fixed_; }
  size_t num_outputs() const { return outputs_info_.size(); }
  const OutputInfo& out_info(size_t k = 0) const;
  ir::DType out_dtype(size_t k = 0) const { return out_info(k).dtype; }

  // ---- results
  void out(ir::Value* v, size_t k = 0);
  void out_list(std::vector<ir::Value*> vs, size_t k = 0);
  void out_sequence(ir::Value* seq, size_t k = 0);  // a Tensor[] of run-time length (opset 11+)
  const std::vector<OutputSlot>& results() const { return results_; }

  // ---- builder
  ir::Value* op(const std::string& type, const std::vector<ir::Value*>& inputs, ir::Attributes attrs = {});
  std::vector<ir::Value*> op_n(const std::string& type, const std::vector<ir::Value*>& inputs, size_t n,
                               ir::Attributes attrs = {});
  ir::Node* node(const std::string& type, const std::vector<ir::Value*>& inputs, size_t n,
                 ir::Attributes attrs = {}, const std::string& domain = "");
  ir::Value* constant(ir::Tensor t);
  ir::Value* const_ints(const std::vector<int64_t>& v);  // 1-D int64
  ir::Value* const_int(int64_t v);                       // 0-d int64
  ir::Value* const_scalar(ir::DType dt, double v);       // 0-d of dtype dt
  ir::Value* cast(ir::Value* v, ir::DType to);           // no node when already `to`

  [[noreturn]] void fail(const std::string& message) const;

  // The PyTorch node being converted (a torch::jit::Node*), for symbolics that
  // need more than its arguments (Python autograd Functions). May be null.
  const void* source_node() const { return source_node_; }
  void set_source_node(const void* n) { source_node_ = n; }

 private:
  const Arg& checked(size_t idx, const char* what) const;
  ir::Value* materialize(const Arg& a, ir::DType dtype);
  bool dynamic(const Arg& a, int64_t rank, int64_t d) const;
  [[noreturn]] void fail_dynamic(const std::string& what, int64_t d, int64_t example) const;

  std::string kind_;
  std::vector<Arg> args_;
  // Static shapes ONNX's inference found for arguments the example never computed.
  mutable std::map<size_t, std::vector<int64_t>> inferred_sizes_;
  std::vector<OutputInfo> outputs_info_;
  std::vector<OutputSlot> results_;
  bool output_ranks_fixed_ = false;
  ir::Graph* graph_;
  int64_t opset_;
  ArgMaterializer* materializer_;
  const void* source_node_ = nullptr;
  bool dynamic_export_ = false;
  const std::string* dynamic_note_ = nullptr;
};

}  // namespace torch2onnx
