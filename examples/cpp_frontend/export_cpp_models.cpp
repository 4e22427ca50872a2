// Three models written with LibTorch's C++ frontend (torch::nn), exported to
// ONNX with torch2onnx::export_cpp_module:
//
//   export_cpp_models OUT_DIR
//
// writes OUT_DIR/{cnn,lstm_lm,encoder,function}.onnx and, for each, NAME.pt: the
// example inputs and LibTorch's outputs on them (torch.load reads it), for
// comparison with ONNX Runtime (tests/cpp_frontend).
#include <torch/torch.h>
#include <torch2onnx/cpp_frontend.h>
#include <torch2onnx/verify.h>

#include <fstream>
#include <iostream>
#include <string>

namespace nn = torch::nn;

// A small CNN: Conv/BatchNorm/ReLU twice, pooled, then a Linear classifier.
struct CnnImpl : nn::Module {
  nn::Conv2d conv1{nn::Conv2dOptions(3, 8, 3).padding(1)};
  nn::BatchNorm2d bn1{8};
  nn::Conv2d conv2{nn::Conv2dOptions(8, 16, 3).padding(1)};
  nn::BatchNorm2d bn2{16};
  nn::Linear fc{16, 10};

  CnnImpl() {
    register_module("conv1", conv1);
    register_module("bn1", bn1);
    register_module("conv2", conv2);
    register_module("bn2", bn2);
    register_module("fc", fc);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(bn1(conv1(x))), 2);
    x = torch::relu(bn2(conv2(x)));
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc(x);
  }
};
TORCH_MODULE(Cnn);

// A word-level language model: Embedding, a 2-layer LSTM, a Linear decoder;
// returns the logits and the final (h, c).
struct LstmLmImpl : nn::Module {
  nn::Embedding embedding{100, 32};
  nn::LSTM lstm{nn::LSTMOptions(32, 48).num_layers(2)};
  nn::Linear decoder{48, 100};

  LstmLmImpl() {
    register_module("embedding", embedding);
    register_module("lstm", lstm);
    register_module("decoder", decoder);
  }
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> forward(torch::Tensor tokens) {
    auto [out, state] = lstm(embedding(tokens));
    return {decoder(out), std::get<0>(state), std::get<1>(state)};
  }
};
TORCH_MODULE(LstmLm);

// A transformer encoder (3 layers, sequence first as torch::nn's) with a
// Linear head.
struct EncoderImpl : nn::Module {
  nn::TransformerEncoder encoder{
      nn::TransformerEncoderOptions(nn::TransformerEncoderLayerOptions(64, 4).dim_feedforward(128).dropout(0.0), 3)};
  nn::Linear head{64, 8};

  EncoderImpl() {
    register_module("encoder", encoder);
    register_module("head", head);
  }
  torch::Tensor forward(torch::Tensor x) { return head(encoder(x)); }
};
TORCH_MODULE(Encoder);

// Random statistics for the batch norms (fresh ones are 0 and 1: the folding
// into the convolutions would be untested).
void randomize_batch_norm(nn::BatchNorm2d& bn) {
  torch::NoGradGuard no_grad;
  bn->running_mean.uniform_(-0.5, 0.5);
  bn->running_var.uniform_(0.5, 1.5);
  bn->weight.uniform_(0.5, 1.5);
  bn->bias.uniform_(-0.5, 0.5);
}

void save(const std::string& path, const std::vector<c10::IValue>& inputs, const c10::IValue& outputs) {
  auto data = torch::pickle_save(c10::ivalue::Tuple::create({c10::ivalue::Tuple::create(inputs), outputs}));
  std::ofstream out(path, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// Exports `module` (forward given as `run`) and saves inputs and outputs.
void export_one(const std::string& dir, const std::string& name, nn::Module& module, const torch2onnx::CppForward& run,
                const std::vector<c10::IValue>& inputs) {
  module.eval();
  c10::IValue expected;
  {
    torch::NoGradGuard no_grad;
    expected = run(inputs);
  }
  torch2onnx::ExportOptions options;
  options.opset_version = 17;
  torch2onnx::export_cpp_module(module, run, inputs, dir + "/" + name + ".onnx", options);
  save(dir + "/" + name + ".pt", inputs, expected);
  std::cout << "exported " << name << " to " << dir << "/" << name << ".onnx\n";
  // LibTorch against ONNX Runtime, in C++ (torch2onnx/verify.h)
  const torch2onnx::VerifyResult check =
      torch2onnx::verify(torch2onnx::trace_cpp_module(module, run, inputs), inputs, dir + "/" + name + ".onnx");
  std::cout << check.markdown();
  if (!check.ok()) throw torch2onnx::Error(torch2onnx::Error::Kind::Check, name + ": " + check.failures());
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: export_cpp_models OUT_DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  try {
    torch::manual_seed(0);
    Cnn cnn;
    randomize_batch_norm(cnn->bn1);
    randomize_batch_norm(cnn->bn2);
    export_one(dir, "cnn", *cnn, [&](const std::vector<c10::IValue>& in) { return c10::IValue(cnn->forward(in[0].toTensor())); },
               {torch::randn({2, 3, 16, 16})});

    LstmLm lm;
    export_one(dir, "lstm_lm", *lm,
               [&](const std::vector<c10::IValue>& in) {
                 auto [logits, h, c] = lm->forward(in[0].toTensor());
                 return c10::IValue(c10::ivalue::Tuple::create({logits, h, c}));
               },
               {torch::randint(0, 100, {7, 3}, torch::kLong)});

    Encoder enc;
    export_one(dir, "encoder", *enc,
               [&](const std::vector<c10::IValue>& in) { return c10::IValue(enc->forward(in[0].toTensor())); },
               {torch::randn({10, 2, 64})});

    // Any callable on tensors: the captured tensor becomes a constant.
    torch::Tensor scale = torch::rand({5});
    torch2onnx::CppForward fn = [&](const std::vector<c10::IValue>& in) {
      return c10::IValue(torch::sigmoid(in[0].toTensor()) * scale + in[1].toTensor().sum(0));
    };
    std::vector<c10::IValue> fn_inputs = {torch::randn({4, 5}), torch::randn({3, 5})};
    torch2onnx::export_cpp_function(fn, fn_inputs, dir + "/function.onnx");
    save(dir + "/function.pt", fn_inputs, fn(fn_inputs));
    std::cout << "exported function to " << dir << "/function.onnx\n";
  } catch (const torch2onnx::Error& e) {
    std::cerr << "export_cpp_models: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
