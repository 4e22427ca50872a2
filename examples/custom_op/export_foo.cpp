// Exports a TorchScript model that calls custom_ops::foo_forward, with a C++
// symbolic registered through torch2onnx's public API:
//
//   export_foo MODEL.pt ARGS.pt OUT.onnx custom-domain   # a custom_domain::Foo node
//   export_foo MODEL.pt ARGS.pt OUT.onnx onnx            # standard ONNX ops (runs anywhere)
#include <torch2onnx/symbolic/context.h>
#include <torch2onnx/torch2onnx.h>

#include <iostream>
#include <string>

namespace ir = torch2onnx::ir;
using torch2onnx::SymbolicContext;

namespace {

// foo_forward(input1, input2, float attr1, int attr2) as one node of the
// custom domain, with the two numbers as attributes. ONNX knows nothing of
// custom_domain::Foo, so the output gets the type PyTorch computed.
void foo_as_custom_node(SymbolicContext& ctx) {
  ir::Node* n = ctx.node("Foo", {ctx.in(0), ctx.in(1)}, 1, {{"attr1", ctx.f(2)}, {"attr2", ctx.i(3)}},
                         "custom_domain");
  const auto& info = ctx.out_info();
  n->output()->set_type(ir::ValueType::tensor(info.dtype, info.sizes));
  ctx.out(n->output());
}

// The same computation in standard ONNX: input1 * attr1 + input2 * attr2.
void foo_as_onnx_ops(SymbolicContext& ctx) {
  const ir::DType t = ctx.out_dtype();
  ir::Value* a = ctx.op("Mul", {ctx.in_as(0, t), ctx.const_scalar(t, ctx.f(2))});
  ir::Value* b = ctx.op("Mul", {ctx.in_as(1, t), ctx.const_scalar(t, static_cast<double>(ctx.i(3)))});
  ctx.out(ctx.op("Add", {a, b}));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: export_foo MODEL.pt ARGS.pt OUT.onnx custom-domain|onnx\n";
    return 2;
  }
  const std::string mode = argv[4];
  try {
    torch2onnx::ExportOptions options;
    if (mode == "custom-domain") {
      torch2onnx::register_symbolic("custom_ops::foo_forward", 9, foo_as_custom_node);
      options.custom_opsets["custom_domain"] = 2;
    } else if (mode == "onnx") {
      torch2onnx::register_symbolic("custom_ops::foo_forward", 9, foo_as_onnx_ops);
    } else {
      std::cerr << "export_foo: unknown mapping '" << mode << "'\n";
      return 2;
    }
    torch::jit::Module model = torch2onnx::load_archive(argv[1]);
    torch2onnx::export_model(model, torch2onnx::load_example_args(argv[2]), argv[3], options);
    torch2onnx::unregister_symbolic("custom_ops::foo_forward", 9);
  } catch (const torch2onnx::Error& e) {
    std::cerr << "export_foo: " << e.what() << "\n";
    return 1;
  }
  std::cout << "wrote " << argv[3] << "\n";
  return 0;
}
