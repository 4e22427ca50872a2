// Sizes proved equal without running the model (sizes.h).
#include "onnx_passes/sizes.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onnx_passes/match.h"

namespace torch2onnx::onnx_passes::sizes {

using match::const_ints;
using match::producer_of;

Size constant_size(int64_t v) { return Size{v, {}}; }

Size sum(Size a, const Size& b) {
  a.constant += b.constant;
  a.atoms.insert(a.atoms.end(), b.atoms.begin(), b.atoms.end());
  // an atom and its negation cancel
  std::vector<std::string> kept;
  for (const std::string& x : a.atoms) {
    const std::string neg = x.rfind("-", 0) == 0 ? x.substr(1) : "-" + x;
    auto it = std::find(kept.begin(), kept.end(), neg);
    if (it != kept.end()) kept.erase(it);
    else kept.push_back(x);
  }
  std::sort(kept.begin(), kept.end());
  a.atoms = std::move(kept);
  return a;
}

Size negated(Size a) {
  a.constant = -a.constant;
  for (std::string& x : a.atoms) x = x.rfind("-", 0) == 0 ? x.substr(1) : "-" + x;
  std::sort(a.atoms.begin(), a.atoms.end());
  return a;
}

std::string to_string(const Size& a) {
  std::string out = std::to_string(a.constant);
  for (const std::string& x : a.atoms) out += (x.rfind("-", 0) == 0 ? "" : "+") + x;
  return out;
}

bool non_negative(const Size& a) {
  if (a.constant < 0) return false;
  for (const std::string& x : a.atoms)
    if (x.rfind("-", 0) == 0) return false;
  return true;
}

// max(0, a): its value, a itself when its atoms are all sizes (never negative) and its constant is not,
// else an atom of its own.
Size max0(const Size& a) {
  if (auto v = a.value()) return constant_size(std::max<int64_t>(0, *v));
  if (non_negative(a)) return a;
  return Size{0, {"max0(" + to_string(a) + ")"}};
}

bool keeps_shape(const ir::Node* n) {
  static const char* const kOps[] = {"RotaryEmbedding", "RMSNormalization", "LayerNormalization", "Identity", "Cast",
                                     "Neg", "Relu", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Exp", "Log", "Sqrt",
                                     "Erf", "Abs", "Gelu", "Swish", "Softplus", "Not", "Sin", "Cos", "Reciprocal",
                                     "Floor", "Ceil", "Round", "Sign", "Clip", "IsNaN", "IsInf", "HardSigmoid",
                                     "HardSwish", "LeakyRelu", "Elu", "Selu", "Mish", "CastLike"};
  for (const char* op : kOps)
    if (n->op_type() == op) return n->domain().empty();
  return false;
}

bool broadcasts(const ir::Node* n) {
  static const char* const kOps[] = {"Add",   "Sub",       "Mul",     "Div",  "Pow",           "Where",
                                     "And",   "Or",        "Xor",     "Max",  "Min",           "Equal",
                                     "Less",  "Greater",   "LessOrEqual",     "GreaterOrEqual", "Mod"};
  for (const char* op : kOps)
    if (n->op_type() == op) return n->domain().empty();
  return false;
}

namespace {

// The atom of dim `axis` of x, and back (value_dim).
std::string value_atom(const ir::Value* x, int64_t axis) {
  return "v:" + std::to_string(reinterpret_cast<uintptr_t>(x)) + ":" + std::to_string(axis);
}

}  // namespace

std::optional<ValueDim> value_dim(const Size& a) {
  if (a.constant != 0 || a.atoms.size() != 1 || a.atoms[0].rfind("v:", 0) != 0) return std::nullopt;
  const std::string& s = a.atoms[0];
  const size_t colon = s.find(':', 2);
  if (colon == std::string::npos) return std::nullopt;
  // (the value the atom was made of: dim_of reads values, the passes that ask rewrite them)
  auto* v = reinterpret_cast<ir::Value*>(static_cast<uintptr_t>(std::stoull(s.substr(2, colon - 2))));
  return ValueDim{v, std::stoll(s.substr(colon + 1))};
}

namespace {

// a * k for a small |k| (each atom |k| times, negated for a negative k), none for a larger one.
std::optional<Size> scaled(const Size& a, int64_t k) {
  if (k < -8 || k > 8) return std::nullopt;
  Size out = constant_size(0);
  for (int64_t i = 0; i < std::abs(k); ++i) out = sum(out, k < 0 ? negated(a) : a);
  return out;
}

// a / k when k divides its constant and each atom's count, else none.
std::optional<Size> divided(const Size& a, int64_t k) {
  if (k <= 0 || a.constant % k != 0) return std::nullopt;
  Size out = constant_size(a.constant / k);
  for (size_t i = 0; i < a.atoms.size();) {  // (sorted: equal atoms are adjacent)
    size_t j = i;
    while (j < a.atoms.size() && a.atoms[j] == a.atoms[i]) ++j;
    if ((j - i) % static_cast<size_t>(k) != 0) return std::nullopt;
    out.atoms.insert(out.atoms.end(), (j - i) / static_cast<size_t>(k), a.atoms[i]);
    i = j;
  }
  return out;
}

// The steps left to one question (dim_of / elements called from outside):
// each look through a node is one; a question that runs out is answered
// "nothing known", so a deep graph never costs more than this per question.
// Within a question each (value, axis) is answered once: element-wise chains
// (a relative-position bucket: Where / Min / Abs of one difference) read the
// same values many times over.
constexpr int64_t kSteps = 4096;
constexpr int kDepth = 64;
thread_local int64_t steps_left = 0;
thread_local int nesting = 0;
struct Memo {
  std::map<std::pair<const ir::Value*, int64_t>, Size> dims;
  std::map<const ir::Value*, std::optional<std::vector<Size>>> elements;
};
thread_local Memo memo;

struct Step {
  Step() {
    if (nesting++ == 0) {
      steps_left = kSteps;
      memo.dims.clear();
      memo.elements.clear();
    }
  }
  ~Step() { --nesting; }
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;
  bool exhausted() const { return --steps_left < 0; }
};



// min(a, b) of two sizes: an atom "min(a,b)" (each written by to_string, which starts with its constant).
Size min_of(const Size& a, const Size& b) { return Size{0, {"min(" + to_string(a) + "," + to_string(b) + ")"}}; }

// Whether d is min(o, x) or min(x, o) for some x.
bool is_min_with(const Size& d, const Size& o) {
  if (d.constant != 0 || d.atoms.size() != 1) return false;
  const std::string& m = d.atoms[0];
  const std::string first = "min(" + to_string(o) + ",", last = "," + to_string(o) + ")";
  return m.rfind("min(", 0) == 0 && (m.rfind(first, 0) == 0 || (m.size() >= last.size() &&
                                                                   m.compare(m.size() - last.size(), last.size(), last) == 0));
}

// Broadcasting's dim from the operands' aligned dims: the one Size that is
// not 1 (all 1: 1); none when two differ (one of them may be 1 at run time).
std::optional<Size> broadcast_dim(const std::vector<Size>& dims) {
  // min(a, b) beside a or b is never larger: equal to it or 1 (else the broadcast fails), and the
  // other one is the result either way
  auto bounded_by_another = [&](const Size& d) {
    for (const Size& o : dims)
      if (&o != &d && is_min_with(d, o)) return true;
    return false;
  };
  std::optional<Size> found;
  for (const Size& d : dims) {
    if (d == constant_size(1) || bounded_by_another(d)) continue;
    if (found && *found != d) return std::nullopt;
    found = d;
  }
  return found ? *found : constant_size(1);
}

}  // namespace

namespace {
Size dim_of_uncached(const ir::Value* x, int64_t axis, int depth, const Step& step);
std::optional<std::vector<Size>> elements_uncached(ir::Value* v, int depth, const Step& step);
}  // namespace

Size dim_of(const ir::Value* x, int64_t axis, int depth) {
  const Step step;
  const int64_t rank = x->type().rank_varies ? -1 : x->type().rank();
  if (axis < 0 && rank >= 0) axis += rank;
  const auto key = std::make_pair(x, axis);
  if (auto it = memo.dims.find(key); it != memo.dims.end()) return it->second;
  Size d = dim_of_uncached(x, axis, depth, step);
  memo.dims.emplace(key, d);
  return d;
}

std::optional<std::vector<Size>> elements(ir::Value* v, int depth) {
  const Step step;
  if (auto it = memo.elements.find(v); it != memo.elements.end()) return it->second;
  auto e = elements_uncached(v, depth, step);
  memo.elements.emplace(v, e);
  return e;
}

namespace {

Size dim_of_uncached(const ir::Value* x, int64_t axis, int depth, const Step& step) {
  const ir::ValueType& t = x->type();
  const int64_t rank = t.rank_varies ? -1 : t.rank();
  Size atom{0, {value_atom(x, axis)}};
  if (step.exhausted()) return atom;
  if (axis < 0 || (rank >= 0 && axis >= rank)) return atom;
  if (rank >= 0) {
    const ir::Dim& d = t.shape[static_cast<size_t>(axis)];
    if (d.is_static()) return constant_size(d.value);
    // (ONNX shape inference's "unk__N" names say nothing about equality)
    if (d.is_symbolic() && d.param.rfind("unk__", 0) != 0) return Size{0, {"p:" + d.param}};
  }
  const ir::Node* n = x->producer();
  if (!n || depth > kDepth || !n->domain().empty()) return atom;
  // (output 0 only: LayerNormalization's mean and inverse deviation have the reduced axes 1)
  if (keeps_shape(n) && n->input(0) && x == n->output(0)) return dim_of(n->input(0), axis, depth + 1);
  // Slice / Split keep the sizes of the axes they do not cut
  if ((n->op_type() == "Slice" || n->op_type() == "Split") && n->input(0) && rank >= 0) {
    std::optional<std::vector<int64_t>> cut;
    if (n->op_type() == "Split")
      cut = std::vector<int64_t>{n->attr_i("axis", 0)};
    else if (n->num_inputs() > 3 && n->input(3))
      cut = const_ints(n->input(3));
    if (!cut) return atom;
    for (int64_t c : *cut)
      if (c == axis || c + rank == axis) {
        // one axis cut with step 1 and constant bounds: x[..., -k:] has min(d, k) = d - max(0, d - k)
        // elements, x[..., :e] min(d, e), x[..., s:] max(0, d - s)
        if (n->op_type() != "Slice" || cut->size() != 1) return atom;
        const auto starts = const_ints(n->input(1)), ends = const_ints(n->input(2));
        const auto steps = n->num_inputs() > 4 && n->input(4) ? const_ints(n->input(4))
                                                               : std::optional<std::vector<int64_t>>(std::vector<int64_t>{1});
        if (starts && !ends && steps && starts->size() == 1 && (*starts)[0] == 0 && steps->size() == 1 &&
            (*steps)[0] == 1) {
          // x[..., :e] with e a size computed at run time: min(d, e), d itself where e is d
          const auto e = elements(n->input(2), depth + 1);
          if (!e || e->size() != 1 || !non_negative((*e)[0])) return atom;
          const Size d = dim_of(n->input(0), axis, depth + 1);
          if (d == (*e)[0]) return d;
          return min_of(d, (*e)[0]);
        }
        if (!starts || !ends || !steps || starts->size() != 1 || ends->size() != 1 || (*steps)[0] != 1) return atom;
        const int64_t b = (*starts)[0], e = (*ends)[0];
        const Size d = dim_of(n->input(0), axis, depth + 1);
        constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max() / 2;
        if (e >= kToEnd && b < 0) return sum(d, negated(max0(sum(d, constant_size(b)))));
        if (e >= kToEnd && b >= 0) return max0(sum(d, constant_size(-b)));
        if (b == 0 && e >= 0) return sum(d, negated(max0(sum(d, constant_size(-e)))));
        return atom;
      }
    return dim_of(n->input(0), axis, depth + 1);
  }
  if (n->op_type().rfind("Reduce", 0) == 0 && n->attr_i("keepdims", 1) == 1 && n->input(0) && rank >= 0) {
    // a reduction keeping its dims: 1 along the reduced axes (all of them when none are given)
    std::optional<std::vector<int64_t>> axes;
    if (n->has_attr("axes")) axes = n->attr_ints("axes");
    else if (n->num_inputs() > 1 && n->input(1)) axes = const_ints(n->input(1));
    else if (n->attr_i("noop_with_empty_axes", 0) == 0) axes = std::vector<int64_t>{};
    if (!axes) return atom;
    if (axes->empty()) return n->attr_i("noop_with_empty_axes", 0) == 0 ? constant_size(1) : dim_of(n->input(0), axis, depth + 1);
    for (int64_t a : *axes)
      if (a == axis || a + rank == axis) return constant_size(1);
    return dim_of(n->input(0), axis, depth + 1);
  }
  if (n->op_type() == "Transpose") {
    const std::vector<int64_t> perm = n->attr_ints("perm");
    if (axis >= static_cast<int64_t>(perm.size())) return atom;
    return dim_of(n->input(0), perm[static_cast<size_t>(axis)], depth + 1);
  }
  if (n->op_type() == "Reshape" && n->attr_i("allowzero", 0) == 0) {
    const auto to = elements(n->input(1), depth + 1);
    if (!to || axis >= static_cast<int64_t>(to->size())) return atom;
    const Size& e = (*to)[static_cast<size_t>(axis)];
    if (e == constant_size(0)) return dim_of(n->input(0), axis, depth + 1);
    if (!(e == constant_size(-1))) return e;
    // the -1: the input's sizes over the other ones, once the sizes they share cancel
    const int64_t in_rank = n->input(0)->type().rank_varies ? -1 : n->input(0)->type().rank();
    if (in_rank < 0) return atom;
    std::vector<Size> in;
    for (int64_t k = 0; k < in_rank; ++k) in.push_back(dim_of(n->input(0), k, depth + 1));
    int64_t num = 1, den = 1;
    for (size_t k = 0; k < to->size(); ++k) {
      if (static_cast<int64_t>(k) == axis) continue;
      Size o = (*to)[k];
      if (o == constant_size(0)) o = k < in.size() ? in[k] : atom;
      auto same = std::find(in.begin(), in.end(), o);
      if (same != in.end()) {
        in.erase(same);
      } else if (auto v = o.value(); v && *v > 0) {
        den *= *v;
      } else {
        return atom;
      }
    }
    // what is left: constants (the -1 is their product over the new sizes'), or one size times constants
    // (view(-1, seq) of [batch, seq]: batch)
    const Size* rest = nullptr;
    for (const Size& i : in) {
      if (auto v = i.value()) {
        num *= *v;
      } else if (rest) {
        return atom;
      } else {
        rest = &i;
      }
    }
    if (rest) {  // rest * num / den: [b * h, s, d] viewed as [-1, h, s, d] has b rows
      if (num <= 0) return atom;
      if (num % den == 0) return scaled(*rest, num / den).value_or(atom);
      if (den % num == 0) return divided(*rest, den / num).value_or(atom);
      return atom;
    }
    return den > 0 && num % den == 0 ? constant_size(num / den) : atom;
  }
  if (n->op_type() == "Concat" && rank >= 0) {
    int64_t a = n->attr_i("axis", 0);
    if (a < 0) a += rank;
    if (a != axis) {  // the inputs agree off the axis: the first that says more than "a dim of some value"
      Size first;
      for (size_t i = 0; i < n->num_inputs(); ++i) {
        if (!n->input(i)) return atom;
        Size d = dim_of(n->input(i), axis, depth + 1);
        if (!value_dim(d)) return d;
        if (i == 0) first = d;
      }
      return first;
    }
    Size s;
    for (const ir::Value* in : n->inputs()) {
      if (!in) return atom;
      s = sum(s, dim_of(in, axis, depth + 1));
    }
    return s;
  }
  if (n->op_type() == "Unsqueeze" && rank >= 0) {
    auto axes = const_ints(n->input(1));
    if (!axes) return atom;
    int64_t before = 0;
    for (int64_t a : *axes) {
      if (a < 0) a += rank;
      if (a == axis) return constant_size(1);
      before += a < axis;
    }
    return dim_of(n->input(0), axis - before, depth + 1);
  }
  if (n->op_type() == "Gather" && rank >= 0) {
    const ir::Value *data = n->input(0), *idx = n->input(1);
    const int64_t rd = data->type().rank();
    const int64_t ri = idx->constant() ? static_cast<int64_t>(idx->constant()->dims().size()) : idx->type().rank();
    int64_t a = n->attr_i("axis", 0);
    if (a < 0) a += rd;
    if (rd < 0 || ri < 0 || a < 0 || a >= rd) return atom;
    if (axis < a) return dim_of(data, axis, depth + 1);
    if (axis < a + ri) return dim_of(idx, axis - a, depth + 1);
    return dim_of(data, axis - ri + 1, depth + 1);
  }
  if (n->op_type() == "MatMul" && rank >= 2) {
    const ir::Value *a = n->input(0), *b = n->input(1);
    const int64_t ra = a->type().rank(), rb = b->type().rank();
    if (ra < 2 || rb < 2) return atom;
    if (axis == rank - 1) return dim_of(b, rb - 1, depth + 1);
    if (axis == rank - 2) return dim_of(a, ra - 2, depth + 1);
    std::vector<Size> aligned;  // the batch dims broadcast
    if (axis - (rank - ra) >= 0) aligned.push_back(dim_of(a, axis - (rank - ra), depth + 1));
    if (axis - (rank - rb) >= 0) aligned.push_back(dim_of(b, axis - (rank - rb), depth + 1));
    if (auto d = broadcast_dim(aligned)) return *d;
    return atom;
  }
  if (n->op_type() == "Attention" && rank == 4 && x == n->output(0)) {  // [b, q heads, q length, v head size]
    const ir::Value *q = n->input(0), *v = n->input(2);
    if (q->type().rank() != 4 || v->type().rank() != 4) return atom;
    return axis == 3 ? dim_of(v, 3, depth + 1) : dim_of(q, axis, depth + 1);
  }
  if (n->op_type() == "ConstantOfShape") {  // its input's elements (a mask filled to [seq, seq])
    const auto to = elements(n->input(0), depth + 1);
    if (!to || axis >= static_cast<int64_t>(to->size())) return atom;
    return (*to)[static_cast<size_t>(axis)];
  }
  if (n->op_type() == "Range") {  // Range(s, l, 1): max(0, l - s) elements (arange(past, past + seq): seq)
    auto start = elements(n->input(0), depth + 1), limit = elements(n->input(1), depth + 1);
    auto delta = const_ints(n->input(2));
    if (start && delta && limit && start->size() == 1 && delta->size() == 1 && (*delta)[0] == 1 && limit->size() == 1)
      return max0(sum((*limit)[0], negated((*start)[0])));
    return atom;
  }
  if (rank >= 0 && (broadcasts(n) || n->op_type() == "Expand")) {
    std::vector<Size> aligned;  // each operand's dim aligned with `axis` (operands are right-aligned)
    const size_t operands = n->op_type() == "Expand" ? 1 : n->num_inputs();
    for (size_t i = 0; i < operands; ++i) {
      const ir::Value* in = n->input(i);
      if (!in || in->type().rank_varies || !in->type().has_shape) return atom;
      const int64_t k = axis - (rank - in->type().rank());
      if (k >= 0) aligned.push_back(dim_of(in, k, depth + 1));
    }
    if (n->op_type() == "Expand") {
      const auto to = elements(n->input(1), depth + 1);
      if (!to) return atom;
      const int64_t k = axis - (rank - static_cast<int64_t>(to->size()));
      if (k >= 0) aligned.push_back((*to)[static_cast<size_t>(k)]);
    }
    if (auto d = broadcast_dim(aligned)) return *d;
  }
  return atom;
}

// The elements of a 1-D int64 shape computation (Shape, Gather/Slice of it,
// Unsqueeze, Concat, constants, and the Abs(s) that expand's lowering puts
// around its sizes, or the Where(Equal(s, -1), 1, s) of other writers), or
// none if it is something else.
std::optional<std::vector<Size>> elements_uncached(ir::Value* v, int depth, const Step& step) {
  if (step.exhausted()) return std::nullopt;
  if (!v || depth > kDepth) return std::nullopt;
  if (auto c = const_ints(v)) {
    std::vector<Size> out;
    for (int64_t x : *c) out.push_back(constant_size(x));
    return out;
  }
  ir::Node* n = v->producer();
  if (!n || !n->domain().empty()) return std::nullopt;
  const std::string& op = n->op_type();
  if (op == "Shape") {
    ir::Value* x = n->input(0);
    const int64_t rank = x ? x->type().rank() : -1;
    if (rank < 0 || x->type().rank_varies) return std::nullopt;
    auto clamp = [&](int64_t k) { return std::max<int64_t>(0, std::min(rank, k < 0 ? k + rank : k)); };
    const int64_t start = clamp(n->attr_i("start", 0)), end = clamp(n->attr_i("end", rank));
    std::vector<Size> out;
    for (int64_t k = start; k < end; ++k) out.push_back(dim_of(x, k, depth + 1));
    return out;
  }
  if (op == "Concat") {
    if (n->attr_i("axis", 0) != 0) return std::nullopt;
    std::vector<Size> out;
    for (ir::Value* in : n->inputs()) {
      auto e = elements(in, depth + 1);
      if (!e) return std::nullopt;
      out.insert(out.end(), e->begin(), e->end());
    }
    return out;
  }
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Identity" ||
      (op == "Cast" && n->attr_i("to", 0) == static_cast<int64_t>(ir::DType::Int64))) {
    auto e = elements(n->input(0), depth + 1);  // (a 0-d or [1] value: its one element)
    if (!e || (op != "Identity" && op != "Cast" && e->size() != 1)) return std::nullopt;
    return e;
  }
  if (op == "Gather") {
    auto e = elements(n->input(0), depth + 1);
    auto idx = const_ints(n->input(1));
    if (!e || !idx || n->attr_i("axis", 0) != 0) return std::nullopt;
    std::vector<Size> out;
    const int64_t size = static_cast<int64_t>(e->size());
    for (int64_t i : *idx) {
      if (i < 0) i += size;
      if (i < 0 || i >= size) return std::nullopt;
      out.push_back((*e)[static_cast<size_t>(i)]);
    }
    return out;
  }
  if (op == "Slice") {
    auto e = elements(n->input(0), depth + 1);
    auto starts = const_ints(n->input(1)), ends = const_ints(n->input(2));
    if (!e || !starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
    if (n->num_inputs() > 3 && n->input(3)) {
      auto axes = const_ints(n->input(3));
      if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
    }
    if (n->num_inputs() > 4 && n->input(4)) {
      auto steps = const_ints(n->input(4));
      if (!steps || steps->size() != 1 || (*steps)[0] != 1) return std::nullopt;
    }
    const int64_t size = static_cast<int64_t>(e->size());
    auto clamp = [&](int64_t k) { return std::max<int64_t>(0, std::min(size, k < 0 ? k + size : k)); };
    const int64_t s = clamp((*starts)[0]), t = clamp((*ends)[0]);
    return std::vector<Size>(e->begin() + s, e->begin() + std::max(s, t));
  }
  if (op == "Where") {
    // Where(Equal(s, -1), 1, s): a size is never -1, so s (a constant -1 becomes 1).
    ir::Node* eq = producer_of(n->input(0), "Equal");
    auto minus_one = eq ? const_ints(eq->input(1)) : std::nullopt;
    auto one = const_ints(n->input(1));
    if (!eq || eq->input(0) != n->input(2) || !minus_one || minus_one->size() != 1 || (*minus_one)[0] != -1 ||
        !one || one->size() != 1 || (*one)[0] != 1)
      return std::nullopt;
    auto e = elements(n->input(2), depth + 1);
    if (!e) return std::nullopt;
    for (Size& r : *e)
      if (r == constant_size(-1)) r = constant_size(1);
    return e;
  }
  if (op == "Abs") {  // (expand's lowering: |-1| = 1, sizes unchanged)
    auto e = elements(n->input(0), depth + 1);
    if (!e) return std::nullopt;
    for (Size& r : *e) {
      if (r == constant_size(-1)) r = constant_size(1);
      else if (r.value() && *r.value() < 0) return std::nullopt;
    }
    return e;
  }
  if (op == "Div" || op == "Mod") {  // (elements() holds integer shape computations only)
    // (b * h) / h: b, and (b * h) % h: 0, when h divides every term (the floor division PyTorch's
    // exporters write as (x - x % h) / h)
    auto a = elements(n->input(0), depth + 1), c = elements(n->input(1), depth + 1);
    if (!a || !c || a->size() != 1 || c->size() != 1 || !(*c)[0].value() || *(*c)[0].value() <= 0) return std::nullopt;
    const auto out = divided((*a)[0], *(*c)[0].value());
    if (!out) return std::nullopt;
    return std::vector<Size>{op == "Mod" ? constant_size(0) : *out};
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Max") {
    auto a = elements(n->input(0), depth + 1), b = elements(n->input(1), depth + 1);
    if (!a || !b || a->size() != 1 || b->size() != 1) return std::nullopt;
    const Size &x = (*a)[0], &y = (*b)[0];
    if (op == "Add") return std::vector<Size>{sum(x, y)};
    if (op == "Sub") return std::vector<Size>{sum(x, negated(y))};
    if (op == "Max") {  // max(0, s)
      if (x == constant_size(0)) return std::vector<Size>{max0(y)};
      if (y == constant_size(0)) return std::vector<Size>{max0(x)};
      return std::nullopt;
    }
    // a product by a small constant: the atoms repeated (negated for a negative factor)
    const Size& other = x.value() ? y : x;
    const auto factor = x.value() ? x.value() : y.value();
    const auto out = factor ? scaled(other, *factor) : std::nullopt;
    if (!out) return std::nullopt;
    return std::vector<Size>{*out};
  }
  return std::nullopt;
}

}  // namespace

}  // namespace torch2onnx::onnx_passes::sizes
