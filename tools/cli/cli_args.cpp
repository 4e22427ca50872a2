#include "cli_args.h"

#include <cctype>
#include <cstdlib>
#include <map>
#include <utility>

#include "torch2onnx/symbolic/registry.h"

namespace torch2onnx::cli {
namespace {

[[noreturn]] void usage_error(const std::string& msg) {
  throw Error(Error::Kind::Usage, msg + "\nRun 'torch2onnx --help' for usage.");
}

std::vector<std::string> split_names(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    size_t next = s.find(',', pos);
    std::string part = s.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    if (part.empty()) usage_error("empty name in list '" + s + "'");
    out.push_back(part);
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return out;
}

// A minimal JSON reader for --dynamic-axes: an object whose values are
// arrays of ints ([0, 1]) or objects from axis to name ({"0": "batch"}).
class DynamicAxesParser {
 public:
  explicit DynamicAxesParser(const std::string& text) : s_(text) {}

  std::map<std::string, std::vector<DynamicAxis>> parse() {
    std::map<std::string, std::vector<DynamicAxis>> out;
    expect('{');
    if (peek() == '}') {
      ++i_;
      finish();
      return out;
    }
    while (true) {
      std::string name = string();
      expect(':');
      std::vector<DynamicAxis>& axes = out[name];
      if (peek() == '[') {
        ++i_;
        if (peek() != ']')
          while (true) {
            axes.push_back(DynamicAxis{integer(), ""});
            if (peek() == ',') { ++i_; continue; }
            break;
          }
        expect(']');
      } else {
        expect('{');
        if (peek() != '}')
          while (true) {
            std::string key = string();
            expect(':');
            std::string dim = string();
            size_t used = 0;
            int64_t axis = 0;
            try {
              axis = std::stoll(key, &used);
            } catch (const std::exception&) {
              used = 0;
            }
            if (used != key.size() || key.empty()) fail("axis '" + key + "' of '" + name + "' is not an integer");
            axes.push_back(DynamicAxis{axis, dim});
            if (peek() == ',') { ++i_; continue; }
            break;
          }
        expect('}');
      }
      if (peek() == ',') { ++i_; continue; }
      break;
    }
    expect('}');
    finish();
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    usage_error("bad --dynamic-axes: " + why +
                " (expected JSON like '{\"x\": [0], \"y\": {\"0\": \"batch\"}}')");
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  char peek() {
    skip();
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "' at position " + std::to_string(i_));
    ++i_;
  }
  void finish() {
    if (peek() != '\0') fail("unexpected text at position " + std::to_string(i_));
  }
  std::string string() {
    expect('"');
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      out.push_back(s_[i_++]);
    }
    if (i_ >= s_.size()) fail("unterminated string");
    ++i_;
    return out;
  }
  int64_t integer() {
    skip();
    size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    if (i_ == start || (i_ == start + 1 && s_[start] == '-')) fail("expected an axis number at position " + std::to_string(start));
    if (i_ - start > 18) fail("axis number too large");
    return std::stoll(s_.substr(start, i_ - start));
  }

  const std::string& s_;
  size_t i_ = 0;
};

int parse_opset(const std::string& v) {
  if (v.empty() || v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos)
    usage_error("--opset needs a number, got '" + v + "'");
  return std::atoi(v.c_str());
}

}  // namespace

namespace {

const char* kUsage = R"(torch2onnx - export PyTorch (TorchScript) models to ONNX

Usage:
  torch2onnx export MODEL.pt -o OUT.onnx [inputs] [options]
  torch2onnx export MODEL.pt2 -o OUT.onnx [options]
                                  a torch.export program (torch.export.save, torch 2.9
                                  to 2.15): no inputs, its metadata has the shapes;
                                  symbolic dims become named dynamic dims
  torch2onnx check MODEL.pt [inputs] [--opset N]
  torch2onnx check MODEL.pt2 [--opset N]
                                  list every operator that cannot be converted (with
                                  counts, module paths, source lines and the lowest
                                  opset that would); exit 1 if there is one. A .pt2
                                  (torch.export) program needs no inputs: its
                                  metadata has the shapes
  torch2onnx verify MODEL.pt OUT.onnx (--args FILE.pt | --input SPEC ...) [--rtol R] [--atol A]
  torch2onnx verify MODEL.pt2 OUT.onnx [--args FILE.pt | --input SPEC ...] [--rtol R] [--atol A]
                                  run the model in LibTorch (a .pt2 program by torch2onnx's
                                  own runner, no Python; by default on the sample inputs
                                  torch.export.save stored with it) and OUT.onnx in
                                  ONNX Runtime on the example inputs and on random inputs
                                  along every dynamic axis (each at the example's size + 3
                                  and at 1); compare every output (floats within
                                  atol + rtol * (1 + max |torch|), rtol 1e-4 by default;
                                  integers exactly); print a table per run; exit 1 on a
                                  mismatch; runs at sizes outside a program's ranges are
                                  skipped, with the reason. ONNX Runtime: the onnxruntime
                                  Python package's library, or $T2O_ONNXRUNTIME_LIB
  torch2onnx find-mismatch MODEL.pt (--args FILE.pt | --input SPEC ...) [--opset N] [--rtol R]
  torch2onnx find-mismatch MODEL.pt2 [--args FILE.pt | --input SPEC ...] [--opset N] [--rtol R]
                                  find the smallest parts of the model whose ONNX export
                                  differs from LibTorch in ONNX Runtime: the frozen graph
                                  (a .pt2 program's graph, run by torch2onnx's runner on
                                  its stored sample inputs by default) is cut in halves,
                                  each part exported alone and run on the values LibTorch
                                  computed for it, mismatching parts
                                  cut again down to single operators; prints the tree and
                                  the mismatching operators with module paths and source
                                  lines; exit 1 if a part mismatches
  torch2onnx ops [--opset N] [--markdown]
  torch2onnx batch FILE           run many commands in one process: each line of FILE
                                  holds the arguments of one export command (or a
                                  whole check ... / ops ... command)
  torch2onnx --version | --help

Inputs (example arguments of forward(), in order):
  --args FILE.pt              a value saved with torch.save: a tensor, or a tuple/list
                              of tensors, numbers and nested tuples (one per argument)
  --input SPEC                repeated, one per argument: a .npy file, or a shape
                              with optional dtype for random data, e.g. 1x3x224x224,
                              35x20:int64, scalar:float32

Options (as torch.onnx.export):
  -o, --output FILE           where to write the model (required for export)
  --opset N                   target opset, {min}..{max} (default: {default} for a TorchScript
                              archive, {program} for a .pt2 program, as torch.onnx)
  --input-names a,b           names of the graph inputs, in order (a shorter list
                              names a prefix; names past the inputs rename weights)
  --output-names y            names of the graph outputs, in order
  --no-export-params          weights become graph inputs (state_dict order)
  --keep-initializers-as-inputs  also list weights as graph inputs
  --no-constant-folding       do not fold constant subgraphs
  --no-optimize               no ONNX-side optimizations (fusions, common subexpressions, ...)
  --training MODE             eval (default), preserve or train
  --operator-export-type T    onnx (default); onnx_aten: every aten op as an ATen node
                              (domain org.pytorch.aten); onnx_aten_fallback: ATen nodes
                              only where no conversion exists; onnx_fallthrough: ops
                              without a conversion kept as nodes of their namespace
  --verbose                   print the exported graph in readable form
  --keep-doc-strings          each node's doc_string carries its source line
  --dynamic-axes JSON         axes of inputs/outputs that vary: '{"x": [0]}' (automatic
                              names x_dynamic_axes_1, ...) or '{"x": {"0": "batch"}}'
  --external-data             weights go to OUT.onnx.data (ONNX external data); automatic
                              when the model would pass protobuf's 2 GiB limit
  --graph FILE.svg            also draw the exported graph (Graphviz's dot): nodes
                              grouped by module scope (a click on a scope's title
                              folds it), shapes on the edges, weights in their
                              nodes; FILE.png, FILE.pdf and FILE.dot work too
  --report FILE.md            also write a report: the stages with time and memory,
                              each PyTorch operator and the ONNX operators it became,
                              opset and IR version, the operators that cannot be
                              converted (written when the export fails on them too)
                              and the graph picture (FILE.svg, unless --graph)
  --verify                    after the export, verify the model as `torch2onnx verify`
                              does (--rtol/--atol apply); exit 1 on a mismatch
  --modules-as-functions C,D  each call of a submodule of class C or D (Python name,
                              plain or qualified; 'all' = every submodule) becomes an
                              ONNX local function (opset 15 and above)

On a terminal, an export that takes more than two seconds shows a progress line
on stderr (stage, percent, time); T2O_NO_PROGRESS=1 hides it.

Exit status: 0 on success, 1 on an export error, 2 on a usage error.
)";

std::string with_opsets(std::string text) {
  const std::pair<const char*, int> fields[] = {{"{min}", kMinOpset},
                                                {"{max}", max_opset()},
                                                {"{default}", kDefaultOpset},
                                                {"{program}", default_program_opset()}};
  for (const auto& [key, value] : fields)
    for (size_t at; (at = text.find(key)) != std::string::npos;) text.replace(at, std::string(key).size(), std::to_string(value));
  return text;
}

}  // namespace

const char* usage_text() {
  static const std::string text = with_opsets(kUsage);
  return text.c_str();
}

Command parse(const std::vector<std::string>& argv) {
  Command c;
  if (argv.empty()) usage_error("missing command");
  size_t i = 0;
  const std::string& first = argv[0];
  if (first == "-h" || first == "--help" || first == "help") {
    c.name = "help";
    return c;
  }
  if (first == "--version" || first == "version") {
    c.name = "version";
    return c;
  }
  if (first != "export" && first != "check" && first != "ops" && first != "batch" && first != "verify" &&
      first != "find-mismatch")
    usage_error("unknown command '" + first + "'");
  c.name = first;
  ++i;
  auto value = [&](const std::string& flag) -> std::string {
    if (i + 1 >= argv.size()) usage_error(flag + " needs a value");
    return argv[++i];
  };
  for (; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    std::string flag = a, inline_value;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0) {
      auto eq = a.find('=');
      if (eq != std::string::npos) {
        flag = a.substr(0, eq);
        inline_value = a.substr(eq + 1);
        has_inline = true;
      }
    }
    auto get = [&]() { return has_inline ? inline_value : value(flag); };
    if (flag == "-o" || flag == "--output") c.output = get();
    else if (flag == "--args") c.args_file = get();
    else if (flag == "--input") c.inputs.push_back(get());
    else if (flag == "--opset" || flag == "--opset-version") { c.options.opset_version = parse_opset(get()); c.opset_given = true; }
    else if (flag == "--input-names") c.options.input_names = split_names(get());
    else if (flag == "--output-names") c.options.output_names = split_names(get());
    else if (flag == "--no-export-params") c.options.export_params = false;
    else if (flag == "--keep-initializers-as-inputs") c.options.keep_initializers_as_inputs = true;
    else if (flag == "--no-constant-folding") c.options.do_constant_folding = false;
    else if (flag == "--no-optimize") c.options.optimize = false;
    else if (flag == "--verbose" || flag == "-v") c.options.verbose = true;
    else if (flag == "--keep-doc-strings") c.options.keep_doc_strings = true;
    else if (flag == "--external-data") c.options.external_data = true;
    else if (flag == "--graph") c.options.graph_picture = get();
    else if (flag == "--report") c.options.report = get();
    else if (flag == "--verify" && c.name == "export") c.verify = true;
    else if ((flag == "--rtol" || flag == "--atol") &&
             (c.name == "export" || c.name == "verify" || (c.name == "find-mismatch" && flag == "--rtol"))) {
      const std::string v = get();
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end || !(x >= 0)) usage_error(flag + " needs a non-negative number, got '" + v + "'");
      (flag == "--rtol" ? c.rtol : c.atol) = x;
    }
    else if (flag == "--modules-as-functions" || flag == "--export-modules-as-functions") {
      c.options.export_modules_as_functions = split_names(get());
      for (auto& cls : c.options.export_modules_as_functions)
        if (cls == "all") cls = "*";
    } else if (flag == "--dynamic-axes") c.options.dynamic_axes = DynamicAxesParser(get()).parse();
    else if (flag == "--markdown" && c.name == "ops") c.markdown = true;
    else if (flag == "--operator-export-type") {
      std::string m = get();
      for (char& ch : m) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (m == "onnx") c.options.operator_export_type = OperatorExportType::Onnx;
      else if (m == "onnx_aten") c.options.operator_export_type = OperatorExportType::OnnxAten;
      else if (m == "onnx_aten_fallback") c.options.operator_export_type = OperatorExportType::OnnxAtenFallback;
      else if (m == "onnx_fallthrough") c.options.operator_export_type = OperatorExportType::OnnxFallthrough;
      else usage_error("--operator-export-type must be onnx, onnx_aten, onnx_aten_fallback or onnx_fallthrough, got '" + m + "'");
    } else if (flag == "--training") {
      std::string m = get();
      if (m == "eval") c.options.training = TrainingMode::Eval;
      else if (m == "preserve") c.options.training = TrainingMode::Preserve;
      else if (m == "train" || m == "training") c.options.training = TrainingMode::Training;
      else usage_error("--training must be eval, preserve or train, got '" + m + "'");
    } else if (a == "-h" || a == "--help") {  // `torch2onnx export --help`: the usage
      Command help;
      help.name = "help";
      return help;
    } else if (!a.empty() && a[0] == '-') {
      usage_error("unknown option '" + a + "'");
    } else if ((c.name == "export" || c.name == "check" || c.name == "batch" || c.name == "verify" ||
                c.name == "find-mismatch") &&
               c.model.empty()) {
      c.model = a;
    } else if (c.name == "verify" && c.onnx.empty()) {
      c.onnx = a;
    } else {
      usage_error("unexpected argument '" + a + "'");
    }
  }
  if (c.name == "batch" && c.model.empty()) usage_error("batch needs a file with one export command per line");
  if (c.name == "verify") {
    if (c.model.empty() || c.onnx.empty()) usage_error("verify needs a model and its ONNX model: verify MODEL.pt OUT.onnx");
  }
  if (c.name == "export" || c.name == "check" || c.name == "verify" || c.name == "find-mismatch") {
    if (c.model.empty()) usage_error(c.name + " needs a model file (MODEL.pt)");
    if (c.name == "export" && c.output.empty()) usage_error("export needs an output file (-o OUT.onnx)");
    if (!c.args_file.empty() && !c.inputs.empty()) usage_error("give example inputs with --args or with --input, not both");
    const bool program = c.model.size() > 4 && c.model.compare(c.model.size() - 4, 4, ".pt2") == 0;
    if (c.args_file.empty() && c.inputs.empty() && !program)  // (a .pt2 program's metadata has the shapes)
      usage_error(c.name + " needs example inputs: --args FILE.pt or one --input per forward() argument");
  }
  return c;
}

}  // namespace torch2onnx::cli
