// torch2onnx::verify (include/torch2onnx/verify.h): LibTorch against ONNX
// Runtime on the example and along the dynamic axes.
#include "torch2onnx/verify.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <map>
#include <sstream>

#include "torch2onnx/options.h"
#include "verify/onnxruntime.h"
#include "verify/program_runner.h"
#include "verify/values.h"

namespace torch2onnx::verify_detail {

using ort::HostTensor;

// The leaves of (nested) args or outputs in order: tensors, and with
// numbers=true Python numbers too.
void flatten(const c10::IValue& v, bool numbers, std::vector<c10::IValue>& out) {
  if (v.isTensor()) {
    out.push_back(v);
  } else if (numbers && (v.isInt() || v.isDouble() || v.isBool())) {
    out.push_back(v);
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) flatten(e, numbers, out);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) flatten(e, numbers, out);
  } else if (v.isGenericDict()) {
    for (const auto& kv : v.toGenericDict()) flatten(kv.value(), numbers, out);
  }
}

// `v` with its leaves (as flatten saw them) replaced, in order, from `it`.
c10::IValue replace(const c10::IValue& v, bool numbers, std::vector<c10::IValue>::const_iterator& it) {
  if (v.isTensor() || (numbers && (v.isInt() || v.isDouble() || v.isBool()))) return *it++;
  if (v.isTuple()) {
    std::vector<c10::IValue> elems;
    for (const auto& e : v.toTupleRef().elements()) elems.push_back(replace(e, numbers, it));
    return c10::ivalue::Tuple::create(std::move(elems));
  }
  if (v.isList()) {
    c10::impl::GenericList list(v.toList().elementType());
    for (const auto& e : v.toListRef()) list.push_back(replace(e, numbers, it));
    return list;
  }
  return v;
}

at::ScalarType scalar_type(ir::DType t) {
  switch (t) {
    case ir::DType::Float: return at::kFloat;
    case ir::DType::Double: return at::kDouble;
    case ir::DType::Float16: return at::kHalf;
    case ir::DType::BFloat16: return at::kBFloat16;
    case ir::DType::Int8: return at::kChar;
    case ir::DType::UInt8: return at::kByte;
    case ir::DType::Int16: return at::kShort;
    case ir::DType::Int32: return at::kInt;
    case ir::DType::Int64: return at::kLong;
    case ir::DType::Bool: return at::kBool;
    default: throw Error(Error::Kind::Check, std::string("cannot verify values of ") + ir::dtype_name(t));
  }
}

HostTensor to_host(const at::Tensor& t) {
  at::Tensor c = t.detach().contiguous().cpu();
  HostTensor h;
  switch (c.scalar_type()) {
    case at::kFloat: h.dtype = ir::DType::Float; break;
    case at::kDouble: h.dtype = ir::DType::Double; break;
    case at::kHalf: h.dtype = ir::DType::Float16; break;
    case at::kBFloat16: h.dtype = ir::DType::BFloat16; break;
    case at::kChar: h.dtype = ir::DType::Int8; break;
    case at::kByte: h.dtype = ir::DType::UInt8; break;
    case at::kShort: h.dtype = ir::DType::Int16; break;
    case at::kInt: h.dtype = ir::DType::Int32; break;
    case at::kLong: h.dtype = ir::DType::Int64; break;
    case at::kBool: h.dtype = ir::DType::Bool; break;
    default: throw Error(Error::Kind::Check, std::string("cannot verify tensors of ") + c10::toString(c.scalar_type()));
  }
  h.shape = c.sizes().vec();
  h.data.resize(c.nbytes());
  if (!h.data.empty()) std::memcpy(h.data.data(), c.data_ptr(), h.data.size());
  return h;
}

at::Tensor from_host(const HostTensor& h) {
  at::Tensor t = at::empty(h.shape, at::TensorOptions().dtype(scalar_type(h.dtype)));
  if (!h.data.empty()) std::memcpy(t.data_ptr(), h.data.data(), h.data.size());
  return t;
}

at::Tensor as_tensor(const c10::IValue& o) {
  return o.isTensor() ? o.toTensor()
         : o.isDouble() ? at::scalar_tensor(o.toDouble(), at::kDouble)
         : o.isBool()   ? at::scalar_tensor(o.toBool(), at::kBool)
                        : at::scalar_tensor(o.toInt(), at::kLong);
}

// A tensor (or number) as the ONNX input declared as `spec` takes it.
HostTensor onnx_input(const c10::IValue& v, const ort::InputSpec& spec) {
  at::Tensor t = as_tensor(v);
  if (t.is_complex()) t = at::view_as_real(t.resolve_conj());
  if (spec.dtype != ir::DType::Undefined && !v.isTensor()) t = t.to(scalar_type(spec.dtype));
  return to_host(t);
}

// A random tensor like `t` with `sizes`: floats normal, integers within t's range, bools even.
at::Tensor random_like(const at::Tensor& t, const std::vector<int64_t>& sizes, at::Generator& gen) {
  auto opts = at::TensorOptions().dtype(t.scalar_type());
  if (t.scalar_type() == at::kBool) return at::rand(sizes, gen, at::TensorOptions()) > 0.5;
  if (t.is_floating_point()) return at::randn(sizes, gen, at::TensorOptions()).to(t.scalar_type());
  const int64_t lo = t.numel() ? t.min().item<int64_t>() : 0, hi = t.numel() ? t.max().item<int64_t>() : 1;
  return at::randint(lo, hi + 1, sizes, gen, opts);
}

// numpy's names, as the Python package's tables have them
std::string dtype_text(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "float32";
    case at::kDouble: return "float64";
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kLong: return "int64";
    case at::kInt: return "int32";
    case at::kShort: return "int16";
    case at::kChar: return "int8";
    case at::kByte: return "uint8";
    case at::kBool: return "bool";
    default: return c10::toString(t);
  }
}

std::string shape_text(const std::vector<int64_t>& s) {
  if (s.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "×" : "") + std::to_string(s[i]);
  return out;
}

std::string num(double v) {
  std::ostringstream o;
  o << std::setprecision(3) << v;
  return o.str();
}

VerifyRow compare(size_t k, const at::Tensor& expected_in, const HostTensor& actual_h, const VerifyOptions& opt) {
  VerifyRow row;
  row.output = k;
  at::Tensor e = expected_in.detach().cpu();
  if (e.is_complex()) e = at::view_as_real(e.resolve_conj());
  row.shape = e.sizes().vec();
  row.dtype = dtype_text(e.scalar_type());
  if (actual_h.shape != row.shape) {
    row.ok = false;
    row.why = "shape [" + shape_text(actual_h.shape) + "] in ONNX Runtime, [" + shape_text(row.shape) + "] in PyTorch";
    return row;
  }
  at::Tensor a = from_host(actual_h);
  if (!e.is_floating_point()) {
    const int64_t wrong = at::ne(e.to(at::kLong), a.to(at::kLong)).sum().item<int64_t>();
    if (wrong) {
      row.ok = false;
      row.max_abs = (e.to(at::kDouble) - a.to(at::kDouble)).abs().max().item<double>();
      row.why = "integer values differ (" + std::to_string(wrong) + " elements)";
    }
    return row;
  }
  if (e.numel() == 0) return row;
  at::Tensor e64 = e.to(at::kDouble), a64 = a.to(at::kDouble);
  at::Tensor fin = at::isfinite(e64);
  if (!at::equal(fin, at::isfinite(a64)) ||
      !at::equal(e64.masked_select(fin.logical_not()).nan_to_num(0), a64.masked_select(fin.logical_not()).nan_to_num(0)) ||
      !at::equal(at::isnan(e64), at::isnan(a64))) {
    row.ok = false;
    row.why = "inf/nan positions differ";
    return row;
  }
  if (fin.any().item<bool>()) {
    const double diff = (e64 - a64).masked_select(fin).abs().max().item<double>();
    const double scale = e64.masked_select(fin).abs().max().item<double>();
    row.max_abs = diff;
    row.max_rel = diff / std::max(scale, 1e-30);
    row.bound = opt.atol + opt.rtol * (1.0 + scale);
  }
  if (row.max_abs > row.bound) {
    row.ok = false;
    row.why = "max |onnxruntime - pytorch| = " + num(row.max_abs) + " > " + num(row.bound);
  }
  return row;
}

}  // namespace torch2onnx::verify_detail

namespace torch2onnx {

using namespace verify_detail;

bool VerifyResult::ok() const {
  for (const auto& r : runs)
    for (const auto& row : r.rows)
      if (!row.ok) return false;
  return true;
}

namespace {
std::string cell(const std::string& text) {  // (a | inside a Markdown table's cell is \|)
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}
}  // namespace

std::string VerifyResult::markdown() const {
  std::string out;
  for (const auto& r : runs) {
    if (!r.skipped.empty()) {
      out += r.label + ": skipped: " + r.skipped + "\n";
      continue;
    }
    out += r.label + ":\n| output | shape | dtype | max abs error | max rel error | bound | match |\n"
                     "|---|---|---|---:|---:|---:|---|\n";
    for (const auto& row : r.rows)
      out += "| " + std::to_string(row.output) + " | " + shape_text(row.shape) + " | " + row.dtype + " | " +
             num(row.max_abs) + " | " + num(row.max_rel) + " | " + num(row.bound) + " | " +
             (row.ok ? "yes" : "NO: " + cell(row.why)) + " |\n";
  }
  return out;
}

std::string VerifyResult::failures() const {
  std::string out;
  for (const auto& r : runs)
    for (const auto& row : r.rows)
      if (!row.ok) out += (out.empty() ? "" : "; ") + r.label + ": output " + std::to_string(row.output) + ": " + row.why;
  return out;
}

namespace verify_detail {

// The runs of verify: `all` (a tuple of the args) on the example and along
// the ONNX model's symbolic dims; `torch_side` computes the outputs of the
// args (a tuple's elements); `misfit` says why the torch side cannot take a
// run's inputs ("" when it can): that run is skipped with its reason.
VerifyResult verify_runs(const c10::IValue& all, const TorchSide& torch_side, const std::string& onnx_path,
                         const VerifyOptions& options, const Misfit& misfit) {
  ort::Session session(onnx_path);
  const auto& declared = session.inputs();
  // The graph's inputs: the tensors, or the tensors and numbers (a scripted
  // forward(x, n: int) exported by the CLI takes n as a 0-d input).
  auto fed_count = [&](const std::vector<c10::IValue>& l) {
    size_t n = l.size();
    for (size_t u : options.unused_inputs) n -= u < l.size() ? 1 : 0;
    return n;
  };
  bool numbers = false;
  std::vector<c10::IValue> leaves;
  flatten(all, false, leaves);
  if (fed_count(leaves) != declared.size()) {
    std::vector<c10::IValue> with_numbers;
    flatten(all, true, with_numbers);
    if (fed_count(with_numbers) != declared.size())
      throw Error(Error::Kind::Usage, "the ONNX model has " + std::to_string(declared.size()) +
                                          " inputs, the example args hold " + std::to_string(leaves.size()) +
                                          " tensors: verify needs the model's inputs to be the args' tensors, in order");
    numbers = true;
    leaves = std::move(with_numbers);
  }
  // leaf index -> graph input index (or -1: not read by the graph)
  std::vector<int64_t> slot(leaves.size(), -1);
  for (size_t i = 0, k = 0; i < leaves.size(); ++i)
    if (std::find(options.unused_inputs.begin(), options.unused_inputs.end(), i) == options.unused_inputs.end())
      slot[i] = static_cast<int64_t>(k++);

  // The runs: the example, then each symbolic dim at each of options.sizes.
  std::vector<std::pair<std::string, std::vector<c10::IValue>>> runs{{"example", leaves}};
  std::vector<std::string> symbols;
  for (const auto& spec : declared)
    for (const auto& p : spec.params)
      if (!p.empty() && std::find(symbols.begin(), symbols.end(), p) == symbols.end()) symbols.push_back(p);
  std::sort(symbols.begin(), symbols.end());
  at::Generator gen = at::detail::createCPUGenerator(options.seed);
  for (int64_t size : symbols.empty() ? std::vector<int64_t>{} : options.sizes) {
    std::map<std::string, int64_t> chosen;
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (!leaves[i].isTensor() || slot[i] < 0) continue;
      const auto& spec = declared[static_cast<size_t>(slot[i])];
      const auto sizes = leaves[i].toTensor().sizes();
      for (size_t d = 0; d < spec.params.size() && d < sizes.size(); ++d)
        if (!spec.params[d].empty()) chosen.emplace(spec.params[d], size < 0 ? sizes[d] + 3 : size);
    }
    std::vector<c10::IValue> fresh;
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (!leaves[i].isTensor() || slot[i] < 0) {  // (numbers, and what the graph does not read, as in the example)
        fresh.push_back(leaves[i]);
        continue;
      }
      const auto& spec = declared[static_cast<size_t>(slot[i])];
      const at::Tensor& t = leaves[i].toTensor();
      std::vector<int64_t> sizes = t.sizes().vec();
      for (size_t d = 0; d < spec.params.size() && d < sizes.size(); ++d)
        if (!spec.params[d].empty()) sizes[d] = chosen.at(spec.params[d]);
      fresh.emplace_back(random_like(t, sizes, gen));
    }
    std::string label;
    for (const auto& s : symbols) label += (label.empty() ? "" : ", ") + s + "=" + std::to_string(chosen[s]);
    runs.emplace_back(label, std::move(fresh));
  }

  VerifyResult result;
  for (const auto& [label, inputs] : runs) {
    auto it = inputs.cbegin();
    const c10::IValue rebuilt = replace(all, numbers, it);
    if (std::string why = misfit ? misfit(rebuilt.toTupleRef().elements().vec()) : ""; !why.empty()) {
      result.runs.push_back(VerifyRun{label, {}, why});
      continue;
    }
    const c10::IValue expected = torch_side(rebuilt.toTupleRef().elements().vec());
    std::vector<HostTensor> onnx_inputs;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (slot[i] >= 0) onnx_inputs.push_back(onnx_input(inputs[i], declared[static_cast<size_t>(slot[i])]));
    const std::vector<HostTensor> actual = session.run(onnx_inputs);
    std::vector<c10::IValue> outs;
    flatten(expected, true, outs);
    VerifyRun run{label, {}, ""};
    if (outs.size() != actual.size())
      throw Error(Error::Kind::Check, "ONNX Runtime gave " + std::to_string(actual.size()) + " outputs, PyTorch " +
                                          std::to_string(outs.size()));
    for (size_t k = 0; k < outs.size(); ++k) run.rows.push_back(compare(k, as_tensor(outs[k]), actual[k], options));
    result.runs.push_back(std::move(run));
  }
  return result;
}

}  // namespace verify_detail

VerifyResult verify(const torch::jit::Module& module_in, const std::vector<c10::IValue>& args,
                    const std::string& onnx_path, const VerifyOptions& options) {
  torch::jit::Module module = module_in;  // (a handle: forward() is not const)
  module.eval();
  auto forward = [&module](const std::vector<c10::IValue>& a) {
    at::NoGradGuard no_grad;
    return module.forward(a);
  };
  return verify_runs(c10::ivalue::Tuple::create(args), forward, onnx_path, options, {});
}

VerifyResult verify_program(const std::string& program_path, const std::string& onnx_path,
                            const VerifyOptions& options, const std::vector<c10::IValue>& inputs) {
  const ProgramRunner runner(program_path);
  const std::vector<c10::IValue> args = verify_detail::program_inputs(runner.program(), inputs);
  auto run = [&runner](const std::vector<c10::IValue>& a) {
    return c10::IValue(c10::ivalue::Tuple::create(runner.run(a)));
  };
  auto misfit = [&runner](const std::vector<c10::IValue>& a) { return runner.misfit(a); };
  return verify_runs(c10::ivalue::Tuple::create(args), run, onnx_path, options, misfit);
}

}  // namespace torch2onnx
