// A torch.export program read from a .pt2 archive (PyTorch's "PT2 Archive
// Spec"; the program in its export schema, major version 8): the graph, its
// signature, tensor metadata with symbolic sizes, and where each weight's
// bytes are. Plain C++ and JSON (no LibTorch, no Python).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "torch2onnx/ir/dtype.h"
#include "torch2onnx/ir/tensor.h"

namespace torch2onnx::frontend::pt2 {

// A size: a number, or a symbolic expression ("s77", "2*s77") with the
// example's value as its hint.
struct SymInt {
  std::optional<int64_t> value;
  std::string expr;
  std::optional<int64_t> hint;
};

struct TensorMeta {
  ir::DType dtype = ir::DType::Undefined;
  std::string dtype_name;  // the schema's name, for messages ("COMPLEXFLOAT")
  std::vector<SymInt> sizes;
  // Where a stored tensor's elements are in its storage (in elements): tensors
  // that share a storage (a parameter and its transposed view) are stored once.
  std::vector<SymInt> strides;
  SymInt storage_offset;
};

struct Graph;

// One argument or output (the schema's Argument union): `kind` is its tag
// ("as_tensor", "as_int", "as_ints", "as_sym_int", "as_none", ...).
struct Argument {
  std::string kind;
  std::vector<std::string> names;  // tensors / symbolic ints by name (None elements: "")
  std::vector<int64_t> ints;       // as_int(s), as_sym_int(s) given as numbers, as_bool(s), scalar types...
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::vector<std::vector<int64_t>> int_lists;  // as_int_lists (int[][]: torch.onnx.ops' attribute positions)
  std::shared_ptr<Graph> graph;    // as_graph (higher-order operators' bodies)
};

struct NamedArgument {
  std::string name;
  Argument arg;
  int kind = 0;  // positional (1) or keyword (2)
};

struct Node {
  std::string target;  // "torch.ops.aten.conv2d.default", "_operator.mul", "torch.ops.higher_order.cond"
  std::vector<NamedArgument> inputs;
  std::vector<Argument> outputs;
  std::string stack_trace;     // metadata: where the user's code made it
  std::string nn_module_stack; // metadata: the module path, as torch.export records it
  // "aten::conv2d" and "default" for torch.ops.<ns>.<op>.<overload> targets; empty otherwise.
  std::string op, overload;
};

struct Graph {
  std::vector<Argument> inputs, outputs;
  std::vector<Node> nodes;
  std::map<std::string, TensorMeta> tensor_values;
  std::map<std::string, SymInt> sym_int_values;
};

// What each graph input and output is (the graph signature).
struct InputSpec {
  // ConstantValue: a user input torch.export specialized to its example
  // value (an int, float, bool, str or None argument): no graph input.
  enum class Kind { UserInput, Parameter, Buffer, Constant, ConstantValue, CustomObject, Token, Other };
  Kind kind = Kind::Other;
  std::string arg;     // the placeholder's name
  std::string target;  // parameter / buffer / constant name in the state dict
  bool persistent = true;
  Argument value;      // a ConstantValue's value (as_int, as_float, as_bool, as_string, as_none)
};
struct OutputSpec {
  enum class Kind { UserOutput, BufferMutation, UserInputMutation, LossOutput, Token, Other };
  Kind kind = Kind::Other;
  std::string arg;     // the output's name ("" for a constant: value)
  std::string target;
  Argument value;      // the output as the program has it (as_int 4 for a constant len(list))
};

// A number a program returns as a constant output, as the exported model and
// the program runner both give it: a 0-d tensor of int64 (as_int), bool
// (as_bool) or double (as_float: a Python float). nullopt for other kinds.
struct ConstantNumber {
  ir::DType dtype = ir::DType::Undefined;
  int64_t i = 0;  // as_int, as_bool
  double f = 0;   // as_float
};
inline std::optional<ConstantNumber> constant_number(const Argument& a) {
  if ((a.kind == "as_int" || a.kind == "as_bool") && a.ints.size() == 1)
    return ConstantNumber{a.kind == "as_bool" ? ir::DType::Bool : ir::DType::Int64, a.ints[0], 0};
  if (a.kind == "as_float" && a.floats.size() == 1) return ConstantNumber{ir::DType::Double, 0, a.floats[0]};
  return std::nullopt;
}

// A stored weight or constant: its bytes in the archive.
struct StoredTensor {
  std::string entry;  // zip entry name
  TensorMeta meta;
  bool is_param = false;
  bool pickled = false;  // stored with torch.save: not readable without LibTorch's unpickler
};

struct Program {
  int schema_major = 0, schema_minor = 0;
  std::string torch_version;  // "" where the archive does not say
  std::string archive_path, model_name;
  Graph graph;
  std::vector<InputSpec> input_specs;
  std::vector<OutputSpec> output_specs;
  struct Range {
    std::optional<int64_t> min, max;  // none: unbounded
  };
  std::map<std::string, Range> range_constraints;
  std::map<std::string, StoredTensor> weights, constants;
  // Weights and constants handed over in memory rather than stored in an
  // archive (the Python package's dynamo path gives the program's own
  // tensors, read in place: no copy of the weights), by target; they win
  // over `weights` / `constants`.
  std::map<std::string, ir::Tensor> in_memory;
};

// Where a node came from: the module path (from nn_module_stack, "" for the
// top module) and the first frame of its stack trace ("model.py:12").
std::string module_path(const Node& n);
std::string user_source(const Node& n);
// "module.path (file.py:12)" ("<top module>" for the top's): as errors name a node.
std::string where(const Node& n);
// The dtype of the schema's ScalarType `code` (Undefined where ONNX has
// none), and its schema name.
ir::DType schema_dtype(int64_t code, std::string* name = nullptr);

// The c10 codes of the schema's memory formats (ContiguousFormat = 1 -> 0,
// PreserveFormat = 4 -> 1) and layouts (Strided = 7 -> 0, SparseCoo = 1 -> 1,
// _mkldnn = 6 -> 3, ...; -1: none).
int64_t c10_memory_format(int64_t schema);
int64_t c10_layout(int64_t schema);

// A symbolic size as text: sympy's Symbol('s77', ...) as s77.
std::string readable_expr(const std::string& expr);

// The schema majors this reader knows: torch 2.9 to 2.15 write 8.x.
constexpr int kSchemaMajor = 8;

// Whether `path` is a .pt2 archive (a zip holding <name>/archive_format = "pt2").
bool is_pt2_archive(const std::string& path);

// Reads the program `model` ("" = the archive's only one). Throws
// torch2onnx::Error (Load) naming what is wrong: not a zip, not a .pt2, a
// schema version or layout this reader does not know, malformed JSON.
Program read_program(const std::string& path, const std::string& model = "");

// The program of a model JSON text (the archive's models/<name>.json).
Program parse_program(const std::string& json_text, const std::string& what);

}  // namespace torch2onnx::frontend::pt2
