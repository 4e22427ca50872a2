#include "convert/dispatch.h"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "torch2onnx/options.h"

namespace torch2onnx::convert {
bool is_in_place(const std::string& kind) {
  return kind.size() > 1 && kind.back() == '_' && kind[kind.size() - 2] != '_';
}

bool is_complex(ir::DType t) { return t == ir::DType::Complex64 || t == ir::DType::Complex128; }

namespace {

bool holds_complex(const Arg& a) {
  if (a.kind == Arg::Kind::Tensor) return is_complex(a.dtype);
  if (a.is_list())
    for (const Arg& e : a.elements)
      if (holds_complex(e)) return true;
  return false;
}

// Whether the node computes on complex tensors: a complex tensor argument
// (or list element) or output, as the example run saw them.
bool on_complex(const SymbolicContext& ctx) {
  for (size_t i = 0; i < ctx.num_args(); ++i)
    if (holds_complex(ctx.arg(i))) return true;
  for (size_t k = 0; k < ctx.num_outputs(); ++k)
    if (is_complex(ctx.out_dtype(k))) return true;
  return false;
}

template <typename Find>
const SymbolicFn* find_either(const std::string& kind, Find find) {
  if (const SymbolicFn* fn = find(kind)) return fn;
  return is_in_place(kind) ? find(kind.substr(0, kind.size() - 1)) : nullptr;
}

}  // namespace

// Complex tensors are real tensors with a trailing (real, imag) axis in the
// ONNX graph (see Registry::add_complex), so which table converts a node
// depends on its arguments' dtypes, which the frontends know only after
// resolving. resolve() therefore returns a small dispatching function (one
// per registry, operator and opset, kept for the process's life so the
// pointer stays valid) that, when run, picks the complex declaration for a
// node on complex tensors, failing with a clear message when there is none,
// and the real declaration otherwise. Both frontends go through it.
const SymbolicFn* resolve(const Registry& registry, const std::string& kind, int opset) {
  const SymbolicFn* real = find_either(kind, [&](const std::string& k) { return registry.find(k, opset); });
  const SymbolicFn* cx = find_either(kind, [&](const std::string& k) { return registry.find_complex(k, opset); });
  if (!real && !cx) return nullptr;
  static std::mutex mutex;
  static std::map<std::tuple<const Registry*, std::string, int>, std::unique_ptr<SymbolicFn>> dispatchers;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = dispatchers[std::make_tuple(&registry, kind, opset)];
  if (!slot) {
    const Registry* reg = &registry;  // (looked up again when run: declarations may change between exports)
    slot = std::make_unique<SymbolicFn>([reg, kind, opset](SymbolicContext& ctx) {
      const bool complex = on_complex(ctx);
      const SymbolicFn* fn =
          complex ? find_either(kind, [&](const std::string& k) { return reg->find_complex(k, opset); })
                  : find_either(kind, [&](const std::string& k) { return reg->find(k, opset); });
      if (!fn && complex)
        ctx.fail(kind + " on complex tensors is not supported (at opset " + std::to_string(opset) + ")");
      if (!fn) ctx.fail(kind + " is converted for complex tensors only");
      (*fn)(ctx);
    });
  }
  return slot.get();
}

bool has_complex_declaration(const Registry& registry, const std::string& kind, int opset) {
  return find_either(kind, [&](const std::string& k) { return registry.find_complex(k, opset); }) != nullptr;
}

std::optional<int> first_opset(const Registry& registry, const std::string& kind) {
  if (auto o = registry.first_opset(kind)) return o;
  return is_in_place(kind) ? registry.first_opset(kind.substr(0, kind.size() - 1)) : std::nullopt;
}

void run_symbolic(const SymbolicFn& fn, SymbolicContext& ctx, const std::string& kind, const std::string& where) {
  try {
    fn(ctx);
  } catch (const SymbolicError& e) {
    throw Error(Error::Kind::Conversion, "cannot convert " + kind + " in " + where + ": " + e.what());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(Error::Kind::Internal, "internal error converting " + kind + " in " + where + ": " + e.what());
  }
}

void check_dtype(const std::string& kind, const std::string& where, ir::Value* v, const OutputInfo& info) {
  if (info.kind != Arg::Kind::Tensor || info.dtype == ir::DType::Undefined) return;
  // A complex result is its (real, imag) pair tensor of the matching real dtype.
  const ir::DType want = info.dtype == ir::DType::Complex64    ? ir::DType::Float
                         : info.dtype == ir::DType::Complex128 ? ir::DType::Double
                                                               : info.dtype;
  if (v->dtype() == ir::DType::Undefined) {
    v->type().dtype = want;
    return;
  }
  // (an ATen / passthrough fallback node's output is the complex tensor itself)
  if (v->dtype() != want && v->dtype() != info.dtype)
    throw Error(Error::Kind::Internal, "converting " + kind + " in " + where + " produced " +
                                           ir::dtype_name(v->dtype()) + " where PyTorch computes " +
                                           ir::dtype_name(want) + " (a bug in its symbolic)");
}

}  // namespace torch2onnx::convert
