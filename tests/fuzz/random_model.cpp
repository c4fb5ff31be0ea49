#include "tests/fuzz/random_model.h"

#include <onnx/onnx_pb.h>

#include <random>
#include <vector>

namespace weir::fuzz {
namespace {

using Shape = std::vector<std::int64_t>;

struct Value {
  std::string name;
  Shape shape;
};

class Builder {
public:
  explicit Builder(std::uint64_t seed) : rng_(seed) {
    model_.set_ir_version(8);
    model_.add_opset_import()->set_version(13);
    model_.set_producer_name("weir random_model");
    graph_ = model_.mutable_graph();
    graph_->set_name("random");
  }

  int uniform(int lo, int hi) { // [lo, hi]
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  bool coin() { return rng_() % 2 == 0; }

  void input(const Value &v) { declare(graph_->add_input(), v); }
  void output(const Value &v) { declare(graph_->add_output(), v); }

  std::string fresh(const std::string &stem) {
    return stem + "_" + std::to_string(++counter_);
  }

  /// A constant of `shape` with values in [lo, hi].
  std::string constant(const Shape &shape, float lo, float hi) {
    onnx::TensorProto *t = graph_->add_initializer();
    std::string name = fresh("w");
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    std::int64_t n = 1;
    for (std::int64_t d : shape) {
      t->add_dims(d);
      n *= d;
    }
    std::uniform_real_distribution<float> u(lo, hi);
    for (std::int64_t i = 0; i < n; ++i)
      t->add_float_data(u(rng_));
    return name;
  }

  onnx::NodeProto *node(const std::string &op, std::vector<std::string> in,
                        const std::string &out) {
    onnx::NodeProto *n = graph_->add_node();
    n->set_op_type(op);
    n->set_name(fresh(op));
    for (const std::string &i : in)
      n->add_input(i);
    n->add_output(out);
    return n;
  }

  static void ints(onnx::NodeProto *n, const char *name, Shape values) {
    onnx::AttributeProto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (std::int64_t v : values)
      a->add_ints(v);
  }
  static void integer(onnx::NodeProto *n, const char *name, std::int64_t v) {
    onnx::AttributeProto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void real(onnx::NodeProto *n, const char *name, float v) {
    onnx::AttributeProto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }

  std::string serialized() const {
    std::string s;
    model_.SerializeToString(&s);
    return s;
  }

private:
  static void declare(onnx::ValueInfoProto *info, const Value &v) {
    info->set_name(v.name);
    auto *t = info->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (std::int64_t d : v.shape)
      t->mutable_shape()->add_dim()->set_dim_value(d);
  }

  std::mt19937_64 rng_;
  onnx::ModelProto model_;
  onnx::GraphProto *graph_;
  int counter_ = 0;
};

/// One operator on `v` (and maybe an earlier value), appended to `b`.
Value step(Builder &b, const std::vector<Value> &values, const Value &v) {
  const Shape &s = v.shape;
  if (s.size() == 4) {
    const std::int64_t n = s[0], c = s[1], h = s[2], w = s[3];
    switch (b.uniform(0, 11)) {
    case 0:
    case 1:
    case 2: { // convolution: plain, grouped or depthwise
      int k = b.coin() ? 3 : 1, stride = b.uniform(1, 2);
      int pad = b.coin() ? k / 2 : 0;
      if (h + 2 * pad < k || w + 2 * pad < k)
        break;
      std::int64_t group = 1, co = b.uniform(1, 8);
      int kind = b.uniform(0, 3);
      if (kind == 0 && c % 2 == 0) {
        group = 2;
        co = 2 * b.uniform(1, 4);
      } else if (kind == 1) {
        group = c;
        co = c;
      }
      std::string weight = b.constant({co, c / group, k, k}, -0.5f, 0.5f);
      std::vector<std::string> in = {v.name, weight};
      if (b.coin())
        in.push_back(b.constant({co}, -0.2f, 0.2f));
      Value out{b.fresh("conv"),
                {n, co, (h + 2 * pad - k) / stride + 1,
                 (w + 2 * pad - k) / stride + 1}};
      onnx::NodeProto *node = b.node("Conv", in, out.name);
      Builder::ints(node, "kernel_shape", {k, k});
      Builder::ints(node, "strides", {stride, stride});
      Builder::ints(node, "pads", {pad, pad, pad, pad});
      if (group > 1)
        Builder::integer(node, "group", group);
      return out;
    }
    case 3: { // batch normalization
      std::string scale = b.constant({c}, 0.5f, 1.5f),
                  bias = b.constant({c}, -0.5f, 0.5f),
                  mean = b.constant({c}, -0.5f, 0.5f),
                  var = b.constant({c}, 0.5f, 2.0f);
      Value out{b.fresh("bn"), s};
      onnx::NodeProto *node = b.node(
          "BatchNormalization", {v.name, scale, bias, mean, var}, out.name);
      Builder::real(node, "epsilon", 1e-5f);
      return out;
    }
    case 4: { // pooling
      if (h < 2 || w < 2)
        break;
      Value out{b.fresh("pool"), {n, c, h / 2, w / 2}};
      onnx::NodeProto *node =
          b.node(b.coin() ? "MaxPool" : "AveragePool", {v.name}, out.name);
      Builder::ints(node, "kernel_shape", {2, 2});
      Builder::ints(node, "strides", {2, 2});
      return out;
    }
    case 5: { // residual add or multiply with an earlier value of this shape
      for (auto it = values.rbegin(); it != values.rend(); ++it)
        if (it->shape == s && it->name != v.name) {
          Value out{b.fresh("sum"), s};
          b.node(b.coin() ? "Add" : "Mul", {v.name, it->name}, out.name);
          return out;
        }
      Value out{b.fresh("scaled"), s};
      b.node("Mul", {v.name, b.constant({1, c, 1, 1}, 0.5f, 1.5f)}, out.name);
      return out;
    }
    case 6: { // channel concatenation with an earlier value
      for (auto it = values.rbegin(); it != values.rend(); ++it)
        if (it->shape.size() == 4 && it->shape[0] == n && it->shape[2] == h &&
            it->shape[3] == w) {
          Value out{b.fresh("cat"), {n, c + it->shape[1], h, w}};
          Builder::integer(b.node("Concat", {v.name, it->name}, out.name),
                           "axis", 1);
          return out;
        }
      break;
    }
    case 7: {
      Value out{b.fresh("gap"), {n, c, 1, 1}};
      b.node("GlobalAveragePool", {v.name}, out.name);
      return out;
    }
    case 8: {
      Value out{b.fresh("flat"), {n, c * h * w}};
      b.node("Flatten", {v.name}, out.name);
      return out;
    }
    case 9: {
      Shape perm = {0, 1, 2, 3};
      std::swap(perm[b.uniform(1, 3)], perm[b.uniform(1, 3)]);
      Value out{b.fresh("t"), {s[perm[0]], s[perm[1]], s[perm[2]], s[perm[3]]}};
      Builder::ints(b.node("Transpose", {v.name}, out.name), "perm", perm);
      return out;
    }
    default:
      break;
    }
  } else {
    const std::int64_t n = s[0], k = s[1];
    switch (b.uniform(0, 3)) {
    case 0:
    case 1: { // fully connected
      std::int64_t m = b.uniform(1, 24);
      Value out{b.fresh("fc"), {n, m}};
      if (b.coin()) {
        onnx::NodeProto *node = b.node("Gemm",
                                       {v.name, b.constant({m, k}, -0.3f, 0.3f),
                                        b.constant({m}, -0.1f, 0.1f)},
                                       out.name);
        Builder::integer(node, "transB", 1);
      } else {
        b.node("MatMul", {v.name, b.constant({k, m}, -0.3f, 0.3f)}, out.name);
      }
      return out;
    }
    case 2: {
      Value out{b.fresh("softmax"), s};
      Builder::integer(b.node("Softmax", {v.name}, out.name), "axis", -1);
      return out;
    }
    default: {
      Value out{b.fresh("biased"), s};
      b.node("Add", {v.name, b.constant({k}, -1.0f, 1.0f)}, out.name);
      return out;
    }
    }
  }
  // Elementwise: always applicable.
  static const char *const unary[] = {"Relu", "Sigmoid",   "Tanh", "Abs",
                                      "Neg",  "LeakyRelu", "Clip"};
  const char *op = unary[b.uniform(0, 6)];
  Value out{b.fresh("act"), s};
  onnx::NodeProto *node = b.node(op, {v.name}, out.name);
  if (std::string(op) == "Clip") {
    node->add_input(b.constant({}, -1.0f, -0.5f));
    node->add_input(b.constant({}, 0.5f, 1.0f));
  }
  return out;
}

} // namespace

std::string randomModel(std::uint64_t seed) {
  Builder b(seed);
  Value x{"x", {1, b.uniform(1, 6), b.uniform(3, 10), b.uniform(3, 10)}};
  if (b.uniform(0, 4) == 0)
    x.shape = {b.uniform(1, 3), b.uniform(1, 32)};
  b.input(x);
  std::vector<Value> values = {x};
  int ops = b.uniform(2, 9);
  for (int i = 0; i < ops; ++i)
    values.push_back(step(b, values, values.back()));
  b.output(values.back());
  // Sometimes a second output from the middle of the chain.
  if (values.size() > 3 && b.coin())
    b.output(values[values.size() / 2]);
  return b.serialized();
}

} // namespace weir::fuzz
