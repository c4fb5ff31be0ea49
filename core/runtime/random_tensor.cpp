#include "core/runtime/random_tensor.h"

#include "ir/error.h"

namespace weir::runtime {

Tensor randomTensor(const ir::Container &c, const ir::Bindings &dims,
                    std::mt19937_64 &rng, std::string_view hint) {
  std::vector<std::int64_t> shape;
  for (const ir::Expr &d : c.shape) {
    try {
      shape.push_back(d.evaluate(dims));
    } catch (const Error &e) {
      throw Error("input '" + c.name + "' has a symbolic shape; give its size" +
                  (hint.empty() ? std::string() : " with " + std::string(hint)) +
                  " (" + e.what() + ")");
    }
  }
  Tensor t(c.dtype, shape);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  for (std::int64_t i = 0; i < t.elementCount(); ++i) {
    if (ir::isFloat(c.dtype))
      t.setFromDouble(i, real(rng));
    else if (c.dtype == ir::DType::Bool)
      t.setFromDouble(i, small(rng) % 2);
    else
      t.setFromDouble(i, small(rng));
  }
  return t;
}

interp::TensorMap randomInputs(const ir::Program &program, std::uint64_t seed,
                               const ir::Bindings &dims) {
  std::mt19937_64 rng(seed);
  interp::TensorMap out;
  for (const std::string &name : program.inputs)
    out[name] = randomTensor(program.container(name), dims, rng, "");
  return out;
}

} // namespace weir::runtime
