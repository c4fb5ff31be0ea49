#pragma once
/// \file
/// Building a map scope with one tasklet in one call (DaCe's
/// add_mapped_tasklet): the workhorse of pure expansions.
///
///     addMappedTasklet(p, s, "relu", {"i", "j"}, {Range(0, N), Range(0, 64)},
///                      {{"x", "X", {i, j}}}, "y = max(x, 0.0)",
///                      {{"y", "Y", {i, j}}}, access);
///
/// creates MapEntry [i = 0:N, j = 0:64] -> tasklet -> MapExit, with inner
/// point memlets `X[i, j]` and `Y[i, j]` and outer memlets over the whole
/// containers (a superset of what the map touches: exact, simple, and what
/// validation and analyses need). Access nodes are reused through `access`
/// (container name -> node id), so chains of maps share them.

#include "ir/program.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace weir::ir {

struct MappedInput {
  std::string connector; ///< tasklet input connector
  std::string container;
  std::vector<Expr> index; ///< one point per dimension, in map params
};

struct MappedOutput {
  std::string connector; ///< tasklet output connector
  std::string container;
  std::vector<Expr> index;
  std::optional<Wcr> wcr; ///< combine into the stored value
};

/// Container name -> the access node that reads or writes it in this state.
using AccessNodes = std::map<std::string, NodeId, std::less<>>;

/// The access node for `container`, created on first use.
NodeId accessFor(Program &p, State &s, AccessNodes &access,
                 const std::string &container);

struct MappedTaskletIds {
  NodeId entry = 0, exit = 0;
  NodeId tasklet = 0; ///< the tasklet, or the primitive of addMappedPrimitive
};

/// Adds the map scope, tasklet and memlets (see the file comment). Connector
/// dtypes are the containers' dtypes. With no params, the tasklet is added at
/// the top level, connected directly to the access nodes. Throws weir::Error
/// when a container is unknown or an index has the wrong rank.
MappedTaskletIds
addMappedTasklet(Program &p, State &s, const std::string &label,
                 const std::vector<std::string> &params,
                 const std::vector<Range> &ranges,
                 const std::vector<MappedInput> &inputs, std::string_view code,
                 const std::vector<MappedOutput> &outputs, AccessNodes &access,
                 Schedule schedule = Schedule::Sequential);

/// One side of a mapped primitive: the subset of a container a connector
/// moves (a whole matrix, say, where a tasklet moves one element).
struct MappedRegion {
  std::string connector;
  std::string container;
  Subset subset;
  std::optional<Wcr> wcr;
};

/// Like addMappedTasklet, with a Primitive node (e.g. "gemm") in the scope;
/// with no params it is added at the top level. The map is sequential:
/// primitives are library calls that parallelize themselves.
MappedTaskletIds addMappedPrimitive(
    Program &p, State &s, const std::string &label,
    const std::vector<std::string> &params, const std::vector<Range> &ranges,
    const std::string &primitive, Attributes attributes,
    const std::vector<MappedRegion> &inputs,
    const std::vector<MappedRegion> &outputs, AccessNodes &access);

/// A fresh transient container named `<base>` or `<base>_<n>`; returns its
/// name.
std::string addTransient(Program &p, const std::string &base, DType dtype,
                         std::vector<Expr> shape);

} // namespace weir::ir
