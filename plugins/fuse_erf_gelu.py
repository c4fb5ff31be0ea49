"""Fuse the Erf-based GELU subgraph that exporters emit into one Gelu operator.

PyTorch exports GELU(x) = x * 0.5 * (1 + erf(x / sqrt(2))) as five operators:

    x --> Div(., 1.4142135) --> Erf --> Add(., 1) --> Mul(x, .) --> Mul(., 0.5) --> y
    '------------------------------------------------^

Every one of them reads and writes a tensor as large as x, so the activation
crosses memory five times and four intermediates are allocated. One Gelu
operator (ONNX opset 20) reads x once and writes y once. Its pure expansion in
Weir computes the same arithmetic in the same order (x / sqrt(2), erf, + 1,
times x, times 0.5), so the fused program gives the same float32 results.

This is the classic "pattern to operator" rewrite of graph compilers
(ONNX Runtime's GeluFusion, TVM's FuseOps on a dominator pattern). What makes it
legal is checked in can_apply: the constants must be the ones GELU uses, the
second Mul must multiply by the same x that was divided, and no intermediate
may be used anywhere else (fusing would then remove a value someone reads).
Run fold-constants first if the constants are still computed by operators.
"""

import math

import weir

CHAIN = ["div", "d", "erf", "e", "add", "a", "mul", "m", "half"]


def _input(program, state, node_id, connector):
    """(access node id, container name) feeding `connector` of a node."""
    for edge in program.state(state).in_edges(node_id):
        if edge.dst_conn == connector:
            return edge.src, edge.container
    return None, None


def _other_input(program, state, node_id, access_id):
    """The container on the input of a binary op that is not `access_id`."""
    for edge in program.state(state).in_edges(node_id):
        if edge.src != access_id:
            return edge.container
    return None


def _constant_is(program, name, value):
    """Whether container `name` is a constant whose elements all equal value
    (as float32)."""
    if name is None:
        return False
    c = program.container(name)
    data = c.value()
    if data is None or data.size == 0:
        return False
    return bool(abs(data.astype("float64") - value).max() <= 1e-6 * abs(value))


@weir.transformation(
    id="fuse-erf-gelu", tier="fusion",
    summary="Fuse the five-operator Erf GELU subgraph into one Gelu operator",
    exact=False, rtol=1e-6, atol=1e-7)
class FuseErfGelu:
    pattern = (weir.Pattern()
               .node("div", "library", ops=["Div"])
               .node("d", "access")
               .node("erf", "library", ops=["Erf"])
               .node("e", "access")
               .node("add", "library", ops=["Add"])
               .node("a", "access")
               .node("mul", "library", ops=["Mul"])
               .node("m", "access")
               .node("half", "library", ops=["Mul"])
               .edge("div", "d").edge("d", "erf").edge("erf", "e")
               .edge("e", "add").edge("add", "a").edge("a", "mul")
               .edge("mul", "m").edge("m", "half"))

    def can_apply(self, program, match, params):
        st = match.state
        x_node, x = _input(program, st, match["div"], "A")
        _, divisor = _input(program, st, match["div"], "B")
        if x is None or not _constant_is(program, divisor, math.sqrt(2.0)):
            return "the Div does not divide by the constant sqrt(2) " \
                   "(run fold-constants first if it is computed)"
        if not _constant_is(program, _other_input(program, st, match["add"],
                                                  match["e"]), 1.0):
            return "the Add does not add the constant 1"
        if _other_input(program, st, match["mul"], match["a"]) != x:
            return f"the first Mul does not multiply by '{x}', the Div's input"
        if not _constant_is(program, _other_input(program, st, match["half"],
                                                  match["m"]), 0.5):
            return "the last Mul does not multiply by the constant 0.5"
        state = program.state(st)
        for role in ("d", "e", "a", "m"):
            node = state.node(match[role])
            c = program.container(node.container)
            if not c.transient or c.view_of is not None:
                return f"'{c.name}' is not a plain intermediate"
            uses = sum(1 for n in state.nodes if n.container == c.name)
            if uses != 1 or len(state.out_edges(node.id)) != 1:
                return f"'{c.name}' is also used outside the GELU subgraph"
        _, y = _output(program, st, match["half"])
        if program.container(y).shape != program.container(x).shape:
            return "the output's shape differs from the input's (broadcast)"
        if program.container(x).dtype not in ("f32", "f64", "f16", "bf16"):
            return "GELU needs floating-point data"
        return True

    def apply(self, editor, match, params):
        st = match.state
        program = editor.program
        x_node, x = _input(program, st, match["div"], "A")
        y_node, y = _output(program, st, match["half"])
        dtype = program.container(x).dtype
        label = editor.node(st, match["div"]).label.rsplit("/", 1)[0] + "/Gelu"
        gelu = editor.add_library(st, "Gelu", inputs=[("X", dtype)],
                                  outputs=[("Y", dtype)], label=label,
                                  attributes={"approximate": "none"},
                                  opset=20)
        editor.replace(st, [match[r] for r in CHAIN], gelu)
        editor.add_edge(st, x_node, "", gelu, "X", x)
        editor.add_edge(st, gelu, "Y", y_node, "", y)
        editor.remove_unused()


def _output(program, state, node_id):
    """(access node id, container name) the node's single output writes."""
    for edge in program.state(state).out_edges(node_id):
        return edge.dst, edge.container
    return None, None
