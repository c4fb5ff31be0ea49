/// \file
/// Pure expansions of the recurrent layers RNN, GRU and LSTM, unrolled over
/// the (static) sequence: each time step of each direction is a handful of
/// maps, so every product and every gate is visible to later tiers.
///
/// The hidden state lives in a transient S [T + 1, directions, batch,
/// hidden] (and LSTM's cell in C, alike): S[0] is the initial state, step s
/// writes S[s + 1]. A step's maps: the gate pre-activations G [batch,
/// gates·hidden] start at the biases, gain X[t]·Wᵀ and S[s]·Rᵀ by
/// Sum-resolved contractions, and one elementwise map applies the
/// activations and writes S[s + 1] (and C, and Y at time t). GRU's
/// candidate gate needs the reset gate first, so its recurrent product is a
/// second contraction over r ⊙ S[s] (or, with linear_before_reset, over
/// S[s], multiplied by r afterwards). The reverse direction walks t from the
/// end. With sequence_lens (forward only), a batch row past its length
/// keeps its state and gets zeros in Y. Y_h (and Y_c) copy S[T] (C[T]).

#include "transforms/operators/expansion.h"

#include <functional>
#include <optional>

namespace weir::operators {
namespace {

using ir::Expr;

enum class Cell { Rnn, Gru, Lstm };

std::string num(double v) { return ExpansionContext::floatLiteral(v); }

/// The tasklet expression of activation `name` applied to `x`.
std::string activation(ExpansionContext &ctx, const std::string &name,
                       std::optional<double> alpha, std::optional<double> beta,
                       const std::string &x) {
  auto a = [&](double d) { return num(alpha.value_or(d)); };
  auto b = [&](double d) { return num(beta.value_or(d)); };
  if (name == "Sigmoid")
    return "sigmoid(" + x + ")";
  if (name == "Tanh")
    return "tanh(" + x + ")";
  if (name == "Relu")
    return "max(" + x + ", 0.0)";
  if (name == "LeakyRelu")
    return "select(" + x + " < 0.0, " + a(0.01) + " * " + x + ", " + x + ")";
  if (name == "ThresholdedRelu")
    return "select(" + x + " > " + a(1.0) + ", " + x + ", 0.0)";
  if (name == "ScaledTanh")
    return a(1.0) + " * tanh(" + b(1.0) + " * " + x + ")";
  if (name == "HardSigmoid")
    return "max(0.0, min(1.0, " + a(0.2) + " * " + x + " + " + b(0.5) + "))";
  if (name == "Elu")
    return "select(" + x + " < 0.0, " + a(1.0) + " * (exp(" + x + ") - 1.0), " +
           x + ")";
  if (name == "Softsign")
    return x + " / (1.0 + abs(" + x + "))";
  if (name == "Softplus")
    return "log(exp(" + x + ") + 1.0)";
  if (name == "Affine")
    return a(1.0) + " * " + x + " + " + b(0.0);
  ctx.fail("activation '" + name + "' is not supported");
}

struct Layer {
  Cell cell;
  std::int64_t gates = 1, hidden = 0, steps = 0, batch = 0, input = 0;
  std::int64_t directions = 1;
  bool batchFirst = false;
  std::vector<bool> reverse; ///< per direction
  /// Activation expressions per direction: f (and g, h) as functions of
  /// their argument.
  std::vector<std::vector<std::function<std::string(const std::string &)>>> act;
  std::optional<double> clip;
};

Layer readLayer(ExpansionContext &ctx, Cell cell) {
  Layer l;
  l.cell = cell;
  l.gates = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4;
  const ir::Container &x = ctx.requireInput("X");
  const ir::Container &w = ctx.requireInput("W");
  const ir::Container &r = ctx.requireInput("R");
  if (!ir::isFloat(x.dtype))
    ctx.fail("the input must be floating point");
  if (x.shape.size() != 3 || w.shape.size() != 3 || r.shape.size() != 3)
    ctx.fail("X, W and R must have rank 3");
  l.batchFirst = ctx.intAttr("layout", 0) != 0;
  l.steps = ctx.constantDim(x.shape[l.batchFirst ? 1 : 0]);
  l.batch = ctx.constantDim(x.shape[l.batchFirst ? 0 : 1]);
  l.input = ctx.constantDim(x.shape[2]);
  l.directions = ctx.constantDim(w.shape[0]);
  l.hidden = ctx.intAttr("hidden_size", ctx.constantDim(r.shape[2]));
  if (ctx.constantDim(w.shape[1]) != l.gates * l.hidden ||
      ctx.constantDim(w.shape[2]) != l.input ||
      ctx.constantDim(r.shape[1]) != l.gates * l.hidden ||
      ctx.constantDim(r.shape[2]) != l.hidden ||
      ctx.constantDim(r.shape[0]) != l.directions)
    ctx.fail("W and R do not fit hidden_size " + std::to_string(l.hidden) +
             " and the input's " + std::to_string(l.input) + " features");
  std::string direction = ctx.stringAttr("direction", "forward");
  if (direction == "bidirectional")
    l.reverse = {false, true};
  else if (direction == "forward" || direction == "reverse")
    l.reverse = {direction == "reverse"};
  else
    ctx.fail("direction '" + direction + "' is not supported");
  if (std::int64_t(l.reverse.size()) != l.directions)
    ctx.fail("W has " + std::to_string(l.directions) +
             " directions where direction '" + direction + "' needs " +
             std::to_string(l.reverse.size()));
  if (ctx.hasAttr("clip"))
    l.clip = ctx.floatAttr("clip", 0);

  std::vector<std::string> defaults =
      cell == Cell::Rnn   ? std::vector<std::string>{"Tanh"}
      : cell == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                          : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  std::vector<std::string> names;
  if (ctx.hasAttr("activations")) {
    const auto &attrs = ctx.library().attributes;
    const auto *list =
        std::get_if<std::vector<std::string>>(&attrs.at("activations"));
    if (!list)
      ctx.fail("activations must be a list of strings");
    names = *list;
  }
  std::size_t per = defaults.size();
  if (names.empty())
    for (std::int64_t d = 0; d < l.directions; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() != per * std::size_t(l.directions))
    ctx.fail(std::to_string(names.size()) + " activations where " +
             std::to_string(per * std::size_t(l.directions)) + " are needed");
  if (ctx.hasAttr("activation_alpha") || ctx.hasAttr("activation_beta"))
    ctx.fail("activation_alpha and activation_beta are not supported");
  for (std::int64_t d = 0; d < l.directions; ++d) {
    l.act.emplace_back();
    for (std::size_t k = 0; k < per; ++k) {
      std::string name = names[std::size_t(d) * per + k];
      activation(ctx, name, std::nullopt, std::nullopt, "v"); // validates
      l.act.back().push_back([&ctx, name](const std::string &v) {
        return activation(ctx, name, std::nullopt, std::nullopt, v);
      });
    }
  }
  return l;
}

/// The pre-activation `v` clipped to [-clip, clip] when the layer clips.
std::string clipped(const Layer &l, const std::string &v) {
  if (!l.clip)
    return v;
  return "min(max(" + v + ", " + num(-*l.clip) + "), " + num(*l.clip) + ")";
}

Expander recurrent(Cell cell) {
  return [cell](ExpansionContext &ctx) {
    Layer l = readLayer(ctx, cell);
    const ir::Container &x = ctx.requireInput("X");
    const ir::Container &w = ctx.requireInput("W");
    const ir::Container &r = ctx.requireInput("R");
    const ir::Container *bias = ctx.input("B");
    const ir::Container *lens = ctx.input("sequence_lens");
    const ir::Container *h0 = ctx.input("initial_h");
    const ir::Container *c0 = ctx.input("initial_c");
    const ir::Container *peep = ctx.input("P");
    const ir::Container *y = ctx.output("Y");
    const ir::Container *yh = ctx.output("Y_h");
    const ir::Container *yc = ctx.output("Y_c");
    bool lstm = cell == Cell::Lstm, gru = cell == Cell::Gru;
    bool linearBeforeReset = gru && ctx.intAttr("linear_before_reset", 0) != 0;
    bool inputForget = lstm && ctx.intAttr("input_forget", 0) != 0;
    if (lens && (l.reverse.size() > 1 || l.reverse[0]))
      ctx.fail("sequence_lens with a reverse direction is not supported");
    if (lens && lens->dtype != ir::DType::I32 && lens->dtype != ir::DType::I64)
      ctx.fail("sequence_lens must be int32 or int64");
    std::string dt(ir::dtypeName(x.dtype));
    std::string zero = dt + "(0)";
    const std::int64_t H = l.hidden, GH = l.gates * H;
    // The optional inputs' shapes, so a malformed one is named here rather
    // than read out of its bounds.
    auto requireShape = [&](const ir::Container *c, const char *what,
                            std::vector<std::int64_t> want) {
      if (!c)
        return;
      std::vector<std::int64_t> got;
      for (const Expr &e : c->shape)
        got.push_back(ctx.constantDim(e));
      if (got != want)
        ctx.fail(std::string(what) + " has the wrong shape");
    };
    std::vector<std::int64_t> state =
        l.batchFirst ? std::vector<std::int64_t>{l.batch, l.directions, H}
                     : std::vector<std::int64_t>{l.directions, l.batch, H};
    requireShape(bias, "B", {l.directions, 2 * GH});
    requireShape(lens, "sequence_lens", {l.batch});
    requireShape(h0, "initial_h", state);
    requireShape(c0, "initial_c", state);
    requireShape(peep, "P", {l.directions, 3 * H});
    const Expr T(l.steps), Dn(l.directions), Bn(l.batch), Hn(H);

    auto b = Expr::symbol("b"), j = Expr::symbol("j"), k = Expr::symbol("k"),
         g = Expr::symbol("g");
    auto full = [](std::initializer_list<Expr> e) {
      std::vector<ir::Range> out;
      for (const Expr &v : e)
        out.emplace_back(Expr(0), v);
      return out;
    };
    // A [directions, batch, hidden] value's index for (d, b, j), batch
    // first under layout 1.
    auto stateIndex = [&](std::int64_t d) {
      return l.batchFirst ? std::vector<Expr>{b, Expr(d), j}
                          : std::vector<Expr>{Expr(d), b, j};
    };

    std::string S =
        ctx.addTransient("hidden", x.dtype, {T + Expr(1), Dn, Bn, Hn});
    std::string C =
        lstm ? ctx.addTransient("cell", x.dtype, {T + Expr(1), Dn, Bn, Hn})
             : "";
    for (std::int64_t d = 0; d < l.directions; ++d) {
      std::string ds = std::to_string(d);
      std::vector<Expr> at0{Expr(0), Expr(d), b, j};
      if (h0)
        ctx.addMap("h0_" + ds, {"b", "j"}, full({Bn, Hn}),
                   {{"v", h0->name, stateIndex(d)}}, "s = v", {{"s", S, at0}});
      else
        ctx.addMap("h0_" + ds, {"b", "j"}, full({Bn, Hn}), {}, "s = " + zero,
                   {{"s", S, at0}});
      if (lstm) {
        if (c0)
          ctx.addMap("c0_" + ds, {"b", "j"}, full({Bn, Hn}),
                     {{"v", c0->name, stateIndex(d)}}, "c = v",
                     {{"c", C, at0}});
        else
          ctx.addMap("c0_" + ds, {"b", "j"}, full({Bn, Hn}), {}, "c = " + zero,
                     {{"c", C, at0}});
      }
    }

    for (std::int64_t d = 0; d < l.directions; ++d) {
      const auto &act = l.act[std::size_t(d)];
      for (std::int64_t s = 0; s < l.steps; ++s) {
        std::int64_t t = l.reverse[std::size_t(d)] ? l.steps - 1 - s : s;
        std::string tag = std::to_string(d) + "_" + std::to_string(s);
        std::vector<Expr> xAt = l.batchFirst ? std::vector<Expr>{b, Expr(t), k}
                                             : std::vector<Expr>{Expr(t), b, k};
        std::vector<Expr> now{Expr(s), Expr(d), b, k};

        // Gate pre-activations: biases, then X[t]·Wᵀ, then S[s]·Rᵀ (GRU:
        // the update and reset gates only).
        std::string G =
            ctx.addTransient("gates" + tag, x.dtype, {Bn, Expr(GH)});
        if (bias) {
          // GRU with linear_before_reset keeps R's candidate bias for later.
          std::string code =
              linearBeforeReset
                  ? "v = select(q < " + std::to_string(2 * H) + ", wb + rb, wb)"
                  : "v = wb + rb";
          std::vector<ir::MappedInput> in{
              {"wb", bias->name, {Expr(d), g}},
              {"rb", bias->name, {Expr(d), g + Expr(GH)}}};
          if (linearBeforeReset)
            in.push_back(
                {"q", ctx.addIota("gate" + tag, ir::DType::I64, GH), {g}});
          ctx.addMap("bias" + tag, {"b", "g"}, full({Bn, Expr(GH)}), in, code,
                     {{"v", G, {b, g}}});
        } else {
          ctx.addMap("bias" + tag, {"b", "g"}, full({Bn, Expr(GH)}), {},
                     "v = " + zero, {{"v", G, {b, g}}});
        }
        ctx.addMap("input" + tag, {"b", "g", "k"},
                   full({Bn, Expr(GH), Expr(l.input)}),
                   {{"x", x.name, xAt}, {"w", w.name, {Expr(d), g, k}}},
                   "v = x * w", {{"v", G, {b, g}, ir::Wcr::Sum}});
        std::int64_t recurrentGates = gru ? 2 * H : GH;
        ctx.addMap("recurrent" + tag, {"b", "g", "k"},
                   full({Bn, Expr(recurrentGates), Hn}),
                   {{"h", S, now}, {"r", r.name, {Expr(d), g, k}}}, "v = h * r",
                   {{"v", G, {b, g}, ir::Wcr::Sum}});

        std::vector<Expr> next{Expr(s + 1), Expr(d), b, j};
        std::vector<Expr> prev{Expr(s), Expr(d), b, j};
        std::vector<ir::MappedInput> in{{"h", S, prev}};
        std::vector<ir::MappedOutput> out{{"s", S, next, std::nullopt}};
        std::string code;
        auto gate = [&](std::int64_t which) {
          return std::vector<Expr>{b, j + Expr(which * H)};
        };
        if (cell == Cell::Rnn) {
          in.push_back({"a", G, gate(0)});
          code = "n = " + act[0](clipped(l, "a")) + "\n";
        } else if (lstm) {
          in.push_back({"gi", G, gate(0)});
          in.push_back({"go", G, gate(1)});
          in.push_back({"gf", G, gate(2)});
          in.push_back({"gc", G, gate(3)});
          in.push_back({"c", C, prev});
          std::string pi = "0.0", po = "0.0", pf = "0.0";
          if (peep) {
            in.push_back({"pi", peep->name, {Expr(d), j}});
            in.push_back({"po", peep->name, {Expr(d), j + Hn}});
            in.push_back({"pf", peep->name, {Expr(d), j + Expr(2 * H)}});
            pi = "pi", po = "po", pf = "pf";
          }
          code = "i = " + act[0](clipped(l, "gi + " + pi + " * c")) + "\n";
          code +=
              inputForget
                  ? "f = 1.0 - i\n"
                  : "f = " + act[0](clipped(l, "gf + " + pf + " * c")) + "\n";
          code += "u = " + act[1](clipped(l, "gc")) + "\n";
          code += "m = f * c + i * u\n";
          code += "o = " + act[0](clipped(l, "go + " + po + " * m")) + "\n";
          code += "n = o * " + act[2]("m") + "\n";
          out.push_back({"cn", C, next, std::nullopt});
        } else {
          // GRU: the reset gate, then the candidate's recurrent product.
          std::string rs = ctx.addTransient("reset" + tag, x.dtype, {Bn, Hn});
          std::string hc =
              ctx.addTransient("candidate" + tag, x.dtype, {Bn, Hn});
          ctx.addMap("reset" + tag, {"b", "j"}, full({Bn, Hn}),
                     {{"a", G, gate(1)}, {"h", S, prev}},
                     "z = " + act[0](clipped(l, "a")) + "\nv = " +
                         (linearBeforeReset ? std::string("z") : "z * h"),
                     {{"v", rs, {b, j}}});
          if (linearBeforeReset && bias)
            ctx.addMap("candidate_bias" + tag, {"b", "j"}, full({Bn, Hn}),
                       {{"rb", bias->name, {Expr(d), j + Expr(GH + 2 * H)}}},
                       "v = rb", {{"v", hc, {b, j}}});
          else
            ctx.addMap("candidate_bias" + tag, {"b", "j"}, full({Bn, Hn}), {},
                       "v = " + zero, {{"v", hc, {b, j}}});
          std::vector<Expr> from{Expr(s), Expr(d), b, k};
          std::vector<ir::MappedInput> product{
              {"r", r.name, {Expr(d), j + Expr(2 * H), k}}};
          if (linearBeforeReset)
            product.push_back({"h", S, from});
          else
            product.push_back({"h", rs, {b, k}});
          ctx.addMap("candidate" + tag, {"b", "j", "k"}, full({Bn, Hn, Hn}),
                     product, "v = h * r", {{"v", hc, {b, j}, ir::Wcr::Sum}});
          in.push_back({"az", G, gate(0)});
          in.push_back({"ah", G, gate(2)});
          in.push_back({"hr", hc, {b, j}});
          in.push_back({"rr", rs, {b, j}});
          code = "z = " + act[0](clipped(l, "az")) + "\n";
          std::string candidate =
              linearBeforeReset ? "ah + rr * hr" : "ah + hr";
          code += "u = " + act[1](clipped(l, candidate)) + "\n";
          code += "n = (1.0 - z) * u + z * h\n";
        }
        std::string keep = "";
        if (lens) {
          in.push_back({"len", lens->name, {b}});
          keep = "i64(len) > " + std::to_string(t);
        }
        auto masked = [&](const std::string &v, const std::string &old) {
          return keep.empty() ? v
                              : "select(" + keep + ", " + v + ", " + old + ")";
        };
        code += "s = " + masked("n", "h") + "\n";
        if (lstm)
          code += "cn = " + masked("m", "c") + "\n";
        if (y) {
          std::vector<Expr> yAt =
              l.batchFirst ? std::vector<Expr>{b, Expr(t), Expr(d), j}
                           : std::vector<Expr>{Expr(t), Expr(d), b, j};
          code += "y = " + masked("n", zero) + "\n";
          out.push_back({"y", y->name, yAt, std::nullopt});
        }
        ctx.addMap("step" + tag, {"b", "j"}, full({Bn, Hn}), in, code, out);
      }
    }
    for (std::int64_t d = 0; d < l.directions; ++d) {
      std::vector<Expr> last{T, Expr(d), b, j};
      if (yh)
        ctx.addMap("y_h" + std::to_string(d), {"b", "j"}, full({Bn, Hn}),
                   {{"s", S, last}}, "v = s", {{"v", yh->name, stateIndex(d)}});
      if (yc && lstm)
        ctx.addMap("y_c" + std::to_string(d), {"b", "j"}, full({Bn, Hn}),
                   {{"c", C, last}}, "v = c", {{"v", yc->name, stateIndex(d)}});
    }
  };
}

const ExpansionRegistrar kRnn{
    {"RNN", "pure", "unrolled over the sequence: gate products, activation",
     recurrent(Cell::Rnn)},
    true};
const ExpansionRegistrar kGru{
    {"GRU", "pure",
     "unrolled over the sequence: gate products, reset gate, candidate",
     recurrent(Cell::Gru)},
    true};
const ExpansionRegistrar kLstm{
    {"LSTM", "pure",
     "unrolled over the sequence: gate products, cell and hidden state",
     recurrent(Cell::Lstm)},
    true};

} // namespace
} // namespace weir::operators
