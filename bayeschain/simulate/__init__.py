"""Monte-Carlo users: the independent check of the exact solvers, and synthetic logs."""

from .clicklog import simulate_click_log
from .users import SimulatedUsers, geometric_loss_gain, simulate_users

__all__ = ["SimulatedUsers", "geometric_loss_gain", "simulate_click_log", "simulate_users"]
