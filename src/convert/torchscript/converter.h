// The TorchScript frontend's converter: walks the (inlined, functional)
// TorchScript graph and hands each node to the symbolic registry. What it
// owns is reading TorchScript's own values: slots for lists, tuples and
// constants, prim::If/Loop blocks, example-run facts. The graph interface,
// dispatch, subgraphs and unsupported-op reporting are the shared parts in
// convert/ (graph_interface, dispatch, subgraph, unsupported).
#pragma once

#include <unordered_map>
#include <vector>

#include "convert/constant_memo.h"
#include "convert/graph_interface.h"
#include "convert/subgraph.h"
#include "symbolic/registry.h"
#include "torch2onnx/options.h"
#include "torch_passes/list_erase.h"
#include "torch_passes/origin.h"
#include "torch_passes/torch_graph.h"

namespace torch2onnx::convert::torchscript {

using torch::jit::Node;
using torch_side::ExampleInfo;
using torch_side::TorchGraph;
using TValue = torch::jit::Value;

inline bool is_structural(c10::Symbol k) {
  return k == c10::prim::Constant || k == c10::prim::ListConstruct || k == c10::prim::TupleConstruct ||
         k == c10::prim::ListUnpack || k == c10::prim::TupleUnpack || k == c10::prim::TupleIndex ||
         k == c10::prim::unchecked_cast || k == c10::prim::DictConstruct || k == c10::prim::If ||
         k == c10::prim::Loop || k == c10::prim::Uninitialized;
}

inline bool is_list_type(const c10::TypePtr& t) { return t->kind() == c10::TypeKind::ListType; }

// List operators the converter handles itself (lists are converter
// plumbing: fixed-length lists stay static, others become ONNX sequences).
inline bool is_list_op(const Node* n) {
  const auto k = n->kind();
  if (n->inputs().empty() || !is_list_type(n->input(0)->type())) return false;
  return k == c10::aten::append || k == c10::aten::len || k == c10::aten::__getitem__ || k == c10::aten::_set_item ||
         k == c10::aten::list || k == c10::aten::slice || (k == c10::aten::add && n->inputs().size() == 2) ||
         (k == c10::aten::__contains__ && n->inputs().size() == 2) ||
         k == torch_side::list_erase_symbol();
}

// (stack/cat of a sequence is handled by the converter too, but they have
// symbolics for fixed lists, so they are never reported as unsupported.)
// `x is None` / `x is not None` on an Optional the graph did not fold: the
// converter knows on which paths it is None.
inline bool is_optional_test(const Node* n) {
  return (n->kind() == c10::aten::__is__ || n->kind() == c10::aten::__isnot__) && n->inputs().size() == 2 &&
         n->input(0)->type()->kind() == c10::TypeKind::OptionalType &&
         n->input(1)->type()->kind() == c10::TypeKind::NoneType;
}

inline bool handled_by_converter(const Node* n) { return is_structural(n->kind()) || is_list_op(n) || is_optional_test(n); }

ir::DType to_dtype(at::ScalarType st);
// The dtype of a List[int] / List[float] / List[bool]'s elements as ONNX
// values (int64, double, bool); none for other types.
std::optional<ir::DType> number_list_dtype(const c10::TypePtr& type);

// Borrows a tensor's memory for the IR (no copy unless it is not contiguous);
// weights mapped from an archive loaded for this export alone can let their
// pages go once read (ir::Tensor::release_pages).
ir::Tensor borrow(const at::Tensor& t);

// What a PyTorch value became on the ONNX side.
struct Slot {
  // Value: one ONNX value. List: a fixed-length list or tuple (elements).
  // Sequence: a list whose length is only known at run time (an ONNX
  // sequence in `value`).
  enum class Kind { Empty, Constant, Value, List, Sequence };
  Kind kind = Kind::Empty;
  c10::IValue constant;
  ir::Value* value = nullptr;
  std::vector<Slot> elements;
  int64_t id = -1;
  // An Optional that is None on some paths: a bool value, true when `value`
  // holds the tensor (`is None` tests read it); null otherwise.
  ir::Value* present = nullptr;
};

class Converter : public ConstantMemo {
 public:
  Converter(TorchGraph& tg, const Registry& registry, const ExportOptions& options)
      : tg_(tg), registry_(registry), options_(options), origins_(tg.root_class), interface_(options) {}

  ir::Model run();
 private:
  ir::ValueType input_type(const at::Tensor& t);
  void make_inputs();
  Slot& slot_of(const TValue* v);
  const Slot& get_slot(const TValue* v);
  static Arg::Kind kind_of_ivalue(const c10::IValue& iv);
  static Arg::Kind kind_of_type(const c10::TypePtr& t);
  static void apply_example(Arg& a, const ExampleInfo* info);
  Arg arg_from_constant(const c10::IValue& iv, int64_t id);
  Arg arg_from_slot(const Slot& s, const c10::TypePtr& type, const ExampleInfo* info);
  const ExampleInfo* info_of(const TValue* v) const;
  Arg make_arg(const TValue* v, const std::string& name);
  OutputInfo make_output_info(const TValue* v);

  // A quantized tensor constant (a quantized model's weights): its integers,
  // carrying their scale and zero point. Named ones (decompose_quantized
  // names weights after their module: "conv.weight") become initializers of
  // that name, with "<name>_scale" and "<name>_zero_point".
  ir::Value* quantized_constant(const at::Tensor& t, const std::string& name);
  void convert_structural(Node* n);
  std::vector<Slot> unpack(const Slot& s, size_t expected, Node* n);
  ir::DType example_dtype(const TValue* v);

  // A PyTorch value as one ONNX value of the current graph (constants
  // materialized there), cast to `dtype` when given.
  ir::Value* single_value(const TValue* v, ir::DType dtype, const char* what);

  // The dtype and rank a control-flow value has where it holds a tensor:
  // from the example run of any of `vs` (the If/Loop output, the branch or
  // body values that set it).
  std::pair<ir::DType, int64_t> tensor_type_of(std::initializer_list<const TValue*> vs);
  bool is_none_slot(const TValue* v);

  // `v` as one value; where it is None (an Optional on this path, or a value
  // not set yet), an empty tensor of `type` stands in: never read, it only
  // gives If/Loop outputs one type on every path.
  ir::Value* value_or_placeholder(const TValue* v, std::pair<ir::DType, int64_t> type, const char* what);
  ir::Value* stand_in(const TValue* other, ir::Graph* enclosing, ir::DType dt);
  static bool defined_outside(const TValue* v, const Node* n);

  // `x is None` / `x is not None` on an Optional that an If left None on some path.
  // Elsewhere an Optional is None on every path (a None slot) or on none (a value).
  bool convert_optional_test(Node* n);
  std::shared_ptr<ir::Graph> branch(torch::jit::Block* b, const char* name);

  // Once both branches are converted (a None on one path takes its type from the other).
  void branch_outputs(ir::Graph* g, torch::jit::Block* b, Node* n);

  // ---- lists
  // The element dtype of a list, from what the example run saw of any of `vs`.
  ir::DType list_dtype(std::initializer_list<const TValue*> vs);
  std::optional<ir::DType> known_list_dtype(std::initializer_list<const TValue*> vs);  // none: no example, no type
  std::optional<ir::DType> appended_dtype(torch::jit::Block* body, const TValue* list);
  void require_sequences(const Node* n, int opset = 11, const char* why = "needs ONNX sequences");

  // A list slot as an ONNX sequence value in the current graph.
  ir::Value* to_sequence(const Slot& s, ir::DType dt, const TValue* v, const Node* n);

  // One element of a list (a tensor, or a number as a 0-d tensor) as a value.
  ir::Value* element_value(const Slot& e, ir::DType dt);
  ir::Value* cast_value(ir::Value* v, ir::DType dt);
  Slot value_slot(ir::Value* v);
  // The tensor an ONNX optional value (an optional graph input) holds, read
  // in the current graph: OptionalGetElement, where PyTorch reads it.
  ir::Value* optional_element(ir::Value* v);
  Slot sequence_slot(ir::Value* v);
  ir::Value* int_value(const TValue* v);

  // elems[start:end:step] with Python's rules for omitted and negative bounds.
  std::vector<Slot> python_slice(const std::vector<Slot>& elems, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step, Node* n);
  ir::Value* empty_sequence(ir::DType dt);  // SequenceEmpty of dt in the current graph
  bool runtime_slice_of_numbers(Node* n, const std::vector<Slot>& elems, ir::DType dt);
  ir::Value* int64_constant(int64_t v);  // a 0-d int64 Constant in the current graph
  Slot sequence_slice(Node* n, ir::Value* seq, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step,
                      ir::DType dt);
  void convert_list_op(Node* n);
  Slot list_contains(Node* n, const Slot& list, const std::vector<Slot>& elems, bool fixed, ir::DType dt);

  // stack/cat of a list whose length is only known at run time.
  void convert_sequence_concat(Node* n);

  // prim::If(cond) with two blocks -> ONNX If with then/else subgraphs.
  void convert_if(Node* n);

  // The type of If output i: a tensor's from either branch where the example
  // left it None; otherwise the example's (numbers too).
  std::pair<ir::DType, int64_t> if_output_type(Node* n, size_t i);

  // The tensor type of loop-carried value k (its dtype is the one it ends with).
  std::pair<ir::DType, int64_t> carried_type(Node* n, size_t k);

  // prim::Loop(max_trip_count, cond, carried...) with body (i, carried...) ->
  // (cond, carried...)  ->  ONNX Loop(M, cond, carried...) with the same body.
  void convert_loop(Node* n);

  // prim::dtype of a tensor the example never computed (in a branch it did
  // not take): the dtype of its ONNX value, known at export time as the
  // example's would be (`x[mask] = True` makes a tensor of x's dtype).
  bool convert_unseen_dtype(Node* n);

  // Whether the Optional `v` holds a value, as a bool value of the current graph.
  ir::Value* presence(const TValue* v);
  void convert_node(Node* n);

  void flatten_output(const Slot& s, std::vector<ir::Value*>& out);
  void flatten_info(const ExampleInfo* info, std::vector<const ExampleInfo*>& out);
  void make_outputs();

  ir::Value* local(ir::Value* v, ir::Graph* g) { return convert::local(v, g, options_.opset_version); }
  ir::Value* const_bool(bool b) { return convert::const_bool(graph_, b); }

  TorchGraph& tg_;
  const Registry& registry_;
  const ExportOptions& options_;
  torch_side::OriginTable origins_;
  GraphInterface interface_;
  ir::Graph* graph_ = nullptr;
  // List[int] / List[float] inputs: the 1-D tensor of the numbers -> the
  // input sequence itself (what prim::tolist of it gives).
  std::unordered_map<const ir::Value*, ir::Value*> number_lists_;
  std::unordered_map<const TValue*, Slot> slots_;
  int64_t next_id_ = 0;
};

}  // namespace torch2onnx::convert::torchscript
