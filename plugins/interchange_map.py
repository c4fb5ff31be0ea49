"""Loop interchange on a map: swap the order of two of its dimensions.

This plugin is written to be read. It shows the whole shape of a Weir
transformation in a few lines: a pattern, a legality check, and an edit.

A map is a parallel scope over several iteration variables, for example

    map i in 0:64, j in 0:128:   C[i, j] = A[i, j] + B[j]

When Weir lowers it to loops, the first variable becomes the outer loop and
the last the inner one. The inner loop is the one the CPU vectorizes and the
one whose consecutive iterations should touch consecutive memory. Swapping i
and j gives

    map j in 0:128, i in 0:64:   C[i, j] = A[i, j] + B[j]

which computes exactly the same values (a map's iterations are independent,
so their order cannot matter) but walks memory in another order. Whether that
is faster depends on the strides: here it is slower, because the inner loop
now jumps 128 elements at a time. Try both and compare in the Run dock.

Nothing in the memlets needs to change: they name the variables, not their
positions. The only thing to check is that the ranges do not depend on each
other, which in Weir's maps they never do — but a careful transformation
says so rather than assuming it.
"""

import re

import weir


@weir.transformation(
    id="interchange-map", tier="movement",
    summary="Swap two dimensions of a map (loop interchange)",
    params=[weir.Param("first", int, 0, "position of one dimension", min=0),
            weir.Param("second", int, 1, "position of the other", min=0)])
class InterchangeMap:
    # One role: any map entry. Every map is a candidate.
    pattern = weir.Pattern().node("map", "map-entry")

    def can_apply(self, program, match, params):
        entry = program.state(match.state).node(match["map"])
        a, b = params["first"], params["second"]
        n = len(entry.params)
        if n < 2:
            return f"map '{entry.label}' has one dimension; nothing to swap"
        if a >= n or b >= n:
            return f"map '{entry.label}' has {n} dimensions; positions " \
                   f"{a} and {b} must be below {n}"
        if a == b:
            return "first and second name the same dimension"
        for r in entry.ranges:
            if set(re.findall(r"[A-Za-z_]\w*", r)) & set(entry.params):
                return f"range '{r}' depends on another dimension"
        return True

    def apply(self, editor, match, params):
        entry = editor.node(match.state, match["map"])
        a, b = params["first"], params["second"]
        names, ranges = list(entry.params), list(entry.ranges)
        names[a], names[b] = names[b], names[a]
        ranges[a], ranges[b] = ranges[b], ranges[a]
        editor.set_map(match.state, entry.id, params=names, ranges=ranges)
