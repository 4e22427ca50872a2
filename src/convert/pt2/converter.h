// The .pt2 frontend's converter: reads a torch.export program's own nodes
// and metadata (no example run: dtypes and shapes come from the program) and
// hands each operator to the symbolic registry. What it owns is reading the
// program: its names and scopes, arguments in LibTorch's schema order,
// SymInt arithmetic, weights from the archive, higher-order operators. The
// graph interface, dispatch, subgraphs and unsupported-op reporting are the
// shared parts in convert/ (graph_interface, dispatch, subgraph, unsupported).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "convert/constant_memo.h"
#include "convert/dispatch.h"
#include "convert/graph_interface.h"
#include "convert/subgraph.h"
#include "frontend/pt2/program.h"
#include "frontend/zip.h"
#include "symbolic/registry.h"
#include "torch2onnx/options.h"

namespace c10 {
class IValue;
struct FunctionSchema;
}  // namespace c10

namespace torch2onnx::convert::pt2 {

using namespace frontend::pt2;

// ---- the program's operators (operators.cpp)
// Run-time checks of what the program promised: dropped (ONNX cannot raise).
bool is_assert(const std::string& op);
// Operators on sizes (SymInts) the converter computes itself (sizes.cpp):
// the ONNX operator of the plain binary ones, "" for those with their own code.
const std::map<std::string, std::string>& size_operators();
// Higher-order operators the converter converts (higher_order.cpp).
bool is_higher_order(const Node& n);

class ProgramConverter : public ConstantMemo {
 public:
  ProgramConverter(const Program& p, const Registry& registry, const ExportOptions& options)
      : p_(p), registry_(registry), options_(options), interface_(options) {}

  ir::Model run();

 private:
  // ---- what each name of the program is on the ONNX side
  struct Sym {  // a SymInt / SymBool / SymFloat computed at run time
    ir::Value* value = nullptr;
    std::optional<double> hint;
    ir::DType dtype = ir::DType::Int64;
  };
  // The names of one graph of the program (the top graph, or a higher-order
  // operator's body: bodies name their own values, which may shadow outer ones).
  struct Scope {
    Scope(const Graph* g, int i) : graph(g), id(i) {}
    const Graph* graph;
    int id;
    std::map<std::string, ir::Value*> tensors;
    std::map<std::string, Sym> syms;
    std::set<std::string> unset;                   // outputs a symbolic left out
    std::map<std::string, std::string> view_of;  // a view's name -> the tensor it views (its root)
    std::set<std::string> viewed;                // tensors with views
    // How each view was made (views.cpp): the tensor it views, the node
    // (element: its index in a list result), and the version of its root it
    // was computed from; a root's version counts the writes into it.
    struct View {
      std::string parent;
      const Node* node = nullptr;
      int element = -1;
      uint64_t version = 0;
    };
    std::map<std::string, View> views;
    std::map<std::string, uint64_t> versions;
  };

  [[noreturn]] void fail(const Node* n, const std::string& why) const;
  std::shared_ptr<const ir::Origin> origin_of(const Node& n);

  // ---- graph inputs: user inputs, then weights as initializers (converter.cpp)
  std::string dim_name(const std::string& input, size_t axis, int64_t rank, const std::string& expr);
  ir::ValueType type_of(const TensorMeta& m, const std::string& graph_name);
  std::string symbol_name(const std::string& expr) const;
  const TensorMeta& meta(const std::string& name, const Node* n) const;
  bool copies(const Node& n, const std::string& op) const;  // a reshape/contiguous that copied
  void make_inputs();
  void convert_nodes(const Graph& g);
  void convert_node(const Node& n);
  // What n's symbolic makes of its arguments as they are now.
  std::vector<OutputSlot> node_results(const Node& n);
  void set_outputs(const Node& n, const std::vector<OutputSlot>& results);
  void set_tensor(const std::string& name, ir::Value* v, const Node& n);
  void make_outputs();
  void note_dropped_checks(ir::Model& model) const;

  // ---- weights (weights.cpp)
  ir::Tensor stored_tensor(const std::string& target);
  std::optional<ir::Tensor> mapped_tensor(const frontend::ZipEntry& e, const TensorMeta& m,
                                          const std::vector<int64_t>& dims, int64_t numel);
  // The tensor's elements, in order, from its storage's bytes (strides and
  // offset as stored: a view shares its base's storage).
  std::vector<uint8_t> gather(std::vector<uint8_t>& storage, const TensorMeta& m, const std::vector<int64_t>& dims,
                              int64_t numel, const std::string& target) const;

  // ---- arguments (args.cpp)
  Arg tensor_arg(const std::string& name, const Node* n);
  int64_t id_of(const std::string& name);
  Arg constant_int(int64_t v, ir::DType dt = ir::DType::Int64);
  Arg sym_arg(const std::string& name, const Node* n);
  Arg make_arg(const NamedArgument& na, const Node& n);
  ir::DType pt2_dtype(int64_t code, const Node& n) const;
  OutputInfo output_info(const Argument& out, const Node& n) const;
  // A default value of the operator's schema as an Arg.
  Arg arg_from_default(const c10::IValue& v, const Node& n, const std::string& name);
  // The node's arguments in the order of the operator's schema: the program
  // leaves out arguments at their default value; LibTorch's schema has them.
  std::vector<Arg> schema_args(const Node& n);
  // Writes through views: the program (torch.export's training IR) keeps
  // in-place ops, and one that writes into a view of a tensor (`z[:, :3].fill_(1)`)
  // or into a tensor with views also changes them, which converting it as
  // its out-of-place form would not. Such writes are refused (functional
  // programs, ep.run_decompositions(), have none); plain in-place ops on
  // tensors nothing views (relu_) convert.
  void track_aliases(const Node& n, const c10::FunctionSchema& schema);
  std::string root_of(const std::string& name) const;

  // ---- writes through views, functionalized (views.cpp): a write into a
  // view writes its new value back into the tensor it views, up to the root
  // (slice_scatter, select_scatter, ... the inverse of each view op); views
  // read after a write into their root are computed again from it.
  void write_back(const std::string& written, ir::Value* value, const Node& n);
  ir::Value* unview(const Scope::View& v, const std::string& name, ir::Value* parent, ir::Value* src, const Node& at);
  ir::Value* unview_element(const Scope::View& v, const std::string& name, ir::Value* parent, ir::Value* src,
                            const Node& at);
  void refresh(const std::string& name);
  ir::Value* call_symbolic(const std::string& op, std::vector<Arg> args, const std::string& out_name, const Node& at);
  Arg value_arg(ir::Value* v, const std::string& meta_name, const Node& at);

  // ---- sizes: SymInt arithmetic, sym_size, getitem, asserts (sizes.cpp)
  void convert_structural(const Node& n);

  // ---- higher-order operators: cond -> If, while_loop -> Loop, wrappers inlined (higher_order.cpp)
  void convert_higher_order(const Node& n);
  void convert_cond(const Node& n);
  void convert_while_loop(const Node& n);
  void inline_body(const Node& n);
  // Converts `body` into `g` with its inputs bound to `operands` (values of
  // an enclosing graph); returns its outputs, as values of `g`.
  std::vector<ir::Value*> convert_body(const Graph& body, const std::vector<Arg>& operands, ir::Graph* g,
                                       const Node& n);
  std::vector<std::string> output_names(const Node& n) const;
  // Binds `names` (the node's results) to `results`: tensors, or SymInts.
  void bind_results(const Node& n, const std::vector<std::string>& names, const std::vector<ir::Value*>& results);

  const Program& p_;
  const Registry& registry_;
  const ExportOptions& options_;
  GraphInterface interface_;
  ir::Graph* graph_ = nullptr;
  Scope* scope_ = nullptr;
  int scopes_ = 0;
  std::vector<std::pair<std::string, std::string>> aliased_writes_;  // the node being converted: (written, root)
  std::map<std::pair<int, std::string>, int64_t> ids_;
  std::map<std::string, std::string> symbol_names_;
  std::shared_ptr<const frontend::ZipFile> zip_;
  std::shared_ptr<const void> mapping_;  // the archive, mapped read-only (weights read in place)
  int dropped_asserts_ = 0;
  // Whether the program's output ranks are what every run gives: its sizes
  // cannot be 1 (torch.export specializes 0 and 1 by default, so its guards
  // fixed every squeeze). A program captured size-obliviously (a range from
  // 0 or 1) squeezes such dims at run time: then lowerings decide it there.
  // (Of the whole program: decided once.)
  const bool output_ranks_fixed_ = ranks_fixed(p_);
  static bool ranks_fixed(const Program& p);
};

}  // namespace torch2onnx::convert::pt2
