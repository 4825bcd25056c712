"""Dorm's partition problem (Dorm §IV): how many containers each application
gets on each server, maximising utilization under fairness-loss and
adjustment budgets.

Solvers: ``dorm-milp`` and the presets ``dorm-1/2/3`` (Pyomo + HiGHS),
``dorm-cpsat`` (OR-Tools CP-SAT), ``drf-containers`` and ``swarm-static``
(baselines). Importing this package registers them.
"""

from schedopt.partition import baselines, cpsat, milp  # noqa: F401  (registration)
from schedopt.partition.problem import PartitionData, compile_partition, drf_containers, partition_metrics

__all__ = ["PartitionData", "compile_partition", "drf_containers", "partition_metrics"]
