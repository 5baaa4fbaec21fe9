"""Sharing a cluster: MIG partitions (mig), packing workloads onto GPUs (pack), a cluster scheduler (schedule)."""
