"""Online simulation (Optimus §6): workloads, the discrete-time simulator and its metrics."""

from schedopt.sim.result import SimulationResult, load_result, save_result
from schedopt.sim.simulator import simulate

__all__ = ["SimulationResult", "load_result", "save_result", "simulate"]
