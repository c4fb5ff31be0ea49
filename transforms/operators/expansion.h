#pragma once
/// \file
/// Tier 1, operator expansion: a library node becomes an implementation.
/// `pure` implementations are maps, tasklets and memlets that every later
/// tier can see into — all data movement explicit on edges, reductions
/// through write-conflict resolution or explicit accumulators, no opaque
/// code. Each operator registers its implementations once (see
/// `registerExpansion`); one is the documented default that `expandAll`
/// uses.

#include "ir/mapped_tasklet.h"
#include "ir/program.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weir::operators {

/// What an expander sees and the helpers it builds with. The library node is
/// already removed from the state; its neighbouring access nodes stay and
/// are reachable through `access`.
class ExpansionContext {
public:
  ExpansionContext(ir::Program &program, ir::State &state, ir::Node node,
                   std::map<std::string, std::string> inputs,
                   std::map<std::string, std::string> outputs,
                   ir::AccessNodes access);

  ir::Program &program() { return program_; }
  ir::State &state() { return state_; }
  const ir::Node &node() const { return node_; }
  const ir::LibraryData &library() const { return node_.library(); }
  /// "node 'conv1' (Conv)" for messages.
  std::string describe() const;

  /// Container feeding input connector `connector` ("X", "inputs_1"), or
  /// nullptr when the optional input is absent.
  const ir::Container *input(std::string_view connector) const;
  /// Same, but throws weir::Error naming the node when it is absent.
  const ir::Container &requireInput(std::string_view connector) const;
  const ir::Container *output(std::string_view connector) const;
  const ir::Container &requireOutput(std::string_view connector) const;
  /// The container on the node's `k`-th input (output) connector; throws
  /// weir::Error naming the node when it has fewer (a damaged model).
  const ir::Container &requireInputAt(std::size_t k) const;
  const ir::Container &requireOutputAt(std::size_t k) const;
  /// Containers of variadic connectors `<base>_0`, `<base>_1`, ... in order.
  std::vector<const ir::Container *>
  variadicInputs(std::string_view base) const;

  /// Attribute readers with defaults; a wrong kind throws weir::Error.
  std::int64_t intAttr(std::string_view name, std::int64_t fallback) const;
  double floatAttr(std::string_view name, double fallback) const;
  std::string stringAttr(std::string_view name, std::string fallback) const;
  std::vector<std::int64_t> intsAttr(std::string_view name,
                                     std::vector<std::int64_t> fallback) const;
  std::vector<double> floatsAttr(std::string_view name,
                                 std::vector<double> fallback) const;
  bool hasAttr(std::string_view name) const;

  /// Contents of a constant input as int64 values (Reshape's shape, Slice's
  /// starts, ...), converting from any integer dtype; nullopt when the input
  /// is absent or not constant.
  std::optional<std::vector<std::int64_t>>
  constantInts(std::string_view connector) const;
  /// Contents of a constant numeric input as doubles (MelWeightMatrix's
  /// edge frequencies); nullopt when absent or not constant.
  std::optional<std::vector<double>>
  constantReals(std::string_view connector) const;

  /// addMappedTasklet with this expansion's access nodes; the map is
  /// cpu-parallel (lowering runs it in parallel where it proves that safe).
  /// Labels are
  /// prefixed with the library node's label.
  ir::MappedTaskletIds addMap(const std::string &label,
                              const std::vector<std::string> &params,
                              const std::vector<ir::Range> &ranges,
                              const std::vector<ir::MappedInput> &inputs,
                              std::string_view code,
                              const std::vector<ir::MappedOutput> &outputs);
  /// addMappedPrimitive with this expansion's access nodes (a library
  /// call such as "gemm" inside an optional map).
  ir::MappedTaskletIds
  addPrimitive(const std::string &label, const std::vector<std::string> &params,
               const std::vector<ir::Range> &ranges,
               const std::string &primitive, ir::Attributes attributes,
               const std::vector<ir::MappedRegion> &inputs,
               const std::vector<ir::MappedRegion> &outputs);
  /// A fresh transient, named after the node.
  std::string addTransient(const std::string &suffix, ir::DType dtype,
                           std::vector<ir::Expr> shape);
  /// A fresh constant container holding `value` (e.g. a Constant node's
  /// tensor, or Shape's result), named after the node.
  std::string addConstant(const std::string &suffix,
                          const ir::TensorValue &value);
  /// A tensor of `dtype` holding `values`, converted as
  /// runtime::Tensor::setFromDouble does (f16 and bf16 rounded to nearest
  /// even, integers truncated).
  ir::TensorValue tensorOf(ir::DType dtype, std::vector<std::int64_t> shape,
                           const std::vector<double> &values) const;
  /// A map copying constant container `name` (of `y`'s shape) into `y`.
  void copyConstant(const std::string &name, const ir::Container &y);
  /// A fresh constant [n] container 0, 1, ..., n-1 of integer `dtype` (I32
  /// or I64): how positions reach tasklets, which cannot read map
  /// parameters.
  std::string addIota(const std::string &suffix, ir::DType dtype,
                      std::int64_t n);

  /// Map params `i0, i1, ...` and full ranges over `shape`; the index list
  /// of those params. The helpers most elementwise expansions start from.
  static std::vector<std::string> params(std::size_t rank,
                                         const std::string &prefix = "i");
  static std::vector<ir::Range> fullRanges(const std::vector<ir::Expr> &shape);
  static std::vector<ir::Expr> indices(const std::vector<std::string> &params);

  /// A dimension's value; fails (naming it) when it is symbolic.
  std::int64_t constantDim(const ir::Expr &dim) const;
  /// Elements the flagged axes of `x` span (a reduction's or
  /// normalization's count); fails when one of them is symbolic, because a
  /// tasklet can only divide by a literal.
  std::int64_t spannedCount(const ir::Container &x,
                            const std::vector<bool> &axes) const;
  /// A possibly negative axis made non-negative; fails when out of range.
  std::int64_t normalizeAxis(std::int64_t axis, std::size_t rank) const;
  /// A float literal of the tasklet language that reads back as exactly
  /// `v`: shortest round-trip digits, `.0` added where needed, negative
  /// values in parentheses, infinities and NaN as divisions.
  static std::string floatLiteral(double v);
  /// The tasklet literal that adding leaves every value of `dtype` as it
  /// is: -0.0 for floats (signed zeros included), 0 otherwise. What the
  /// one-hot contractions fill and add where an index does not match.
  static std::string sumIdentity(ir::DType dtype);

  /// Throws weir::Error "<describe()>: <message>".
  [[noreturn]] void fail(const std::string &message) const;

private:
  ir::Program &program_;
  ir::State &state_;
  ir::Node node_;
  std::map<std::string, std::string> inputs_;  ///< connector -> container
  std::map<std::string, std::string> outputs_; ///< connector -> container
  ir::AccessNodes access_;
};

using Expander = std::function<void(ExpansionContext &)>;

struct Implementation {
  std::string op;   ///< ONNX op type
  std::string name; ///< "pure", "blas", "im2col", ...
  std::string summary;
  Expander expand;
};

/// Register an implementation; `isDefault` makes it the one expandAll uses
/// for the op. Called from static registrars in each op family's file.
void registerExpansion(Implementation impl, bool isDefault);

/// Implementations of `op`, default first; empty when none.
std::vector<const Implementation *> implementationsOf(std::string_view op);
/// Every op with at least one implementation, sorted.
std::vector<std::string> expandableOps();

/// Replace library node `id` (in any state) by implementation `impl` (the
/// op's default when empty). The program is changed only if the expansion
/// succeeds. Throws weir::Error naming the node when there is no such node,
/// no implementation, or the expansion cannot handle the node's attributes
/// or shapes.
void expandNode(ir::Program &program, ir::NodeId id,
                std::string_view impl = "");

struct ExpandAllReport {
  int expanded = 0;
  /// "impl: node 'x' (Op): reason[; then impl: ...]" for each node left as
  /// a library node.
  std::vector<std::string> skipped;
};

/// Expand every library node with `choice[op]`, or else with the op's
/// default implementation, falling back to its other implementations in
/// registration order when the default does not apply to the node (BLAS
/// needs f32, im2col a non-grouped convolution). Nodes that cannot be
/// expanded stay and are reported with each implementation's reason.
ExpandAllReport
expandAll(ir::Program &program,
          const std::map<std::string, std::string> &choice = {});

/// Registers a static implementation at load time:
///   static const ExpansionRegistrar kRelu{{"Relu", "pure", "...", fn}, true};
struct ExpansionRegistrar {
  ExpansionRegistrar(Implementation impl, bool isDefault) {
    registerExpansion(std::move(impl), isDefault);
  }
};

} // namespace weir::operators
