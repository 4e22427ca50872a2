#include "convert/pt2/converter.h"

#include "symbolic/helpers.h"

namespace torch2onnx::convert::pt2 {

const std::map<std::string, std::string>& size_operators() {
  static const std::map<std::string, std::string> ops{
      {"_operator.add", "Add"},       {"_operator.sub", "Sub"},         {"_operator.mul", "Mul"},
      {"_operator.eq", "Equal"},      {"_operator.lt", "Less"},         {"_operator.gt", "Greater"},
      {"_operator.le", "LessOrEqual"}, {"_operator.ge", "GreaterOrEqual"}, {"_operator.floordiv", ""},
      {"_operator.mod", ""},          {"_operator.truediv", ""},        {"_operator.neg", ""},
      {"_operator.not_", ""},         {"_operator.getitem", ""},       {"_operator.ne", ""},
      {"_operator.pos", ""},          {"_operator.and_", ""},          {"_operator.or_", ""},
      {"_operator.pow", ""},          {"_operator.lshift", ""},        {"_operator.rshift", ""},
      {"math.trunc", ""},             {"torch.sym_not", ""},           {"torch.sym_int", ""},
      {"torch.sym_float", ""},        {"torch.sym_ite", ""},           {"torch.sym_max", ""},
      {"torch.sym_min", ""},          {"torch.sym_sqrt", ""}};
  // (the operations on sizes torch.export serializes: _SYM_OPS of torch/_export/serde/serialize.py)
  return ops;
}

void ProgramConverter::convert_structural(const Node& n) {
  if (is_assert(n.op)) {
    ++dropped_asserts_;
    return;
  }
  std::vector<Arg> args;
  for (const NamedArgument& na : n.inputs) args.push_back(make_arg(na, n));
  if (n.target == "_operator.getitem") {
    const Arg& list = args.at(0);
    if (list.kind != Arg::Kind::List || !args.at(1).constant) fail(&n, "getitem of something other than a list");
    int64_t i = args[1].i;
    if (i < 0) i += static_cast<int64_t>(list.elements.size());
    if (i < 0 || i >= static_cast<int64_t>(list.elements.size())) fail(&n, "index out of range");
    if (n.outputs.at(0).kind == "as_tensor") scope_->tensors[n.outputs[0].names.at(0)] = list.elements[i].value;
    return;
  }
  const std::string out = n.outputs.empty() || n.outputs[0].names.empty() ? "" : n.outputs[0].names[0];
  if (out.empty()) fail(&n, "its result has no name");
  const std::string target = n.op.empty() ? n.target : n.op;
  std::vector<OutputInfo> none;
  SymbolicContext ctx(target, std::move(args), none, graph_, options_.opset_version, this);
  ir::Value* v = nullptr;
  ir::DType dt = ir::DType::Int64;
  if (n.op == "aten::sym_size") {
    v = helpers::dim_size(ctx, ctx.in(0), helpers::normalize_dim(ctx, ctx.i(1), ctx.rank(0)));
  } else if (n.op == "aten::sym_numel") {
    v = ctx.op("Size", {ctx.in(0)});
  } else {
    const std::string& t = n.target;
    auto it = size_operators().find(t);
    const bool binary = it != size_operators().end() && !it->second.empty();
    const bool comparison = binary && (it->second == "Equal" || it->second.find("Less") == 0 ||
                                       it->second.find("Greater") == 0);
    const bool floating = ctx.arg(0).kind == Arg::Kind::Float || (ctx.num_args() > 1 && ctx.arg(1).kind == Arg::Kind::Float);
    const ir::DType work = floating || t == "_operator.truediv" ? ir::DType::Double : ir::DType::Int64;
    if (binary) {
      const std::string op = comparison && options_.opset_version < 12 && it->second.find("OrEqual") != std::string::npos
                                 ? "" : it->second;
      if (op.empty()) fail(&n, "needs opset 12 (LessOrEqual / GreaterOrEqual)");
      v = ctx.op(op, {ctx.in_as(0, work), ctx.in_as(1, work)});
      dt = comparison ? ir::DType::Bool : work;
    } else if (t == "_operator.floordiv" || t == "_operator.mod") {
      // floor(a / b) on doubles (exact for sizes), then a - b * q for mod
      ir::Value* a = ctx.in_as(0, ir::DType::Double);
      ir::Value* b = ctx.in_as(1, ir::DType::Double);
      ir::Value* q = ctx.op("Floor", {ctx.op("Div", {a, b})});
      if (t == "_operator.mod") q = ctx.op("Sub", {a, ctx.op("Mul", {b, q})});
      v = ctx.cast(q, work);
      v->type().dtype = work;
      dt = work;
    } else if (t == "_operator.truediv") {
      v = ctx.op("Div", {ctx.in_as(0, ir::DType::Double), ctx.in_as(1, ir::DType::Double)});
      dt = ir::DType::Double;
    } else if (t == "_operator.neg") {
      v = ctx.op("Neg", {ctx.in_as(0, work)});
      dt = work;
    } else if (t == "_operator.not_" || t == "torch.sym_not") {
      v = ctx.op("Not", {ctx.in_as(0, ir::DType::Bool)});
      dt = ir::DType::Bool;
    } else if (t == "_operator.ne") {
      v = ctx.op("Not", {ctx.op("Equal", {ctx.in_as(0, work), ctx.in_as(1, work)})});
      dt = ir::DType::Bool;
    } else if (t == "_operator.pos") {
      v = ctx.op("Identity", {ctx.in_as(0, work)});
      dt = work;
    } else if (t == "_operator.and_" || t == "_operator.or_") {
      const bool bools = ctx.arg(0).kind == Arg::Kind::Bool || ctx.dtype(0) == ir::DType::Bool;
      if (bools) {
        v = ctx.op(t == "_operator.and_" ? "And" : "Or", {ctx.in_as(0, ir::DType::Bool), ctx.in_as(1, ir::DType::Bool)});
        dt = ir::DType::Bool;
      } else {
        if (options_.opset_version < 18) fail(&n, "a bitwise and / or of sizes needs opset 18 (BitwiseAnd / BitwiseOr)");
        v = ctx.op(t == "_operator.and_" ? "BitwiseAnd" : "BitwiseOr",
                   {ctx.in_as(0, ir::DType::Int64), ctx.in_as(1, ir::DType::Int64)});
        dt = ir::DType::Int64;
      }
    } else if (t == "_operator.pow") {
      // (Python: an int to a non-negative int power stays an int)
      const ir::DType p = floating || options_.opset_version < 12 ? ir::DType::Double : ir::DType::Int64;
      v = ctx.op("Pow", {ctx.in_as(0, p), ctx.in_as(1, p)});
      if (p != work) v = ctx.cast(v, work);
      dt = work;
    } else if (t == "_operator.lshift" || t == "_operator.rshift") {
      // a * 2**b, floor(a / 2**b) (sizes: BitShift takes unsigned integers only)
      ir::Value* scale = ctx.op("Pow", {ctx.const_scalar(ir::DType::Double, 2.0), ctx.in_as(1, ir::DType::Double)});
      ir::Value* a = ctx.in_as(0, ir::DType::Double);
      v = t == "_operator.lshift" ? ctx.op("Mul", {a, scale}) : ctx.op("Floor", {ctx.op("Div", {a, scale})});
      v = ctx.cast(v, ir::DType::Int64);
      dt = ir::DType::Int64;
    } else if (t == "math.trunc" || t == "torch.sym_int") {
      v = ctx.cast(ctx.in_as(0, ir::DType::Double), ir::DType::Int64);  // (Cast truncates toward zero)
      dt = ir::DType::Int64;
    } else if (t == "torch.sym_float") {
      v = ctx.op("Identity", {ctx.in_as(0, ir::DType::Double)});
      dt = ir::DType::Double;
    } else if (t == "torch.sym_sqrt") {
      v = ctx.op("Sqrt", {ctx.in_as(0, ir::DType::Double)});
      dt = ir::DType::Double;
    } else if (t == "torch.sym_max" || t == "torch.sym_min") {
      // (Max / Min take int64 from opset 12)
      const ir::DType m = options_.opset_version < 12 ? ir::DType::Double : work;
      v = ctx.op(t == "torch.sym_max" ? "Max" : "Min", {ctx.in_as(0, m), ctx.in_as(1, m)});
      if (m != work) v = ctx.cast(v, work);
      dt = work;
    } else if (t == "torch.sym_ite") {
      const bool floats = ctx.arg(1).kind == Arg::Kind::Float || ctx.arg(2).kind == Arg::Kind::Float;
      const bool bools = ctx.arg(1).kind == Arg::Kind::Bool && ctx.arg(2).kind == Arg::Kind::Bool;
      dt = floats ? ir::DType::Double : bools ? ir::DType::Bool : ir::DType::Int64;
      v = ctx.op("Where", {ctx.in_as(0, ir::DType::Bool), ctx.in_as(1, dt), ctx.in_as(2, dt)});
    } else {
      fail(&n, "this operation on sizes is not converted yet");
    }
  }
  v->type().dtype = dt;
  if (!v->type().has_shape) v->set_type(ir::ValueType::tensor(dt, {}));
  std::optional<double> hint;
  if (auto s = scope_->graph->sym_int_values.find(out); s != scope_->graph->sym_int_values.end()) {
    if (s->second.value) hint = static_cast<double>(*s->second.value);
    else if (s->second.hint) hint = static_cast<double>(*s->second.hint);
  }
  scope_->syms[out] = Sym{v, hint, dt};
}

}  // namespace torch2onnx::convert::pt2
