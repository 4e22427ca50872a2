// `torch2onnx check MODEL.pt2`: reads a torch.export program (no Python, no
// example inputs: shapes come from its metadata) and lists what it holds and
// which of its operators have no symbolic in the registry at the opset.
#include <iostream>
#include <map>

#include "cli_args.h"
#include "convert/program.h"
#include "frontend/pt2/program.h"

namespace torch2onnx::cli {
namespace {

namespace pt2 = frontend::pt2;

std::string dims(const pt2::TensorMeta& m) {
  std::string s = std::string(m.dtype == ir::DType::Undefined ? m.dtype_name.c_str() : ir::dtype_name(m.dtype)) + "[";
  for (size_t i = 0; i < m.sizes.size(); ++i)
    s += (i ? ", " : "") + (m.sizes[i].value ? std::to_string(*m.sizes[i].value) : pt2::readable_expr(m.sizes[i].expr));
  return s + "]";
}

// Every node's operator (higher-order operators' bodies included).
void count_ops(const pt2::Graph& g, std::map<std::string, std::vector<const pt2::Node*>>& ops) {
  for (const pt2::Node& n : g.nodes) {
    ops[n.op.empty() ? n.target : n.op].push_back(&n);
    for (const auto& in : n.inputs)
      if (in.arg.graph) count_ops(*in.arg.graph, ops);
  }
}

}  // namespace

int run_check_pt2(const Command& c) {
  const int opset = c.opset_given ? c.options.opset_version : torch2onnx::default_program_opset();
  const pt2::Program p = pt2::read_program(c.model);
  std::cout << c.model << ": torch.export program '" << p.model_name << "', export schema " << p.schema_major << "."
            << p.schema_minor << (p.torch_version.empty() ? "" : ", saved by torch " + p.torch_version) << "\n";
  size_t params = 0, buffers = 0, constants = 0;
  for (const pt2::InputSpec& s : p.input_specs) {
    if (s.kind == pt2::InputSpec::Kind::UserInput) {
      auto it = p.graph.tensor_values.find(s.arg);
      std::cout << "  input " << s.arg << ": " << (it == p.graph.tensor_values.end() ? "(not a tensor)" : dims(it->second))
                << "\n";
    }
    params += s.kind == pt2::InputSpec::Kind::Parameter;
    buffers += s.kind == pt2::InputSpec::Kind::Buffer;
    constants += s.kind == pt2::InputSpec::Kind::Constant;
  }
  for (const auto& [sym, range] : p.range_constraints)
    std::cout << "  " << sym << " in [" << (range.min ? std::to_string(*range.min) : "-inf") << ", "
              << (range.max ? std::to_string(*range.max) : "inf") << "]\n";
  for (const pt2::OutputSpec& s : p.output_specs)
    if (s.kind == pt2::OutputSpec::Kind::UserOutput) {
      auto it = p.graph.tensor_values.find(s.arg);
      std::cout << "  output " << s.arg << ": "
                << (it == p.graph.tensor_values.end() ? "(not a tensor)" : dims(it->second)) << "\n";
    }
  std::cout << "  " << params << " parameters, " << buffers << " buffers, " << constants << " constants\n";

  std::map<std::string, std::vector<const pt2::Node*>> ops;
  count_ops(p.graph, ops);
  // what export refuses (convert/program.cpp: aliases and in-place forms resolved as it resolves them)
  const auto missing = convert::unsupported_operators(p, user_registry(), opset);
  size_t own = 0;
  for (const auto& [op, nodes] : ops) own += convert::converted_by_frontend(*nodes.front());
  std::cout << "  " << ops.size() << " operators: " << (ops.size() - missing.size() - own)
            << " with a symbolic at opset " << opset << ", " << own << " on sizes (the .pt2 frontend's own)\n";
  if (missing.empty()) return 0;
  std::cout << missing.size() << " operator" << (missing.size() == 1 ? "" : "s") << " of " << c.model
            << " cannot be converted at opset " << opset << ":\n";
  for (const UnsupportedOperator& u : missing) {
    std::cout << "  " << u.op << " x" << u.count;
    if (u.lowest_opset) std::cout << " (supported from opset " << *u.lowest_opset << ")";
    std::cout << "\n";
    for (const auto& where : u.locations) std::cout << "      " << where << "\n";
  }
  return 1;
}

}  // namespace torch2onnx::cli
