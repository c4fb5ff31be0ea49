#pragma once
/// \file
/// The translation step of lowering (lower.h): the states' scopes, maps,
/// tasklets, copies and gemm calls become loop IR statements, recording
/// each map's accesses for the parallel proof. Internal to codegen/lower:
/// lower.cpp runs it as one of its named steps; translate.cpp defines it,
/// lower_gemm.cpp its gemm and epilogue part.

#include "codegen/lower/bounds_proof.h"
#include "codegen/lower/loop_ir.h"
#include "codegen/lower/lower.h"
#include "codegen/lower/parallel_proof.h"
#include "ir/primitives.h"
#include "ir/program.h"
#include "ir/state_view.h"
#include "ir/tasklet_types.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace weir::codegen::lowering {

using ir::NodeId;
using Subst = std::map<std::string, ir::Expr, std::less<>>;
/// Register-storage containers whose access nodes all sit directly in one
/// map scope of one state -> that scope's entry.
using RegisterScopes = std::map<std::string, NodeId, std::less<>>;

/// Why `n` cannot be lowered (a library node, or a primitive other than
/// gemm), or nullopt.
std::optional<std::string> unlowerable(const ir::Node &n);

class Lowerer {
public:
  /// `registerScope`: registerScopes(program).
  Lowerer(const ir::Program &p, const LowerOptions &o,
          RegisterScopes registerScope)
      : program_(p), opt_(o), registerScope_(std::move(registerScope)) {}

  /// The statements of every state, in order (one block each).
  std::vector<StmtPtr> translateStates();
  /// The containers the translated code writes.
  const std::set<std::string, std::less<>> &written() const { return written_; }

private:
  std::vector<StmtPtr> lowerScope(const ir::StateView &plan, NodeId scope);
  void lowerNode(const ir::StateView &plan, NodeId id,
                 std::vector<StmtPtr> &out);
  void lowerMap(const ir::StateView &plan, const ir::Node &entry,
                std::vector<StmtPtr> &out);
  void lowerTasklet(const ir::StateView &plan, const ir::Node &n,
                    std::vector<StmtPtr> &out);
  /// Assignments computing `code` in locals named after node `n`
  /// (localName); its inputs must already be assigned there.
  void lowerCode(const ir::Node &n, const ir::tasklet::Code &code,
                 const ir::tasklet::ConnectorTypes &inTypes,
                 const ir::tasklet::ConnectorTypes &outTypes,
                 std::vector<StmtPtr> &out);
  void lowerCopies(const ir::StateView &plan, const ir::Node &n,
                   std::vector<StmtPtr> &out);
  void lowerGemm(const ir::StateView &plan, const ir::Node &n,
                 std::vector<StmtPtr> &out);
  /// The loop nest that applies a gemm's epilogue to C (`c`: C's buffer
  /// offset) once the product is complete.
  void lowerEpilogue(const ir::StateView &plan, const ir::Node &n,
                     const ir::GemmCall &call, const std::string &cName,
                     const ir::Expr &cOffset, std::vector<StmtPtr> &out);

  ValuePtr lowerExpr(const ir::tasklet::Expr &e,
                     const ir::tasklet::SettledTypes &types, NodeId tasklet);

  /// Point indices of a tasklet memlet, substituted; throws when the memlet
  /// moves more than one element.
  std::vector<ir::Expr> pointIndex(const ir::Node &n, const ir::Edge &e,
                                   const std::string &conn);
  ir::Expr flatten(const std::string &container,
                   const std::vector<ir::Expr> &index) const;
  ir::Expr subst(const ir::Expr &e) const { return e.substitute(subst_); }
  /// A loop variable name unused by enclosing loops, symbols and containers.
  std::string freshLoopVar(const std::string &want);
  /// The buffer holding a container's elements: its own, or a view's
  /// target's.
  const std::string &buffer(const std::string &container) const;
  void noteAccess(const std::string &container,
                  const std::vector<ir::Expr> &index, bool write);
  /// The bounds guard an access of `container` at `index` needs: null when
  /// the proof shows it in bounds (and not every access is to be checked).
  /// `what` names the access for the message (BoundsGuard::what).
  GuardPtr guard(const std::string &container,
                 const std::vector<ir::Expr> &index, const std::string &what);
  /// The same for an access at flat element `index` of `container` (a
  /// library call's matrix, an epilogue's operand): in bounds when
  /// 0 <= index < its element count, the size of its buffer.
  GuardPtr flatGuard(const std::string &container, const ir::Expr &index,
                     const std::string &what);
  static std::string localName(NodeId tasklet, const std::string &name) {
    return "t" + std::to_string(tasklet) + "_" + name;
  }

  const ir::Program &program_;
  const LowerOptions &opt_;
  Subst subst_;
  std::set<std::string, std::less<>> enclosing_; ///< loop vars in scope
  BoundsProof bounds_; ///< the ranges of the loops in scope
  std::set<std::string, std::less<>> written_;
  /// Accesses of the map scopes being lowered, innermost last.
  std::vector<AccessLog *> logs_;
  /// How many enclosing maps may become parallel loops.
  int parallelDepth_ = 0;
  /// The map scope each tasklet was lowered in (0 = top level).
  std::map<NodeId, NodeId> taskletScope_;
  NodeId currentScope_ = 0;
  int copyCounter_ = 0;
  /// Register-storage containers whose access nodes all sit directly in
  /// one map scope -> that scope's entry: allocated per iteration there.
  RegisterScopes registerScope_;
  /// While such a scope is lowered: the first access log that may see the
  /// container (logs of maps inside the scope; the scope's own iterations
  /// each have their own copy, so its proof and outer ones never see it).
  std::map<std::string, std::size_t, std::less<>> registerLogFloor_;
};

} // namespace weir::codegen::lowering
