#include "transforms/match_cache.h"

#include "ir/hash.h"
#include "transforms/registry.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

namespace weir::transforms {
namespace {

class Hasher {
public:
  explicit Hasher(std::vector<std::shared_ptr<const void>> *keep) : keep_(keep) {}
  void add(std::string_view s) {
    h_ = ir::hashBytes(s.data(), s.size(), h_ ^ s.size());
  }
  void add(std::uint64_t v) { h_ = ir::hashBytes(&v, sizeof v, h_); }
  void add(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    add(bits);
  }
  void addPointer(const std::shared_ptr<const void> &p) {
    add(std::uint64_t(reinterpret_cast<std::uintptr_t>(p.get())));
    if (p && keep_)
      keep_->push_back(p);
  }
  // Expressions, ranges and memlets by their structural hashes: formatting
  // them as text, once per memlet of every state on each listing of
  // matches, was most of the fingerprint's time.
  void add(const ir::Expr &e) { add(e.hash()); }
  void add(const ir::Range &r) {
    add(r.begin);
    add(r.end);
    add(r.step);
  }
  void add(const ir::Memlet &m) {
    add(m.container);
    add(std::uint64_t(m.subset.dims.size()));
    for (const ir::Range &r : m.subset.dims)
      add(r);
    add(std::uint64_t(m.wcr ? 1 + int(*m.wcr) : 0));
  }
  void add(const ir::Attributes &attrs) {
    add(std::uint64_t(attrs.size()));
    for (const auto &[name, v] : attrs) {
      add(name);
      add(std::uint64_t(v.index()));
      std::visit(
          [&](const auto &x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::int64_t>)
              add(std::uint64_t(x));
            else if constexpr (std::is_same_v<T, double>)
              add(x);
            else if constexpr (std::is_same_v<T, std::string>)
              add(std::string_view(x));
            else if constexpr (std::is_same_v<T, ir::TensorValue>) {
              add(std::uint64_t(x.dtype));
              for (std::int64_t d : x.shape)
                add(std::uint64_t(d));
              addPointer(x.data);
            } else if constexpr (std::is_same_v<T, std::shared_ptr<const ir::Program>>)
              addPointer(x);
            else {
              add(std::uint64_t(x.size()));
              for (const auto &item : x) {
                using I = std::decay_t<decltype(item)>;
                if constexpr (std::is_same_v<I, std::int64_t>)
                  add(std::uint64_t(item));
                else if constexpr (std::is_same_v<I, double>)
                  add(item);
                else
                  add(std::string_view(item));
              }
            }
          },
          v);
    }
  }
  void add(const std::vector<ir::Connector> &cs) {
    add(std::uint64_t(cs.size()));
    for (const ir::Connector &c : cs) {
      add(c.name);
      add(std::uint64_t(c.dtype));
    }
  }
  std::uint64_t value() const { return h_; }

private:
  std::uint64_t h_ = 0x5EED;
  std::vector<std::shared_ptr<const void>> *keep_;
};

void addContainer(Hasher &h, const ir::Program &p, const std::string &name) {
  h.add(name);
  const ir::Container *c = p.findContainer(name);
  if (!c) {
    h.add(std::uint64_t(0));
    return;
  }
  h.add(std::uint64_t(c->dtype) | std::uint64_t(c->storage) << 8 |
        std::uint64_t(c->transient) << 16 |
        std::uint64_t(std::find(p.inputs.begin(), p.inputs.end(), name) !=
                      p.inputs.end())
            << 17 |
        std::uint64_t(std::find(p.outputs.begin(), p.outputs.end(), name) !=
                      p.outputs.end())
            << 18);
  for (const ir::Expr &e : c->shape)
    h.add(e);
  for (const ir::Expr &e : c->strides)
    h.add(e);
  h.addPointer(c->constant);
}

/// Whether `a` and `b` hold the same elements, in order (ir/cow_list.h:
/// an element at the same address is the same, unchanged element while a
/// list that holds it lives).
template <typename T>
bool sameElements(const ir::CowList<T> &a, const ir::CowList<T> &b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (&a[i] != &b[i])
      return false;
  return true;
}

} // namespace

std::uint64_t containerFingerprint(
    const ir::Program &program, const ir::State &state,
    std::vector<std::shared_ptr<const void>> *keep) {
  std::vector<std::string_view> names;
  for (const ir::Node &n : state.nodes)
    if (n.kind == ir::NodeKind::Access)
      names.push_back(n.access().container);
  for (const ir::Edge &e : state.edges)
    if (!e.memlet.empty())
      names.push_back(e.memlet.container);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  Hasher h(keep);
  for (std::string_view name : names)
    addContainer(h, program, std::string(name));
  return h.value();
}

/// What matching needs of one state in one call, computed when first
/// asked for: the snapshot an entry keeps and the containers' fingerprint.
struct MatchCache::Seen {
  const ir::Program &program;
  const ir::State &state;
  std::shared_ptr<const ir::State> snapshot;
  std::optional<std::uint64_t> containers;
  std::vector<std::shared_ptr<const void>> keep;

  const std::shared_ptr<const ir::State> &copy() {
    if (!snapshot)
      snapshot = std::make_shared<const ir::State>(state);
    return snapshot;
  }
  std::uint64_t containerPrint() {
    if (!containers)
      containers = containerFingerprint(program, state, &keep);
    return *containers;
  }
};

std::vector<MatchCache::Seen>
MatchCache::seen(const ir::Program &program) {
  std::vector<Seen> out;
  out.reserve(program.states.size());
  for (const ir::State &s : program.states)
    out.push_back(Seen{program, s, nullptr, std::nullopt, {}});
  return out;
}

std::vector<Match> MatchCache::matchWith(const ir::Program &program,
                                         const Transformation &t,
                                         std::vector<Seen> &seen) {
  const Pattern &pattern = t.pattern();
  if (pattern.empty())
    return {Match{}};
  auto &byState = entries_[std::string(t.id())];
  std::vector<Match> out;
  std::map<std::string, Entry> fresh;
  for (std::size_t i = 0; i < program.states.size(); ++i) {
    const ir::State &state = program.states[i];
    Seen &now = seen[i];
    auto it = byState.find(state.name);
    Entry entry;
    // The same elements, and the same containers behind their names: the
    // same state as far as a pattern can see. A step changes the elements
    // it touches, so most states a step changed are told apart by the
    // addresses alone, without hashing anything.
    if (it != byState.end() && sameElements(it->second.state->nodes,
                                            state.nodes) &&
        sameElements(it->second.state->edges, state.edges) &&
        it->second.containers == now.containerPrint()) {
      entry = std::move(it->second);
      ++stats_.statesReused;
    } else {
      entry.state = now.copy();
      entry.containers = now.containerPrint();
      entry.keep = now.keep;
      entry.matches = matchesInState(program, pattern, state);
      ++stats_.statesMatched;
    }
    out.insert(out.end(), entry.matches.begin(), entry.matches.end());
    fresh[state.name] = std::move(entry);
  }
  byState = std::move(fresh); // states that are gone leave the cache
  return out;
}

std::vector<Match> MatchCache::matches(const ir::Program &program,
                                       const Transformation &t) {
  std::vector<Seen> s = seen(program);
  return matchWith(program, t, s);
}

std::vector<std::pair<std::string, std::vector<Match>>>
MatchCache::allMatches(const ir::Program &program) {
  std::vector<Seen> s = seen(program);
  std::vector<std::pair<std::string, std::vector<Match>>> out;
  for (const auto &t : transformations())
    out.emplace_back(std::string(t->id()), matchWith(program, *t, s));
  return out;
}

} // namespace weir::transforms
