/// \file
/// Pure expansion of Einsum: one map over every letter of the equation,
/// whose tasklet multiplies the operands' elements and, when a letter is
/// summed away, adds the product into the output through a Sum resolution.
/// A letter repeated within one operand reads its diagonal (the same map
/// parameter on both axes); "..." stands for the operands' leading axes,
/// aligned on the right and broadcast where one has extent 1. Without
/// "->" the output is the ellipsis, then the letters seen once, in
/// alphabetical order (numpy's implicit mode).

#include "transforms/operators/expansion.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace weir::operators {
namespace {

using ir::Expr;

/// One side of the equation: its letters, with the ellipsis as '.'.
struct Term {
  std::string letters;
  bool ellipsis = false;
};

Term parseTerm(ExpansionContext &ctx, const std::string &text) {
  Term t;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (std::isalpha(static_cast<unsigned char>(ch))) {
      t.letters += ch;
    } else if (text.compare(i, 3, "...") == 0 && !t.ellipsis) {
      t.ellipsis = true;
      t.letters += '.';
      i += 2;
    } else {
      ctx.fail("equation term '" + text + "' has '" + std::string(1, ch) +
               "' where a letter or one '...' belongs");
    }
  }
  return t;
}

/// The map parameter of a letter, or of ellipsis axis k (counted from the
/// right).
std::string letterParam(char letter) { return std::string("l_") + letter; }
std::string ellipsisParam(std::size_t fromRight) {
  return "e" + std::to_string(fromRight);
}

void expandEinsum(ExpansionContext &ctx) {
  std::string equation;
  for (char ch : ctx.stringAttr("equation", ""))
    if (ch != ' ')
      equation += ch;
  if (equation.empty())
    ctx.fail("the equation is empty");
  std::vector<const ir::Container *> operands = ctx.variadicInputs("Inputs");
  const ir::Container &y = ctx.requireOutput("Output");
  std::size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::vector<Term> terms;
  for (std::size_t begin = 0;;) {
    std::size_t comma = lhs.find(',', begin);
    terms.push_back(parseTerm(ctx, lhs.substr(begin, comma - begin)));
    if (comma == std::string::npos)
      break;
    begin = comma + 1;
  }
  if (terms.size() != operands.size())
    ctx.fail("the equation has " + std::to_string(terms.size()) +
             " operands, the node " + std::to_string(operands.size()));

  // Extents of letters and of ellipsis axes (from the right).
  std::map<char, Expr> extent;
  std::vector<Expr> ellipsisExtent;
  std::map<char, int> seen;
  for (std::size_t o = 0; o < operands.size(); ++o) {
    const Term &t = terms[o];
    const std::vector<Expr> &shape = operands[o]->shape;
    std::size_t named = t.letters.size() - (t.ellipsis ? 1 : 0);
    if (shape.size() < named || (!t.ellipsis && shape.size() != named))
      ctx.fail("operand " + std::to_string(o) + " has rank " +
               std::to_string(shape.size()) + " where '" + t.letters +
               "' names " + std::to_string(named) + " axes");
    std::size_t spread = shape.size() - named, axis = 0;
    for (char ch : t.letters) {
      if (ch == '.') {
        for (std::size_t k = 0; k < spread; ++k) {
          std::size_t fromRight = spread - 1 - k;
          const Expr &d = shape[axis + k];
          if (ellipsisExtent.size() <= fromRight)
            ellipsisExtent.resize(fromRight + 1, Expr(1));
          Expr &e = ellipsisExtent[fromRight];
          if (e.asConstant() == 1)
            e = d;
          else if (d.asConstant() != 1 && !(d == e))
            ctx.fail("the '...' axes of the operands do not broadcast");
        }
        axis += spread;
        continue;
      }
      const Expr &d = shape[axis++];
      auto [at, fresh] = extent.emplace(ch, d);
      if (!fresh && !(at->second == d))
        ctx.fail("letter '" + std::string(1, ch) + "' has extents " +
                 at->second.str() + " and " + d.str());
      ++seen[ch];
    }
  }

  Term out;
  if (arrow != std::string::npos) {
    out = parseTerm(ctx, equation.substr(arrow + 2));
  } else {
    out.ellipsis = !ellipsisExtent.empty();
    if (out.ellipsis)
      out.letters += '.';
    for (const auto &[ch, count] : seen)
      if (count == 1)
        out.letters += ch;
  }
  std::vector<Expr> outIndex;
  for (char ch : out.letters) {
    if (ch == '.') {
      for (std::size_t k = ellipsisExtent.size(); k-- > 0;)
        outIndex.push_back(Expr::symbol(ellipsisParam(k)));
    } else if (!extent.count(ch)) {
      ctx.fail("output letter '" + std::string(1, ch) + "' is in no operand");
    } else if (std::count(out.letters.begin(), out.letters.end(), ch) > 1) {
      ctx.fail("output letter '" + std::string(1, ch) + "' repeats");
    } else {
      outIndex.push_back(Expr::symbol(letterParam(ch)));
    }
  }
  if (outIndex.size() != y.shape.size())
    ctx.fail("the output has rank " + std::to_string(y.shape.size()) +
             " where the equation gives " + std::to_string(outIndex.size()));

  // The map: ellipsis axes, then letters, each once.
  std::vector<std::string> params;
  std::vector<ir::Range> ranges;
  for (std::size_t k = ellipsisExtent.size(); k-- > 0;) {
    params.push_back(ellipsisParam(k));
    ranges.emplace_back(Expr(0), ellipsisExtent[k]);
  }
  bool summed = false;
  for (const auto &[ch, d] : extent) {
    params.push_back(letterParam(ch));
    ranges.emplace_back(Expr(0), d);
    summed = summed || out.letters.find(ch) == std::string::npos;
  }
  std::vector<ir::MappedInput> inputs;
  std::string product;
  for (std::size_t o = 0; o < operands.size(); ++o) {
    const Term &t = terms[o];
    const std::vector<Expr> &shape = operands[o]->shape;
    std::size_t spread =
        shape.size() - (t.letters.size() - (t.ellipsis ? 1 : 0));
    std::vector<Expr> index;
    for (char ch : t.letters) {
      if (ch != '.') {
        index.push_back(Expr::symbol(letterParam(ch)));
        continue;
      }
      for (std::size_t k = 0; k < spread; ++k) {
        std::size_t fromRight = spread - 1 - k;
        bool broadcast = shape[index.size()].asConstant() == 1 &&
                         ellipsisExtent[fromRight].asConstant() != 1;
        index.push_back(broadcast ? Expr(0)
                                  : Expr::symbol(ellipsisParam(fromRight)));
      }
    }
    std::string name = "a" + std::to_string(o);
    inputs.push_back({name, operands[o]->name, index});
    product += (o ? " * " : "") + name;
  }
  if (!summed) {
    ctx.addMap("product", params, ranges, inputs, "y = " + product,
               {{"y", y.name, outIndex}});
    return;
  }
  if (y.dtype == ir::DType::Bool)
    ctx.fail("bool operands cannot be summed");
  auto op = ExpansionContext::params(y.shape.size(), "o");
  ctx.addMap("fill", op, ExpansionContext::fullRanges(y.shape), {},
             "y = " + std::string(ir::dtypeName(y.dtype)) + "(0)",
             {{"y", y.name, ExpansionContext::indices(op)}});
  ctx.addMap("contract", params, ranges, inputs, "y = " + product,
             {{"y", y.name, outIndex, ir::Wcr::Sum}});
}

const ExpansionRegistrar kEinsum{
    {"Einsum", "pure",
     "one map over the equation's letters, Sum-resolved where one is summed",
     expandEinsum},
    true};

} // namespace
} // namespace weir::operators
