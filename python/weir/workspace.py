"""Python conveniences on weir.Workspace (the class itself is C++)."""

from . import _weir


class MatchList(list):
    """The matches of a transformation that applied when they were listed,
    in order.

    Iterating checks each match again against the workspace as it is at that
    moment and skips those an earlier step made stale, so

        for m in ws.matches("map-fusion"):
            ws.apply("map-fusion", m)

    applies every one that still can. Indexing and len() see the list as
    listed.
    """

    def __init__(self, workspace, transformation, matches):
        super().__init__(matches)
        self._workspace = workspace
        self._transformation = transformation
        self._hash = workspace.hash

    def __iter__(self):
        for match in list.__iter__(self):
            if self._workspace.hash == self._hash or \
                    self._workspace.check(self._transformation, match):
                yield match


def matches(self, transformation):
    """The matches of `transformation` that apply to the current version
    (a MatchList: iterating re-checks, see its docstring).
    candidates() lists every match of the pattern, with check() to say why
    one does not apply."""
    found = [m for m in self.candidates(transformation)
             if self.check(transformation, m)]
    return MatchList(self, transformation, found)


_weir.Workspace.matches = matches
