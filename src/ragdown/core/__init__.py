"""The ground everything stands on: refusals, path rules, settings, atomic files, times, logs, the CPUs."""
