#pragma once
/// \file
/// The registry of transformations: the C++ ones add themselves at load
/// time through a static TransformationRegistrar; plugins (Python) add
/// theirs at run time. The command line, recipes, Python and the GUI all
/// list and look up transformations here.

#include "transforms/transformation.h"

#include <memory>
#include <string_view>
#include <vector>

namespace weir::transforms {

/// Adds `t`; throws weir::Error when its id is taken or not kebab-case.
void registerTransformation(std::shared_ptr<const Transformation> t);
/// Removes a run-time registration (a plugin being reloaded); false when
/// there was none.
bool unregisterTransformation(std::string_view id);

/// The transformation with this id, or nullptr.
std::shared_ptr<const Transformation> findTransformation(std::string_view id);
/// Same, but throws weir::Error listing the known ids when there is none.
std::shared_ptr<const Transformation>
requireTransformation(std::string_view id);

/// Every registered transformation, ordered by tier, then id.
std::vector<std::shared_ptr<const Transformation>> transformations();

/// `static const TransformationRegistrar kReg{std::make_shared<X>()};`
struct TransformationRegistrar {
  explicit TransformationRegistrar(std::shared_ptr<const Transformation> t) {
    registerTransformation(std::move(t));
  }
};

/// Whether `id` is kebab-case: lower-case letters and digits in words
/// joined by single hyphens.
bool isKebabCase(std::string_view id);

} // namespace weir::transforms
