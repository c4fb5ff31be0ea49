#pragma once
/// \file
/// Incremental matching: matches are cached per transformation and state,
/// keyed by a fingerprint of the state (its nodes, edges and memlets, and
/// the containers it names). After a transformation changes one state, only
/// that state is matched again; the others reuse their matches.

#include "transforms/transformation.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace weir::transforms {

/// A fingerprint of everything in `state` a pattern can look at: nodes
/// (ids, kinds, labels, connectors, payloads with attributes), edges and
/// memlets, and the containers it names (dtype, shape, strides, storage,
/// transient, constant data by identity, argument or not). Constant data
/// is compared by identity (blobs are immutable and shared), so the
/// fingerprint keeps the blobs it saw alive in `keep`.
std::uint64_t stateFingerprint(const ir::Program &program,
                               const ir::State &state,
                               std::vector<std::shared_ptr<const void>> *keep);

class MatchCache {
public:
  /// Every match of `t` in `program`, in findMatches' order.
  std::vector<Match> matches(const ir::Program &program,
                             const Transformation &t);
  /// Matches of every registered transformation (registry order), with the
  /// state fingerprints computed once.
  std::vector<std::pair<std::string, std::vector<Match>>>
  allMatches(const ir::Program &program);

  struct Stats {
    std::int64_t statesMatched = 0; ///< (transformation, state) pairs run
    std::int64_t statesReused = 0;  ///< ... served from the cache
  };
  const Stats &stats() const { return stats_; }
  void clear() { entries_.clear(); }

private:
  struct Entry {
    std::uint64_t fingerprint = 0;
    std::vector<Match> matches;
    std::vector<std::shared_ptr<const void>> keep;
  };
  /// Each state's fingerprint and the blobs it must keep alive.
  struct Prints {
    std::vector<std::uint64_t> values;
    std::vector<std::vector<std::shared_ptr<const void>>> keeps;
  };
  static Prints fingerprints(const ir::Program &program);
  std::vector<Match> matchWith(const ir::Program &program,
                               const Transformation &t, const Prints &prints);
  /// transformation id -> state name -> entry
  std::map<std::string, std::map<std::string, Entry>, std::less<>> entries_;
  Stats stats_;
};

} // namespace weir::transforms
