#include "transforms/match_cache.h"

#include "ir/hash.h"
#include "transforms/registry.h"

#include <cstring>

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

} // namespace

std::uint64_t stateFingerprint(const ir::Program &program,
                               const ir::State &state,
                               std::vector<std::shared_ptr<const void>> *keep) {
  Hasher h(keep);
  h.add(state.name);
  for (const ir::Node &n : state.nodes) {
    h.add(std::uint64_t(n.id));
    h.add(std::uint64_t(n.kind));
    h.add(n.label);
    h.add(n.inputs);
    h.add(n.outputs);
    switch (n.kind) {
    case ir::NodeKind::Access:
      addContainer(h, program, n.access().container);
      break;
    case ir::NodeKind::Tasklet:
      h.add(n.tasklet().source);
      break;
    case ir::NodeKind::MapEntry:
    case ir::NodeKind::MapExit: {
      const ir::MapData &m = n.map();
      for (const std::string &param : m.params)
        h.add(param);
      for (const ir::Range &r : m.ranges)
        h.add(r);
      h.add(std::uint64_t(m.schedule) << 32 | m.partner);
      break;
    }
    case ir::NodeKind::Library: {
      const ir::LibraryData &l = n.library();
      h.add(l.op);
      h.add(l.domain);
      h.add(std::uint64_t(l.opsetVersion) << 1 | l.unknown);
      h.add(l.implementation);
      h.add(l.attributes);
      h.add(std::uint64_t(l.flops.has_value()));
      if (l.flops)
        h.add(*l.flops);
      break;
    }
    case ir::NodeKind::Primitive:
      h.add(n.primitive().primitive);
      h.add(n.primitive().attributes);
      break;
    }
  }
  for (const ir::Edge &e : state.edges) {
    h.add(std::uint64_t(e.id));
    h.add(std::uint64_t(e.src));
    h.add(e.srcConn);
    h.add(std::uint64_t(e.dst));
    h.add(e.dstConn);
    h.add(e.memlet);
    if (!e.memlet.empty())
      addContainer(h, program, e.memlet.container);
  }
  return h.value();
}

MatchCache::Prints MatchCache::fingerprints(const ir::Program &program) {
  Prints p;
  p.keeps.resize(program.states.size());
  for (std::size_t i = 0; i < program.states.size(); ++i)
    p.values.push_back(
        stateFingerprint(program, program.states[i], &p.keeps[i]));
  return p;
}

std::vector<Match> MatchCache::matchWith(const ir::Program &program,
                                         const Transformation &t,
                                         const Prints &prints) {
  const Pattern &pattern = t.pattern();
  if (pattern.empty())
    return {Match{}};
  auto &byState = entries_[std::string(t.id())];
  std::vector<Match> out;
  std::map<std::string, Entry> fresh;
  for (std::size_t i = 0; i < program.states.size(); ++i) {
    const ir::State &state = program.states[i];
    auto it = byState.find(state.name);
    Entry entry;
    if (it != byState.end() && it->second.fingerprint == prints.values[i]) {
      entry = std::move(it->second);
      ++stats_.statesReused;
    } else {
      entry.fingerprint = prints.values[i];
      entry.keep = prints.keeps[i];
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
  return matchWith(program, t, fingerprints(program));
}

std::vector<std::pair<std::string, std::vector<Match>>>
MatchCache::allMatches(const ir::Program &program) {
  Prints prints = fingerprints(program);
  std::vector<std::pair<std::string, std::vector<Match>>> out;
  for (const auto &t : transformations())
    out.emplace_back(std::string(t->id()), matchWith(program, *t, prints));
  return out;
}

} // namespace weir::transforms
