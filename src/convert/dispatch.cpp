#include "convert/dispatch.h"

#include "torch2onnx/options.h"

namespace torch2onnx::convert {
bool is_in_place(const std::string& kind) {
  return kind.size() > 1 && kind.back() == '_' && kind[kind.size() - 2] != '_';
}

const SymbolicFn* resolve(const Registry& registry, const std::string& kind, int opset) {
  if (const SymbolicFn* fn = registry.find(kind, opset)) return fn;
  return is_in_place(kind) ? registry.find(kind.substr(0, kind.size() - 1), opset) : nullptr;
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
  if (v->dtype() == ir::DType::Undefined) {
    v->type().dtype = info.dtype;
    return;
  }
  if (v->dtype() != info.dtype)
    throw Error(Error::Kind::Internal, "converting " + kind + " in " + where + " produced " +
                                           ir::dtype_name(v->dtype()) + " where PyTorch computes " +
                                           ir::dtype_name(info.dtype) + " (a bug in its symbolic)");
}

}  // namespace torch2onnx::convert
