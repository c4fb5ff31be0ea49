#pragma once
/// \file
/// `expand-all`: every library node that can be expanded is, with the
/// implementation chosen per op (or the op's default, falling back to its
/// other implementations where the default does not apply).

#include "transforms/transformation.h"

#include <map>
#include <string>

namespace weir::transforms {

/// "Conv=direct,MatMul=pure" as a map; throws weir::Error naming a bad item.
std::map<std::string, std::string>
parseImplementationChoice(const std::string &text);

} // namespace weir::transforms
