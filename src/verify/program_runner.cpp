// ProgramRunner (verify/program_runner.h): a .pt2 program's weights and
// inputs as LibTorch tensors, the checks of inputs against the program, and
// its runs (the nodes themselves: program_nodes.cpp).
#include "verify/program_runner.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <cstring>
#include <set>

#include "frontend/zip.h"
#include "torch2onnx/options.h"
#include "verify/values.h"

namespace torch2onnx::verify_detail {

using namespace frontend::pt2;

at::Tensor stored_tensor(const frontend::ZipFile& zip, const StoredTensor& t, const std::string& name) {
  for (const frontend::ZipEntry& e : zip.entries()) {
    if (e.name != t.entry) continue;
    std::string why = zip.size_problem(e);
    auto bytes = why.empty() ? zip.contents(e, &why) : std::nullopt;
    if (!bytes) throw Error(Error::Kind::Load, "cannot read '" + name + "': " + why);
    if (t.pickled) {
      c10::IValue v;
      try {
        v = torch::jit::pickle_load(std::vector<char>(bytes->begin(), bytes->end()));
      } catch (const c10::Error& err) {
        throw Error(Error::Kind::Load, "cannot read '" + name + "': " + err.what_without_backtrace());
      }
      if (!v.isTensor()) throw Error(Error::Kind::Load, "'" + name + "' is not stored as a tensor");
      return v.toTensor();
    }
    const at::ScalarType type = torch_dtype(t.meta.dtype, "'" + name + "'");
    std::vector<int64_t> sizes, strides;
    for (const SymInt& s : t.meta.sizes) sizes.push_back(s.value.value_or(-1));
    for (const SymInt& s : t.meta.strides) strides.push_back(s.value.value_or(-1));
    if (strides.size() != sizes.size()) {  // (none given: row-major)
      strides.assign(sizes.size(), 1);
      for (size_t k = sizes.size(); k-- > 1;) strides[k - 1] = strides[k] * std::max<int64_t>(sizes[k], 1);
    }
    const int64_t offset = t.meta.storage_offset.value.value_or(0);
    int64_t last = offset;  // the farthest element read
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (sizes[k] < 0 || strides[k] < 0) throw Error(Error::Kind::Load, "'" + name + "' has sizes that are not numbers");
      if (sizes[k] == 0) last = -1;
      if (last >= 0) last += (sizes[k] - 1) * strides[k];
    }
    const int64_t elems = static_cast<int64_t>(bytes->size() / c10::elementSize(type));
    if (offset < 0 || last >= elems) throw Error(Error::Kind::Load, "'" + name + "' reaches past its storage");
    at::Tensor storage = at::empty({elems}, at::TensorOptions().dtype(type));
    if (elems) std::memcpy(storage.data_ptr(), bytes->data(), static_cast<size_t>(elems) * c10::elementSize(type));
    return storage.as_strided(sizes, strides, offset);
  }
  throw Error(Error::Kind::Load, "the archive has no entry " + t.entry);
}

ProgramRunner::ProgramRunner(const std::string& pt2_path) : p_(read_program(pt2_path)) {
  const auto zip = frontend::ZipFile::open(p_.archive_path);  // (its directory read once for every weight)
  if (!zip) throw Error(Error::Kind::Load, "cannot open '" + p_.archive_path + "'");
  for (const InputSpec& s : p_.input_specs) {
    if (s.kind == InputSpec::Kind::UserInput || s.kind == InputSpec::Kind::ConstantValue) continue;
    if (s.kind != InputSpec::Kind::Parameter && s.kind != InputSpec::Kind::Buffer && s.kind != InputSpec::Kind::Constant)
      throw Error(Error::Kind::Check, "input '" + s.arg + "' is a custom object or token, which the runner does not run");
    const StoredTensor* t = nullptr;
    if (auto w = p_.weights.find(s.target); w != p_.weights.end()) t = &w->second;
    else if (auto c = p_.constants.find(s.target); c != p_.constants.end()) t = &c->second;
    if (!t) throw Error(Error::Kind::Load, "the archive holds no data for '" + s.target + "'");
    weights_[s.arg] = stored_tensor(*zip, *t, s.target);
  }
}

std::vector<std::string> program_input_names(const Program& p) {
  std::vector<std::string> names;
  for (const InputSpec& s : p.input_specs)
    if (s.kind == InputSpec::Kind::UserInput) names.push_back(s.arg);
  return names;
}

namespace {

std::vector<c10::IValue> sample_inputs(const Program& p) {
  auto zip = frontend::ZipFile::open(p.archive_path);
  const std::string suffix = "data/sample_inputs/" + p.model_name + ".pt";
  for (const frontend::ZipEntry& e : zip ? zip->entries() : std::vector<frontend::ZipEntry>{}) {
    if (e.name.size() < suffix.size() || e.name.compare(e.name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    std::string why = zip->size_problem(e);
    auto bytes = why.empty() ? zip->contents(e, &why) : std::nullopt;
    if (!bytes) throw Error(Error::Kind::Load, "cannot read the program's sample inputs: " + why);
    c10::IValue stored;
    try {
      stored = torch::jit::pickle_load(std::vector<char>(bytes->begin(), bytes->end()));
    } catch (const c10::Error& err) {
      throw Error(Error::Kind::Load, std::string("cannot read the program's sample inputs (") + e.name + "): " +
                                         err.what_without_backtrace());
    }
    std::vector<c10::IValue> tensors;
    flatten(stored, false, tensors);
    return tensors;
  }
  throw Error(Error::Kind::Usage, "'" + p.archive_path + "' holds no sample inputs (" + suffix +
                                      ", which torch.export.save writes): give the inputs (--args / --input)");
}

}  // namespace

std::vector<c10::IValue> program_inputs(const Program& p, const std::vector<c10::IValue>& given) {
  std::vector<c10::IValue> inputs;
  if (given.empty()) inputs = sample_inputs(p);
  else flatten(c10::ivalue::Tuple::create(given), false, inputs);
  if (std::string why = program_misfit(p, inputs); !why.empty())
    throw Error(Error::Kind::Usage, std::string(given.empty() ? "the program's sample inputs" : "the example inputs") +
                                        " do not fit the program: " + why);
  return inputs;
}

std::string ProgramRunner::misfit(const std::vector<c10::IValue>& inputs) const { return program_misfit(p_, inputs); }

std::string program_misfit(const Program& p, const std::vector<c10::IValue>& inputs) {
  const auto names = program_input_names(p);
  if (inputs.size() != names.size())
    return "the program takes " + std::to_string(names.size()) + " inputs, given " + std::to_string(inputs.size());
  std::map<std::string, int64_t> bound;
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string which = "input " + std::to_string(k) + " (" + names[k] + ")";
    if (!inputs[k].isTensor()) return which + " is not a tensor";
    const at::Tensor& t = inputs[k].toTensor();
    auto m = p.graph.tensor_values.find(names[k]);
    if (m == p.graph.tensor_values.end()) return which + " has no metadata in the program";
    if (m->second.dtype != ir::DType::Undefined &&
        static_cast<at::ScalarType>(ir::scalar_type_from_dtype(m->second.dtype)) != t.scalar_type())
      return which + " is " + c10::toString(t.scalar_type()) + ", the program takes " + ir::dtype_name(m->second.dtype);
    if (static_cast<size_t>(t.dim()) != m->second.sizes.size())
      return which + " has " + std::to_string(t.dim()) + " dims, the program takes " +
             std::to_string(m->second.sizes.size());
    for (size_t d = 0; d < m->second.sizes.size(); ++d) {
      const SymInt& s = m->second.sizes[d];
      const int64_t n = t.size(static_cast<int64_t>(d));
      const std::string dim = which + " dim " + std::to_string(d);
      if (s.value) {
        if (*s.value != n) return dim + " is " + std::to_string(n) + ", the program fixes it at " + std::to_string(*s.value);
        continue;
      }
      const std::string sym = readable_expr(s.expr);
      auto range = p.range_constraints.find(sym);
      if (range == p.range_constraints.end()) continue;  // (an expression of symbols)
      if (auto [it, fresh] = bound.emplace(sym, n); !fresh && it->second != n)
        return dim + " is " + std::to_string(n) + " but " + sym + " is " + std::to_string(it->second) + " elsewhere";
      if ((range->second.min && n < *range->second.min) || (range->second.max && n > *range->second.max))
        return dim + " (" + sym + " = " + std::to_string(n) + ") is outside the program's range [" +
               (range->second.min ? std::to_string(*range->second.min) : "-inf") + ", " +
               (range->second.max ? std::to_string(*range->second.max) : "inf") + "]";
    }
  }
  return "";
}

std::vector<c10::IValue> ProgramRunner::run(const std::vector<c10::IValue>& inputs, ProgramValues* values) const {
  const auto names = program_input_names(p_);
  if (inputs.size() != names.size())
    throw Error(Error::Kind::Usage, "the program takes " + std::to_string(names.size()) + " inputs, given " +
                                        std::to_string(inputs.size()));
  std::set<std::string> written;  // buffers the program writes into: fresh copies each run
  for (const OutputSpec& o : p_.output_specs)
    if (o.kind == OutputSpec::Kind::BufferMutation)
      for (const InputSpec& s : p_.input_specs)
        if (s.target == o.target) written.insert(s.arg);
  ProgramValues env;
  for (const auto& [name, w] : weights_) env[name] = written.count(name) ? w.clone() : w;
  for (size_t k = 0; k < names.size(); ++k)
    env[names[k]] = inputs[k].isTensor() ? c10::IValue(inputs[k].toTensor().clone()) : inputs[k];
  if (values) {  // the inputs and weights as they are before the run
    *values = env;
    for (const std::string& name : names)
      if (env[name].isTensor()) (*values)[name] = env[name].toTensor().clone();
    for (const std::string& name : written) (*values)[name] = env[name].toTensor().clone();
  }
  {
    at::NoGradGuard no_grad;
    run_program_graph(p_.graph, env, values);
  }
  std::vector<c10::IValue> outs;
  for (const OutputSpec& s : p_.output_specs) {
    if (s.kind != OutputSpec::Kind::UserOutput) continue;
    if (s.arg.empty()) {  // a constant number (as the converter makes it: a 0-d tensor; None left out)
      if (s.value.kind == "as_none") continue;
      const auto number = constant_number(s.value);
      if (!number)
        throw Error(Error::Kind::Check, "running the program: an output is a constant of kind " + s.value.kind);
      if (number->dtype == ir::DType::Double) outs.emplace_back(at::scalar_tensor(number->f, at::kDouble));
      else outs.emplace_back(at::scalar_tensor(number->i, number->dtype == ir::DType::Bool ? at::kBool : at::kLong));
      continue;
    }
    auto it = env.find(s.arg);
    if (it == env.end()) throw Error(Error::Kind::Check, "running the program: output '" + s.arg + "' is not computed");
    outs.push_back(it->second);
  }
  return outs;
}

}  // namespace torch2onnx::verify_detail
