// torch2onnx::find_mismatch_program (include/torch2onnx/find_mismatch.h): a
// .pt2 program's operators bisected as find_mismatch does a TorchScript
// graph's. A part is a program of its own: the tensors it reads from before
// it are its user inputs (with the run's sizes), the weights it reads stay
// weights of the archive, the sizes it reads are the numbers the run
// computed, and the tensors read after it are its outputs.
#include <set>

#include "api_internal.h"
#include "convert/program.h"
#include "torch2onnx/find_mismatch.h"
#include "verify/mismatch_parts.h"
#include "verify/program_runner.h"
#include "verify/values.h"

namespace torch2onnx {
namespace {

using namespace frontend::pt2;
using verify_detail::ProgramValues;

bool is_tensor_kind(const std::string& k) {
  return k == "as_tensor" || k == "as_optional_tensor" || k == "as_tensors" || k == "as_optional_tensors";
}

bool is_size_kind(const std::string& k) {
  return k == "as_sym_int" || k == "as_sym_bool" || k == "as_sym_float" || k == "as_sym_ints" || k == "as_sym_bools";
}

// `a` with the sizes computed outside the part (not in `defined`) replaced by the run's numbers.
void bake_sizes(Argument& a, const std::set<std::string>& defined, const ProgramValues& values) {
  if (!is_size_kind(a.kind)) return;
  const bool list = a.kind == "as_sym_ints" || a.kind == "as_sym_bools";
  for (size_t i = 0; i < a.names.size(); ++i) {
    const std::string name = a.names[i];
    if (name.empty() || defined.count(name)) continue;
    auto v = values.find(name);
    if (v == values.end()) throw Error(Error::Kind::Check, "the run computed no value for '" + name + "'");
    if (v->second.isDouble()) {
      a.floats.resize(std::max(a.floats.size(), i + 1));
      a.floats[i] = v->second.toDouble();
    } else {
      a.ints.resize(std::max(a.ints.size(), i + 1));
      a.ints[i] = v->second.isBool() ? v->second.toBool() : v->second.toInt();
    }
    a.names[i].clear();
  }
  if (!list) a.names.clear();  // (a single size given as a number has no name)
}

// A placeholder of the program and what it is.
void add_input(Program& q, const InputSpec& spec) {
  Argument placeholder;
  placeholder.kind = "as_tensor";
  placeholder.names = {spec.arg};
  q.graph.inputs.push_back(placeholder);
  q.input_specs.push_back(spec);
}

struct PartProgram {
  Program program;
  std::vector<c10::IValue> inputs, expected;
};

PartProgram make_part(const Program& p, const std::vector<const Node*>& nodes, const ProgramValues& values) {
  PartProgram part;
  Program& q = part.program;
  q.schema_major = p.schema_major;
  q.schema_minor = p.schema_minor;
  q.torch_version = p.torch_version;
  q.archive_path = p.archive_path;
  q.model_name = p.model_name;
  q.weights = p.weights;
  q.constants = p.constants;
  q.graph.tensor_values = p.graph.tensor_values;
  q.graph.sym_int_values = p.graph.sym_int_values;

  std::set<std::string> defined;
  for (const Node* n : nodes) {
    for (const Argument& o : n->outputs)
      for (const std::string& name : o.names)
        if (!name.empty()) defined.insert(name);
  }
  std::set<const Node*> in_part(nodes.begin(), nodes.end());
  std::set<std::string> read_after;  // what the rest of the program reads
  for (const Node& n : p.graph.nodes)
    if (!in_part.count(&n))
      for (const NamedArgument& na : n.inputs) read_after.insert(na.arg.names.begin(), na.arg.names.end());
  for (const OutputSpec& s : p.output_specs) read_after.insert(s.arg);

  std::map<std::string, const InputSpec*> stored;  // placeholders of weights
  for (const InputSpec& s : p.input_specs)
    if (s.kind != InputSpec::Kind::UserInput) stored[s.arg] = &s;
  std::set<std::string> seen;
  std::vector<InputSpec> weight_specs;
  for (const Node* n : nodes) {
    Node copy = *n;
    for (NamedArgument& na : copy.inputs) {
      bake_sizes(na.arg, defined, values);
      if (!is_tensor_kind(na.arg.kind)) continue;
      for (const std::string& name : na.arg.names) {
        if (name.empty() || defined.count(name) || !seen.insert(name).second) continue;
        if (auto w = stored.find(name); w != stored.end()) {
          weight_specs.push_back(*w->second);
          continue;
        }
        auto v = values.find(name);
        if (v == values.end() || !v->second.isTensor())
          throw Error(Error::Kind::Check, "the run computed no tensor for '" + name + "'");
        const at::Tensor& t = v->second.toTensor();
        TensorMeta& m = q.graph.tensor_values[name];  // (the run's sizes: a part is exported for them)
        m.sizes.clear();
        m.strides.clear();
        for (int64_t d : t.sizes()) m.sizes.push_back(SymInt{d, "", std::nullopt});
        InputSpec spec;
        spec.kind = InputSpec::Kind::UserInput;
        spec.arg = name;
        add_input(q, spec);
        part.inputs.push_back(t);
      }
    }
    q.graph.nodes.push_back(std::move(copy));
  }
  for (const InputSpec& s : weight_specs) add_input(q, s);
  for (const Node* n : nodes)
    for (const Argument& o : n->outputs)
      for (const std::string& name : o.names) {
        auto v = values.find(name);
        if (name.empty() || !read_after.count(name) || v == values.end() || !v->second.isTensor()) continue;
        Argument out;
        out.kind = "as_tensor";
        out.names = {name};
        q.graph.outputs.push_back(out);
        OutputSpec spec;
        spec.kind = OutputSpec::Kind::UserOutput;
        spec.arg = name;
        q.output_specs.push_back(spec);
        part.expected.push_back(v->second);
      }
  return part;
}

}  // namespace

MismatchTree find_mismatch_program(const std::string& program_path, const ExportOptions& options, double rtol,
                                   const std::vector<c10::IValue>& inputs) {
  const verify_detail::ProgramRunner runner(program_path);
  const std::vector<c10::IValue> args = verify_detail::program_inputs(runner.program(), inputs);
  ProgramValues values;
  runner.run(args, &values);

  const Program& p = runner.program();
  std::vector<const Node*> ops;  // (size computations and asserts are not operators of a part)
  for (const Node& n : p.graph.nodes)
    if (!convert::converted_by_frontend(n)) ops.push_back(&n);
  VerifyOptions compare;
  compare.rtol = rtol;
  const ExportOptions part_options = verify_detail::part_options(options);
  auto kind = [&](size_t i) { return ops[i]->op.empty() ? ops[i]->target : ops[i]->op; };
  auto label = [&](size_t i) { return kind(i) + " in " + where(*ops[i]); };
  auto check = [&](const std::vector<size_t>& part_ops, const std::string&) {
    verify_detail::PartVerdict verdict;
    try {
      std::vector<const Node*> nodes;
      for (size_t i : part_ops) nodes.push_back(ops[i]);
      const PartProgram part = make_part(p, nodes, values);
      if (part.expected.empty()) return verdict;  // (nothing of it is read afterwards)
      const std::string bytes = api::export_program_to_bytes(part.program, part_options);
      verdict.mismatch = verify_detail::compare_in_onnx_runtime(bytes, part.inputs, part.expected, compare);
    } catch (const std::exception& e) {  // an export or run error is a verdict too
      verdict.set_error(e.what());
    }
    return verdict;
  };
  return verify_detail::find_in_parts(ops.size(), kind, label, check);
}

}  // namespace torch2onnx
