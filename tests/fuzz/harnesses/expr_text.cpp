/// \file
/// Fuzz harness: the two languages a user types — symbolic expressions
/// (`N*4 + 2`, in shapes and memlets) when the first byte is even, tasklet
/// bodies otherwise. Whatever parses must print canonically: parsing the
/// printed text gives the same thing back.

#include "ir/expr.h"
#include "ir/tasklet.h"
#include "tests/fuzz/harness.h"

using namespace weir;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  std::optional<fuzz::Choice> input = fuzz::chooseFormat(data, size);
  if (!input)
    return 0;
  std::string_view body = input->body;
  if (!input->second) {
    ir::Expr e;
    try {
      e = ir::parseExpr(body);
    } catch (const Error &) {
      return 0;
    }
    fuzz::require(ir::parseExpr(e.str()) == e,
                  "expression '" + e.str() + "' does not parse back to itself");
    fuzz::refusable([&] { (void)ir::simplify(e); });
    fuzz::refusable([&] {
      ir::Bindings b;
      for (const std::string &s : e.freeSymbols())
        b[s] = static_cast<std::int64_t>(s.size()) - 3;
      (void)e.evaluate(b);
    });
    return 0;
  }
  ir::tasklet::Code code;
  try {
    code = ir::tasklet::parse(body);
  } catch (const Error &) {
    return 0;
  }
  std::string printed = ir::tasklet::print(code);
  fuzz::require(ir::tasklet::print(ir::tasklet::parse(printed)) == printed,
                "tasklet text does not print canonically: " + printed);
  (void)ir::tasklet::countOps(code);
  return 0;
}
