// find_mismatch (torch.onnx.verification.find_mismatch's counterpart, as the
// Python package's torch2onnx.verification.find_mismatch): the module's
// TorchScript graph, frozen and inlined, is cut into halves, each half into
// halves again; each part is exported by torch2onnx on its own and run in
// ONNX Runtime on the values that flow into it in LibTorch; the parts whose
// outputs differ are bisected down to single operators.
//
//   auto tree = torch2onnx::find_mismatch(module, args, options);
//   std::cout << tree.tree_text() << tree.mismatch_text();
//   for (const auto* leaf : tree.mismatch_leaves()) ... leaf->label  // "aten::tanh in blocks.7.act (model.py:12)"
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <torch/csrc/jit/api/module.h>

#include "torch2onnx/options.h"

namespace torch2onnx {

// One part of the graph (GraphInfo in torch.onnx).
struct GraphPart {
  std::string id;                        // "" for the whole graph, then "0"/"1" per cut ("110")
  std::vector<std::string> node_kinds;   // its operators, in order ("aten::tanh")
  std::string label;                     // "aten::tanh in blocks.7.act (model.py:12)", or "12 operators"
  std::string mismatch;                  // why it differs (empty: it matches)
  std::string export_error;              // why it could not be exported on its own, if so
  std::unique_ptr<GraphPart> upper, lower;
  bool has_mismatch() const { return !mismatch.empty(); }
};

struct MismatchTree {
  GraphPart root;
  // The smallest parts that mismatch (their halves both match, or they hold one operator).
  std::vector<const GraphPart*> mismatch_leaves() const;
  std::string tree_text() const;      // "Tree:" and one line per part, as pretty_print_tree prints it
  std::string mismatch_text() const;  // the leaves, the node kinds with counts, each leaf's reason
};

// `options` are the export's (opset_version ...); rtol as in verify().
MismatchTree find_mismatch(const torch::jit::Module& module, const std::vector<c10::IValue>& args,
                           const ExportOptions& options = {}, double rtol = 1e-4);

// The same for a torch.export program (.pt2), run by torch2onnx's own runner
// (as verify_program) on `inputs`, or when none are given on the sample
// inputs stored with it. Its top graph's operators are bisected (size
// computations are not operators here: a part reads the sizes as the run
// computed them); a part is a program of its own, exported by the .pt2 frontend.
MismatchTree find_mismatch_program(const std::string& program_path, const ExportOptions& options = {},
                                   double rtol = 1e-4, const std::vector<c10::IValue>& inputs = {});

}  // namespace torch2onnx
