// Sizes read where the graph takes them in: a shape computation whose every
// element the size analysis (sizes.h) proves to be a constant, a dim the
// graph's inputs name (dim_param), a dim of one value nothing more is known
// of, or a sum of sizes the graph reads elsewhere first, reads it there
// instead of off the intermediate value it was taken from.
//
//   Concat(Shape(q_proj, 0, 2), [4, -1])   -> Concat(Shape(input_ids, 0, 2), [4, -1])
//   Gather(Shape(Transpose(k)), 2)         -> Gather(Shape(input_ids), 1)
//   Sub(key length, query length)          -> 0 (both the same named dim)
//   Shape(layer 2's cache, 2, 3)           -> Shape(layer 1's cache, 2, 3) (past + seq)
//   Abs(Concat(batch, 1, seq))             -> Concat(batch, 1, seq)
//
// A TorchScript trace reads x.size(i) off whatever tensor the model asks, so
// each layer (and each of q, k, v) takes the same [batch, seq] from another
// value; read at one place, the copies are one computation that
// common-subexpression elimination merges (as torch.export's sym_size reads
// do). A computation of several pieces (sizes and constants) is spliced into
// the Concats that read it, or left alone. Named dims are equal by the
// model's own declaration (ONNX: one dim_param, one size throughout a graph;
// the frontends give a name the example shows two sizes of only one of them).
// Main graph only (a loop body's sizes may change per trip).
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onnx_passes/match.h"
#include "onnx_passes/passes.h"
#include "onnx_passes/sizes.h"

namespace torch2onnx::onnx_passes {
namespace {

using sizes::Size;

// Where a named dim is read: the first graph input that has it, at its axis.
struct Source {
  ir::Value* input;
  int64_t axis;
};

// A run of the new computation: input's dims [start, end), or constants.
struct Piece {
  ir::Value* input = nullptr;  // none: constants
  int64_t start = 0, end = 0;
  std::vector<int64_t> constants;
};

bool is_shape_op(const ir::Node* n) {
  static const char* const kOps[] = {"Shape", "Gather", "Concat", "Slice", "Unsqueeze", "Squeeze",
                                     "Add",   "Sub",    "Mul",    "Div",   "Max",       "Cast"};
  if (!n->domain().empty()) return false;
  for (const char* op : kOps)
    if (n->op_type() == op) return true;
  return false;
}

class Rewriter {
 public:
  explicit Rewriter(ir::Graph& g) : g_(g) {
    for (ir::Value* in : g.inputs()) {
      const ir::ValueType& t = in->type();
      if (t.kind != ir::ValueType::Kind::Tensor || t.rank_varies || !t.has_shape) continue;
      for (size_t k = 0; k < t.shape.size(); ++k) {
        const ir::Dim& d = t.shape[k];
        if (!d.is_symbolic() || d.param.rfind("unk__", 0) == 0) continue;
        sources_.emplace("p:" + d.param, Source{in, static_cast<int64_t>(k)});
      }
    }
  }

  void run() {
    std::vector<ir::Node*> order;
    for (const auto& n : g_.nodes()) order.push_back(n.get());
    for (ir::Node* n : order) {
      if (n->op_type() == "Shape" && n->domain().empty()) note_reads(n);
      if (n->op_type() == "Abs" && n->domain().empty()) drop_abs(n);
      else if (is_shape_op(n) && n->num_outputs() == 1) rewrite(n);
    }
  }

 private:
  // Where an atom of the size analysis is read: a named dim at the first
  // graph input that has it, a dim nothing more is known of ("v:<value>:<axis>")
  // at that value (computed before anything whose size was traced to it).
  std::optional<Source> source(const std::string& atom) const {
    if (auto it = sources_.find(atom); it != sources_.end()) return it->second;
    const auto d = sizes::value_dim(Size{0, {atom}});
    if (!d || d->value->graph() != &g_) return std::nullopt;  // (main graph values only)
    return Source{d->value, d->axis};
  }

  // A size that is neither a constant nor one atom (past + seq: a cache's
  // length) is read where the graph first reads it: every layer's copy then
  // reads the same dim of the same value.
  void note_reads(ir::Node* shape) {
    ir::Value* x = shape->input(0);
    if (!x || x->graph() != &g_ || x->type().rank_varies || x->type().rank() < 0) return;
    const int64_t rank = x->type().rank();
    auto clamp = [&](int64_t k) { return std::max<int64_t>(0, std::min(rank, k < 0 ? k + rank : k)); };
    for (int64_t k = clamp(shape->attr_i("start", 0)); k < clamp(shape->attr_i("end", rank)); ++k) {
      const Size e = sizes::dim_of(x, k);
      if (!e.value() && !(e.constant == 0 && e.atoms.size() == 1)) seen_.emplace(sizes::to_string(e), Source{x, k});
    }
  }

  // Abs of sizes and non-negative constants (expand's lowering puts one
  // around its target shape for the -1 PyTorch allows there) is its input.
  // A Concat of sizes and constants read by the Abs alone takes the
  // constants' absolute values instead (expand(b, -1, s, s): [b, 1, s, s]).
  void drop_abs(ir::Node* n) {
    ir::Value* out = n->output(0);
    ir::Value* in = n->input(0);
    if (out->dtype() != ir::DType::Int64 || is_graph_output(out) || !in) return;
    const auto es = sizes::elements(in);
    if (!es) return;
    if (std::all_of(es->begin(), es->end(), sizes::non_negative)) {
      out->replace_all_uses_with(in);
      return;
    }
    ir::Node* cat = match::producer_of(in, "Concat");
    if (!cat || in->uses().size() != 1 || is_graph_output(in) || cat->attr_i("axis", 0) != 0) return;
    std::vector<std::optional<std::vector<int64_t>>> consts;
    for (ir::Value* piece : cat->inputs()) {
      auto c = piece ? match::const_ints(piece) : std::nullopt;
      if (!c) {  // a size computation: never negative
        const auto pe = piece ? sizes::elements(piece) : std::nullopt;
        if (!pe || !std::all_of(pe->begin(), pe->end(), sizes::non_negative)) return;
      }
      consts.push_back(std::move(c));
    }
    g_.set_insert_point(cat);
    for (size_t k = 0; k < consts.size(); ++k) {
      if (!consts[k] || std::all_of(consts[k]->begin(), consts[k]->end(), [](int64_t v) { return v >= 0; })) continue;
      std::vector<int64_t> abs = *consts[k];
      for (int64_t& v : abs) v = v < 0 ? -v : v;
      cat->replace_input(k, constant(abs, false));
    }
    g_.set_insert_point(nullptr);
    out->replace_all_uses_with(in);
  }

  // The pieces of a computation of `es`, or none where an element is neither a constant nor one atom.
  std::optional<std::vector<Piece>> pieces(const std::vector<Size>& es) const {
    std::vector<Piece> out;
    for (const Size& e : es) {
      if (auto v = e.value()) {
        if (out.empty() || out.back().input) out.push_back(Piece{});
        out.back().constants.push_back(*v);
        continue;
      }
      std::optional<Source> s;
      if (e.constant == 0 && e.atoms.size() == 1) s = source(e.atoms[0]);
      if (!s)
        if (auto it = seen_.find(sizes::to_string(e)); it != seen_.end()) s = it->second;
      if (!s) return std::nullopt;
      if (!out.empty() && out.back().input == s->input && out.back().end == s->axis) {
        ++out.back().end;
      } else {
        out.push_back(Piece{s->input, s->axis, s->axis + 1, {}});
      }
    }
    return out;
  }

  // v already reads what `p` builds: Shape(input, start, end) or a constant.
  static bool reads(ir::Value* v, const Piece& p) {
    if (!p.input) return v->constant() != nullptr;
    ir::Node* s = match::producer_of(v, "Shape");
    const int64_t rank = p.input->type().rank();
    return s && s->input(0) == p.input && s->attr_i("start", 0) == p.start && s->attr_i("end", rank) == p.end;
  }

  // v (0-d) already is Gather(Shape(input), axis) or a constant.
  static bool reads_scalar(ir::Value* v, const Piece& p) {
    if (!p.input) return v->constant() != nullptr;
    ir::Node* g = match::producer_of(v, "Gather");
    ir::Node* s = g ? match::producer_of(g->input(0), "Shape") : nullptr;
    const auto idx = g ? match::const_ints(g->input(1)) : std::nullopt;
    return s && s->input(0) == p.input && !s->has_attr("start") && !s->has_attr("end") && idx &&
           idx->size() == 1 && (*idx)[0] == p.start;
  }

  ir::Value* constant(const std::vector<int64_t>& v, bool scalar) {
    ir::Tensor t = scalar ? ir::Tensor::scalar_int(ir::DType::Int64, v[0]) : ir::Tensor::from_int64s(v);
    ir::Value* c = g_.create_node("Constant", {}, 1, {{"value", std::move(t)}})->output(0);
    c->set_type(scalar ? ir::ValueType::tensor(ir::DType::Int64, std::vector<int64_t>{})
                       : ir::ValueType::tensor(ir::DType::Int64, {static_cast<int64_t>(v.size())}));
    return c;
  }

  ir::Value* build(const Piece& p) {
    return p.input ? match::shape_slice(g_, p.input, p.start, p.end) : constant(p.constants, false);
  }

  void rewrite(ir::Node* n) {
    ir::Value* out = n->output(0);
    const ir::ValueType& t = out->type();
    if (!out->has_uses() || out->dtype() != ir::DType::Int64 || out->constant()) return;
    // 0-d or 1-D only (a Shape's output is 1-D whatever the type says)
    int64_t rank = n->op_type() == "Shape" ? 1 : (t.rank_varies ? -1 : t.rank());
    if (rank != 0 && rank != 1) return;
    const auto es = sizes::elements(out);
    if (!es || es->empty() || (rank == 0 && es->size() != 1)) return;
    const auto ps = pieces(*es);
    if (!ps) return;
    if (rank == 0 ? reads_scalar(out, (*ps)[0]) : ps->size() == 1 && reads(out, (*ps)[0])) return;
    if (ps->size() > 1 && n->op_type() == "Concat" && n->num_inputs() == ps->size()) {  // (already those pieces)
      bool same = true;
      for (size_t k = 0; k < ps->size(); ++k) same = same && reads(n->input(k), (*ps)[k]);
      if (same) return;
    }
    g_.set_insert_point(n);
    if (rank == 0) {
      const Piece& p = (*ps)[0];
      ir::Value* by = p.input ? nullptr : constant(p.constants, true);
      if (p.input) {
        ir::Value* shape = g_.create_node("Shape", {p.input}, 1)->output(0);
        shape->set_type(ir::ValueType::tensor(ir::DType::Int64, {p.input->type().rank()}));
        by = g_.create_node("Gather", {shape, constant({p.start}, true)}, 1, {{"axis", int64_t{0}}})->output(0);
        by->set_type(ir::ValueType::tensor(ir::DType::Int64, std::vector<int64_t>{}));
      }
      replace_value(g_, out, by);
    } else if (ps->size() == 1) {
      replace_value(g_, out, build((*ps)[0]));
    } else {
      splice_into_concats(out, *ps);
    }
    g_.set_insert_point(nullptr);
  }

  // Several pieces: only where every reader is a Concat along axis 0, which
  // takes the pieces in the value's place (no Concat of their own).
  void splice_into_concats(ir::Value* out, const std::vector<Piece>& ps) {
    std::vector<ir::Node*> readers;
    for (const ir::Use& u : out->uses()) {
      if (!u.user || u.user->op_type() != "Concat" || !u.user->domain().empty() || u.user->attr_i("axis", 0) != 0)
        return;  // (a graph output, or another reader)
      readers.push_back(u.user);
    }
    std::vector<ir::Value*> built;
    for (const Piece& p : ps) built.push_back(build(p));
    for (ir::Node* cat : readers) {
      if (std::find(cat->inputs().begin(), cat->inputs().end(), out) == cat->inputs().end()) continue;  // (done)
      std::vector<ir::Value*> ins;
      for (ir::Value* in : cat->inputs()) {
        if (in == out) ins.insert(ins.end(), built.begin(), built.end());
        else ins.push_back(in);
      }
      cat->remove_all_inputs();
      for (ir::Value* in : ins) cat->add_input(in);
    }
  }

  ir::Graph& g_;
  std::map<std::string, Source> sources_;
  std::map<std::string, Source> seen_;  // to_string(size) -> its first read
};

}  // namespace

void read_sizes_at_inputs(ir::Model& model, const PassContext&) {
  if (model.opset < 15) return;  // (Shape's start / end)
  Rewriter(*model.graph).run();
}

}  // namespace torch2onnx::onnx_passes
