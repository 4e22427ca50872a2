#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>

#include "frontend/pt2/program.h"
#include "frontend/zip.h"
#include "torch2onnx/options.h"

namespace torch2onnx::frontend::pt2 {
namespace {

using nlohmann::json;

constexpr size_t kMaxJsonBytes = size_t{1} << 30;  // a model's JSON: 1 GiB at most
constexpr int kMaxGraphDepth = 32;                 // higher-order operators' bodies, nested

[[noreturn]] void fail(const std::string& what, const std::string& why) {
  throw Error(Error::Kind::Load, "cannot read " + what + ": " + why);
}

// The schema's ScalarType codes (torch/_export/serde/schema.py).
std::pair<ir::DType, const char*> scalar_type(int64_t code) {
  switch (code) {
    case 1: return {ir::DType::UInt8, "BYTE"};
    case 2: return {ir::DType::Int8, "CHAR"};
    case 3: return {ir::DType::Int16, "SHORT"};
    case 4: return {ir::DType::Int32, "INT"};
    case 5: return {ir::DType::Int64, "LONG"};
    case 6: return {ir::DType::Float16, "HALF"};
    case 7: return {ir::DType::Float, "FLOAT"};
    case 8: return {ir::DType::Double, "DOUBLE"};
    case 9: return {ir::DType::Undefined, "COMPLEXHALF"};
    case 10: return {ir::DType::Complex64, "COMPLEXFLOAT"};
    case 11: return {ir::DType::Complex128, "COMPLEXDOUBLE"};
    case 12: return {ir::DType::Bool, "BOOL"};
    case 13: return {ir::DType::BFloat16, "BFLOAT16"};
    case 28: return {ir::DType::UInt16, "UINT16"};
    case 29: return {ir::DType::Undefined, "FLOAT8E4M3FN"};
    case 30: return {ir::DType::Undefined, "FLOAT8E5M2"};
    case 34: return {ir::DType::UInt32, "UINT32"};
    case 35: return {ir::DType::UInt64, "UINT64"};
    default: return {ir::DType::Undefined, "UNKNOWN"};
  }
}

// Field access that turns a wrong shape of JSON into a Load error naming the field.
struct Reader {
  std::string what;  // "model.json of m.pt2"

  [[noreturn]] void bad(const std::string& field, const std::string& expected) const {
    fail(what, "field '" + field + "' is not " + expected);
  }
  const json& at(const json& j, const char* key) const {
    if (!j.is_object()) bad(key, "inside an object");
    auto it = j.find(key);
    if (it == j.end()) fail(what, "field '" + std::string(key) + "' is missing");
    return *it;
  }
  const json* find(const json& j, const char* key) const {
    if (!j.is_object()) return nullptr;
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  }
  int64_t integer(const json& j, const char* field) const {
    if (j.is_boolean()) return j.get<bool>() ? 1 : 0;
    if (!j.is_number_integer()) bad(field, "an integer");
    return j.get<int64_t>();
  }
  double number(const json& j, const char* field) const {
    if (j.is_string()) {  // the schema writes non-finite floats as strings
      const std::string s = j.get<std::string>();
      if (s == "Infinity" || s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-Infinity" || s == "-inf") return -std::numeric_limits<double>::infinity();
      if (s == "NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
    }
    if (!j.is_number()) bad(field, "a number");
    return j.get<double>();
  }
  std::string string(const json& j, const char* field) const {
    if (!j.is_string()) bad(field, "a string");
    return j.get<std::string>();
  }
  const json& array(const json& j, const char* field) const {
    if (!j.is_array()) bad(field, "a list");
    return j;
  }
  // A union: an object with one non-null member, whose name is the tag.
  std::pair<std::string, const json*> tag(const json& j, const char* field) const {
    if (!j.is_object()) bad(field, "a union (an object)");
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!it.value().is_null()) return {it.key(), &it.value()};
    bad(field, "a union with a value");
  }

  SymInt sym_int(const json& j) const {
    SymInt s;
    auto [k, v] = tag(j, "SymInt");
    if (k == "as_int") {
      s.value = integer(*v, "as_int");
    } else if (k == "as_expr") {
      s.expr = string(at(*v, "expr_str"), "expr_str");
      if (const json* h = find(*v, "hint")) {
        if (h->is_number_integer()) s.hint = h->get<int64_t>();
        else if (h->is_object() && find(*h, "as_int")) s.hint = integer(at(*h, "as_int"), "hint.as_int");
      }
    } else {
      bad("SymInt", "as_int or as_expr (found " + k + ")");
    }
    return s;
  }

  TensorMeta tensor_meta(const json& j) const {
    TensorMeta m;
    auto [dt, name] = scalar_type(integer(at(j, "dtype"), "dtype"));
    m.dtype = dt;
    m.dtype_name = name;
    for (const json& d : array(at(j, "sizes"), "sizes")) m.sizes.push_back(sym_int(d));
    if (const json* st = find(j, "strides"))
      for (const json& d : array(*st, "strides")) m.strides.push_back(sym_int(d));
    if (const json* off = find(j, "storage_offset")) m.storage_offset = sym_int(*off);
    return m;
  }

  Argument argument(const json& j, int depth) const {
    Argument a;
    auto [k, v] = tag(j, "Argument");
    a.kind = k;
    auto name_of = [&](const json& x) { return x.is_null() ? std::string() : string(at(x, "name"), "name"); };
    if (k == "as_none") {
    } else if (k == "as_tensor" || k == "as_custom_obj") {
      a.names.push_back(name_of(*v));
    } else if (k == "as_tensors") {
      for (const json& t : array(*v, k.c_str())) a.names.push_back(name_of(t));
    } else if (k == "as_optional_tensor") {
      auto [ok, ov] = tag(*v, k.c_str());
      a.names.push_back(ok == "as_tensor" ? name_of(*ov) : std::string());
    } else if (k == "as_optional_tensors") {
      for (const json& t : array(*v, k.c_str())) {
        auto [ok, ov] = tag(t, k.c_str());
        a.names.push_back(ok == "as_tensor" ? name_of(*ov) : std::string());
      }
    } else if (k == "as_int" || k == "as_bool" || k == "as_scalar_type" || k == "as_memory_format" ||
               k == "as_layout") {
      a.ints.push_back(integer(*v, k.c_str()));
    } else if (k == "as_ints" || k == "as_bools") {
      for (const json& x : array(*v, k.c_str())) a.ints.push_back(integer(x, k.c_str()));
    } else if (k == "as_float") {
      a.floats.push_back(number(*v, k.c_str()));
    } else if (k == "as_floats") {
      for (const json& x : array(*v, k.c_str())) a.floats.push_back(number(x, k.c_str()));
    } else if (k == "as_string" || k == "as_operator") {
      a.strings.push_back(string(*v, k.c_str()));
    } else if (k == "as_strings") {
      for (const json& x : array(*v, k.c_str())) a.strings.push_back(string(x, k.c_str()));
    } else if (k == "as_int_lists") {
      for (const json& list : array(*v, k.c_str())) {
        a.int_lists.emplace_back();
        for (const json& x : array(list, k.c_str())) a.int_lists.back().push_back(integer(x, k.c_str()));
      }
    } else if (k == "as_sym_int" || k == "as_sym_bool" || k == "as_sym_float") {
      auto [sk, sv] = tag(*v, k.c_str());
      if (sk == "as_name") a.names.push_back(string(*sv, "as_name"));
      else if (sv->is_number_integer() || sv->is_boolean()) a.ints.push_back(integer(*sv, k.c_str()));
      else a.floats.push_back(number(*sv, k.c_str()));
    } else if (k == "as_sym_ints" || k == "as_sym_bools" || k == "as_sym_floats") {
      for (const json& x : array(*v, k.c_str())) {  // mixed: a name ("" in ints) or a number
        auto [sk, sv] = tag(x, k.c_str());
        if (sk == "as_name") {
          a.names.push_back(string(*sv, "as_name"));
          a.ints.push_back(0);
        } else {
          a.names.emplace_back();
          a.ints.push_back(integer(*sv, k.c_str()));
        }
      }
    } else if (k == "as_device") {
      a.strings.push_back(string(at(*v, "type"), "as_device.type"));
    } else if (k == "as_complex") {  // {real, imag}
      a.floats.push_back(number(at(*v, "real"), "as_complex.real"));
      a.floats.push_back(number(at(*v, "imag"), "as_complex.imag"));
    } else if (k == "as_graph") {
      if (depth >= kMaxGraphDepth) fail(what, "higher-order operators nest deeper than " + std::to_string(kMaxGraphDepth));
      a.graph = std::make_shared<Graph>(graph(at(*v, "graph"), depth + 1));
    }
    // (other tags keep only their kind: the converter names them when it meets one)
    return a;
  }

  Node node(const json& j, int depth) const {
    Node n;
    n.target = string(at(j, "target"), "target");
    for (const json& in : array(at(j, "inputs"), "inputs")) {
      NamedArgument na;
      na.name = string(at(in, "name"), "inputs.name");
      na.arg = argument(at(in, "arg"), depth);
      if (const json* kind = find(in, "kind")) na.kind = static_cast<int>(integer(*kind, "inputs.kind"));
      n.inputs.push_back(std::move(na));
    }
    for (const json& out : array(at(j, "outputs"), "outputs")) n.outputs.push_back(argument(out, depth));
    if (const json* meta = find(j, "metadata"); meta && meta->is_object()) {
      if (const json* s = find(*meta, "stack_trace"); s && s->is_string()) n.stack_trace = s->get<std::string>();
      if (const json* s = find(*meta, "nn_module_stack"); s && s->is_string()) n.nn_module_stack = s->get<std::string>();
    }
    // torch.ops.<namespace>.<op>.<overload>
    const std::string prefix = "torch.ops.";
    if (n.target.rfind(prefix, 0) == 0) {
      const std::string rest = n.target.substr(prefix.size());
      const size_t a = rest.find('.'), b = rest.rfind('.');
      if (a != std::string::npos && b != a) {
        n.op = rest.substr(0, a) + "::" + rest.substr(a + 1, b - a - 1);
        n.overload = rest.substr(b + 1);
      } else if (a != std::string::npos) {
        n.op = rest.substr(0, a) + "::" + rest.substr(a + 1);
      }
    }
    return n;
  }

  Graph graph(const json& j, int depth) const {
    Graph g;
    for (const json& a : array(at(j, "inputs"), "graph.inputs")) g.inputs.push_back(argument(a, depth));
    for (const json& a : array(at(j, "outputs"), "graph.outputs")) g.outputs.push_back(argument(a, depth));
    for (const json& n : array(at(j, "nodes"), "graph.nodes")) g.nodes.push_back(node(n, depth));
    if (const json* tv = find(j, "tensor_values")) {
      if (!tv->is_object()) bad("tensor_values", "an object");
      for (auto it = tv->begin(); it != tv->end(); ++it) g.tensor_values[it.key()] = tensor_meta(it.value());
    }
    if (const json* sv = find(j, "sym_int_values")) {
      if (!sv->is_object()) bad("sym_int_values", "an object");
      for (auto it = sv->begin(); it != sv->end(); ++it) g.sym_int_values[it.key()] = sym_int(it.value());
    }
    return g;
  }

  std::string arg_name(const json& j) const {
    // an input spec's arg: {"name": ...} or an Argument union ({"as_tensor": {"name": ...}})
    if (const json* n = find(j, "name"); n && n->is_string()) return n->get<std::string>();
    Argument a = argument(j, 0);
    return a.names.empty() ? std::string() : a.names.front();
  }

  void signature(const json& j, Program& p) const {
    for (const json& spec : array(at(j, "input_specs"), "input_specs")) {
      auto [k, v] = tag(spec, "input_specs");
      InputSpec s;
      if (k == "constant_input") {  // {"name": ..., "value": {"as_int": 3}}: no "arg"
        s.kind = InputSpec::Kind::ConstantValue;
        s.arg = string(at(*v, "name"), "name");
        s.value = argument(at(*v, "value"), 0);
        p.input_specs.push_back(std::move(s));
        continue;
      }
      s.arg = arg_name(at(*v, "arg"));
      if (k == "user_input") {
        s.kind = InputSpec::Kind::UserInput;
      } else if (k == "parameter") {
        s.kind = InputSpec::Kind::Parameter;
        s.target = string(at(*v, "parameter_name"), "parameter_name");
      } else if (k == "buffer") {
        s.kind = InputSpec::Kind::Buffer;
        s.target = string(at(*v, "buffer_name"), "buffer_name");
        if (const json* ps = find(*v, "persistent")) s.persistent = integer(*ps, "persistent") != 0;
      } else if (k == "tensor_constant") {
        s.kind = InputSpec::Kind::Constant;
        if (const json* t = find(*v, "tensor_constant_name")) s.target = string(*t, "tensor_constant_name");
        else if (const json* t2 = find(*v, "name")) s.target = string(*t2, "name");
      } else if (k == "custom_obj") {
        s.kind = InputSpec::Kind::CustomObject;
        if (const json* t = find(*v, "custom_obj_name")) s.target = string(*t, "custom_obj_name");
      } else if (k == "token") {
        s.kind = InputSpec::Kind::Token;
      }
      p.input_specs.push_back(std::move(s));
    }
    for (const json& spec : array(at(j, "output_specs"), "output_specs")) {
      auto [k, v] = tag(spec, "output_specs");
      OutputSpec s;
      s.arg = arg_name(at(*v, "arg"));
      if (s.arg.empty()) s.value = argument(at(*v, "arg"), 0);
      if (k == "user_output") s.kind = OutputSpec::Kind::UserOutput;
      else if (k == "buffer_mutation") s.kind = OutputSpec::Kind::BufferMutation;
      else if (k == "user_input_mutation") s.kind = OutputSpec::Kind::UserInputMutation;
      else if (k == "loss_output") s.kind = OutputSpec::Kind::LossOutput;
      else if (k == "token") s.kind = OutputSpec::Kind::Token;
      if (const json* t = find(*v, "buffer_name")) s.target = string(*t, "buffer_name");
      else if (const json* t2 = find(*v, "user_input_name")) s.target = string(*t2, "user_input_name");
      p.output_specs.push_back(std::move(s));
    }
  }

  std::map<std::string, StoredTensor> stored(const json& j, const std::string& dir) const {
    std::map<std::string, StoredTensor> out;
    const json& config = at(j, "config");
    if (!config.is_object()) bad("config", "an object");
    for (auto it = config.begin(); it != config.end(); ++it) {
      StoredTensor t;
      t.entry = dir + string(at(it.value(), "path_name"), "path_name");
      if (const json* p = find(it.value(), "is_param")) t.is_param = integer(*p, "is_param") != 0;
      if (const json* p = find(it.value(), "use_pickle")) t.pickled = integer(*p, "use_pickle") != 0;
      if (const json* m = find(it.value(), "tensor_meta")) t.meta = tensor_meta(*m);
      out[it.key()] = std::move(t);
    }
    return out;
  }
};

json parse_json(const std::string& text, const std::string& what) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) fail(what, "it is not valid JSON");
  return j;
}

std::string entry_text(const ZipFile& zip, const ZipEntry& e, const std::string& what) {
  if (std::string why = zip.size_problem(e); !why.empty()) fail(what, why);
  if (e.size > kMaxJsonBytes) fail(what, "it is larger than 1 GiB");
  std::string why;
  auto bytes = zip.contents(e, &why);
  if (!bytes) fail(what, why);
  return std::string(bytes->begin(), bytes->end());
}

}  // namespace

ir::DType schema_dtype(int64_t code, std::string* name) {
  auto [dt, n] = scalar_type(code);
  if (name) *name = n;
  return dt;
}

std::string module_path(const Node& n) {
  // entries "key,path,class" joined by ';', outermost first
  const size_t start = n.nn_module_stack.rfind(';') == std::string::npos ? 0 : n.nn_module_stack.rfind(';') + 1;
  const std::string last = n.nn_module_stack.substr(start);
  const size_t a = last.find(','), b = last.rfind(',');
  if (a == std::string::npos || b == a || last.rfind("_empty_nn_module_stack", 0) == 0) return "";  // (a node export made)
  return last.substr(a + 1, b - a - 1);
}

std::string where(const Node& n) {
  const std::string path = module_path(n), src = user_source(n);
  return (path.empty() ? "<top module>" : path) + (src.empty() ? "" : " (" + src + ")");
}

int64_t c10_memory_format(int64_t schema) { return schema == 1 ? 0 : schema == 4 ? 1 : schema; }

int64_t c10_layout(int64_t schema) {
  switch (schema) {
    case 7: return 0;
    case 1: return 1;
    case 2: return 2;
    case 3: return 4;
    case 4: return 5;
    case 5: return 6;
    case 6: return 3;
    default: return -1;
  }
}

std::string readable_expr(const std::string& expr) {
  // sympy's srepr of a symbol, Symbol('s77', positive=True, integer=True): its name
  std::string out;
  for (size_t i = 0; i < expr.size();) {
    if (expr.compare(i, 8, "Symbol('") == 0) {
      const size_t name_end = expr.find('\'', i + 8);
      size_t close = name_end == std::string::npos ? name_end : expr.find(')', name_end);
      if (close != std::string::npos) {
        out += expr.substr(i + 8, name_end - i - 8);
        i = close + 1;
        continue;
      }
    }
    out += expr[i++];
  }
  return out;
}

std::string user_source(const Node& n) {
  // 'File "/path/model.py", line 9, in forward\n ...', outermost frame first:
  // the innermost frame outside torch itself (else the first frame)
  const std::string& t = n.stack_trace;
  std::string first, user;
  for (size_t f = t.find("File \""); f != std::string::npos; f = t.find("File \"", f + 6)) {
    const size_t q = t.find('"', f + 6);
    if (q == std::string::npos || t.compare(q + 1, 7, ", line ") != 0) break;
    size_t e = q + 8;
    while (e < t.size() && t[e] >= '0' && t[e] <= '9') ++e;
    const std::string file = t.substr(f + 6, q - f - 6);
    const std::string frame = file + ":" + t.substr(q + 8, e - q - 8);
    if (first.empty()) first = frame;
    const bool in_torch = file.find("-packages/torch/") != std::string::npos || file.rfind("torch/", 0) == 0;
    if (!in_torch) user = frame;
  }
  return user.empty() ? first : user;
}

Program parse_program(const std::string& json_text, const std::string& what) {
  const json j = parse_json(json_text, what);
  Reader r{what};
  Program p;
  const json& version = r.at(j, "schema_version");
  p.schema_major = static_cast<int>(r.integer(r.at(version, "major"), "schema_version.major"));
  p.schema_minor = static_cast<int>(r.integer(r.at(version, "minor"), "schema_version.minor"));
  if (const json* tv = r.find(j, "torch_version"); tv && tv->is_string()) p.torch_version = tv->get<std::string>();
  if (p.schema_major != kSchemaMajor)
    fail(what, "it is in export schema " + std::to_string(p.schema_major) + "." + std::to_string(p.schema_minor) +
                   (p.torch_version.empty() ? "" : " (written by torch " + p.torch_version + ")") +
                   "; torch2onnx reads schema " + std::to_string(kSchemaMajor) +
                   ".x, which torch 2.9 to 2.15 write");
  const json& gm = r.at(j, "graph_module");
  p.graph = r.graph(r.at(gm, "graph"), 0);
  r.signature(r.at(gm, "signature"), p);
  if (const json* rc = r.find(j, "range_constraints")) {
    if (!rc->is_object()) r.bad("range_constraints", "an object");
    for (auto it = rc->begin(); it != rc->end(); ++it) {
      Program::Range range;
      // (an unbounded end is null, or a bound past int64)
      if (const json* lo = r.find(it.value(), "min_val"); lo && lo->is_number_integer()) range.min = lo->get<int64_t>();
      if (const json* hi = r.find(it.value(), "max_val"); hi && hi->is_number_integer()) range.max = hi->get<int64_t>();
      p.range_constraints[it.key()] = range;
    }
  }
  return p;
}

bool is_pt2_archive(const std::string& path) {
  auto zip = ZipFile::open(path);
  if (!zip || (zip->layout() != ZipFile::Layout::Plain && zip->layout() != ZipFile::Layout::Zip64)) return false;
  for (const ZipEntry& e : zip->entries()) {
    const size_t slash = e.name.find('/');
    if (slash != std::string::npos && e.name.substr(slash + 1) == "archive_format") {
      auto text = zip->contents(e);
      return text && std::string(text->begin(), text->end()).rfind("pt2", 0) == 0;
    }
  }
  return false;
}

Program read_program(const std::string& path, const std::string& model) {
  auto zip = ZipFile::open(path);
  if (!zip) fail("'" + path + "'", "it cannot be opened");
  if (zip->layout() != ZipFile::Layout::Plain && zip->layout() != ZipFile::Layout::Zip64)
    fail("'" + path + "'", "it is not a zip archive" +
                               (zip->directory_problem().empty() ? std::string() : " (" + zip->directory_problem() + ")"));
  // <archive name>/models/<model>.json, <archive name>/data/weights/<model>_weights_config.json, ...
  std::map<std::string, const ZipEntry*> by_name;
  std::string root;
  for (const ZipEntry& e : zip->entries()) {
    by_name[e.name] = &e;
    const size_t slash = e.name.find('/');
    if (slash != std::string::npos && e.name.substr(slash + 1) == "archive_format") root = e.name.substr(0, slash + 1);
  }
  if (root.empty()) {
    if (std::any_of(zip->entries().begin(), zip->entries().end(), [](const ZipEntry& e) {
          return e.name.find("serialized_exported_program.json") != std::string::npos;
        }))
      fail("'" + path + "'", "it is a .pt2 in the layout torch 2.5 and older wrote (serialized_exported_program.json); "
                             "torch2onnx reads the PT2 archive layout of torch 2.9 to 2.15: load and save it again "
                             "with torch.export.load / torch.export.save");
    fail("'" + path + "'", "it is a zip file but not a .pt2 archive (no archive_format entry)");
  }
  const std::string what_archive = "'" + path + "'";
  auto text_of = [&](const std::string& name) -> std::optional<std::string> {
    auto it = by_name.find(root + name);
    if (it == by_name.end()) return std::nullopt;
    return entry_text(*zip, *it->second, what_archive + " (" + name + ")");
  };
  const std::string format = text_of("archive_format").value_or("");
  if (format.rfind("pt2", 0) != 0) fail(what_archive, "its archive_format is '" + format + "', not 'pt2'");
  if (auto order = text_of("byteorder"); order && order->rfind("little", 0) != 0)
    fail(what_archive, "its tensors are stored " + *order + "-endian; torch2onnx reads little-endian archives");
  std::vector<std::string> models;
  const std::string models_dir = root + "models/";
  for (const auto& [name, e] : by_name)
    if (name.rfind(models_dir, 0) == 0 && name.size() > models_dir.size() + 5 &&
        name.compare(name.size() - 5, 5, ".json") == 0 && name.find('/', models_dir.size()) == std::string::npos)
      models.push_back(name.substr(models_dir.size(), name.size() - models_dir.size() - 5));
  if (models.empty()) fail(what_archive, "it holds no program (no models/<name>.json)");
  std::string chosen = model;
  if (chosen.empty()) {
    if (models.size() > 1) {
      std::string list;
      for (const auto& m : models) list += (list.empty() ? "" : ", ") + m;
      fail(what_archive, "it holds several programs (" + list + "): name the one to export");
    }
    chosen = models.front();
  } else if (std::find(models.begin(), models.end(), chosen) == models.end()) {
    fail(what_archive, "it holds no program named '" + chosen + "'");
  }
  const std::string what = "the program '" + chosen + "' of " + what_archive;
  Program p = parse_program(*text_of("models/" + chosen + ".json"), what);
  p.archive_path = path;
  p.model_name = chosen;
  Reader r{what};
  if (auto w = text_of("data/weights/" + chosen + "_weights_config.json"))
    p.weights = r.stored(parse_json(*w, what + " (weights config)"), root + "data/weights/");
  if (auto c = text_of("data/constants/" + chosen + "_constants_config.json"))
    p.constants = r.stored(parse_json(*c, what + " (constants config)"), root + "data/constants/");
  for (const auto* stored : {&p.weights, &p.constants})
    for (const auto& [name, t] : *stored)
      if (!by_name.count(t.entry)) fail(what, "its tensor '" + name + "' is missing (" + t.entry + ")");
  return p;
}

}  // namespace torch2onnx::frontend::pt2
