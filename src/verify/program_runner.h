// A torch.export program (.pt2) run in LibTorch, without Python: each node's
// operator is called through LibTorch's dispatcher with the arguments its
// schema names, sizes (SymInts) are computed on the values, and the
// higher-order operators (cond, while_loop, the no_grad/autocast wrappers,
// invoke_subgraph) run their bodies. What PyTorch computes for the program,
// for verify and find_mismatch.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "frontend/pt2/program.h"
#include "frontend/zip.h"

namespace torch2onnx::verify_detail {

// What each name of the program's top graph holds after a run.
using ProgramValues = std::map<std::string, c10::IValue>;

class ProgramRunner {
 public:
  // Reads the program and its weights; throws Error (Load) naming what is wrong.
  explicit ProgramRunner(const std::string& pt2_path);

  const frontend::pt2::Program& program() const { return p_; }
  // The user outputs for the user inputs (left unchanged: a program that
  // writes into its inputs gets copies). `values`: every value of the top
  // graph, as it was when computed (copies).
  std::vector<c10::IValue> run(const std::vector<c10::IValue>& inputs, ProgramValues* values = nullptr) const;
  std::string misfit(const std::vector<c10::IValue>& inputs) const;  // (program_misfit)

 private:
  frontend::pt2::Program p_;
  std::map<std::string, at::Tensor> weights_;  // placeholder name -> parameter / buffer / constant
};

// The names of the program's user inputs, in order.
std::vector<std::string> program_input_names(const frontend::pt2::Program& p);
// "" when the inputs fit the program (dtypes, its fixed sizes, the ranges
// and equalities of its symbolic ones), else what does not.
std::string program_misfit(const frontend::pt2::Program& p, const std::vector<c10::IValue>& inputs);
// The user inputs to run the program on: `given` (args: their tensors,
// tuples and lists flattened) or, when none are given, the sample inputs
// torch.export.save stored with it (data/sample_inputs). Throws Error (Usage)
// when the archive has none or they do not fit the program.
std::vector<c10::IValue> program_inputs(const frontend::pt2::Program& p, const std::vector<c10::IValue>& given);

// Runs the nodes of `g` on the values in `env` (its inputs; its results are
// added). `record`: each value of `g` as it is computed (copies: later writes
// into a tensor do not change what was recorded). program_nodes.cpp.
void run_program_graph(const frontend::pt2::Graph& g, ProgramValues& env, ProgramValues* record = nullptr);
// LibTorch's dtype of `dt`; throws Error (Check) naming `what` for a dtype it has none of.
at::ScalarType torch_dtype(ir::DType dt, const std::string& what);

// The stored tensor `t` of a program's archive `zip` as a LibTorch tensor (its own storage).
at::Tensor stored_tensor(const frontend::ZipFile& zip, const frontend::pt2::StoredTensor& t, const std::string& name);

}  // namespace torch2onnx::verify_detail
