#include "torch_passes/origin.h"

#include <sstream>

namespace torch2onnx::torch_side {
namespace {

std::string format_flc(const torch::jit::SourceRange& r) {
  auto flc = r.file_line_col();
  if (!flc) return {};
  return std::get<0>(*flc) + ":" + std::to_string(std::get<1>(*flc)) + ":" + std::to_string(std::get<2>(*flc));
}

// A traced node's source range text is the Python stack at trace time:
// "file.py(50): forward\n/usr/lib/.../module.py(1182): _slow_forward\n...".
// The user's line is the first frame outside torch itself.
std::string first_user_frame(const std::string& stack) {
  std::istringstream in(stack);
  std::string line;
  while (std::getline(in, line)) {
    auto open = line.rfind('(');
    auto close = line.find("):", open == std::string::npos ? 0 : open);
    if (open == std::string::npos || close == std::string::npos) continue;
    std::string file = line.substr(0, open);
    if (file.find("/torch/nn/") != std::string::npos || file.find("/torch/_") != std::string::npos ||
        file.find("/torch/jit/") != std::string::npos || file.find("/torch/functional.py") != std::string::npos ||
        file.find("/torch/autograd/") != std::string::npos || file.find("/torch/_tensor.py") != std::string::npos)
      continue;
    return file + ":" + line.substr(open + 1, close - open - 1);
  }
  return {};
}

}  // namespace

std::string plain_class_name(const std::string& qualified) {
  auto dot = qualified.rfind('.');
  return dot == std::string::npos ? qualified : qualified.substr(dot + 1);
}

std::string describe_origin(const ir::Origin& o) {
  std::string where = o.module_path.empty() ? std::string("<top module>") : o.module_path;
  std::string line = !o.user_source.empty() ? o.user_source : o.source;
  return line.empty() ? where : where + " (" + line + ")";
}

std::shared_ptr<const ir::Origin> OriginTable::of(const torch::jit::Node* node) {
  std::string path;
  std::string trace = root_class_;
  if (auto cs = node->callstack()) {
    for (const auto& entry : (*cs)->vec()) {
      const auto& mi = std::get<2>(entry);
      if (!mi) continue;
      const std::string& inst = mi->instance_name();
      std::string cls = mi->class_type() && mi->class_type()->name()
                            ? plain_class_name(mi->class_type()->name()->qualifiedName())
                            : std::string("?");
      if (!path.empty()) path += ".";
      path += inst;
      trace += "/" + cls + "[" + inst + "]";
    }
  }
  const torch::jit::SourceRange& range = node->sourceRange();
  auto generated = range.findSourceRangeThatGenerated();
  const torch::jit::SourceRange& orig = generated ? *generated : range;
  std::string source = format_flc(orig);
  std::string key = path + "\n" + source + "\n" + node->kind().toQualString();
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;

  auto o = std::make_shared<ir::Origin>();
  o->torch_kind = node->kind().toQualString();
  o->module_path = path;
  o->module_trace = trace;
  o->source = source;
  if (generated) {
    std::string text = generated->text().str();
    o->user_source = first_user_frame(text);
    o->source_stack = text;
  }
  cache_.emplace(key, o);
  return o;
}

}  // namespace torch2onnx::torch_side
