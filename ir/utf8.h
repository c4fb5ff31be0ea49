#pragma once
/// \file
/// UTF-8 well-formedness, as RFC 3629 defines it and as JSON writers check
/// it: no overlong forms, no surrogates, nothing above U+10FFFF.

#include <string_view>

namespace weir {

bool isValidUtf8(std::string_view s);

} // namespace weir
