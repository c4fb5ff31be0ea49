"""Run Relu after MaxPool instead of before it, on fewer values.

    x --> Relu --> t --> MaxPool --> y      becomes      x --> MaxPool --> t' --> Relu --> y

Relu is monotone non-decreasing, and any such function f commutes with max:
max(f(a), f(b)) = f(max(a, b)). So pooling first and then applying Relu gives
exactly the same numbers (bit for bit: max only selects, and Relu of the
selected value is the value Relu would have produced). The gain is work and
traffic: a 2x2 pool with stride 2 has a quarter of the values, so Relu reads
and writes 4x less, and the intermediate shrinks by the same factor.

When it is legal: the Relu's output must feed only the MaxPool (anyone else
needs the un-pooled Relu values), and the MaxPool must not produce its
Indices output (indices of the maximum are the same, but a model asking for
them usually feeds an unpooling that expects the original order of work; we
keep it simple and refuse). Fusion heuristics in DNNFusion call this kind of
rewrite an algebraic transformation before fusion: after it, Relu sits where
it can fuse into the next operator.
"""

import weir


@weir.transformation(
    id="swap-relu-maxpool", tier="fusion",
    summary="Move a Relu after the MaxPool it feeds (same result, less work)")
class SwapReluMaxPool:
    pattern = (weir.Pattern()
               .node("relu", "library", ops=["Relu"])
               .node("mid", "access")
               .node("pool", "library", ops=["MaxPool"])
               .edge("relu", "mid").edge("mid", "pool", None, "X"))

    def can_apply(self, program, match, params):
        state = program.state(match.state)
        mid = state.node(match["mid"])
        c = program.container(mid.container)
        if not c.transient or c.view_of is not None:
            return f"'{c.name}' is not a plain intermediate"
        if sum(1 for n in state.nodes if n.container == c.name) != 1 or \
                len(state.out_edges(mid.id)) != 1:
            return f"the Relu's output '{c.name}' is also read elsewhere"
        outs = [e.src_conn for e in state.out_edges(match["pool"])]
        if outs != ["Y"]:
            return "the MaxPool also produces Indices"
        if c.dtype not in ("f32", "f64", "f16", "bf16"):
            return "only floating-point Relu and MaxPool are swapped"
        return True

    def apply(self, editor, match, params):
        st, relu, pool = match.state, match["relu"], match["pool"]
        (x_in,) = editor.in_edges(st, relu)
        (y_out,) = editor.out_edges(st, pool)
        # Cut the old wiring: x -> relu -> mid -> pool -> y.
        editor.remove_node(st, match["mid"])
        editor.remove_edge(st, x_in.id)
        editor.remove_edge(st, y_out.id)
        # The pooled, not yet rectified values get a container of y's shape.
        y = editor.container(y_out.container)
        t = editor.add_container(editor.fresh_name(y.name + "_pooled"),
                                 y.dtype, y.shape)
        t_node = editor.add_access(st, t)
        editor.add_edge(st, x_in.src, "", pool, "X", x_in.memlet)
        editor.add_edge(st, pool, "Y", t_node, "", t)
        editor.add_edge(st, t_node, "", relu, "X", t)
        editor.add_edge(st, relu, "Y", y_out.dst, "", y_out.memlet)
        editor.update_flops(st, relu)
        editor.remove_unused()
