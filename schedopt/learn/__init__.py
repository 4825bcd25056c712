"""DL2: a learned scheduler (numpy networks, supervised warm-up, actor-critic RL)."""

from schedopt.learn.dl2 import Dl2, Policy  # noqa: F401  (registration)

__all__ = ["Dl2", "Policy"]
