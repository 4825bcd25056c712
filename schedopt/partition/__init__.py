"""Dorm's partition problem (Dorm §IV): how many containers each application
gets on each server, maximising utilization under fairness-loss and
adjustment budgets.

Everything about it lives here: ``contract`` (the problem's declaration),
``problem`` (data, weighted DRF, metrics eq. 1-4, packing), ``checker``,
``families`` (``dorm-table2``, ``alibaba-dorm``), ``dorm`` (the driver and
class mode), the solvers ``milp`` (``dorm-milp``, ``dorm-1/2/3``), ``cpsat``
(``dorm-cpsat``) and ``baselines`` (``drf-containers``, ``swarm-static``).
"""

from schedopt.partition.problem import PartitionData, compile_partition, drf_containers, partition_metrics

__all__ = ["PartitionData", "compile_partition", "drf_containers", "partition_metrics"]
