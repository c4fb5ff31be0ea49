#include "ir/utf8.h"

namespace weir {

bool isValidUtf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    int extra = c < 0x80                ? 0
                : c >= 0xc2 && c < 0xe0 ? 1
                : c >= 0xe0 && c < 0xf0 ? 2
                : c >= 0xf0 && c < 0xf5 ? 3
                                        : -1;
    if (extra < 0 || s.size() - i <= static_cast<std::size_t>(extra))
      return false;
    for (int k = 1; k <= extra; ++k) {
      // Continuation bytes are 80..BF; the first one's range is narrower
      // after E0, ED, F0 and F4.
      auto b = static_cast<unsigned char>(s[i + k]);
      unsigned char lo = k > 1       ? 0x80
                         : c == 0xe0 ? 0xa0
                         : c == 0xf0 ? 0x90
                                     : 0x80;
      unsigned char hi = k > 1       ? 0xbf
                         : c == 0xed ? 0x9f
                         : c == 0xf4 ? 0x8f
                                     : 0xbf;
      if (b < lo || b > hi)
        return false;
    }
    i += extra + 1;
  }
  return true;
}

} // namespace weir
