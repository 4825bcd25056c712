"""What a certificate kind is, for the checker side (docs/certificates.md): the claim it
proves and its replay, the exception a replay raises when the instance is too large to
enumerate, and the session in which one check's replays share their enumeration.
Imports nothing of the library: every problem's ``certificates.py`` and the dispatcher
(:mod:`schedopt.certification`) build on it.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Literal


@dataclass(frozen=True)
class Replay:
    """A certificate kind: the claim it proves and how ``check`` replays it.

    ``proves``: ``bound`` (``objective.bound``, in the plan's sense) or
    ``admitted_bound`` (``objective.admitted_bound``, a count); a proof of one kind
    is never accepted for the other claim (issue 48 §1).
    ``replay(instance, plan, proof)`` returns what the proof proves, from the instance alone."""

    proves: Literal["bound", "admitted_bound"]
    replay: Callable[[Any, Any, Any], float]

    def __call__(self, instance: Any, plan: Any, proof: Any) -> float:
        return self.replay(instance, plan, proof)


class TooLargeToReplay(Exception):
    """The instance has more configurations than a replay enumerates."""


#: within :func:`replay_session`, what the replays of one check share (a problem's replay keys
#: its own entries, e.g. the enumeration of the instance's configurations)
SESSION: ContextVar[dict | None] = ContextVar("schedopt_replay_session", default=None)


@contextmanager
def replay_session() -> Iterator[None]:
    """Replays inside share what they enumerate (freed at the end)."""
    token = SESSION.set({})
    try:
        yield
    finally:
        SESSION.reset(token)


def branch_tree_leaves(tree: Any, root: Any, leaf_keys: set[str], split: Callable[[dict, Any, str], list],
                       *, max_leaves: int, max_depth: int, shapes: str) -> list[tuple[Any, dict]]:
    """The leaves of a branch certificate's ``tree`` with the domain each path allows, walked from
    ``root``: a node whose keys lie within ``leaf_keys`` is a leaf; any other is passed to
    ``split(node, domain, path)``, which returns its children as (node, domain, path) or raises
    ValueError naming what is malformed (``shapes`` lists the node shapes, for that message). At
    most ``max_leaves`` leaves and ``max_depth`` levels (a replay's work is bounded)."""
    out: list[tuple[Any, dict]] = []
    stack: list[tuple[Any, Any, int, str]] = [(tree, root, 0, "tree")]
    while stack:
        node, dom, depth, path = stack.pop()
        if not isinstance(node, dict):
            raise ValueError(f"{path}: expected a mapping, got {type(node).__name__}")
        if depth > max_depth:
            raise ValueError(f"{path}: deeper than {max_depth}")
        if set(node) <= leaf_keys:
            out.append((dom, node))
            if len(out) > max_leaves:
                raise ValueError(f"more than {max_leaves:,} leaves")
            continue
        children = split(node, dom, path)
        if children is None:
            raise ValueError(f"{path}: a node is {shapes}; got keys {sorted(node)}")
        stack += [(child, child_dom, depth + 1, child_path) for child, child_dom, child_path in children]
    return out
