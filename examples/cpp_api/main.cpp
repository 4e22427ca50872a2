// Exports a TorchScript archive to ONNX with the torch2onnx C++ API.
//
//   export_example MODEL.pt OUT.onnx N,C,H,W
#include <torch2onnx/torch2onnx.h>

#include <ATen/ATen.h>

#include <iostream>
#include <sstream>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: export_example MODEL.pt OUT.onnx N,C,H,W\n";
    return 2;
  }
  std::vector<int64_t> shape;
  std::stringstream dims(argv[3]);
  for (std::string d; std::getline(dims, d, ',');) shape.push_back(std::stoll(d));

  try {
    torch::jit::Module module = torch2onnx::load_archive(argv[1]);
    std::vector<c10::IValue> args{at::randn(shape)};

    torch2onnx::ExportOptions options;
    options.opset_version = 13;
    options.input_names = {"image"};
    options.output_names = {"logits"};

    // To a file...
    torch2onnx::export_model(module, args, argv[2], options);
    // ... or to an in-memory ModelProto.
    onnx::ModelProto proto = torch2onnx::export_to_model_proto(module, args, options);
    std::cout << "exported " << argv[2] << ": " << proto.graph().node_size() << " nodes, "
              << proto.graph().initializer_size() << " initializers, opset "
              << proto.opset_import(0).version() << "\n";
  } catch (const torch2onnx::Error& e) {
    std::cerr << "export failed: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
