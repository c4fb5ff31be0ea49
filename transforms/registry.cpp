#include "transforms/registry.h"

#include "ir/error.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace weir::transforms {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const Transformation>, std::less<>> byId;
};

Registry &registry() {
  static Registry r; // constructed on first use, before any registrar runs
  return r;
}

} // namespace

bool isKebabCase(std::string_view id) {
  if (id.empty() || id.front() == '-' || id.back() == '-')
    return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    char c = id[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              (c == '-' && id[i - 1] != '-');
    if (!ok)
      return false;
  }
  return true;
}

void registerTransformation(std::shared_ptr<const Transformation> t) {
  if (!t)
    throw Error("registerTransformation: null transformation");
  std::string id(t->id());
  if (!isKebabCase(id))
    throw Error("transformation id '" + id +
                "' is not kebab-case (lower-case words joined by '-')");
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  if (r.byId.count(id))
    throw Error("a transformation with id '" + id + "' is already registered");
  r.byId.emplace(std::move(id), std::move(t));
}

bool unregisterTransformation(std::string_view id) {
  Registry &r = registry();
  std::shared_ptr<const Transformation> gone;
  {
    std::lock_guard lock(r.mutex);
    auto it = r.byId.find(id);
    if (it == r.byId.end())
      return false;
    gone = std::move(it->second);
    r.byId.erase(it);
  }
  // Released outside the lock: a plugin's destructor runs Python, which may
  // call back into the registry.
  gone.reset();
  return true;
}

std::shared_ptr<const Transformation> findTransformation(std::string_view id) {
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.byId.find(id);
  return it == r.byId.end() ? nullptr : it->second;
}

std::shared_ptr<const Transformation>
requireTransformation(std::string_view id) {
  if (auto t = findTransformation(id))
    return t;
  std::string known;
  for (const auto &t : transformations())
    known += (known.empty() ? "" : ", ") + std::string(t->id());
  throw Error("unknown transformation '" + std::string(id) +
              "' (known: " + known + ")");
}

std::vector<std::shared_ptr<const Transformation>> transformations() {
  Registry &r = registry();
  std::vector<std::shared_ptr<const Transformation>> out;
  {
    std::lock_guard lock(r.mutex);
    for (const auto &[id, t] : r.byId)
      out.push_back(t);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto &a, const auto &b) {
    return a->tier() < b->tier();
  });
  return out;
}

} // namespace weir::transforms
