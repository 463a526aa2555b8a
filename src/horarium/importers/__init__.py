"""Readers of what Azure Scheduler's former users still have, turned into the collections and
jobs `horarium import` creates: `arm` (ARM templates)."""
