"""Serving-engine profiles of engines.yaml: the typed policy object lives in aiinfra.specs.engine (the domain takes
it as an argument); re-exported here for the catalog's readers."""

from aiinfra.specs.engine import EngineProfile as EngineProfile
from aiinfra.specs.engine import KvAllocator, SchedulerDefaults, Usage, profile, profiles

__all__ = ["EngineProfile", "KvAllocator", "SchedulerDefaults", "Usage", "profile", "profiles"]
