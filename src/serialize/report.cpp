#include "serialize/report.h"

#include <cstdio>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "ir/printer.h"
#include "serialize/writer.h"

namespace torch2onnx::serialize {
namespace {

void for_each_node(const ir::Graph& g, const std::function<void(const ir::Node&, bool nested)>& fn, bool nested = false) {
  for (const auto& n : g.nodes()) {
    fn(*n, nested);
    for (const ir::Graph* sub : n->subgraphs()) for_each_node(*sub, fn, true);
  }
}

// A table cell: no line breaks, pipes escaped.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

std::string dir_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

void facts(std::ostringstream& md, const ReportInputs& in, const ExportOptions& options) {
  md << "| | |\n|---|---|\n";
  if (!in.source.empty()) md << "| model | `" << cell(in.source) << "` |\n";
  if (!in.output.empty()) md << "| ONNX file | `" << cell(in.output) << "` |\n";
  md << "| result | " << (in.model ? "exported" : "**failed**: " + cell(first_line(in.error))) << " |\n";
  md << "| torch2onnx | " << version() << " |\n";
  if (in.model) {
    md << "| opset | " << in.model->opset << " |\n| IR version | " << in.model->ir_version << " |\n";
    size_t top = 0, nested = 0;
    for_each_node(*in.model->graph, [&](const ir::Node&, bool inner) { ++(inner ? nested : top); });
    md << "| nodes | " << top << (nested ? " (and " + std::to_string(nested) + " in subgraphs)" : "") << " |\n";
    double bytes = 0;
    for (const ir::Value* v : in.model->graph->initializers()) bytes += static_cast<double>(v->initializer()->nbytes());
    md << "| weights | " << in.model->graph->initializers().size() << " initializers, " << fixed(bytes / 1e6, 1)
       << " MB |\n";
  } else if (options.opset_version) {
    md << "| opset | " << options.opset_version << " |\n";
  }
  double total = 0;
  for (const StageRecord& s : in.stages) total += s.ms;
  md << "| time | " << fixed(total, 0) << " ms |\n";
  const double peak = process_memory_mb("VmHWM:");
  if (peak > 0) md << "| peak memory | " << fixed(peak, 0) << " MB (the whole process) |\n";
}

void interface(std::ostringstream& md, const ir::Model& model) {
  md << "\n## Inputs and outputs\n\n| | name | type |\n|---|---|---|\n";
  for (const ir::Value* v : model.graph->inputs())
    if (!v->is_initializer()) md << "| input | `" << cell(v->name()) << "` | " << cell(ir::type_string(v->type())) << " |\n";
  for (const ir::Value* v : model.graph->outputs())
    md << "| output | `" << cell(v->name()) << "` | " << cell(ir::type_string(v->type())) << " |\n";
}

void stages(std::ostringstream& md, const std::vector<StageRecord>& records) {
  if (records.empty()) return;
  md << "\n## Stages\n\n| stage | time (ms) | memory after (MB) |\n|---|---:|---:|\n";
  for (const StageRecord& s : records)
    md << "| " << cell(s.name) << " | " << fixed(s.ms, 1) << " | " << fixed(s.rss_mb, 0) << " |\n";
}

// PyTorch operator -> how many of them (distinct origins) and the ONNX operators their nodes are.
void operators(std::ostringstream& md, const ir::Model& model) {
  struct Row {
    std::set<const ir::Origin*> places;
    std::map<std::string, size_t> onnx;
  };
  std::map<std::string, Row> rows;
  std::map<std::string, size_t> onnx_counts;
  for_each_node(*model.graph, [&](const ir::Node& n, bool) {
    const std::string op = n.domain().empty() ? n.op_type() : n.domain() + "::" + n.op_type();
    ++onnx_counts[op];
    const ir::Origin* o = n.origin().get();
    Row& r = rows[o && !o->torch_kind.empty() ? o->torch_kind : std::string("(added by the exporter)")];
    r.places.insert(o);
    ++r.onnx[op];
  });
  md << "\n## PyTorch operators and the ONNX operators they became\n\n"
     << "After optimization (folded constants, fused Conv+BatchNorm, ...): operators that folded away entirely "
        "are not listed.\n\n| PyTorch operator | places | ONNX nodes |\n|---|---:|---|\n";
  for (const auto& [kind, r] : rows) {
    std::string became;
    for (const auto& [op, count] : r.onnx) became += (became.empty() ? "" : ", ") + op + " ×" + std::to_string(count);
    md << "| `" << cell(kind) << "` | " << r.places.size() << " | " << cell(became) << " |\n";
  }
  md << "\n## ONNX operators\n\n| ONNX operator | nodes |\n|---|---:|\n";
  for (const auto& [op, count] : onnx_counts) md << "| " << cell(op) << " | " << count << " |\n";
}

void unsupported(std::ostringstream& md, const std::vector<UnsupportedOperator>& ops, const ExportOptions& options) {
  if (ops.empty()) return;
  md << "\n## Operators that cannot be converted\n\n"
     << "| operator | count | converts from opset | where |\n|---|---:|---|---|\n";
  for (const UnsupportedOperator& op : ops) {
    std::string where;
    for (const std::string& l : op.locations) where += (where.empty() ? "" : "; ") + l;
    md << "| `" << cell(op.op) << "` | " << op.count << " | "
       << (op.lowest_opset ? std::to_string(*op.lowest_opset) : std::string("none (at opset ") +
                                                                    std::to_string(options.opset_version) + ")")
       << " | " << cell(where) << " |\n";
  }
}

void picture(std::ostringstream& md, const ReportInputs& in, const ExportOptions& options) {
  if (in.graph_picture.empty() && in.graph_note.empty()) return;
  md << "\n## Graph\n\n";
  if (in.graph_picture.empty()) {
    md << in.graph_note << "\n";
    return;
  }
  const std::string link = dir_name(in.graph_picture) == dir_name(options.report) ? base_name(in.graph_picture)
                                                                                  : in.graph_picture;
  md << "[" << base_name(in.graph_picture) << "](" << link << ") (nodes grouped by module scope; in a browser, "
     << "a click on a scope's title folds it)\n\n![the exported graph](" << link << ")\n";
}

}  // namespace

std::string report_markdown(const ReportInputs& in, const ExportOptions& options) {
  std::ostringstream md;
  md << "# torch2onnx export report\n\n";
  facts(md, in, options);
  if (in.model) interface(md, *in.model);
  stages(md, in.stages);
  if (in.model) operators(md, *in.model);
  unsupported(md, in.unsupported, options);
  if (!in.error.empty() && in.unsupported.empty()) md << "\n## Error\n\n```\n" << in.error << "\n```\n";
  picture(md, in, options);
  return md.str();
}

void write_report(const ReportInputs& in, const ExportOptions& options) {
  const std::string tmp = options.report + ".tmp";
  {
    std::ofstream out(tmp);
    out << report_markdown(in, options);
    if (!out) {
      std::remove(tmp.c_str());
      throw Error(Error::Kind::Io, "cannot write the export report '" + options.report + "'");
    }
  }
  if (std::rename(tmp.c_str(), options.report.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(Error::Kind::Io, "cannot write the export report '" + options.report + "'");
  }
}

}  // namespace torch2onnx::serialize
