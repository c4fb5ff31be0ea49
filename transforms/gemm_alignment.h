#pragma once
/// \file
/// What `epilogue-fusion` and `init-fusion` share: a gemm primitive and
/// where it runs (at the top of its state, or in a map of its own over a
/// batch), an elementwise map (one tasklet moving one element per
/// connector and iteration), and how that map's iterations line up with
/// the gemm's output elements, so the map's tasklet can become part of
/// the gemm's epilogue (ir/primitives.h).
///
/// Alignment works on flat element offsets. The map's index into C's
/// container must be affine in the map's parameters; then each parameter
/// either matches a batch parameter of the gemm's map (same step in C, same
/// count), or walks rows or columns of C, and the row and column
/// parameters must enumerate the M x N block exactly once (a mixed radix).
/// Every other array the tasklet touches is then described per C element
/// by a row and a column stride.

#include "ir/primitives.h"
#include "ir/program.h"
#include "ir/tasklet.h"
#include "transforms/pattern.h"
#include "transforms/transformation.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace weir::transforms::gemm_alignment {

using Rename = std::map<std::string, ir::Expr, std::less<>>;

/// A gemm primitive and its surroundings, with constant N and ldc (M, the
/// rows, may be a symbol such as a batch size).
struct GemmSite {
  ir::NodeId gemm = 0;
  /// The map the gemm runs in (0, 0 at the top of the state).
  ir::NodeId entry = 0, exit = 0;
  ir::GemmCall call;
  ir::Expr m;
  std::int64_t n = 0, ldc = 0;
  /// The map's parameters that take more than one value, with their counts;
  /// `fixed` gives the others their only value.
  std::vector<std::string> batchParams;
  std::vector<ir::Expr> batchCounts;
  Rename fixed;
  /// The edges carrying C out of the gemm (or Cin into it): `inner` touches
  /// the gemm, `outer` the access node; the same edge at the top level.
  ir::EdgeId inner = 0, outer = 0;
  /// That C (or Cin) memlet's container and begin corner, in the
  /// parameters of the gemm's map.
  std::string container;
  std::vector<ir::Expr> corner;
};

/// The gemm whose output C arrives in access node `access` (directly or
/// through the exit of its map), or why there is none.
std::variant<GemmSite, CheckResult> gemmWriting(const ir::Program &program,
                                                const StateGraph &graph,
                                                ir::NodeId access);
/// The gemm reading access node `access` as its accumulator Cin.
std::variant<GemmSite, CheckResult> gemmAccumulating(const ir::Program &program,
                                                     const StateGraph &graph,
                                                     ir::NodeId access);
/// The cheap part of gemmWriting, for a pattern predicate: the gemm node
/// behind access node `access`, or 0.
ir::NodeId gemmBehind(const StateGraph &graph, ir::NodeId access);
/// The cheap part of gemmAccumulating: the gemm reading `access` as Cin,
/// or 0.
ir::NodeId gemmAhead(const StateGraph &graph, ir::NodeId access);

/// A map at the top of its state holding exactly one tasklet, which reads
/// and writes one element per connector and iteration through the map's
/// entry and exit.
struct ElementwiseMap {
  ir::NodeId entry = 0, exit = 0, tasklet = 0;
  /// Parameters that may take more than one value (each from 0, step 1)
  /// and their counts; `fixed` gives the others their only value.
  std::vector<std::string> params;
  std::vector<ir::Expr> counts;
  Rename fixed;
};
std::variant<ElementwiseMap, CheckResult>
elementwiseMap(const ir::Program &program, const StateGraph &graph,
               ir::NodeId entry);

/// The role of each of an elementwise map's parameters against a gemm's
/// output: a batch parameter of the gemm's map, or a step of `unit` rows
/// or columns of C.
struct Alignment {
  Rename toBatch; ///< map parameter -> gemm batch parameter (a symbol)
  std::map<std::string, std::int64_t> rowUnit, colUnit;
};

/// How `map`'s iteration (parameter p) reaching element `index` of C's
/// container `container` lines up with the gemm's C; the reason when it
/// does not.
std::variant<Alignment, std::string> align(const ir::Program &program,
                                           const GemmSite &gemm,
                                           const ElementwiseMap &map,
                                           const std::string &container,
                                           const std::vector<ir::Expr> &index);

/// Another array the map's tasklet touches, seen per C element: the
/// strides per row and column of C, and the subset one gemm call touches
/// (in the gemm map's parameters).
struct OperandView {
  ir::Expr row, col;
  ir::Subset subset;
};
std::variant<OperandView, std::string>
operandView(const ir::Program &program, const ElementwiseMap &map,
            const Alignment &alignment, const std::string &container,
            const std::vector<ir::Expr> &index);

/// An array the map's tasklet reads, as an epilogue operand.
struct Operand {
  std::string conn;      ///< the tasklet's connector
  ir::DType dtype;       ///< its type
  std::string container; ///< what it reads
  ir::NodeId access = 0; ///< the access node it reads from
  ir::EdgeId outer = 0;  ///< access node -> map entry
  OperandView view;
};
/// The tasklet's inputs, except those reading `skip`, as epilogue
/// operands; or why one cannot be (not f32, written more than once, not at
/// fixed strides).
std::variant<std::vector<Operand>, std::string>
operands(const ir::Program &program, const StateGraph &graph,
         const ElementwiseMap &map, const Alignment &alignment,
         const std::string &skip);

/// Whether distinct iterations of `map` reach distinct elements of
/// `container` through `index`.
bool injective(const ir::Program &program, const ElementwiseMap &map,
               const std::string &container,
               const std::vector<ir::Expr> &index);

/// The point index of a memlet (its ranges' begins); nullopt when the
/// memlet moves more than one element.
std::optional<std::vector<ir::Expr>> pointIndex(const ir::Memlet &memlet);

/// `code` with its variables renamed (names absent from `names` kept).
ir::tasklet::Code renamedCode(const ir::tasklet::Code &code,
                              const std::map<std::string, std::string> &names);
/// Every variable `code` reads or assigns.
std::vector<std::string> codeNames(const ir::tasklet::Code &code);
/// `base` followed by the first number that makes a name not in `taken`;
/// the name is added to `taken`.
std::string freshName(std::set<std::string> &taken, const std::string &base);

/// Connects an epilogue operand: `inner` (read from access node `access`)
/// into the gemm's new input connector `name` of type `dtype`, directly or
/// through the gemm's map, with `outer` as the memlet outside it.
void connectOperand(ir::Program &program, ir::State &state,
                    const GemmSite &gemm, const std::string &name,
                    ir::DType dtype, ir::NodeId access, const ir::Memlet &outer,
                    const ir::Memlet &inner);

/// The gemm's attributes for `call`, keeping the node's other attributes.
ir::Attributes withCall(const ir::PrimitiveData &gemm,
                        const ir::GemmCall &call);

} // namespace weir::transforms::gemm_alignment
