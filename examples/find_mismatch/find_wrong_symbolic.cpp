// find_mismatch in C++: a TorchScript model of ten blocks (Linear +
// activation), block 7's activation a tanh; a deliberately wrong symbolic for
// aten::tanh (a Sigmoid) is registered, and torch2onnx::find_mismatch must
// bisect the graph down to that one operator and name its module. Given the
// same model as a torch.export program, torch2onnx::find_mismatch_program
// must find it there too (the program run by torch2onnx's own runner).
//
//   find_wrong_symbolic MODEL.pt ARGS.pt [PROGRAM.pt2]
#include <torch2onnx/find_mismatch.h>
#include <torch2onnx/symbolic/context.h>
#include <torch2onnx/torch2onnx.h>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::cerr << "usage: find_wrong_symbolic MODEL.pt ARGS.pt [PROGRAM.pt2]\n";
    return 2;
  }
  try {
    const torch::jit::Module model = torch2onnx::load_archive(argv[1]);
    const std::vector<c10::IValue> args = torch2onnx::load_example_args(argv[2]);
    torch2onnx::ExportOptions options;
    options.opset_version = 17;
    const std::string program = argc == 4 ? argv[3] : "";
    auto find = [&] {
      return program.empty() ? torch2onnx::find_mismatch(model, args, options)
                             : torch2onnx::find_mismatch_program(program, options);
    };
    // Before the wrong symbolic: nothing mismatches.
    bool clean = !torch2onnx::find_mismatch(model, args, options).root.has_mismatch();
    if (!program.empty()) clean = clean && !find().root.has_mismatch();
    torch2onnx::register_symbolic("aten::tanh", 9, [](torch2onnx::SymbolicContext& ctx) {
      ctx.out(ctx.op("Sigmoid", {ctx.in(0)}));  // wrong on purpose
    });
    bool named = true;
    for (const std::string& what : {std::string("TorchScript"), program}) {
      if (what.empty()) continue;
      const torch2onnx::MismatchTree tree = what == "TorchScript" ? torch2onnx::find_mismatch(model, args, options) : find();
      std::cout << what << ":\n" << tree.tree_text() << tree.mismatch_text();
      const auto leaves = tree.mismatch_leaves();
      named = named && leaves.size() == 1 && leaves[0]->node_kinds == std::vector<std::string>{"aten::tanh"} &&
              leaves[0]->label.find("blocks.7.act") != std::string::npos;
    }
    std::cout << "clean before: " << (clean ? "yes" : "no") << "\n"
              << (clean && named ? "found the wrong operator\n" : "did NOT find the wrong operator\n");
    return clean && named ? 0 : 1;
  } catch (const torch2onnx::Error& e) {
    std::cerr << "find_wrong_symbolic: " << e.what() << "\n";
    return 1;
  }
}
